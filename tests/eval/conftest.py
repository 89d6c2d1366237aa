"""Fixtures of the sharded / Ray answering tests: the infer config composed around the session's tiny
retriever trained on the built-in KG (tests/conftest.py builtin_root), and the single-process run
every sharded run is compared with."""
import pytest

from shard_checks import read_predictions  # noqa: E402 (helpers the tests import by name)

QUESTIONS = 24  # the first questions of the built-in test split: every run here answers these
INFER = ["llm=none", f"limit={QUESTIONS}", "batch_size=4", "show_summary=false"]


@pytest.fixture(scope="session")
def infer_cfg(compose_cfg, builtin_root):
    """infer_cfg(*overrides): the infer config around the trained checkpoint."""
    return lambda *overrides: compose_cfg("infer", INFER + list(overrides), builtin_root)


@pytest.fixture(scope="session")
def single_run(infer_cfg, tmp_path_factory) -> tuple[dict, list[dict]]:
    """(metrics, predictions) of one process answering the questions: what shards must reproduce."""
    from rra.eval.run import run_split

    out = tmp_path_factory.mktemp("single")
    metrics = run_split(infer_cfg(), out)
    return metrics, read_predictions(out)

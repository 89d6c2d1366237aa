"""Fixtures of the sharded / Ray answering tests: a tiny retriever trained on the built-in KG once
per session, the infer config composed around it, and the single-process run every sharded run
is compared with."""
from pathlib import Path

import pytest

from shard_checks import read_predictions  # noqa: E402 (helpers the tests import by name)

QUESTIONS = 24  # the first questions of the built-in test split: every run here answers these
INFER = ["llm=none", f"limit={QUESTIONS}", "batch_size=4", "show_summary=false"]


@pytest.fixture(scope="session")
def builtin_root(compose_cfg, tmp_path_factory) -> Path:
    """`python train.py` with a tiny random encoder on the built-in KG, briefly (what it answers
    does not matter here, only that every way of running it answers the same)."""
    from rra.training.run import train

    root = tmp_path_factory.mktemp("shards_root")
    train(compose_cfg("train", ["model=retriever_tiny", "trainer.max_epochs=3", "test=false",
                                "callbacks.progress_bar=null", "callbacks.budget.extend=0"], root))
    assert (root / "checkpoints" / "retriever" / "best.ckpt").is_file()
    return root


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

"""Fixtures of the sharded / Ray answering tests: a tiny retriever trained on the built-in KG once
per session, the infer config composed around it, and the single-process run every sharded run
is compared with."""
import json
from pathlib import Path

import pytest

QUESTIONS = 24  # the first questions of the built-in test split: every run here answers these
INFER = ["llm=none", f"limit={QUESTIONS}", "batch_size=4", "show_summary=false"]
# Fields that differ between two runs of the same setup: wall-clock measurements.
TIMING = ("latency_s",)


@pytest.fixture(scope="session")
def builtin_root(compose_cfg, tmp_path_factory) -> Path:
    """`python train.py` with a tiny random encoder on the built-in KG, briefly (what it answers
    does not matter here, only that every way of running it answers the same)."""
    from rra.training.run import train

    root = tmp_path_factory.mktemp("shards_root")
    train(compose_cfg("train", ["model=retriever_tiny", "trainer.max_epochs=3", "test=false",
                                "callbacks.progress_bar=null"], root))
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


def read_predictions(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (Path(run_dir) / "predictions.jsonl").read_text().splitlines()]


def comparable(preds: list[dict]) -> list[dict]:
    """Predictions without their timings, rounded so that float noise between batchings is not a difference."""
    def clean(v):
        if isinstance(v, float):
            return round(v, 5)
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k not in TIMING}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v
    return [clean(p) for p in preds]


# The metrics that say what was answered (the rest are timings).
ANSWER_METRICS = ("n", "labelled", "hits@1", "hits@1_strict", "f1", "hit", "em", "answer_coverage", "hop_acc",
                  "hop_acc_n", "path_acc", "path_acc_n", "llm_calls_per_q", "status", "hits_mode", "by_shape")


def same_answers(a: dict, b: dict) -> dict:
    return {k: (a.get(k), b.get(k)) for k in ANSWER_METRICS if a.get(k) != b.get(k)}

"""What the sharded / Ray answering tests compare runs by (imported by name: a conftest module is
not importable from two test folders at once)."""
import json
from pathlib import Path

TIMING = ("latency_s",)


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

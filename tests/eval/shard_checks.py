"""What the sharded / Ray answering tests compare runs by (imported by name: a conftest module is
not importable from two test folders at once)."""
import json
import math
from pathlib import Path

TIMING = ("latency_s",)


def read_predictions(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (Path(run_dir) / "predictions.jsonl").read_text().splitlines()]


def differences(got, want, path: str = "", rel: float = 1e-4) -> list[str]:
    """Where two runs' predictions differ, timings left out. Floats are compared with a relative
    tolerance: another batching, or a worker with another thread count, sums in another order and
    moves the last digits (rounding both to 5 places, as this did before, still failed whenever a
    score sat at a rounding boundary: 0.471065 vs 0.471075)."""
    if isinstance(got, float) or isinstance(want, float):
        ok = isinstance(got, (int, float)) and isinstance(want, (int, float)) and \
            math.isclose(got, want, rel_tol=rel, abs_tol=1e-6)
        return [] if ok else [f"{path}: {got!r} != {want!r}"]
    if isinstance(got, dict) and isinstance(want, dict):
        keys = (set(got) | set(want)) - set(TIMING)
        return [d for k in sorted(keys, key=str) for d in differences(got.get(k), want.get(k), f"{path}.{k}", rel)]
    if isinstance(got, list) and isinstance(want, list):
        if len(got) != len(want):
            return [f"{path}: {len(got)} items != {len(want)}"]
        return [d for i, (a, b) in enumerate(zip(got, want)) for d in differences(a, b, f"{path}[{i}]", rel)]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


# The metrics that say what was answered (the rest are timings).
ANSWER_METRICS = ("n", "labelled", "hits@1", "hits@1_strict", "f1", "hit", "em", "answer_coverage", "hop_acc",
                  "hop_acc_n", "path_acc", "path_acc_n", "llm_calls_per_q", "status", "hits_mode", "by_shape")


def same_answers(a: dict, b: dict) -> dict:
    return {k: (a.get(k), b.get(k)) for k in ANSWER_METRICS if a.get(k) != b.get(k)}

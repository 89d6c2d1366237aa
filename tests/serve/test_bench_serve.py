"""bench/bench_serve.py in a small form: `python serve.py` under 1 and 8 concurrent clients answers
exactly what `python infer.py` answers on the same built-in questions (each request a new one), with zero errors (no speed is
asserted here; the figures come from the full run, see README)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_serve  # noqa: E402


def test_served_answers_equal_infer_py_with_zero_errors(builtin_root, tmp_path):
    ckpt = str(builtin_root / "checkpoints" / "retriever" / "best.ckpt")
    result = bench_serve.bench("builtin", ckpt, clients=[1, 8], requests=3, extra=[f"paths.root_dir={tmp_path}"],
                               work=tmp_path)
    assert result["questions"] == 27 and result["batch_path"]["q_s"] > 0 and result["batch_path"]["identical_runs"]
    for level in result["levels"]:
        assert level["errors"] == 0, level["error_examples"]  # every answer equal to infer.py's
        assert level["requests"] == level["clients"] * 3 and level["p99_ms"] > 0
        assert level["server_rss_mb"] > 0
    assert result["levels"][1]["mean_batch"] >= 1

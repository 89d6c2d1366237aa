"""bench.bench_serve in a small form: `python serve.py` under 1 and 8 concurrent clients answers
exactly what `python infer.py` answers on the same built-in questions (each request a new one), with zero errors (no speed is
asserted here; the figures come from the full run, see README)."""
from bench import bench_serve


def test_served_answers_equal_infer_py_with_zero_errors(builtin_root, tmp_path):
    ckpt = str(builtin_root / "checkpoints" / "retriever" / "best.ckpt")
    result = bench_serve.bench("builtin", ckpt, clients=[1, 8], requests=3, extra=[f"paths.root_dir={tmp_path}"],
                               work=tmp_path)
    # level blocks start at multiples of infer.py's batch (32): 3 questions at 0, 24 at 32
    assert result["questions"] == 64 and result["batch_path"]["q_s"] > 0 and result["batch_path"]["identical_runs"]
    assert [level["questions"] for level in result["levels"]] == [[0, 3], [32, 56]]
    for level in result["levels"]:
        assert level["batch_path_q_s"] > 0 and level["vs_batch_path"] > 0  # against the same questions
        assert level["errors"] == 0, level["error_examples"]  # every answer equal to infer.py's
        assert level["requests"] == level["clients"] * 3 and level["p99_ms"] > 0
        assert level["server_rss_mb"] > 0
    assert result["levels"][1]["mean_batch"] >= 1

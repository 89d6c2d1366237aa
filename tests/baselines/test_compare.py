import json

from rra.eval.compare import collect, main
from rra.eval.metrics import compute_metrics
from rra.records import Prediction


def fake_multirun(root):
    """Two Hydra-style runs: metrics.json from real Predictions + .hydra/overrides.yaml."""
    for num, (method, calls, hit) in enumerate([("tog", 4, True), ("vector", 0, False)]):
        run = root / f"{num}_method={method},llm=none"
        (run / ".hydra").mkdir(parents=True)
        (run / ".hydra" / "overrides.yaml").write_text(f"- method={method}\n- llm=none\n- limit=2\n")
        preds = [Prediction("q", "?", ["Alien" if hit else "Titanic"], gold_answers=["Alien"], llm_calls=calls,
                            latency_s=0.5 + num) for _ in range(2)]
        (run / "metrics.json").write_text(json.dumps(compute_metrics(preds)))


def test_collects_labels_and_writes_table_and_plot(tmp_path, capsys):
    fake_multirun(tmp_path / "multi")
    runs = collect([tmp_path / "multi"])
    assert [r["label"] for r in runs] == ["tog", "vector"]  # llm=none, limit=2 are shared: not in labels
    assert main([str(tmp_path / "multi"), "--out", str(tmp_path / "cmp")]) == 0
    table = (tmp_path / "cmp" / "compare.md").read_text()
    assert "| tog | 2 | 100.0 | 100.0 |" in table and "| vector | 2 | 0.0 | 0.0 |" in table
    assert (tmp_path / "cmp" / "compare.png").read_bytes()[:4] == b"\x89PNG"
    saved = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert len(saved["runs"]) == 2 and saved["skipped"] == []


def test_a_failed_sweep_job_is_listed_not_silently_dropped(tmp_path, capsys):
    fake_multirun(tmp_path / "multi")
    failed = tmp_path / "multi" / "2_method=llm_only,llm=none"
    (failed / ".hydra").mkdir(parents=True)
    (failed / ".hydra" / "overrides.yaml").write_text("- method=llm_only\n- llm=none\n")
    (failed / "infer.log").write_text("ValueError: llm_only needs an `llm`\n")
    assert main([str(tmp_path / "multi"), "--out", str(tmp_path / "cmp")]) == 0
    table = (tmp_path / "cmp" / "compare.md").read_text()
    assert "1 job(s) without results" in table and "llm_only needs an `llm`" in table
    assert "skipped" in capsys.readouterr().err


def test_missing_folder_is_a_clear_error(tmp_path, capsys):
    assert main([str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "no such run" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 2


def test_a_run_whose_method_failed_is_marked_not_ranked_as_if_it_worked(tmp_path):
    """run_failed (the LLM answered under half its questions): the table says so next to the figure."""
    fake_multirun(tmp_path / "multi")
    path = tmp_path / "multi" / "0_method=tog,llm=none" / "metrics.json"
    metrics = json.loads(path.read_text())
    metrics.update(run_failed=True, warnings=["the LLM answered only 0% of the 2 questions that asked it"])
    path.write_text(json.dumps(metrics))
    assert main([str(tmp_path / "multi"), "--out", str(tmp_path / "cmp")]) == 0
    table = (tmp_path / "cmp" / "compare.md").read_text()
    assert "| tog **(failed run)** | 2 | 100.0 |" in table
    assert "Failed runs" in table and "answered only 0%" in table

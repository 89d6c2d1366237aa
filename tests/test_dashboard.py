"""The dashboards of an infer run: a predictions table (misses first, capped), metrics per hop /
question type / relation as tables and bar charts, the summary; in a real offline W&B run (read
back from its files, W&B not mocked), in the CSV logger's folder, and the W&B group of a sweep."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rra.eval.dashboard import BREAKDOWNS, breakdown, build_tables, predictions_table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from test_infer import SEARCH, toy_cfg, trained_root  # noqa: E402,F401  (the tiny trained retriever)
from wandb_files import offline_run  # noqa: E402

from rra.config import compose_config  # noqa: E402


def compose_cfg(name, root, overrides):
    """The toy KG's config as infer.py composes it, with the logger each test picks."""
    return compose_config(name, ["data=toy", SEARCH, *overrides], config_dir=REPO / "conf", root=root)


def pred(qid, hit, hop, path, status="ok", **extra):
    gold = "g"
    return {"qid": qid, "question": f"q{qid}", "answers": [gold if hit else "x"], "gold_answers": [gold],
            "status": status, "gold_hop": hop, "gold_path": path, "pred_path": path if hit else ["r9"],
            "latency_s": 0.01, "llm_calls": 1, "extra": extra}


PREDS = [pred("a", True, 1, ["r1"]), pred("b", False, 2, ["r1", "r2"]), pred("c", True, 2, ["r2", "r3"]),
         pred("d", True, 1, ["r3"], status="no_path", shape="chain"), pred("e", False, 1, ["r1"], shape="order")]


def test_predictions_table_puts_misses_and_failures_first_and_caps_rows():
    table = predictions_table(PREDS, max_rows=3)
    rows = table.records()
    assert [r["qid"] for r in rows] == ["b", "d", "e"]  # the misses and the failed status, in order
    assert rows[0]["hit"] is False and rows[0]["gold_path"] == "r1 > r2" and rows[0]["pred_path"] == "r9"
    assert rows[1]["status"] == "no_path" and rows[1]["hit"] is True
    assert len(predictions_table(PREDS, max_rows=2000).rows) == 5


def test_breakdowns_per_hop_relation_and_any_field():
    by_hop = {r["hop"]: r for r in breakdown(PREDS, "hop").records()}
    assert by_hop["1"]["n"] == 3 and by_hop["1"]["hits@1"] == pytest.approx(200 / 3, abs=1e-3)
    assert by_hop["2"]["n"] == 2 and by_hop["2"]["hits@1"] == 50
    by_rel = {r["relation"]: r["n"] for r in breakdown(PREDS, "relation").records()}
    assert by_rel == {"r1": 3, "r2": 2, "r3": 2}  # a 2-hop question counts under both relations
    by_shape = {r["shape"]: r["n"] for r in breakdown(PREDS, "shape").records()}  # a field of extra
    assert by_shape == {"(unknown)": 3, "chain": 1, "order": 1}
    types = {r["question_type"] for r in breakdown(PREDS, "question_type").records()}
    assert types == {"r1", "r1 > r2", "r2 > r3", "r3"}
    assert {"hop", "question_type", "relation"} <= set(BREAKDOWNS)
    names = [t.name for t in build_tables(PREDS, ["hop", "shape"])]
    assert names == ["predictions", "misses_by_wording", "by_hop", "by_shape"]


def test_infer_logs_tables_and_charts_to_an_offline_wandb_run(trained_root, tmp_path, monkeypatch):
    """The default logger (W&B, offline), as `make run`'s infer step uses it."""
    from rra.eval.run import run_split

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_INIT_TIMEOUT", "600")  # a loaded CI machine starts W&B's service slowly
    monkeypatch.setenv("WANDB_DATA_DIR", str(tmp_path / "wandb-data"))
    monkeypatch.setenv("WANDB_CACHE_DIR", str(tmp_path / "wandb-cache"))
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(tmp_path / "wandb-config"))
    cfg = compose_cfg("infer", trained_root, ["limit=8", "llm=none", "logger=wandb", "dashboard.max_rows=5"])
    metrics = run_split(cfg, tmp_path / "out")
    import wandb

    wandb.teardown()  # W&B's service writes the run file after the run finishes; wait until it is done
    run = offline_run(Path(cfg.paths.output_dir))
    hist = run["history"]
    assert "predictions/_type" in hist, (sorted(hist), run["artifacts"], run["dir"])
    assert hist["predictions/_type"] == "table-file" and hist["predictions/nrows"] == 5
    table = json.loads((run["dir"] / "files" / hist["predictions/path"]).read_text())
    assert {"qid", "question", "topic", "gold_answers", "predicted", "pred_path", "gold_path", "status", "hit",
            "latency_s", "llm_calls"} <= set(table["columns"])
    assert hist["by_hop/_type"] == "table-file" and hist["by_relation/_type"] == "table-file"
    chart = run["config"]["_wandb/visualize/by_hop_chart"]
    assert chart["panel_config"]["panelDefId"] == "wandb/bar/v0"
    assert chart["panel_config"]["fieldSettings"] == {"label": "hop", "value": "hits@1"}
    hops = json.loads((run["dir"] / "files" / hist["by_hop/path"]).read_text())
    assert sum(row[1] for row in hops["data"]) == metrics["n"] == 8
    assert hist["summary/_type"] == "html-file"
    assert any(kind == "report" and name.startswith("summary-") for name, kind in run["artifacts"])
    assert hist["test/hits@1"] == pytest.approx(metrics["hits@1"])
    assert run["name"] == run["group"] == "infer"  # a single run: its own name


def test_infer_writes_tables_and_charts_for_the_csv_logger(trained_root, tmp_path):
    from rra.eval.run import run_split

    cfg = compose_cfg("infer", trained_root, ["limit=6", "llm=none", "logger=csv"])
    run_split(cfg, tmp_path / "out")
    folder = next(Path(cfg.paths.output_dir).rglob("predictions.csv")).parent
    for name in ("predictions", "misses_by_wording", "by_hop", "by_question_type", "by_relation"):
        assert (folder / f"{name}.csv").is_file() and (folder / f"{name}.json").is_file()
    assert (folder / "by_hop.png").stat().st_size > 1000 and (folder / "summary.md").is_file()
    rows = json.loads((folder / "predictions.json").read_text())
    assert len(rows) == 6 and {"gold_answers", "predicted", "hit"} <= set(rows[0])


@pytest.mark.slow
def test_the_jobs_of_one_sweep_share_a_wandb_group_and_are_named_by_what_differs(trained_root, tmp_path):
    env = {**os.environ, "WANDB_MODE": "offline", "RRA_ROOT": "", "HYDRA_FULL_ERROR": "1",
           "WANDB_DATA_DIR": str(tmp_path / "wandb-data"), "WANDB_CACHE_DIR": str(tmp_path / "wandb-cache"),
           "WANDB_CONFIG_DIR": str(tmp_path / "wandb-config"), "WANDB_INIT_TIMEOUT": "600",
           "PYTHONPATH": os.pathsep.join([str(REPO / "tests" / "models"), str(REPO)])}
    cmd = [sys.executable, str(REPO / "infer.py"), "-m", "data=toy", "logger=wandb", SEARCH, "show_summary=false",
           f"paths.root_dir={trained_root}", f"hydra.sweep.dir={tmp_path / 'sweep'}", "limit=3", "llm=fake",
           "answer=graph,llm"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    runs = [offline_run(job) for job in sorted((tmp_path / "sweep").glob("[0-9]*"))]
    assert len(runs) == 2
    assert runs[0]["group"] == runs[1]["group"] == "infer-sweep"
    assert sorted(r["name"] for r in runs) == ["answer=graph", "answer=llm"]

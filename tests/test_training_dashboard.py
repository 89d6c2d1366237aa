"""Training dashboards: supervision coverage per hop, per-epoch hop / path confusions and a
sample of validation predictions, in the CSV logger's folder and in an offline W&B run (read back
from its files); the model artifact's lineage file read by infer."""
import json
import sys
from pathlib import Path

import pytest

from rra.eval.dashboard import record_checkpoint_artifact
from rra.training.dashboard import confusion_tables, coverage_table, sample_table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from wandb_files import offline_run  # noqa: E402

from rra.config import compose_config  # noqa: E402
from rra.training.run import train  # noqa: E402


def compose_cfg(name, root, overrides):
    """As a script sees its config: the hydra node lives in HydraConfig, not in cfg (the loggers
    log the resolved cfg). Composed directly, as the tests pick their own logger."""
    from omegaconf import open_dict

    cfg = compose_config(name, overrides, config_dir=REPO / "conf", root=root)
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg


DECODED = [{"question": f"q{i}", "gold_path": ["a", "b"][: 1 + i % 2], "pred_path": ["a"] if i < 3 else ["c"],
            "gold_hop": 1 + i % 2, "pred_hop": 1, "correct": i in (0, 2)} for i in range(6)]


def test_confusions_and_sample_from_decoded_validation_records():
    hops, paths = confusion_tables(DECODED, epoch=2, top=5)
    assert {tuple(r[1:]) for r in hops.rows} == {(1, 1, 3), (2, 1, 3)}
    assert paths.records()[0] == {"epoch": 2, "gold_path": "a > b", "pred_path": "c", "questions": 2}
    sample = sample_table(DECODED, epoch=2, k=4)
    assert len(sample.rows) == 4 and [r[-1] for r in sample.rows] == sorted(r[-1] for r in sample.rows)
    assert sample_table(DECODED, 3, 4).rows[0][1:] == sample.rows[0][1:]  # the same questions every epoch
    cov = coverage_table({"coverage": {"train": {"n": 10, "covered": 9, "coverage": 0.9,
                                                 "per_hop": {"1": {"n": 4, "covered": 4, "coverage": 1.0}}}}})
    assert cov.records() == [{"split": "train", "hop": "1", "questions": 4, "covered": 4, "coverage": 1.0},
                             {"split": "train", "hop": "all", "questions": 10, "covered": 9, "coverage": 0.9}]


def test_train_writes_dashboard_tables_for_the_csv_logger(tmp_path):
    cfg = compose_cfg("train", tmp_path, ["model=retriever_tiny", "trainer.max_epochs=2", "test=false",
                                          "callbacks.progress_bar=null", "logger=csv",
                                          "callbacks.budget.extend=0", "trainer.min_steps=0", "trainer.limit_train_batches=8"])  # tables,
    # not how long it trains: no step floor, a few batches an epoch
    train(cfg)
    folder = next(Path(cfg.paths.output_dir).rglob("metrics.csv")).parent
    cov = json.loads((folder / "data_coverage.json").read_text())
    assert "train" in {r["split"] for r in cov} and all(0 <= r["coverage"] <= 1 for r in cov)
    epochs = sorted(int(f.stem.rsplit("epoch", 1)[1]) for f in folder.glob("val_predictions_epoch*.json"))
    assert epochs  # one set per validation (the training budget picks how often)
    for epoch in epochs:
        rows = json.loads((folder / f"val_predictions_epoch{epoch}.json").read_text())
        assert rows and {"question", "gold_path", "pred_path", "correct"} <= set(rows[0])
        hop = json.loads((folder / f"val_hop_confusion_epoch{epoch}.json").read_text())
        assert sum(r["questions"] for r in hop) >= len(rows)
        assert (folder / f"val_path_confusion_epoch{epoch}.csv").is_file()


def test_train_logs_dashboard_tables_to_an_offline_wandb_run(tmp_path, monkeypatch):
    for var in ("DATA", "CACHE", "CONFIG"):
        monkeypatch.setenv(f"WANDB_{var}_DIR", str(tmp_path / f"wandb-{var.lower()}"))
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_INIT_TIMEOUT", "600")  # a loaded CI machine starts W&B's service slowly
    cfg = compose_cfg("train", tmp_path, ["model=retriever_tiny", "trainer.max_epochs=1", "test=false",
                                          "callbacks.progress_bar=null", "logger=wandb",
                                          "callbacks.budget.extend=0", "trainer.min_steps=0", "trainer.limit_train_batches=8"])  # tables,
    # not how long it trains: no step floor, a few batches an epoch
    train(cfg)
    import wandb

    wandb.finish()
    wandb.teardown()  # W&B's service writes the run file after the run finishes; wait until it is done
    run = offline_run(Path(cfg.paths.output_dir))
    hist = run["history"]
    for key in ("data_coverage", "val_hop_confusion", "val_path_confusion", "val_predictions"):
        assert hist[f"{key}/_type"] == "table-file", key
    assert not (Path(cfg.paths.checkpoint_dir) / "retriever" / "best.ckpt.wandb.json").exists()  # offline: no artifact


def test_infer_records_the_artifact_its_checkpoint_was_published_as(tmp_path):
    ckpt = tmp_path / "best.ckpt"
    ckpt.write_bytes(b"x")

    class Run:
        offline = True
        config = type("C", (), {"update": lambda self, d, allow_val_change=False: seen.update(d)})()

    seen = {}
    assert record_checkpoint_artifact(Run(), ckpt) is None and not seen  # never published: nothing to record
    Path(f"{ckpt}.wandb.json").write_text(json.dumps({"artifact": "me/rra/retriever-model:v3"}))
    assert record_checkpoint_artifact(Run(), ckpt) == "me/rra/retriever-model:v3"
    assert seen == {"retriever_artifact": "me/rra/retriever-model:v3"}

"""The training budget (rra/training/budget.py): a step floor under the epoch count, validation at the
last step, and a convergence verdict in train_summary.json. Tiny encoder; train.py's own train()."""
import json
from pathlib import Path

import pytest

from rra.training.budget import ConvergenceReport
from rra.training.run import train

QUIET = ["model=retriever_tiny", "logger=none", "callbacks.progress_bar=null"]


def run(cfg) -> dict:
    """rra.training.run.train() on a composed config; returns the run's train_summary.json."""
    metrics = train(cfg)
    summary = json.loads((Path(cfg.paths.output_dir) / "train_summary.json").read_text())
    assert summary["metrics"] == pytest.approx(metrics)
    return summary


def report(values: list[float], stopped_early: bool = False) -> dict:
    r = ConvergenceReport()
    r.history = [(10 * (i + 1), v) for i, v in enumerate(values)]
    return r.verdict(stopped_early)


def test_a_metric_at_its_ceiling_has_converged():
    """0.92, 0.98, 1.000: the last rise is large, but an accuracy at 1.0 cannot rise any more."""
    assert report([0.92, 0.98, 1.0])["still_improving"] is False
    assert report([0.92, 0.98, 0.995])["still_improving"] is True


def test_every_watched_head_counts():
    """Path accuracy settled but the plan heads still learning: not converged, and it says which."""
    r = ConvergenceReport(also=["val/plan_acc"])
    r.history = [(10, 0.9), (20, 0.95), (30, 0.95), (40, 0.95)]
    r.histories["val/plan_acc"] = [(10, 0.5), (20, 0.6), (30, 0.7), (40, 0.8)]
    out = r.verdict(False)
    assert out["still_improving"] is True and out["improving"] == ["val/plan_acc"]
    assert [h["monitor"] for h in out["heads"]] == ["val/plan_acc"]
    r.histories["val/plan_acc"] = [(10, 0.5), (20, 0.9), (30, 1.0), (40, 1.0)]
    assert r.verdict(False)["still_improving"] is False


def test_convergence_verdict_reads_the_last_validations():
    assert report([0.2, 0.5, 0.7, 0.82])["still_improving"] is True
    assert report([0.2, 0.9, 0.95, 0.95, 0.951])["still_improving"] is False  # within min_delta
    assert report([0.2, 0.5, 0.7, 0.82], stopped_early=True)["still_improving"] is False
    one = report([0.4])
    assert one["still_improving"] is None and "cannot tell" in one["note"]
    falling_loss = ConvergenceReport(monitor="val/loss", mode="min")
    falling_loss.history = [(1, 3.0), (2, 2.0), (3, 1.5)]
    assert falling_loss.verdict(False)["still_improving"] is True


@pytest.fixture(scope="module")
def template_kg(tmp_path_factory) -> Path:
    """bench/template_kg.py's sports KG: 800 questions over 24 masked wordings (one batch per epoch)."""
    from bench.template_kg import write

    out = tmp_path_factory.mktemp("template_kg")
    write(out, train=800, test=200)
    return out


def files(kg: Path) -> list[str]:
    return ["data=files", f"data.kb_path={kg / 'kb.tsv'}", f"data.train_file={kg / 'train.jsonl'}",
            f"data.test_file={kg / 'test.jsonl'}", "name=templates"]


def test_max_steps_shorter_than_an_epoch_validates_at_the_last_step(cfg_train, template_kg):
    """`python train.py trainer.max_steps=10` once trained, then died: early stopping found no
    val/path_acc (an epoch of the built-in data is 23 steps). Here an epoch is 24 items in batches of
    4: six steps, and the budget is 2."""
    summary = run(cfg_train(QUIET + files(template_kg) + ["trainer.max_steps=2", "datamodule.batch_size=4"]))
    assert summary["budget"]["steps_per_epoch"] == 6 and summary["global_step"] == 2
    assert [h["step"] for h in summary["convergence"]["history"]] == [2]  # validated at the last step
    assert "val/path_acc_best" in summary["metrics"] and Path(summary["best_ckpt"]).is_file()


def test_step_floor_trains_a_few_template_kg_to_convergence(cfg_train, template_kg, tmp_path):
    """The default budget on 800 questions / 24 wordings: one step per epoch, so max_epochs=3 alone is
    three steps. The floor (trainer.min_steps) trains it to convergence with no override."""
    summary = run(cfg_train(QUIET + files(template_kg), root=tmp_path / "default"))
    assert summary["data"]["train_items"] <= 24 and summary["budget"]["steps_per_epoch"] == 1
    assert summary["global_step"] == summary["budget"]["planned_steps"] >= 60
    assert summary["convergence"]["still_improving"] is False
    assert summary["metrics"]["test/path_acc"] >= 0.95, summary["metrics"]

    epochs_only = run(cfg_train(QUIET + files(template_kg) + ["trainer.min_steps=0"], root=tmp_path / "epochs_only"))
    assert epochs_only["global_step"] == 3
    # what three steps give: far below the floor's (0.30 or 0.54 as float rounding in the encoder
    # falls: three steps of a random encoder leave near-ties that a last-digit change flips)
    assert epochs_only["metrics"]["test/path_acc"] < summary["metrics"]["test/path_acc"] - 0.3

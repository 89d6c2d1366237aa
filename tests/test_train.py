"""train.py end to end on the toy KG with a tiny encoder: compose API, subprocess, resume, DDP, sweep."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
REPO = Path(__file__).resolve().parents[1]
TOY_CONF = REPO / "tests" / "models" / "conf"
sys.path.insert(0, str(REPO / "tests" / "models"))  # toy_data, for the `_target_`s of data=toy

from rra.training.run import train  # noqa: E402

BASE = ["data=toy", "datamodule=toy", "model=retriever_tiny", "logger=none", f"hydra.searchpath=[file://{TOY_CONF}]",
        "callbacks.progress_bar=null"]


def env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "tests" / "models"), str(REPO)]),
            "WANDB_MODE": "disabled", "RRA_ROOT": "", "HYDRA_FULL_ERROR": "1"}


def run_train(args: list[str], tmp_path: Path, timeout: int = 240) -> subprocess.CompletedProcess:
    flags = [a for a in args if a.startswith("-")]  # argparse wants -m before the overrides
    overrides = [a for a in args if not a.startswith("-")]
    cmd = [sys.executable, str(REPO / "train.py"), *flags, *BASE, f"paths.root_dir={tmp_path}", *overrides]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return proc


def test_fast_dev_run_compose(cfg_train, tmp_path):
    cfg = cfg_train(BASE + ["debug=fast_dev_run"])
    metrics = train(cfg)
    assert {"train/loss", "val/path_acc", "test/path_acc", "test/hop_acc"} <= set(metrics)
    assert 0.0 <= metrics["test/path_acc"] <= 1.0


def test_lightnings_own_fast_dev_run_saves_no_checkpoint(cfg_train, tmp_path):
    """`trainer.fast_dev_run=true`, the switch Lightning users type, is a smoke run like
    `debug=fast_dev_run`: it trains and tests one batch and leaves no checkpoint behind."""
    metrics = train(cfg_train(BASE + ["trainer.fast_dev_run=true"]))
    assert {"train/loss", "test/path_acc"} <= set(metrics)
    assert [p for p in tmp_path.rglob("*.ckpt")] == []


def test_train_publishes_best_and_resumes_from_last(cfg_train, tmp_path):
    from rra.models.retriever import Retriever

    # epochs alone (no step floor, no training on past the plan): resuming with max_epochs=3 is then
    # exactly one more epoch
    cfg = cfg_train(BASE + ["trainer.max_epochs=2", "trainer.min_steps=0", "test=false", "callbacks.budget.extend=0"])
    metrics = train(cfg)
    ckpt_dir = tmp_path / "run" / "checkpoints"
    assert (ckpt_dir / "last.ckpt").is_file()
    best = Path(cfg.paths.best_ckpt)
    assert best == tmp_path / "checkpoints" / "retriever" / "best.ckpt" and best.is_file()
    assert Retriever.load(best).relations == Retriever.load(ckpt_dir / "last.ckpt").relations
    import torch
    published = torch.load(best, weights_only=False)
    assert "optimizer_states" not in published and "state_dict" in published  # inference copy: weights only
    assert metrics["val/path_acc_best"] >= metrics["val/path_acc"] - 1e-9
    # the run keeps the best without optimizer state and last.ckpt with it; the tiny encoder starts at
    # random, so nothing is mixed back to it (tests/models/test_pretrained_mix.py: a pretrained one)
    kept = sorted(p.name for p in ckpt_dir.glob("*.ckpt"))
    assert len(kept) == 2 and "last.ckpt" in kept and kept[0].startswith("best_epoch_"), kept
    assert "optimizer_states" not in torch.load(ckpt_dir / kept[0], weights_only=False)
    summary = __import__("json").loads((tmp_path / "run" / "train_summary.json").read_text())
    assert summary["pretrained_mix"] is None
    assert torch.load(ckpt_dir / "last.ckpt", weights_only=False)["optimizer_states"]

    import torch
    steps_before = torch.load(ckpt_dir / "last.ckpt", weights_only=False)["global_step"]
    resumed = cfg_train(BASE + ["trainer.max_epochs=3", "trainer.min_steps=0", "test=false", "publish_best=false",
                                     "callbacks.budget.extend=0", f"ckpt_path={ckpt_dir / 'last.ckpt'}"])
    train(resumed)
    after = torch.load(ckpt_dir / "last.ckpt", weights_only=False)
    assert after["global_step"] == steps_before * 3 // 2  # one more epoch, not a restart


def test_subprocess_fast_dev_run_leaves_a_small_run_dir(tmp_path):
    proc = run_train(["debug=fast_dev_run"], tmp_path)
    assert "test/path_acc" in proc.stdout + proc.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert not [p for p in files if p.suffix == ".ckpt"]  # a debug run saves no checkpoint
    assert sum(p.stat().st_size for p in files) < 5 * 2**20


@pytest.mark.slow
def test_ddp_processes_train_on_together(tmp_path):
    """Two CPU processes under DDP (gloo) train, and train on past the plan together: rank 0
    decides, every process follows (a rank that stopped alone would leave the other waiting in its
    next collective until the timeout). The verdict is forced to "still improving" (any change
    counts, no noise bar, no ceiling), so the run trains its plan (2 epochs of 2 steps, a validation
    each), then one epoch at a time (half the plan) up to the cap of added steps (1x the plan), and
    ends with its last checkpoint written. (One DDP run for both checks: each start costs two
    processes' imports.)"""
    import json

    proc = run_train(["trainer=ddp_cpu", "trainer.max_epochs=2", "trainer.min_steps=0", "trainer.limit_train_batches=2",
                      "trainer.limit_val_batches=1", "test=false", "publish_best=false",
                      "callbacks.budget.val_every_steps=1", "callbacks.convergence.min_delta=-1",
                      "callbacks.convergence.z=0", "+callbacks.convergence.ceiling=null", "hydra.run.dir=run"], tmp_path)
    out = proc.stdout + proc.stderr
    assert "distributed_backend=gloo" in out and "All distributed processes registered" in out
    assert list((tmp_path / "run").rglob("last.ckpt"))
    summary = json.loads((tmp_path / "run" / "train_summary.json").read_text())
    assert summary["budget"]["planned_steps"] == 4 and summary["global_step"] == 8
    assert [(a["at_step"], a["epochs"], a["steps"]) for a in summary["budget"]["added"]] == [(4, 1, 2), (6, 1, 2)]


@pytest.mark.slow
def test_optuna_sweep_two_trials(tmp_path):
    # Optuna is an optional extra (`pip install -e .[optuna]`); `make test` installs it.
    pytest.importorskip("hydra_plugins.hydra_optuna_sweeper")
    proc = run_train(["-m", "hparams_search=optuna", "hydra.sweeper.n_trials=2",
                      "hydra.sweeper.sampler.n_startup_trials=2", "debug=limit", "name=sweep"], tmp_path)
    runs = sorted((tmp_path / "outputs" / "sweep" / "multiruns").glob("*/*/.hydra"))
    assert len(runs) == 2, proc.stdout[-2000:]
    assert "Best parameters" in proc.stdout + proc.stderr


def test_sweep_jobs_publish_under_their_own_names(tmp_path):
    run_train(["-m", "trainer.max_epochs=1", "test=false", "model.lr=1e-3,2e-3", "name=grid"], tmp_path)
    published = sorted((tmp_path / "checkpoints" / "grid").rglob("best.ckpt"))
    assert len(published) == 2 and all("sweeps" in p.parts for p in published)
    assert len({p.parent for p in published}) == 2 and not (tmp_path / "checkpoints" / "grid" / "best.ckpt").exists()


def test_optuna_direction_and_search_space_follow_the_task(cfg_train, tmp_path):
    """The rewriter minimises its loss and searches its own keys; the retriever maximises accuracy."""
    from rra.config import optuna_direction

    rewriter = cfg_train(BASE + ["task=rewriter", "hparams_search=optuna_rewriter"])
    assert rewriter.hydra.sweeper.direction == "minimize"
    assert set(rewriter.hydra.sweeper.params) == {"model.lr", "model.train_last_layers"}
    retriever = cfg_train(BASE + ["hparams_search=optuna"])
    assert retriever.hydra.sweeper.direction == "maximize" and "model.head_lr" in retriever.hydra.sweeper.params
    with pytest.raises(ValueError, match="max or min"):
        optuna_direction("up")


def test_a_run_shorter_than_the_validation_interval_validates_at_its_end(cfg_train, tmp_path):
    """issue 37 item 12: `python train.py trainer.max_epochs=1 trainer.limit_train_batches=5
    trainer.min_steps=0` (the built-in data: 5 steps, an interval of 10) validated nowhere and then
    failed over the missing optimized metric."""
    from rra.training.run import optimized

    cfg = cfg_train(["model=retriever_tiny", "callbacks.progress_bar=null", "trainer.max_epochs=1",
                     "trainer.limit_train_batches=5", "trainer.min_steps=0"])
    metrics = train(cfg)
    assert "val/path_acc_best" in metrics and optimized(cfg, metrics) == metrics[cfg.optimized_metric]
    assert (tmp_path / "checkpoints" / "retriever" / "best.ckpt").is_file()  # validated, so a best one


def test_a_missing_optimized_metric_is_nan_not_a_failure_after_training(caplog):
    import math

    from omegaconf import OmegaConf

    from rra.training.run import optimized

    value = optimized(OmegaConf.create({"optimized_metric": "val/path_acc_best"}), {"train/loss": 0.3})
    assert math.isnan(value) and "val/path_acc_best' was not logged" in caplog.text


def test_cpu_bf16_trains_in_bf16_where_the_cpu_has_it(cfg_train, tmp_path):
    """trainer=cpu_bf16's precision comes from the CPU's flags: bf16 autocast where it multiplies bfloat16
    itself (AVX512-BF16, AMX), float32 where bfloat16 would be emulated or the flags cannot be read.
    The default trainer=cpu trains in float32."""
    from rra.config import cpu_precision

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n")
    assert cpu_precision(str(info)) == "bf16-mixed"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 amx_tile amx_bf16\n")
    assert cpu_precision(str(info)) == "bf16-mixed"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512bw\n")  # emulated: float32
    assert cpu_precision(str(info)) == "32-true"
    assert cpu_precision(str(tmp_path / "absent")) == "32-true"
    assert cfg_train(["trainer=cpu_bf16"]).trainer.precision == cpu_precision()
    assert cfg_train(["trainer=cpu_bf16"]).trainer.accelerator == "cpu"
    assert cfg_train().trainer.precision == "32-true"  # the default run's trainer


def test_metaqa_keeps_its_conventions_in_its_own_config(cfg_train):
    """experiment=metaqa (and the paper's classifier recipe built on it) has nothing unseen for a
    mix to keep, so it publishes the fine-tuned weights, and its name-merged nodes call for the
    reverse as a negative after a reversed step; the default run keeps the defaults."""
    metaqa = cfg_train(["experiment=metaqa"])
    assert metaqa.get("pretrained_mix") is None
    assert metaqa.datamodule.inverse_negatives == "after_reversed" and not cfg_train().datamodule.inverse_negatives
    assert cfg_train(["experiment=metaqa_classifier"]).get("pretrained_mix") is None
    assert list(cfg_train().pretrained_mix.alphas) == [0.9, 0.8, 0.7]


def test_weight_average_publishes_the_average_and_resumes_from_the_raw_weights(cfg_train, tmp_path):
    """callbacks=weight_average: the published checkpoint is the average that validation chose, weights
    only; last.ckpt keeps the raw weights beside it, and resuming from it goes on training them."""
    import torch

    from rra.models.retriever import Retriever

    over = ["callbacks=weight_average", "callbacks.weight_average.decay=0.5", "trainer.min_steps=0", "test=false",
            "callbacks.budget.extend=0"]
    train(cfg_train(BASE + over + ["trainer.max_epochs=2"]))
    best = tmp_path / "checkpoints" / "retriever" / "best.ckpt"
    published = torch.load(best, weights_only=False)
    assert not {"current_model_state", "averaging_state", "optimizer_states"} & set(published)
    Retriever.load(best)
    last_path = tmp_path / "run" / "checkpoints" / "last.ckpt"
    last = torch.load(last_path, weights_only=False)
    key = next(k for k, v in last["state_dict"].items() if v.is_floating_point() and "encoder" in k)
    assert not torch.equal(last["state_dict"][key], last["current_model_state"][key])  # average and raw differ
    train(cfg_train(BASE + over + ["trainer.max_epochs=3", "publish_best=false", f"ckpt_path={last_path}"]))
    after = torch.load(last_path, weights_only=False)
    assert after["global_step"] == last["global_step"] * 3 // 2 and "current_model_state" in after

"""What `python train.py` does, kept out of the script so tests and benchmarks call it directly
(as rra/eval/run.py is for infer.py).

The run knows no task: it instantiates cfg.datamodule (made from the dataset that cfg.data
describes), cfg.model (plus whatever the datamodule's optional `model_kwargs()` says the model needs
from the data, e.g. the relation vocabulary), callbacks, loggers and trainer; fits; tests the best
checkpoint (its encoder mixed back towards the pretrained one where validation allows:
rra/training/pretrained_mix.py); copies it to `paths.best_ckpt` (where infer.py looks by default);
returns the metrics.
"""
from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import lightning as L
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from rra.config import build_graph
from rra.training.pretrained_mix import choose_pretrained_mix, initial_encoder_state

log = logging.getLogger("train")


def instantiate_all(group: DictConfig | None) -> list:
    """Callbacks / loggers: every entry with a `_target_` (entries set to null are switched off)."""
    if not group:
        return []
    return [instantiate(c) for c in group.values() if c is not None and "_target_" in c]


def publish(best: str, target: str | None) -> None:
    """Copy the best checkpoint to a stable path for inference (atomic rename, so a reader never sees
    half a file). The copy drops optimizer and scheduler state (two thirds of a retriever checkpoint) and,
    with callbacks.weight_average, the raw weights beside the averaged ones;
    resuming uses the run directory's last.ckpt, which keeps them."""
    if not best or not target:
        return
    import torch

    target_path = Path(target)
    target_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = target_path.with_suffix(".tmp")
    ckpt = torch.load(best, map_location="cpu", weights_only=False)
    for key in ("optimizer_states", "lr_schedulers", "current_model_state", "averaging_state"):
        ckpt.pop(key, None)
    torch.save(ckpt, tmp)
    tmp.replace(target_path)
    log.info("best checkpoint %s -> %s", best, target_path)


def published_path(cfg: DictConfig) -> str | None:
    """Where the best checkpoint is published: `paths.best_ckpt` (checkpoints/<name>/best.ckpt) for
    a single run; for a job of a `-m` sweep, checkpoints/<name>/sweeps/<sweep>/<job>/best.ckpt, so
    the jobs of a sweep never overwrite each other or the published model."""
    target = cfg.paths.get("best_ckpt")
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        hc = HydraConfig.get()
        if target and hc.mode == RunMode.MULTIRUN:
            job = f"{hc.job.num}_{hc.job.override_dirname}"[:120] if hc.job.override_dirname else str(hc.job.num)
            return str(Path(target).parent / "sweeps" / Path(hc.sweep.dir).name / job.replace("/", "_") / "best.ckpt")
    except ValueError:  # composed without Hydra's runtime config (tests, notebooks): a single run
        pass
    return target


def build_datamodule(cfg: DictConfig):
    """cfg.datamodule, handed the graph of the `graph` group (built on first use, from the dataset's
    KG file): the retriever's data always, the rewriter's only for silver pairs from data.kb_path."""
    kwargs = {}
    if cfg.get("graph") is not None:
        reads_file = "path" in cfg.graph and cfg.graph.get("store_path") is None
        if not reads_file or OmegaConf.select(cfg, "data.kb_path") is not None:
            kwargs["kg"] = lambda: build_graph(cfg)  # called once, by the datamodule's setup
    if cfg.datamodule.get("link_topics") is True:  # training questions without topics, linked as answering links them
        from rra.linking import link_training_topics

        kwargs["link_topics"] = link_training_topics
    return instantiate(cfg.datamodule, **kwargs)


def log_data_summary(loggers: list, summary: dict) -> None:
    """The data's supervision coverage as metrics (a dashboard shows them per run), the rest as config."""
    figures = {}
    for split, c in (summary.get("coverage") or {}).items():
        if c.get("coverage") is not None:
            figures[f"data/{split}_coverage"] = c["coverage"]
        for hop, b in c.get("per_hop", {}).items():
            figures[f"data/{split}_coverage_{hop}hop"] = b["coverage"]
    for logger in loggers:
        logger.log_hyperparams({"data_summary": summary})
        if figures:
            logger.log_metrics(figures)


def encoder_coverage(model, datamodule) -> list:
    """How well the model's encoder reads the training (and test) questions (rra.data.coverage);
    what is above its limit is logged as a warning now, before hours of training on [UNK]."""
    from rra.data.coverage import training_coverage

    splits = getattr(datamodule, "splits", None)
    if not isinstance(splits, dict) or not all(isinstance(x, dict) and "question" in x
                                               for x in (splits.get("train") or [])[:1]):
        return []  # not a question dataset (a KG-to-text corpus)
    coverage = training_coverage(model, splits)
    for c in coverage:
        log.info("encoder coverage (%s): %.1f%% unknown tokens, %.1f%% of questions share their tokens with %s",
                 c.split, 100 * c.unknown_share, 100 * c.shared_share, c.shared_with)
        for w in c.warnings:
            log.warning(w)
    return coverage


def validate_within_budget(trainer_cfg: DictConfig) -> None:
    """A step budget (`trainer.max_steps`) shorter than the validation interval would end training
    before any validation: no best checkpoint to publish or test, no metric for a sweep. Validate
    at the last step instead (`trainer.max_steps=150` with the rewriter's interval of 200)."""
    steps, every = trainer_cfg.get("max_steps", -1), trainer_cfg.get("val_check_interval")
    batches = steps * int(trainer_cfg.get("accumulate_grad_batches", 1) or 1) if steps and steps > 0 else None
    if isinstance(every, int) and not isinstance(every, bool) and batches and every > batches:
        log.warning("trainer.val_check_interval=%d is past trainer.max_steps=%d: validating at the last step",
                    every, steps)
        trainer_cfg.val_check_interval = batches


def build_callbacks(cfg: DictConfig, loggers: list) -> list:
    """The `callbacks` group. A smoke run (`trainer.fast_dev_run`, Lightning's own switch) saves no
    checkpoint, as `debug=fast_dev_run` does: its weights saw one batch."""
    callbacks = instantiate_all(cfg.get("callbacks"))
    if not loggers:  # LearningRateMonitor refuses to run without a logger (logger=none)
        callbacks = [c for c in callbacks if not isinstance(c, L.pytorch.callbacks.LearningRateMonitor)]
    if cfg.trainer.get("fast_dev_run"):
        callbacks = [c for c in callbacks if not isinstance(c, L.pytorch.callbacks.ModelCheckpoint)]
    return callbacks


def train(cfg: DictConfig) -> dict[str, float]:
    L.seed_everything(cfg.seed, workers=True)
    validate_within_budget(cfg.trainer)
    log.info("datamodule <%s>", cfg.datamodule._target_)
    datamodule = build_datamodule(cfg)
    data_kwargs = datamodule.model_kwargs() if hasattr(datamodule, "model_kwargs") else {}
    log.info("model <%s>", cfg.model._target_)
    model = instantiate(cfg.model, **data_kwargs)
    if hasattr(model, "training_wordings") and hasattr(datamodule, "training_wordings"):
        model.training_wordings = datamodule.training_wordings()  # kept in the checkpoint
    if hasattr(model, "attach_graph") and getattr(datamodule, "kg", None) is not None:
        model.attach_graph(datamodule.kg, getattr(datamodule, "relation_text", None))  # validation decodes on it
    coverage = encoder_coverage(model, datamodule)
    loggers = instantiate_all(cfg.get("logger"))
    callbacks = build_callbacks(cfg, loggers)
    smoke = bool(cfg.trainer.get("fast_dev_run"))
    trainer: L.Trainer = instantiate(cfg.trainer, callbacks=callbacks, logger=loggers or False,
                                     **({"enable_checkpointing": False} if smoke else {}))
    for logger in loggers:
        logger.log_hyperparams(OmegaConf.to_container(cfg, resolve=True))
    if getattr(datamodule, "summary", None):
        log_data_summary(loggers, datamodule.summary)

    metrics: dict[str, float] = {}
    mix_cfg = cfg.get("pretrained_mix") if cfg.get("train") and not smoke else None
    initial = initial_encoder_state(model) if mix_cfg else None  # before fit: the pretrained weights
    start = time.perf_counter()
    if cfg.get("train"):
        trainer.fit(model, datamodule=datamodule, ckpt_path=cfg.get("ckpt_path"))
        metrics.update(trainer.callback_metrics)
    fit_s, epochs = time.perf_counter() - start, trainer.current_epoch
    best = trainer.checkpoint_callback.best_model_path if trainer.checkpoint_callback else ""
    mixed = choose_pretrained_mix(trainer, model, datamodule, best, initial, cfg.task.monitor, cfg.task.mode,
                                  **OmegaConf.to_container(mix_cfg)) if initial is not None else None
    if mixed:
        best = mixed.pop("ckpt")
    published = published_path(cfg) if trainer.is_global_zero and cfg.get("publish_best", True) else None
    if published:
        publish(best, published)
    if cfg.get("test"):
        if not best:
            log.warning("no best checkpoint (fast_dev_run or no validation): testing current weights")
        trainer.test(model, datamodule=datamodule, ckpt_path=best or None)
        # test's own figures: validation ones are fit's (the mixes' validations are in pretrained_mix)
        metrics.update({k: v for k, v in trainer.callback_metrics.items() if not k.startswith("val/")})
    metrics = {k: float(v) for k, v in metrics.items()}
    log.info("metrics: %s", {k: round(v, 4) for k, v in sorted(metrics.items())})
    if trainer.is_global_zero:  # a machine-readable record of the run beside its checkpoints
        out = Path(cfg.paths.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        summary = {"name": cfg.name, "fit_seconds": fit_s, "epochs": epochs, "global_step": trainer.global_step,
                   "best_ckpt": best, "pretrained_mix": mixed, "metrics": metrics,
                   "data": getattr(datamodule, "summary", {}),
                   "encoder_coverage": [c.to_dict() for c in coverage],
                   "warnings": [w for c in coverage for w in c.warnings]}
        for callback in callbacks:  # e.g. the training budget's plan and the convergence verdict
            summary.update(callback.summary() if hasattr(callback, "summary") else {})
        (out / "train_summary.json").write_text(json.dumps(summary, indent=1, default=str))
        if published and best:  # online W&B: the published model as an artifact (lineage for infer runs)
            from rra.training.dashboard import log_model_artifact

            log_model_artifact(loggers, published, cfg.name, summary)
    return metrics


def optimized(cfg: DictConfig, metrics: dict[str, float]) -> float | None:
    """The metric a sweep optimises (`optimized_metric`). A run that never logged it (no
    validation ran, e.g. `trainer.limit_val_batches=0`) has trained and saved its results: it
    returns NaN, which a sweep records as a failed trial, and says why, instead of failing now."""
    name = cfg.get("optimized_metric")
    if name and name not in metrics:
        log.error("optimized_metric %r was not logged (no validation ran?); the run's results are kept, a sweep "
                  "gets NaN for it; logged: %s", name, sorted(metrics))
        return float("nan")
    return metrics.get(name) if name else None

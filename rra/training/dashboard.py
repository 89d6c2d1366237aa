"""What a training run shows on a dashboard besides its curves (learning rate and throughput are
logged as before): the data's supervision coverage per hop, and per validation epoch the hop and
path confusions (what the retriever predicts instead of the gold, most frequent first) and a
sample of validation predictions. A Lightning callback (conf/callbacks/default.yaml:
`dashboard`), reading the model's `decoded` validation records (rra.models.retriever) and the
datamodule's `summary`; a model that records none (the rewriter) simply gets no confusion tables.
Tables go to W&B and to the CSV logger's folder through rra.eval.dashboard.

`log_model_artifact` publishes the best checkpoint as a W&B model artifact (online runs only; an
offline run records nothing to upload), with the model card as its description.
"""
from __future__ import annotations

import json
import logging
import random
from collections import Counter
from pathlib import Path

import lightning as L

from rra.eval.dashboard import Table, log_tables

log = logging.getLogger(__name__)


def coverage_table(summary: dict) -> Table | None:
    """Supervision coverage per split and hop: questions, covered, coverage %."""
    rows = []
    for split, c in (summary.get("coverage") or {}).items():
        for hop, b in sorted((c.get("per_hop") or {}).items(), key=lambda kv: str(kv[0])):
            rows.append([split, str(hop), b.get("questions", b.get("n")), b.get("covered"), b.get("coverage")])
        if c.get("coverage") is not None:
            rows.append([split, "all", c.get("questions", c.get("n")), c.get("covered"), c.get("coverage")])
    return Table("data_coverage", ["split", "hop", "questions", "covered", "coverage"], rows, chart=None) if rows else None


def confusion_tables(decoded: list[dict], epoch: int, top: int = 20) -> list[Table]:
    """Hop confusion (every gold -> predicted pair) and the `top` most frequent path confusions."""
    hops = Counter((d["gold_hop"], d["pred_hop"]) for d in decoded)
    paths = Counter((" > ".join(d["gold_path"]), " > ".join(d["pred_path"])) for d in decoded if not d["correct"])
    return [Table("val_hop_confusion", ["epoch", "gold_hop", "pred_hop", "questions"],
                  [[epoch, g, p, n] for (g, p), n in sorted(hops.items())]),
            Table("val_path_confusion", ["epoch", "gold_path", "pred_path", "questions"],
                  [[epoch, g, p, n] for (g, p), n in paths.most_common(top)])]


def sample_table(decoded: list[dict], epoch: int, k: int, seed: int = 0) -> Table:
    """`k` validation predictions, the same questions every epoch (seeded), wrong ones first."""
    picked = random.Random(seed).sample(range(len(decoded)), min(k, len(decoded)))
    rows = [[epoch, d["question"], " > ".join(d["gold_path"]), " > ".join(d["pred_path"]), d["gold_hop"],
             d["pred_hop"], d["correct"]] for d in (decoded[i] for i in sorted(picked))]
    rows.sort(key=lambda r: r[-1])
    return Table("val_predictions", ["epoch", "question", "gold_path", "pred_path", "gold_hop", "pred_hop", "correct"], rows)


class TrainingDashboard(L.Callback):
    def __init__(self, sample_size: int = 50, top_confusions: int = 20):
        self.sample_size, self.top_confusions = sample_size, top_confusions

    def _log(self, trainer: L.Trainer, tables: list[Table], suffix: str = "") -> None:
        for logger in trainer.loggers:
            try:
                log_tables(logger, tables, suffix=suffix)
            except Exception as err:  # a dashboard problem must never stop training
                log.warning("dashboard: %s could not log %s: %s: %s", type(logger).__name__,
                            [t.name for t in tables], type(err).__name__, err)

    def on_fit_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        table = coverage_table(getattr(trainer.datamodule, "summary", None) or {})
        if table and trainer.is_global_zero:
            self._log(trainer, [table])

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        decoded = getattr(pl_module, "decoded", None)
        if not decoded or trainer.sanity_checking or not trainer.is_global_zero or trainer.state.fn != "fit":
            return
        epoch = trainer.current_epoch
        self._log(trainer, confusion_tables(decoded, epoch, self.top_confusions)
                  + [sample_table(decoded, epoch, self.sample_size)], suffix=f"_epoch{epoch}")


def log_model_artifact(loggers: list, ckpt: str | Path | None, name: str, train_summary: dict | None = None) -> str | None:
    """The published checkpoint as a W&B model artifact of every online W&B logger, its model
    card (rra.training.export) as the description; a `<ckpt>.wandb.json` beside the checkpoint names
    the artifact, so an infer run that loads it records it as its input (lineage). Returns the
    artifact's name, or None (no online W&B logger, no checkpoint)."""
    if not ckpt or not Path(ckpt).is_file():
        return None
    for logger in loggers:
        if type(logger).__name__ != "WandbLogger":
            continue
        run = logger.experiment
        if getattr(run, "offline", False) or getattr(getattr(run, "settings", None), "mode", "") in ("offline", "disabled"):
            continue
        import wandb

        from rra.training.export import model_card

        card = ""
        try:
            import torch

            raw = torch.load(ckpt, map_location="cpu", weights_only=False)
            config = {"rra": raw.get("rra", {}), "source_checkpoint": str(ckpt), "epoch": raw.get("epoch"),
                      "global_step": raw.get("global_step")}
            card = model_card(config, train_summary, Path(ckpt).parent)
        except Exception as err:  # the weights still go up; the card is a courtesy
            log.warning("model card for %s: %s", ckpt, err)
        artifact = wandb.Artifact(f"{name}-model", type="model", description=card,
                                  metadata={"source": str(ckpt)})
        artifact.add_file(str(ckpt), name="best.ckpt")
        logged = run.log_artifact(artifact, aliases=["latest", "best"])
        logged.wait()
        qualified = f"{run.entity}/{run.project}/{name}-model:{logged.version}"
        Path(f"{ckpt}.wandb.json").write_text(json.dumps({"artifact": qualified}) + "\n", encoding="utf-8")
        return qualified
    return None

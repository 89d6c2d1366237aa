"""How long a model trains, counted in optimizer steps as well as epochs, and whether it converged.

Why steps: the retriever trains on de-duplicated masked questions, so an epoch is as long as the
number of distinct question wordings, not the number of questions. A KG whose 5,000 questions
repeat 24 templates has one batch per epoch: `max_epochs: 3` was three optimizer steps, and the
model had learnt little more than the most frequent question. `TrainingBudget` makes Lightning's
`trainer.min_steps` a real floor (Lightning itself stops at `max_epochs` even below it) and keeps
validation at a sensible cadence on such short epochs:

- planned steps = max(max_epochs x steps per epoch, min_steps), capped by `max_steps`; max_epochs is
  raised as far as the floor needs (a user's `trainer.max_steps` always wins: it is an explicit budget);
- validation runs every epoch, or every `val_every_steps` optimizer steps where an epoch is shorter
  (so early stopping's patience and the checkpoints are not spent on one-step epochs);
- validation also runs at the very last step, wherever it falls: a `trainer.max_steps` shorter than
  an epoch (`python train.py trainer.max_steps=10`) validates at step 10 instead of ending with no
  metric for early stopping, checkpointing and the sweeper.

`ConvergenceReport` watches the monitored metric at every validation and says, at the end of
training, whether it was still rising (logged as a loud warning, and returned by `summary()` for
train_summary.json) with the setting that gives the run more steps.

Training on while still improving (`TrainingBudget(extend=...)`): at the planned end, where the
convergence report says the metric the checkpoint is chosen on (its `monitor`) is still rising
beyond validation noise, half the planned epochs are trained again (at least one) with the learning
rate restarted at `restart_lr` x its peak and decaying linearly to 0 over them, then checked again,
up to `extend` x the plan in added steps. Why: a KG of many relations and plan shapes (the scholarly benchmark KG)
was still learning at the default 3 epochs (96.2 Hits@1; 98.6 with a hand-set `trainer.min_steps`),
and a user should not have to read a warning to get the second figure. A monitor already within the report's
`headroom` of its ceiling is not trained on (the built-in KG: 0.992 at its plan). Never under an explicit
`trainer.max_steps`, after early stopping, or with `extend=0`; under DDP every process follows rank
0's verdict.
"""
from __future__ import annotations

import logging
import math

import lightning as L
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.callbacks.early_stopping import EarlyStoppingReason

log = logging.getLogger(__name__)


def steps_per_epoch(trainer: L.Trainer) -> int | None:
    """Optimizer steps in one training epoch (after limit_train_batches, gradient accumulation and
    the data-parallel split), or None where the loader has no length."""
    loader = trainer.datamodule.train_dataloader() if trainer.datamodule else None
    try:
        batches = len(loader)
    except TypeError:
        return None
    batches = math.ceil(batches / max(trainer.world_size, 1))
    limit = trainer.limit_train_batches
    if isinstance(limit, int):
        batches = min(batches, limit)
    elif limit is not None:
        batches = int(batches * float(limit))
    return max(1, math.ceil(batches / max(trainer.accumulate_grad_batches, 1))) if batches else None


class TrainingBudget(Callback):
    """The step floor (`trainer.min_steps`), validation cadence, last-step validation, and training
    on while still improving (module doc)."""

    def __init__(self, val_every_steps: int = 10, extend: float = 1.0, restart_lr: float = 0.5):
        if extend < 0 or not 0 < restart_lr <= 1:
            raise ValueError(f"extend must be >= 0 and restart_lr in (0, 1], got extend={extend}, "
                             f"restart_lr={restart_lr}")
        self.val_every_steps = max(1, int(val_every_steps))
        self.extend, self.restart_lr = float(extend), float(restart_lr)
        self.plan: dict = {}
        self.added: list[dict] = []
        self._last_step: int | None = None

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        # before the optimizers and the fit loop's data setup read max_epochs and the val interval
        if stage != "fit" or trainer.fast_dev_run or trainer.overfit_batches:
            return
        fit = trainer.fit_loop
        spe = steps_per_epoch(trainer)
        if spe is None or fit.max_epochs is None or fit.max_epochs < 0:
            return
        max_steps = fit.max_steps if fit.max_steps and fit.max_steps > 0 else None
        floor = int(fit.min_steps or 0)
        if max_steps is not None and floor > max_steps:
            floor = fit.epoch_loop.min_steps = max_steps  # the explicit step budget wins over the default floor
        epochs = max(fit.max_epochs, math.ceil(floor / spe))  # whole epochs: the LR schedule ends with them
        planned = epochs * spe if max_steps is None else min(epochs * spe, max_steps)
        if epochs > fit.max_epochs:
            log.info("training budget: %d optimizer steps per epoch, so trainer.max_epochs=%d is %d steps, "
                     "under trainer.min_steps=%d: training up to %d epochs", spe, fit.max_epochs,
                     fit.max_epochs * spe, floor, epochs)
            fit.max_epochs = epochs
        interval = spe if spe >= self.val_every_steps else self.val_every_steps
        accumulate = max(trainer.accumulate_grad_batches, 1)
        if trainer.check_val_every_n_epoch is not None and trainer.val_check_interval == 1.0:
            if planned < spe:
                # the budget ends inside the first epoch (trainer.max_steps=10): validate at its last
                # step (Lightning would wait for an epoch end that never comes)
                trainer.val_check_interval = interval = planned * accumulate
            elif interval != spe:
                # validate every `interval` optimizer steps across epochs, not after every short epoch
                trainer.check_val_every_n_epoch = None
                trainer.val_check_interval = interval * accumulate
        self._last_step = planned
        self.plan = {"steps_per_epoch": spe, "planned_steps": planned, "max_epochs": fit.max_epochs,
                     "min_steps": floor, "max_steps": max_steps,
                     "val_every_steps": interval}
        log.info("training budget: %s", self.plan)

    def summary(self) -> dict:
        return {"budget": {**self.plan, "added": self.added}} if self.plan else {}

    def on_train_batch_end(self, trainer: L.Trainer, pl_module, outputs, batch, batch_idx) -> None:
        # Lightning validates in the same batch when should_stop is set and the run may stop (its
        # min_steps and min_epochs met): the last step is always validated, wherever the budget ends
        # it. At the planned last step those floors are already counted in (`setup`), so they are
        # lifted: a one-epoch run shorter than the validation interval (max_epochs=1 with
        # min_epochs=1, 5 batches, an interval of 10) validated nowhere before.
        if self._last_step is not None and trainer.global_step >= self._last_step:
            trainer.should_stop = True
            trainer.fit_loop.min_epochs = 0
            trainer.fit_loop.epoch_loop.min_steps = 0

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module) -> None:
        # after the epoch's validations (the convergence report has recorded the last one) and before
        # the fit loop asks whether it is done
        if self._last_step is None or trainer.global_step < self._last_step or not trainer.should_stop:
            return
        decision = self._decide(trainer) if trainer.is_global_zero else None
        decision = trainer.strategy.broadcast(decision, src=0)  # every DDP process trains the same steps
        if not decision:
            return
        epochs, start = decision["epochs"], trainer.global_step
        steps = epochs * self.plan["steps_per_epoch"]
        rates = restart_schedules(trainer, start, start + steps, self.restart_lr)
        trainer.fit_loop.max_epochs += epochs
        trainer.should_stop = False
        self._last_step = start + steps
        self.added.append({**decision, "steps": steps, "until_step": self._last_step, "restarted_lr": rates})
        log.warning("training budget: %s still improving at step %d (the planned end): %d more epochs "
                    "(%d steps) with the learning rate restarted at %.2fx its peak; "
                    "callbacks.budget.extend=0 ends training at the plan", ", ".join(self.added[-1]["improving"]),
                    start, epochs, steps, self.restart_lr)

    def _decide(self, trainer: L.Trainer) -> dict | None:
        """Rank 0's verdict at the planned end: {epochs, at_step, improving, why} to train on, or None."""
        if self.extend <= 0 or self.plan.get("max_steps") is not None:
            return None
        if any(c.stopping_reason != EarlyStoppingReason.NOT_STOPPED for c in trainer.early_stopping_callbacks):
            return None
        report = next((c for c in trainer.callbacks if isinstance(c, ConvergenceReport)), None)
        if report is None:
            return None
        # The report's own on_validation_end has recorded this epoch's validations (reading
        # trainer.callback_metrics here would be a collective that rank 0 alone enters: a DDP
        # deadlock). The monitor decides, the metric the checkpoint is chosen on: more steps pay only
        # if they can give a better checkpoint by it (a head rising within its noise is reported).
        verdict = report.verdict(stopped_early=False)
        if not report.judge(report.monitor, stopped_early=False).get("still_improving"):
            return None
        spe, planned = self.plan["steps_per_epoch"], self.plan["planned_steps"]
        left = int(self.extend * planned) - sum(a.get("steps", 0) for a in self.added)
        epochs = min(max(1, math.ceil(self.plan["max_epochs"] / 2)), left // spe)
        gains = {v["monitor"]: {"gain": v.get("recent_gain"), "noise_bar": v.get("noise_bar")}
                 for v in [verdict, *verdict.get("heads", [])] if v.get("still_improving")}
        if epochs <= 0:
            log.info("training budget: still improving at step %d, but %.1fx the plan is trained already "
                     "(callbacks.budget.extend=%s)", trainer.global_step, 1 + self.extend, self.extend)
            return None
        return {"at_step": trainer.global_step, "epochs": epochs,
                "improving": verdict.get("improving") or [report.monitor], "why": gains}


def restart_schedules(trainer: L.Trainer, start: int, end: int, peak: float) -> list[float]:
    """Restart each step-wise learning-rate schedule that has decayed to 0 by `start`: from
    `peak` x its base rate there, decaying linearly to 0 at `end`. A schedule that still has a rate at
    `start` (constant) is left as it is. The rate of the first added step is set at once (the
    scheduler already stepped to it with the old rule). Returns the restarted rates."""
    from torch.optim.lr_scheduler import LambdaLR

    rates = []
    for config in trainer.lr_scheduler_configs:
        scheduler = config.scheduler
        if not isinstance(scheduler, LambdaLR) or config.interval != "step":
            log.info("training budget: %s is not a step-wise LambdaLR; its rate is left as it is",
                     type(scheduler).__name__)
            continue
        at = scheduler.last_epoch  # the step whose rate the next optimizer step uses
        new = []
        for rule in scheduler.lr_lambdas:
            if rule(at) > 0:
                new.append(rule)
                continue

            def restarted(step, rule=rule):
                if step < start:
                    return rule(step)
                return peak * max(0.0, (end - step) / max(1, end - start))
            new.append(restarted)
        scheduler.lr_lambdas = new
        for group, base, rule in zip(scheduler.optimizer.param_groups, scheduler.base_lrs, new):
            group["lr"] = base * rule(at)
        scheduler._last_lr = [g["lr"] for g in scheduler.optimizer.param_groups]
        rates += scheduler._last_lr
    return rates


class ConvergenceReport(Callback):
    """Was any metric the checkpoint is selected on still improving when training ended? (module doc)

    It watches `monitor` and every metric of `also` that the model logs (the plan heads' accuracy
    beside the path accuracy: a checkpoint serves both). Still improving = the best value of the
    last `window` fraction of validations (at least the last one) beats every earlier validation by
    more than `min_delta` and by more than `z` standard errors of the difference of the two
    validations, early stopping did not end the run, and the metric is not at its ceiling (an
    accuracy of 1.0 cannot rise further: 0.92, 0.98, 1.000 has converged) nor its best value within
    `headroom` of it (more steps could add at most that much).

    The standard errors come from the model (`validation_noise()`, by logged name: the retriever's
    sqrt(p(1-p)/n) over its validation items); a model without them is judged on min_delta alone.
    Why: on 154 plan-validation questions one more right is +0.0065, which min_delta alone read as
    "still learning"; at z=1 the scholarly KG's +0.059 path accuracy on 320 validation paths (a bar
    of 0.025) still is.

    Why `headroom` (conf/task/retriever.yaml: 0.02): with a decaying learning rate the last
    validation nearly always rises (the rate reaches 0 there), so a run close to its ceiling read as
    still improving and the training budget added half its planned epochs. The built-in KG at 0.992
    rose +0.0275 at its plan and was trained 94 steps more: 0.9935 on validation and the same test
    Hits@1 (99.15, one training each way, bench/results/builtin_default_run.json), for +50% of the fit."""

    def __init__(self, monitor: str = "val/path_acc", mode: str = "max", min_delta: float = 0.005,
                 window: float = 0.25, also: list[str] | tuple[str, ...] = (), ceiling: float | None = 1.0,
                 z: float = 1.0, headroom: float = 0.0):
        if mode not in ("max", "min"):
            raise ValueError(f"mode must be 'max' or 'min', not {mode!r}")
        if headroom < 0:
            raise ValueError(f"headroom must be >= 0, not {headroom}")
        self.monitor, self.mode, self.min_delta, self.window, self.z = monitor, mode, min_delta, window, float(z)
        self.also, self.ceiling, self.headroom = [m for m in also if m != monitor], ceiling, float(headroom)
        self.histories: dict[str, list[tuple[int, float]]] = {}  # metric -> (global step, value) per validation
        self.errors: dict[str, dict[int, float]] = {}  # metric -> global step -> standard error of its value
        self.report: dict = {}

    @property
    def history(self) -> list[tuple[int, float]]:
        return self.histories.get(self.monitor, [])

    @history.setter
    def history(self, values: list[tuple[int, float]]) -> None:
        self.histories[self.monitor] = list(values)

    def on_validation_end(self, trainer: L.Trainer, pl_module) -> None:
        """This validation's value (and standard error, where the model reports one) of each watched
        metric. Recording the same step twice keeps the last."""
        if trainer.sanity_checking or trainer.state.fn != "fit":  # validate() after fit is not its history
            return
        step = trainer.global_step
        noise = pl_module.validation_noise() if hasattr(pl_module, "validation_noise") else {}
        for name in [self.monitor, *self.also]:
            value = trainer.callback_metrics.get(name)
            if value is None:
                continue
            h = self.histories.setdefault(name, [])
            if h and h[-1][0] == step:  # validated twice at one step: keep the last
                h.pop()
            h.append((step, float(value)))
            if noise.get(name) is not None:
                self.errors.setdefault(name, {})[step] = float(noise[name])

    def judge(self, name: str, stopped_early: bool) -> dict:
        """One metric's verdict (what `verdict` gives for each watched metric)."""
        history = self.histories.get(name, [])
        values = [v for _, v in history]
        sign = 1.0 if self.mode == "max" else -1.0
        out = {"monitor": name, "validations": len(values), "stopped_early": stopped_early,
               "history": [{"step": s, "value": round(v, 5)} for s, v in history]}
        if len(values) < 2:
            return {**out, "still_improving": None, "note": "fewer than two validations: cannot tell"}
        recent = max(1, math.ceil(self.window * len(values)))
        i_recent = max(range(len(values) - recent, len(values)), key=lambda i: sign * values[i])
        i_before = max(range(len(values) - recent), key=lambda i: sign * values[i])
        gain = sign * (values[i_recent] - values[i_before])
        known = self._noise_bar(name, history[i_recent][0], history[i_before][0])
        bar = known or 0.0
        at_ceiling = self.ceiling is not None and self.mode == "max" and values[-1] >= self.ceiling - 1e-9
        near_ceiling = self.ceiling is not None and self.mode == "max" and self.headroom > 0 and \
            max(values) >= self.ceiling - self.headroom - 1e-9
        beyond_noise = bar <= 0 or gain > bar  # z=0 (or no standard errors): min_delta alone decides
        improving = gain > self.min_delta and beyond_noise and not stopped_early and not at_ceiling \
            and not near_ceiling
        out.update(still_improving=bool(improving),
                   recent_gain=round(sign * gain, 5), recent_validations=recent)
        if known is not None:
            out["noise_bar"] = round(bar, 5)  # z standard errors of the difference of the two validations
        if at_ceiling:
            out["note"] = f"at its ceiling ({self.ceiling})"
        elif near_ceiling:
            out["note"] = f"within {self.headroom:g} of its ceiling ({self.ceiling}): at most that much left to gain"
        elif gain > self.min_delta and not beyond_noise:
            out["note"] = f"the rise ({gain:.4f}) is within validation noise ({bar:.4f})"
        return out

    def _noise_bar(self, name: str, step_a: int, step_b: int) -> float | None:
        """z standard errors of the difference of a metric's validations at two steps (None: unknown)."""
        errors = self.errors.get(name, {})
        se = [errors.get(step_a), errors.get(step_b)]
        return self.z * math.sqrt(sum(e * e for e in se)) if None not in se else None

    def verdict(self, stopped_early: bool) -> dict:
        """The monitor's verdict, with the other watched metrics under `heads`; `still_improving`
        is true when any of them still was."""
        out = self.judge(self.monitor, stopped_early)
        others = [self.judge(name, stopped_early) for name in self.also if self.histories.get(name)]
        if others:
            out["heads"] = others
            improving = [v["monitor"] for v in [out, *others] if v.get("still_improving")]
            if improving:
                out["still_improving"], out["improving"] = True, improving
        return out

    def on_fit_end(self, trainer: L.Trainer, pl_module) -> None:
        stopped_early = any(c.stopping_reason != EarlyStoppingReason.NOT_STOPPED for c in trainer.early_stopping_callbacks)
        self.report = self.verdict(stopped_early)
        if self.report.get("still_improving"):
            steps = trainer.global_step
            name = (self.report.get("improving") or [self.monitor])[0]
            h = self.histories[name]
            first, last = h[0][1], h[-1][1]
            one = self.judge(name, stopped_early)
            self.report["advice"] = (f"train longer, e.g. trainer.min_steps={2 * steps} "
                                     f"(or trainer.max_epochs={2 * max(trainer.current_epoch, 1)})")
            noise = f", noise bar {one['noise_bar']:.4f}" if one.get("noise_bar") else ""
            monitor = self.judge(self.monitor, stopped_early)
            settled = "" if monitor.get("still_improving") else (
                f"\n{self.monitor}, which chooses the checkpoint, had settled ({monitor.get('recent_gain', 0):+.4f}"
                + (f" within its noise bar {monitor['noise_bar']:.4f}" if monitor.get("noise_bar") else "")
                + "): the training budget trains on only for it, and more steps may not give a better checkpoint.")
            bar = "!" * 72
            log.warning("\n%s\nNOT CONVERGED: %s was still improving when training ended (%.4f at the first "
                        "validation, %.4f at the last, +%.4f over the last %d of %d validations%s, %d steps).%s\n"
                        "The checkpoint is usable but under-trained: %s.\n%s", bar, name, first, last,
                        abs(one["recent_gain"]), one["recent_validations"],
                        one["validations"], noise, steps, settled, self.report["advice"], bar)
        elif self.report.get("still_improving") is False:
            sign = 1.0 if self.mode == "max" else -1.0
            best_step, best = max(self.history, key=lambda sv: sign * sv[1])
            last = self.history[-1][1]
            fall = sign * (best - last)
            bar = self._noise_bar(self.monitor, best_step, self.history[-1][0]) or 0.0
            if fall > max(self.min_delta, bar):  # not a plateau: the last validations lost what the best had
                self.report["declined"] = {"best_step": best_step, "best": round(best, 5), "last": round(last, 5),
                                           "fall": round(fall, 5), "noise_bar": round(bar, 5)}
                log.info("converged: %s was best at step %d (%.4f) and ended at %.4f, %.4f below it (beyond the "
                         "validation noise bar %.4f): the best step's checkpoint is published; the steps after it "
                         "fit the training questions, not the validation ones", self.monitor, best_step, best, last,
                         fall, bar)
            else:
                log.info("converged: %s settled at %.4f (best %.4f) over %d validations", self.monitor,
                         last, best, len(self.history))

    def summary(self) -> dict:
        return {"convergence": self.report} if self.report else {}

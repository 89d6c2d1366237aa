"""The published encoder leans back towards the pretrained one: weight-space ensembling (WiSE-FT,
Wortsman et al., CVPR 2022), `theta = alpha * fine-tuned + (1 - alpha) * pretrained`.

Why: fine-tuning on one KG's training questions teaches the encoder that KG's phrasings and relation
names, and unteaches some of what the pretrained encoder knew about reading any text. A relation the
training set never asked about, a phrasing it never used, or another KG (whose relations are read
by name, rra.models.relation_scorer) is then read worse than the untrained encoder reads it. Mixing
the weights back costs nothing at inference (one set of weights, one encoder pass) and keeps most of
what fine-tuning learnt.

How alpha is chosen: after training, the best checkpoint is mixed at `alphas` (0.9, 0.8, 0.7: from
the fine-tuned end down; conf/task/retriever.yaml says why not lower) and validated; the lowest alpha
whose validation monitor is at least the fine-tuned checkpoint's (less `tolerance`) is published.
The walk stops once a mix falls `stop_below` under it (further mixes only lose more). No loss on
validation, not a small one: in bench/results/bench_gpu_mix.json a mix 0.004 under the fine-tuned
monitor lost 1.3 points of 2-hop Hits@1 on the test set. Where validation cannot tell them apart,
the pretrained reading is kept.
`pretrained_mix=null` (or `alphas: []`) publishes the fine-tuned weights as they are.
"""
from __future__ import annotations

import logging
from pathlib import Path

import torch

log = logging.getLogger("train")

PREFIX = "encoder."  # the pretrained part of a model: its `encoder` module (the heads are new)


def initial_encoder_state(model: torch.nn.Module) -> dict[str, torch.Tensor] | None:
    """A CPU copy of the encoder's weights before training (the pretrained ones), or None for a
    model without an `encoder`, with one that is frozen, or with one initialised at random
    (`pretrained: false` or an `encoder_config`: its start is noise, not a reading worth keeping)."""
    encoder = getattr(model, "encoder", None)
    if encoder is None or not any(p.requires_grad for p in encoder.parameters()):
        return None
    hp = getattr(model, "hparams", None) or {}
    if not hp.get("pretrained", True) or hp.get("encoder_config"):
        return None
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()
            if k.startswith(PREFIX) and v.is_floating_point()}


def mix_state(trained: dict[str, torch.Tensor], initial: dict[str, torch.Tensor], alpha: float) -> dict:
    """`trained` with every tensor that `initial` holds replaced by alpha * trained + (1 - alpha) * initial."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"pretrained_mix alpha must be in [0, 1], got {alpha}")
    out = dict(trained)
    for k, v0 in initial.items():
        v = trained.get(k)
        if v is not None and v.shape == v0.shape and v.is_floating_point():
            out[k] = (alpha * v.float() + (1.0 - alpha) * v0.to(v.device).float()).to(v.dtype)
    return out


def _validate(trainer, model, datamodule, monitor: str) -> float | None:
    result = trainer.validate(model, datamodule=datamodule, verbose=False)
    value = (result[0] if result else {}).get(monitor, trainer.callback_metrics.get(monitor))
    return None if value is None else float(value)


def choose_pretrained_mix(trainer, model, datamodule, best: str, initial: dict | None, monitor: str, mode: str,
                          alphas=(0.9, 0.8, 0.7), tolerance: float | str = 0.0,
                          stop_below: float = 0.01) -> dict | None:
    """Validate the best checkpoint mixed at each alpha (highest first); write the chosen mix beside
    it (`<best>_mix<alpha>.ckpt`, its `rra` block saying so) and return {ckpt, alpha, reference, tried,
    fine_tuned_ckpt}, where no mix was good enough: alpha 1.0 and ckpt `best`. None when nothing could
    be tried (no pretrained encoder, no checkpoint, an encoder that did not move, no validation).
    `tolerance="noise"`: a mix may lose up to one standard error of the monitor on this validation set
    (the model's `validation_noise()`, read at the first mix: on 115 items at 0.97, 0.016)."""
    if isinstance(tolerance, str) and tolerance != "noise":
        raise ValueError(f"pretrained_mix.tolerance must be a number or 'noise', not {tolerance!r}")
    alphas = sorted({float(a) for a in alphas or () if float(a) < 1.0}, reverse=True)
    if not alphas or not best or initial is None:
        return None
    ckpt = torch.load(best, map_location="cpu", weights_only=False)
    trained = ckpt["state_dict"]
    if all(torch.equal(trained[k].float(), v.float()) for k, v in initial.items() if k in trained):
        return None  # the encoder did not move (frozen, or no step taken)
    sign = 1.0 if mode == "max" else -1.0
    score = getattr(trainer.checkpoint_callback, "best_model_score", None)
    reference = float(score) if score is not None else None
    if reference is None:
        model.load_state_dict(trained)
        reference = _validate(trainer, model, datamodule, monitor)
    if reference is None:
        log.warning("pretrained_mix: %s was not logged by validation; publishing the fine-tuned weights", monitor)
        return None
    tried, chosen = [], None
    by_noise = tolerance == "noise"
    allowed = None if by_noise else float(tolerance)  # "noise": read at the first mix's validation
    for alpha in alphas:
        model.load_state_dict(mix_state(trained, initial, alpha))
        value = _validate(trainer, model, datamodule, monitor)
        tried.append({"alpha": alpha, monitor: value})
        if value is None:
            break
        if allowed is None:
            noise = getattr(model, "validation_noise", dict)().get(monitor)
            allowed = float(noise) if noise is not None else 0.0
        gain = sign * (value - reference)  # > 0: better than the fine-tuned checkpoint
        if gain >= -allowed - 1e-9:
            chosen = alpha
        elif gain < -stop_below:
            break
    model.load_state_dict(trained)
    log.info("pretrained_mix: %s of the fine-tuned checkpoint %.4f; mixed: %s -> alpha %s", monitor, reference,
             ", ".join(f"{t['alpha']}: {t[monitor]}" for t in tried), chosen if chosen is not None else "1.0 (none)")
    record = {"alpha": chosen if chosen is not None else 1.0, "reference": reference, "monitor": monitor,
              "tolerance": allowed if allowed is not None else tolerance, "stop_below": stop_below, "tried": tried,
              "fine_tuned_ckpt": best}
    if by_noise:
        record["tolerance_from"] = "noise"
    if chosen is None:
        return {**record, "ckpt": best}
    path = Path(best).with_name(f"{Path(best).stem}_mix{chosen:g}.ckpt")
    if trainer.is_global_zero:
        ckpt["state_dict"] = mix_state(trained, initial, chosen)
        ckpt.setdefault("rra", {})["pretrained_mix"] = {"alpha": chosen, "monitor": monitor, "reference": reference}
        torch.save(ckpt, path)
    trainer.strategy.barrier()
    return {**record, "ckpt": str(path)}

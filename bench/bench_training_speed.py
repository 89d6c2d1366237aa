"""Seconds per retriever training step, the default model on a dataset's own batches, with and
without the CPU speed-ups of training (side by side, interleaved, so the shared machine's load
falls on both alike):

- `grouped`: rra.models.encoder's length groups (texts of like lengths encoded together), the
  fused AdamW of rra.models.schedule.adamw and the input embedding's sparse gradient made dense once
  per backward pass (rra.models.encoder.sparse_embedding_grads): what training runs;
- `dense_embedding`: `grouped` with torch's dense embedding gradient from every encoder call: what
  training ran before 2026-12-05;
- `one_call`: every encoder call pads its texts to the longest, and AdamW steps tensor by tensor:
  what training ran before;
- `bf16`: `grouped` under bfloat16 autocast, AdamW per tensor (Lightning's mixed-precision plugin
  will not clip gradients through a fused one): what `trainer=cpu_bf16` trains with on a CPU that
  multiplies bfloat16 natively (rra.config.cpu_precision; `trainer=cpu`, the default, is `grouped`).
  Measured only on such a CPU (`--no-bf16` skips it).

Each variant trains `--steps` steps from the same initial weights on the same batches (the plan
bank filled anew, as at an epoch's start), `--rounds` times in turn; the figure is the median
seconds per step of each and their ratio. A validation pass (every validation batch's loss and
graph-constrained decoding, as the trainer runs it after each epoch) is timed alike. The variants
compute the same function, `bf16` to bfloat16's rounding: the bench checks it on the first batch
without dropout (`same_function`: loss and gradient of each, their relative difference to
`grouped`'s). Losses after the steps differ more, as dropout draws its masks per call.

    python -m bench.bench_training_speed                       # built-in KG, the default run's batches
    python -m bench.bench_training_speed data=files data.kb_path=DIR/kg.nt data.train_file=...
"""
from __future__ import annotations

import copy
import statistics
import time
from contextlib import contextmanager, nullcontext
from types import SimpleNamespace

import torch

from bench.common import Run, arguments, parameter_groups, retriever_and_data
from rra.config import cpu_precision
from rra.models.encoder import sparse_embedding_grads


@contextmanager
def one_call():
    """Training as before the speed-ups: one padded encoder call, AdamW per tensor."""
    from rra.models import encoder as E

    forward = E.Encoder.forward
    E.Encoder.forward = lambda self, texts: self._pooled(self.tokenize(texts), next(self.model.parameters()).device)
    try:
        yield lambda params, **kw: torch.optim.AdamW(params, **kw), nullcontext
    finally:
        E.Encoder.forward = forward


@contextmanager
def grouped():
    from rra.models.schedule import adamw

    yield lambda params, **kw: adamw(params, None, **kw), nullcontext


dense_embedding = grouped  # the same optimizer and encoder calls; `embedding_gradient` leaves the embedding dense
DENSE_EMBEDDING = {"one_call", "dense_embedding"}


@contextmanager
def embedding_gradient(model, variant: str):
    """The input embedding's gradient as variant `variant` trains it (sparse unless DENSE_EMBEDDING),
    then dense again."""
    sparse_embedding_grads(model.encoder.model, variant not in DENSE_EMBEDDING)
    try:
        yield
    finally:
        sparse_embedding_grads(model.encoder.model, False)


@contextmanager
def bf16():
    from rra.models.schedule import adamw

    yield (lambda params, **kw: adamw(params, SimpleNamespace(precision="bf16-mixed"), **kw),
           lambda: torch.autocast("cpu", dtype=torch.bfloat16))


def train_steps(model, initial: dict, batches: list, make_optimizer, autocast=nullcontext) -> tuple[list[float], float]:
    """Seconds of each step (forward under `autocast`, backward, clipping, optimizer) and the last loss."""
    model.load_state_dict(initial)
    model.train()
    model._plan_bank.clear()
    model._part_bank.clear()
    optimizer = make_optimizer(parameter_groups(model), weight_decay=model.hparams.weight_decay)
    times, loss = [], float("nan")
    for batch in batches:
        start = time.perf_counter()
        for cache in (model._predict_cache, model._relation_cache, model._plan_cache, model._part_cache):
            cache.clear()
        with autocast():
            out = model.model_step(batch)
        out["loss"].backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - start)
        loss = float(out["loss"].detach())
    return times, loss


def validation_pass(model, batches: list, variant) -> float:
    """Seconds of one validation as the trainer runs it (no gradient, empty banks and caches):
    the loss of every batch and the graph-constrained decoding of its questions."""
    model.eval()
    with variant() as (_, autocast), autocast(), torch.no_grad():
        for cache in (model._plan_bank, model._part_bank, model._predict_cache, model._relation_cache,
                      model._plan_cache, model._part_cache):
            cache.clear()
        start = time.perf_counter()
        for batch in batches:
            model._log_decoding(model.model_step(batch), "val")
        return time.perf_counter() - start


def same_function(model, initial: dict, batch: dict, variants: dict) -> dict:
    """Loss and gradient of one batch without dropout under each variant, against `grouped`'s: the
    same function to float rounding (one_call), or to bfloat16's (bf16)."""
    def gradient(autocast):
        model.load_state_dict(initial)
        model.eval()
        model.zero_grad(set_to_none=True)
        model._plan_bank.clear()
        model._part_bank.clear()
        with autocast():
            loss = model.model_step(batch)["loss"]
        loss.backward()
        return float(loss), torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])

    out = {}
    for name, variant in variants.items():
        with embedding_gradient(model, name), variant() as (_, autocast):
            out[name] = gradient(autocast)
    model.zero_grad(set_to_none=True)
    loss_g, grad_g = out["grouped"]
    return {"loss": {k: round(v[0], 6) for k, v in out.items()},
            "gradient_relative_difference": {k: float((g - grad_g).norm() / grad_g.norm())
                                             for k, (_, g) in out.items() if k != "grouped"}}


def measure(overrides: list[str], steps: int, rounds: int, seed: int = 0, with_bf16: bool = True) -> dict:
    model, datamodule = retriever_and_data(overrides, seed)
    loader = datamodule.train_dataloader()
    batches = [b for _, b in zip(range(steps), loader)]
    initial = copy.deepcopy(model.state_dict())
    variants = {"one_call": one_call, "dense_embedding": dense_embedding, "grouped": grouped}
    if with_bf16 and cpu_precision() == "bf16-mixed":
        variants["bf16"] = bf16
    check = same_function(model, initial, batches[0], variants)
    times: dict[str, list[float]] = {k: [] for k in variants}
    losses: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(rounds):
        for name, variant in variants.items():
            torch.manual_seed(seed)  # the same dropout masks in each variant's round
            with embedding_gradient(model, name), variant() as (make_optimizer, autocast):
                t, loss = train_steps(model, initial, batches, make_optimizer, autocast)
            times[name] += t[1:]  # the first step fills the plan bank: counted in `first_step_s`
            losses[name].append(loss)
    val_batches = list(datamodule.val_dataloader())
    val_s: dict[str, list[float]] = {k: [] for k in variants}
    model.load_state_dict(initial)
    for _ in range(rounds):
        for name, variant in variants.items():
            val_s[name].append(validation_pass(model, val_batches, variant))
    median = {k: statistics.median(v) for k, v in times.items()}
    val_median = {k: statistics.median(v) for k, v in val_s.items()}
    return {"steps": len(batches), "rounds": rounds,
            "items_per_batch": statistics.mean(len(b["question"]) for b in batches),
            "median_step_s": {k: round(v, 4) for k, v in median.items()},
            "mean_step_s": {k: round(statistics.mean(v), 4) for k, v in times.items()},
            "grouped_over_one_call": round(median["grouped"] / median["one_call"], 3),
            "grouped_over_dense_embedding": round(median["grouped"] / median["dense_embedding"], 3),
            "validation_s": {k: round(v, 2) for k, v in val_median.items()},
            "validation_grouped_over_one_call": round(val_median["grouped"] / val_median["one_call"], 3),
            **({"bf16_over_grouped": round(median["bf16"] / median["grouped"], 3),
                "validation_bf16_over_grouped": round(val_median["bf16"] / val_median["grouped"], 3)}
               if "bf16" in median else {}),
            "loss_after": {k: [round(x, 4) for x in v] for k, v in losses.items()},
            "same_function": check}


def parser():
    ap = arguments("bench_training_speed", __doc__)
    ap.add_argument("overrides", nargs="*", help="train.py overrides (the data, the model)")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-bf16", action="store_true", help="skip the bf16 autocast variant")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    run = Run.start("bench_training_speed", args)
    figures = measure(args.overrides, args.steps, args.rounds, with_bf16=not args.no_bf16)
    print(figures)
    run.write({"figures": figures}, args.out)


if __name__ == "__main__":
    main()

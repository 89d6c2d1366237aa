"""Where a retriever training step's time goes (issue 34's time line): the default model on a
dataset's own batches, each encoder call counted by the part of the step that made it.

Parts: the relation scorer's step texts (the question and its walked prefix, with gradients) and
the relation texts they are scored against (`scorer`), the plan ranker's questions (`ranker
questions`: token vectors, with gradients), its labels' plan texts (`ranker plans`, with gradients),
the banked candidates (`plan bank`, no gradients, encoded once per epoch), the modifiers matched
word by word (`modifiers`) and the plan kinds (`kinds`). For each: texts and tokens per step, and
the seconds their forward passes took. The backward pass is one call, so it is given whole, beside
the share of the tokens with gradients each part holds (what the backward pass mostly pays for).

Steps are taken as training takes them (from the same initial weights, the plan bank empty at the
first, as at an epoch's start, so the bank's figure is that of an epoch's first `--steps` steps;
`bank_texts_per_epoch` counts the distinct candidate texts an epoch's ranking items hold besides their
labels: at most what one whole epoch encodes into it, since a batch encodes its own labels with gradients).

    python -m bench.bench_step_profile                     # the built-in KG, the default run's batches
    python -m bench.bench_step_profile data=files data.kb_path=DIR/kg.ttl data.train_file=... data.val_file=...
"""
from __future__ import annotations

import statistics
import time
from collections import defaultdict
from contextlib import contextmanager

import torch

from bench.common import Run, arguments, parameter_groups, retriever_and_data

# the Retriever method whose encoder calls a part counts (the innermost one running wins)
PARTS = {"_scorer_step": "scorer", "_ranking_step": "ranker plans", "_tokens": "ranker questions",
         "_part_logits": "modifiers", "_kind_logits": "kinds", "_banked": "plan bank"}


@contextmanager
def counted(model, stats: dict):
    """Every encoder call of `model` counted into stats[part] = [texts, tokens, forward s, with
    gradients] (a part's calls without gradients under "<part>, no gradients")."""
    cls, encoder_cls = type(model), type(model.encoder)
    saved = {name: getattr(cls, name) for name in PARTS}
    own = {name for name in PARTS if name in vars(cls)}  # the others are inherited (the mixins')
    forward = encoder_cls.forward
    where: list[str] = []
    tokenizer = model.encoder.tokenizer

    def count(part, texts, seconds):
        grad = torch.is_grad_enabled()
        s = stats[part if grad else f"{part}, no gradients"]
        s[0] += len(texts)
        s[1] += sum(len(ids) for ids in tokenizer(list(texts))["input_ids"])
        s[2] += seconds
        s[3] = grad

    def wrap(name, method):
        def run(self, *args, **kwargs):
            where.append(PARTS[name])
            try:
                if name != "_tokens":
                    return method(self, *args, **kwargs)
                start = time.perf_counter()
                out = method(self, *args, **kwargs)
                # questions unless a modifier or kind pass called it
                part = where[-2] if len(where) > 1 and where[-2] in ("modifiers", "kinds") else "ranker questions"
                count(part, args[0], time.perf_counter() - start)
                return out
            finally:
                where.pop()
        return run

    def timed_forward(self, texts):
        start = time.perf_counter()
        out = forward(self, texts)
        count(where[-1] if where else "other", texts, time.perf_counter() - start)
        return out

    for name, method in saved.items():
        setattr(cls, name, wrap(name, method))
    encoder_cls.forward = timed_forward
    try:
        yield
    finally:
        for name, method in saved.items():
            if name in own:
                setattr(cls, name, method)
            else:
                delattr(cls, name)
        encoder_cls.forward = forward


def profile(overrides: list[str], steps: int, seed: int = 0) -> dict:
    from rra.models.schedule import adamw

    model, datamodule = retriever_and_data(overrides, seed)
    loader = datamodule.train_dataloader()
    batches = [b for _, b in zip(range(steps + 1), loader)]
    optimizer = adamw(parameter_groups(model), None, weight_decay=model.hparams.weight_decay)
    model.train()
    stats: dict = defaultdict(lambda: [0, 0, 0.0, False])
    split = {"forward": [], "backward": [], "optimizer": []}
    with counted(model, stats):
        for k, batch in enumerate(batches):
            if k == 1:
                stats.clear()  # the first step pays for first calls (allocations, caches): not counted
            t0 = time.perf_counter()
            out = model.model_step(batch)
            t1 = time.perf_counter()
            out["loss"].backward()
            t2 = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            t3 = time.perf_counter()
            if k:
                for key, seconds in zip(split, (t1 - t0, t2 - t1, t3 - t2)):
                    split[key].append(seconds)
    n = len(split["forward"])
    grad_tokens = sum(s[1] for s in stats.values() if s[3]) or 1
    parts = {part: {"texts_per_step": round(s[0] / n, 1), "tokens_per_step": round(s[1] / n, 1),
                    "forward_s_per_step": round(s[2] / n, 4), "with_gradients": s[3],
                    "share_of_gradient_tokens": round(s[1] / grad_tokens, 3) if s[3] else 0.0}
             for part, s in sorted(stats.items(), key=lambda kv: -kv[1][2])}
    banked = {t for x in datamodule.splits["train"] for r in x.get("with", ()) if r.get("ranking")
              for t in r["ranking"]["positive"][1:] + r["ranking"]["negative"]}
    return {"steps": n, "batches_per_epoch": len(loader),
            "median_s": {key: round(statistics.median(v), 4) for key, v in split.items()},
            "median_step_s": round(statistics.median([sum(x) for x in zip(*split.values())]), 4),
            "parts": parts, "bank_texts_per_epoch": len(banked)}


def parser():
    ap = arguments("bench_step_profile", __doc__)
    ap.add_argument("overrides", nargs="*", help="train.py overrides (the data, the model)")
    ap.add_argument("--steps", type=int, default=12, help="steps measured (after one not counted)")
    ap.add_argument("--out", default=None)
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    run = Run.start("bench_step_profile", args)
    figures = profile(args.overrides, args.steps)
    print(figures)
    run.write({"figures": figures}, args.out)


if __name__ == "__main__":
    main()

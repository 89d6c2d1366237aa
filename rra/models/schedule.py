"""The learning-rate schedule both trained models use: linear warm-up, then linear decay to 0
(or constant), stepped per optimizer step. Built on transformers' schedules."""
from __future__ import annotations

import math


def warmup_schedule(optimizer, total_steps: float, warmup_steps: int, kind: str = "linear") -> dict:
    """Lightning's `lr_scheduler` entry. `total_steps` may be unknown (inf with an endless
    dataloader): the rate then stays constant after warm-up. Warm-up is at most half the run."""
    from transformers import get_constant_schedule_with_warmup, get_linear_schedule_with_warmup

    if kind not in ("linear", "constant"):
        raise ValueError(f"schedule must be 'linear' or 'constant', got {kind!r}")
    finite = math.isfinite(total_steps) and total_steps > 0
    warmup = min(int(warmup_steps), int(total_steps) // 2) if finite else int(warmup_steps)
    if kind == "constant" or not finite:
        scheduler = get_constant_schedule_with_warmup(optimizer, warmup)
    else:
        scheduler = get_linear_schedule_with_warmup(optimizer, warmup, int(total_steps))
    return {"scheduler": scheduler, "interval": "step"}

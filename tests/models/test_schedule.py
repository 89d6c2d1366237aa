import math

import pytest
import torch

from rra.models.schedule import warmup_schedule


def rates(total, warmup, kind, steps):
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = warmup_schedule(opt, total, warmup, kind)["scheduler"]
    out = []
    for _ in range(steps):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


def test_linear_warms_up_then_decays_to_zero():
    r = rates(10, 2, "linear", 10)
    assert r[0] == 0.0 and r[1] == 0.5 and r[2] == 1.0
    assert all(a > b for a, b in zip(r[2:], r[3:])) and r[-1] > 0.0


def test_unknown_length_and_constant_stay_flat_after_warmup():
    assert rates(math.inf, 2, "linear", 6)[2:] == [1.0] * 4
    assert rates(10, 0, "constant", 5) == [1.0] * 5
    assert max(rates(4, 100, "linear", 4)) == 1.0  # warm-up capped at half the run


def test_unknown_kind_is_an_error():
    with pytest.raises(ValueError, match="cosine"):
        rates(10, 1, "cosine", 1)

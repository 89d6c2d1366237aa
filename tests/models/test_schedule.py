import math

import lightning as L
import pytest
import torch

from rra.models.schedule import adamw, warmup_schedule


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


def test_adamw_is_fused_on_cpu_and_plain_under_16_bit_mixed_precision():
    from types import SimpleNamespace

    from rra.models.schedule import adamw

    params = [torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(2, 2))]
    fused = adamw([{"params": params[:1], "lr": 0.1}, {"params": params[1:], "lr": 0.01}], weight_decay=0.0)
    assert fused.defaults["fused"] is True and [g["lr"] for g in fused.param_groups] == [0.1, 0.01]
    plain = adamw(params, SimpleNamespace(precision="16-mixed"), lr=0.1)
    assert not plain.defaults["fused"]  # Lightning cannot clip gradients through the scaler of a fused one
    # a step of the fused one moves the weights as torch's default AdamW does
    twins = [torch.nn.Parameter(torch.ones_like(p)) for p in params]
    for p, t in zip(params, twins):
        p.grad, t.grad = torch.full_like(p, 0.5), torch.full_like(p, 0.5)
    fused.step()
    torch.optim.AdamW([{"params": twins[:1], "lr": 0.1}, {"params": twins[1:], "lr": 0.01}], weight_decay=0.0).step()
    assert all(torch.allclose(p, t) and torch.all(p < 1.0) for p, t in zip(params, twins))


# adamw under every precision Lightning trains with: a fused AdamW unscales its own gradients, and
# Lightning's mixed-precision plugin (16 and bf16 alike) refuses to clip gradients through one.
class Tiny(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x).squeeze(-1), y)

    def configure_optimizers(self):
        return adamw(self.parameters(), trainer=self.trainer, lr=1e-2)


@pytest.mark.parametrize("precision", ["32-true", "bf16-mixed"])
def test_trains_with_gradient_clipping_under_each_precision(precision, tmp_path):
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(16, 4), torch.randn(16))
    model = Tiny()
    before = model.layer.weight.detach().clone()
    trainer = L.Trainer(accelerator="cpu", precision=precision, gradient_clip_val=1.0, max_steps=3,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, default_root_dir=tmp_path)
    trainer.fit(model, torch.utils.data.DataLoader(data, batch_size=4))
    assert trainer.global_step == 3 and not torch.equal(before, model.layer.weight)
    fused = trainer.optimizers[0].defaults.get("fused")
    assert bool(fused) == (precision == "32-true")  # fused where nothing scales or clips around it


def test_fused_off_for_any_mixed_precision():
    p = [torch.nn.Parameter(torch.zeros(2))]
    for precision, fused in (("32-true", True), ("16-mixed", False), ("bf16-mixed", False), ("bf16-true", True)):
        trainer = type("T", (), {"precision": precision})()
        assert bool(adamw(p, trainer=trainer).defaults.get("fused")) == fused, precision

"""The published encoder mixed back towards the pretrained one (rra/training/pretrained_mix.py): the
arithmetic, the walk over alphas that validation decides, and what a training run publishes."""
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from rra.training.pretrained_mix import choose_pretrained_mix, initial_encoder_state, mix_state

REPO = Path(__file__).resolve().parents[2]


def test_mix_state_interpolates_what_the_initial_state_holds_and_keeps_the_rest():
    trained = {"encoder.w": torch.tensor([1.0, 3.0]), "head.w": torch.tensor([5.0]),
               "encoder.ids": torch.tensor([7, 9])}
    initial = {"encoder.w": torch.tensor([3.0, 1.0])}
    out = mix_state(trained, initial, 0.25)
    assert torch.allclose(out["encoder.w"], torch.tensor([2.5, 1.5]))  # 0.25 * trained + 0.75 * initial
    assert out["head.w"] is trained["head.w"] and out["encoder.ids"] is trained["encoder.ids"]
    assert torch.equal(mix_state(trained, initial, 1.0)["encoder.w"], trained["encoder.w"])
    with pytest.raises(ValueError, match="alpha must be in"):
        mix_state(trained, initial, 1.5)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Linear(2, 2, bias=False)
        self.head = torch.nn.Linear(2, 1, bias=False)


class FakeTrainer:
    """Validation scores the encoder weight's distance from the fine-tuned one: the further a mix
    goes towards the pretrained weights, the lower, as on a KG's own validation questions."""

    def __init__(self, trained: torch.Tensor, score: float, slope: float):
        self.trained, self.slope = trained, slope
        self.checkpoint_callback = SimpleNamespace(best_model_score=torch.tensor(score))
        self.callback_metrics, self.is_global_zero, self.calls = {}, True, []
        self.strategy = SimpleNamespace(barrier=lambda: None)
        self.score = score

    def validate(self, model, datamodule=None, verbose=False):
        distance = float((model.encoder.weight.detach() - self.trained).abs().max())
        self.calls.append(distance)
        return [{"val/acc": self.score - self.slope * distance}]


@pytest.mark.parametrize("slope,alpha", [(0.0, 0.5), (0.01, 0.7), (1.0, None)])
def test_the_lowest_alpha_within_tolerance_is_published(tmp_path, slope, alpha):
    model = Model()
    torch.nn.init.constant_(model.encoder.weight, 0.0)
    initial = initial_encoder_state(model)
    assert set(initial) == {"encoder.weight"}
    torch.nn.init.constant_(model.encoder.weight, 1.0)  # "fine-tuned"
    best = tmp_path / "best.ckpt"
    torch.save({"state_dict": model.state_dict(), "rra": {"format": "x"}}, best)
    trainer = FakeTrainer(model.encoder.weight.detach().clone(), score=0.9, slope=slope)
    # distance at alpha a is 1 - a: with slope 0.01 the loss is 0.01 * (1 - a), within 0.003 down to 0.7
    out = choose_pretrained_mix(trainer, model, None, str(best), initial, "val/acc", "max",
                                alphas=[0.5, 0.6, 0.7, 0.8, 0.9, 1.0], tolerance=0.003)
    assert torch.equal(model.encoder.weight, torch.ones(2, 2))  # the module is left fine-tuned
    if alpha is None:  # the first mix already loses too much: the fine-tuned checkpoint is published
        assert out["alpha"] == 1.0 and out["ckpt"] == str(best) and len(trainer.calls) == 1
        return
    assert out["alpha"] == alpha and [t["alpha"] for t in out["tried"]][0] == 0.9
    saved = torch.load(out["ckpt"], weights_only=False)
    assert Path(out["ckpt"]).name == f"best_mix{alpha:g}.ckpt"
    assert torch.allclose(saved["state_dict"]["encoder.weight"], torch.full((2, 2), alpha))
    assert torch.equal(saved["state_dict"]["head.weight"], model.head.weight)
    assert saved["rra"]["pretrained_mix"]["alpha"] == alpha


def test_nothing_is_mixed_for_a_frozen_encoder_or_one_that_never_moved(tmp_path):
    model = Model()
    model.encoder.weight.requires_grad_(False)
    assert initial_encoder_state(model) is None
    model.encoder.weight.requires_grad_(True)
    initial = initial_encoder_state(model)
    best = tmp_path / "best.ckpt"
    torch.save({"state_dict": model.state_dict()}, best)
    trainer = FakeTrainer(model.encoder.weight.detach().clone(), 0.9, 0.0)
    assert choose_pretrained_mix(trainer, model, None, str(best), initial, "val/acc", "max") is None
    assert trainer.calls == []


def test_a_training_run_publishes_the_mix_validation_chose(cfg_train, tmp_path):
    """train.py on the toy KG: the summary says which alphas were validated and what was chosen;
    the published checkpoint is that mix (and loads as a retriever); pretrained_mix=null keeps the
    fine-tuned weights."""
    sys.path.insert(0, str(REPO / "tests" / "models"))
    from rra.models.retriever import Retriever
    from rra.training.run import train

    base = ["data=toy", "datamodule=toy", "model=retriever_tiny", "logger=none", "callbacks.progress_bar=null",
            f"hydra.searchpath=[file://{REPO / 'tests' / 'models' / 'conf'}]", "trainer.max_epochs=2",
            "trainer.min_steps=0", "test=false"]
    cfg = cfg_train(base + ["pretrained_mix.tolerance=1.0"])  # any mix is within tolerance: the lowest wins
    train(cfg)
    summary = json.loads((Path(cfg.paths.output_dir) / "train_summary.json").read_text())
    mix = summary["pretrained_mix"]
    assert mix["alpha"] == 0.5 and [t["alpha"] for t in mix["tried"]] == [0.9, 0.8, 0.7, 0.6, 0.5]
    published = torch.load(cfg.paths.best_ckpt, weights_only=False)
    assert published["rra"]["pretrained_mix"]["alpha"] == 0.5
    Retriever.load(cfg.paths.best_ckpt)

    off = cfg_train(base + ["pretrained_mix=null", "name=unmixed"], root=tmp_path / "off")
    train(off)
    assert json.loads((Path(off.paths.output_dir) / "train_summary.json").read_text())["pretrained_mix"] is None
    assert "pretrained_mix" not in torch.load(off.paths.best_ckpt, weights_only=False)["rra"]

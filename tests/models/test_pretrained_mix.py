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
    """Validation reads a table {alpha: monitor}: the encoder weight is alpha (the fine-tuned end 1,
    the pretrained 0), as mixing makes it."""

    def __init__(self, scores: dict[float, float], reference: float = 0.9):
        self.scores = scores
        self.checkpoint_callback = SimpleNamespace(best_model_score=torch.tensor(reference))
        self.callback_metrics, self.is_global_zero, self.calls = {}, True, []
        self.strategy = SimpleNamespace(barrier=lambda: None)

    def validate(self, model, datamodule=None, verbose=False):
        alpha = round(float(model.encoder.weight.detach().mean()), 6)
        self.calls.append(alpha)
        return [{"val/acc": self.scores[alpha]}]


ALPHAS = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]  # 1.0 is the fine-tuned checkpoint itself: never validated again


@pytest.mark.parametrize("scores,alpha,validated", [
    ({0.9: 0.9, 0.8: 0.9, 0.7: 0.9, 0.6: 0.9, 0.5: 0.9}, 0.5, 5),         # validation cannot tell: pretrained-most
    ({0.9: 0.895, 0.8: 0.91, 0.7: 0.85, 0.6: 0.95, 0.5: 0.95}, 0.8, 3),  # a dip within stop_below walks on; 0.7 stops
    ({0.9: 0.899, 0.8: 0.898, 0.7: 0.897, 0.6: 0.896, 0.5: 0.895}, None, 5),  # every mix loses a little: none
    ({0.9: 0.5}, None, 1),                                               # the first mix loses much: stop there
])
def test_the_lowest_alpha_no_worse_on_validation_is_published(tmp_path, scores, alpha, validated):
    model = Model()
    torch.nn.init.constant_(model.encoder.weight, 0.0)
    initial = initial_encoder_state(model)
    assert set(initial) == {"encoder.weight"}
    torch.nn.init.constant_(model.encoder.weight, 1.0)  # "fine-tuned"
    best = tmp_path / "best.ckpt"
    torch.save({"state_dict": model.state_dict(), "rra": {"format": "x"}}, best)
    trainer = FakeTrainer(scores)
    out = choose_pretrained_mix(trainer, model, None, str(best), initial, "val/acc", "max", alphas=ALPHAS)
    assert torch.equal(model.encoder.weight, torch.ones(2, 2))  # the module is left fine-tuned
    assert trainer.calls == [0.9, 0.8, 0.7, 0.6, 0.5][:validated]
    if alpha is None:  # the fine-tuned checkpoint is published as it is
        assert out["alpha"] == 1.0 and out["ckpt"] == str(best)
        return
    assert out["alpha"] == alpha
    saved = torch.load(out["ckpt"], weights_only=False)
    assert Path(out["ckpt"]).name == f"best_mix{alpha:g}.ckpt"
    assert torch.allclose(saved["state_dict"]["encoder.weight"], torch.full((2, 2), alpha))
    assert torch.equal(saved["state_dict"]["head.weight"], model.head.weight)
    assert saved["rra"]["pretrained_mix"]["alpha"] == alpha


def test_a_noise_tolerance_accepts_mixes_within_one_standard_error(tmp_path):
    """tolerance="noise": a mix may lose one standard error of the monitor on this validation set (what
    the model reports as its validation noise); a loss beyond it still refuses the mix."""
    model = Model()
    torch.nn.init.constant_(model.encoder.weight, 0.0)
    initial = initial_encoder_state(model)
    torch.nn.init.constant_(model.encoder.weight, 1.0)
    model.validation_noise = lambda: {"val/acc": 0.016}  # 115 items at 0.97
    best = tmp_path / "best.ckpt"
    torch.save({"state_dict": model.state_dict()}, best)
    scores = {0.9: 0.9652, 0.8: 0.9652, 0.7: 0.9565}  # the DBpedia bench at seed 42: 1, 1 and 2 items lower
    out = choose_pretrained_mix(FakeTrainer(scores, reference=0.9739), model, None, str(best), initial, "val/acc", "max",
                                tolerance="noise")
    assert out["alpha"] == 0.8 and out["tolerance"] == 0.016 and out["tolerance_from"] == "noise"
    assert choose_pretrained_mix(FakeTrainer(scores, reference=0.9739), model, None, str(best), initial, "val/acc",
                                 "max")["alpha"] == 1.0  # the default: no loss at all
    with pytest.raises(ValueError, match="must be a number or 'noise'"):
        choose_pretrained_mix(FakeTrainer(scores), model, None, str(best), initial, "val/acc", "max", tolerance="some")


def test_a_minimised_monitor_counts_down(tmp_path):
    """mode=min (a loss): no worse means no higher."""
    model = Model()
    torch.nn.init.constant_(model.encoder.weight, 0.0)
    initial = initial_encoder_state(model)
    torch.nn.init.constant_(model.encoder.weight, 1.0)
    best = tmp_path / "best.ckpt"
    torch.save({"state_dict": model.state_dict()}, best)
    trainer = FakeTrainer({0.9: 0.3, 0.8: 0.325, 0.7: 0.5}, reference=0.32)
    out = choose_pretrained_mix(trainer, model, None, str(best), initial, "val/acc", "min")
    assert out["alpha"] == 0.9 and [t["alpha"] for t in out["tried"]] == [0.9, 0.8, 0.7]


def test_nothing_is_mixed_for_a_frozen_encoder_or_one_that_never_moved(tmp_path):
    model = Model()
    model.encoder.weight.requires_grad_(False)
    assert initial_encoder_state(model) is None
    model.encoder.weight.requires_grad_(True)
    initial = initial_encoder_state(model)
    best = tmp_path / "best.ckpt"
    torch.save({"state_dict": model.state_dict()}, best)
    trainer = FakeTrainer({})
    assert choose_pretrained_mix(trainer, model, None, str(best), initial, "val/acc", "max") is None
    assert trainer.calls == []


def test_a_training_run_publishes_the_mix_validation_chose(cfg_train, tmp_path):
    """train.py on the toy KG from an encoder read from a local folder (its weights are the
    pretrained ones): the summary says which alphas were validated and what was chosen; the
    published checkpoint is that mix (and loads as a retriever); pretrained_mix=null keeps the
    fine-tuned weights, and so does a randomly initialised encoder (nothing worth mixing back to)."""
    sys.path.insert(0, str(REPO / "tests" / "models"))
    from rra.models.encoder import tiny_encoder
    from rra.models.retriever import Retriever
    from rra.training.run import train

    local = tmp_path / "local_encoder"
    enc = tiny_encoder()
    enc.model.save_pretrained(local)
    enc.tokenizer.save_pretrained(local)
    toy = ["data=toy", "datamodule=toy", "logger=none", "callbacks.progress_bar=null",
           f"hydra.searchpath=[file://{REPO / 'tests' / 'models' / 'conf'}]", "trainer.max_epochs=2",
           "trainer.min_steps=0", "test=false"]
    base = toy + ["model=retriever_tiny", f"model.encoder={local}", "model.encoder_config=null",
                  "model.pretrained=true"]
    cfg = cfg_train(base + ["pretrained_mix.tolerance=1.0"])  # any mix is good enough: the lowest wins
    train(cfg)
    summary = json.loads((Path(cfg.paths.output_dir) / "train_summary.json").read_text())
    mix = summary["pretrained_mix"]
    assert mix["alpha"] == 0.7 and [t["alpha"] for t in mix["tried"]] == [0.9, 0.8, 0.7]
    published = torch.load(cfg.paths.best_ckpt, weights_only=False)
    assert published["rra"]["pretrained_mix"]["alpha"] == 0.7
    Retriever.load(cfg.paths.best_ckpt)

    off = cfg_train(base + ["pretrained_mix=null", "name=unmixed"], root=tmp_path / "off")
    train(off)
    assert json.loads((Path(off.paths.output_dir) / "train_summary.json").read_text())["pretrained_mix"] is None
    assert "pretrained_mix" not in torch.load(off.paths.best_ckpt, weights_only=False)["rra"]

    random_init = cfg_train(toy + ["model=retriever_tiny", "pretrained_mix.tolerance=1.0", "name=random"],
                            root=tmp_path / "random")
    train(random_init)
    summary = json.loads((Path(random_init.paths.output_dir) / "train_summary.json").read_text())
    assert summary["pretrained_mix"] is None
    assert "pretrained_mix" not in torch.load(random_init.paths.best_ckpt, weights_only=False)["rra"]

"""callbacks.weight_average (rra/training/weight_average.py): an exponential moving average of the
weights that validation scores and checkpoints hold, dropped when fit ends."""
import lightning as L
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from rra.training.weight_average import WeightAverage


class Line(L.LightningModule):
    """One weight pulled towards 1 by SGD (w_t = 1 - 0.8^t): the average lags behind it."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))
        self.seen, self.swaps = [], 0

    def training_step(self, batch, batch_idx):
        return ((self.w - batch[0]) ** 2).mean()

    def validation_step(self, batch, batch_idx):
        self.seen.append(float(self.w))
        self.log("val/w", self.w.detach().sum())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def weights_swapped(self):
        self.swaps += 1


def loader():
    return DataLoader(TensorDataset(torch.ones(4, 1)), batch_size=1)


def test_validation_and_checkpoints_hold_the_average_and_later_validations_the_loaded_weights(tmp_path):
    model, average = Line(), WeightAverage(decay=0.5)
    # as conf/callbacks/default.yaml: the best weights only (a save that skips the callbacks'
    # on_save_checkpoint), last.ckpt whole
    checkpoint = L.pytorch.callbacks.ModelCheckpoint(dirpath=tmp_path, monitor="val/w", mode="max",
                                                     save_weights_only=True)
    last = L.pytorch.callbacks.ModelCheckpoint(dirpath=tmp_path, save_top_k=0, save_last=True)
    trainer = L.Trainer(max_epochs=2, logger=False, enable_progress_bar=False, enable_model_summary=False,
                        callbacks=[average, checkpoint, last], num_sanity_val_steps=0, accelerator="cpu")
    trainer.fit(model, loader(), loader())
    raw = [1 - 0.8 ** t for t in range(1, 9)]  # the weight after each of the 8 steps
    ema = raw[0]
    for w in raw[1:]:
        ema = 0.5 * ema + 0.5 * w
    # the second validation (after step 8) scored the average, not the raw weight
    assert model.seen[-1] == pytest.approx(ema, abs=1e-6) and ema < raw[-1] - 0.05
    assert float(model.w.detach()) == pytest.approx(ema, abs=1e-6)  # fit ends holding the average
    best = torch.load(checkpoint.best_model_path, weights_only=False)
    assert float(best["state_dict"]["w"]) == pytest.approx(ema, abs=1e-6)  # what validation scored
    whole = torch.load(tmp_path / "last.ckpt", weights_only=False)
    assert float(whole["state_dict"]["w"]) == pytest.approx(ema, abs=1e-6)
    assert float(whole["current_model_state"]["w"]) == pytest.approx(raw[-1], abs=1e-6)  # to resume from
    swaps = model.swaps
    assert swaps == 2 * 2 + 1  # in and out around each validation, and the average copied in at the end
    with torch.no_grad():
        model.w.fill_(5.0)  # e.g. a pretrained mix loaded for validation
    trainer.validate(model, loader(), verbose=False)
    assert model.seen[-1] == 5.0 and float(model.w.detach()) == 5.0 and model.swaps == swaps


def test_decay_outside_zero_and_one_is_refused():
    with pytest.raises(ValueError, match="decay must be in"):
        WeightAverage(decay=1.0)

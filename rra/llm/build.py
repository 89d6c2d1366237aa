"""`build_llm(cfg.llm, cache_path=...)`: the one way pipelines turn an `llm` config into a backend.

`llm=none` (cfg.llm is None, or a config without `_target_`) gives None: methods then run without an
LLM (graph scorer, heuristic baselines). A `cache_path` wraps the backend in `CachedLLM`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from rra.llm.base import LLM
from rra.llm.cache import CachedLLM


def build_llm(cfg: Any, cache_path: str | Path | None = None) -> LLM | None:
    if cfg is None:
        return None
    if hasattr(cfg, "generate"):  # already a backend
        llm = cfg
    else:
        if not cfg or "_target_" not in cfg:
            return None
        from hydra.utils import instantiate  # only needed for configs, not for ready backends

        llm = instantiate(cfg)
    if not isinstance(llm, LLM):
        raise TypeError(f"llm: {type(llm).__name__} is not an LLM backend (subclass rra.llm.LLM: `name`, `usage`, "
                        "`generate`, `score`; `cache_params` and `close` come with it)")
    return CachedLLM(llm, cache_path) if cache_path else llm

"""The LLM layer: one protocol (`LLM`), backends, a disk cache and reply parsing.

Backends: `ScriptedLLM` (tests), `TransformersLLM` (local HF / packaged SmolLM2 GGUF),
`OpenAICompatibleLLM` (vLLM, llama.cpp server, Ollama, hosted APIs); `CachedLLM` wraps any of them.
`BatchingLLM` pools concurrent calls from several threads into batches.
`build_llm(cfg)` instantiates a Hydra `llm` config (None / `llm=none` -> no LLM).
"""
from rra.llm.base import LLM, LLMError, Prompt, as_messages, prompt_to_text
from rra.llm.batching import BatchingLLM
from rra.llm.build import build_llm
from rra.llm.cache import CachedLLM
from rra.llm.fake import ScriptedLLM
from rra.llm.openai_http import OpenAICompatibleLLM
from rra.llm.parse import (ParseError, clean_item, clean_reply, find_candidates_in_text, match_candidate,
                           match_candidates, normalize, parse_answer, parse_choice, parse_json, parse_list,
                           parse_scored_items, parse_yes_no, try_parse)
from rra.llm.transformers_llm import TransformersLLM
from rra.records import LLMReply, LLMUsage

__all__ = [
    "LLM", "LLMError", "LLMReply", "LLMUsage", "Prompt", "as_messages", "prompt_to_text",
    "ScriptedLLM", "BatchingLLM", "CachedLLM", "build_llm", "OpenAICompatibleLLM", "TransformersLLM",
    "ParseError", "clean_item", "clean_reply", "find_candidates_in_text", "match_candidate",
    "match_candidates", "normalize", "parse_answer", "parse_choice", "parse_json", "parse_list",
    "parse_scored_items", "parse_yes_no", "try_parse",
]

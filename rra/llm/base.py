"""The LLM layer's contract, shared by RRA's rewriter/answerer and every baseline.

Every backend (`ScriptedLLM`, `TransformersLLM`, `OpenAICompatibleLLM`, and the `CachedLLM` wrapper)
follows the same rules:
- `generate` never raises for a failed call: the reply carries `error` ("timeout: ...",
  "http 500: ...", "connection: ...", "bad response: ...", "generation: ...") and `text == ""`.
- `score` returns summed log-probabilities; it raises `NotImplementedError` when the backend cannot
  score at all, and `LLMError` when a call that could work failed (there is no reply to carry it).
- every `generate` prompt and every `score` call is recorded in `usage` (calls, failures, tokens,
  seconds, per-call latency) of the whole run. Per question, methods count the replies they get in
  a `rra.records.Trace`; only `score` calls, which return no reply, are counted as a
  `usage.since(snapshot)` delta of the backend (the choice answerer, the reply cache).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Sequence

from rra.records import LLMReply, LLMUsage  # the LLM layer's records (re-exported here)

# A prompt is plain text or chat messages [{"role": "user", "content": ...}, ...].
Prompt = str | list[dict]


class LLMError(RuntimeError):
    """A call that should have worked failed (used by `score`, which has no reply to carry it)."""


def prompt_to_text(prompt: Prompt) -> str:
    """Plain text of a prompt: the string itself, or the messages as "role: content" lines.
    Used where a backend has no chat template (fakes, caches, HTTP scoring)."""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(f"{m.get('role', 'user')}: {m.get('content', '')}" for m in prompt)


def as_messages(prompt: Prompt, system_prompt: str | None = None) -> list[dict]:
    """Chat messages for a prompt; a plain string becomes one user message."""
    msgs = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    if system_prompt and not any(m.get("role") == "system" for m in msgs):
        msgs = [{"role": "system", "content": system_prompt}] + msgs
    return msgs


class LLM(ABC):
    """An LLM backend: subclasses write `generate` and `score` and set `name` and `usage`."""

    name: str
    usage: LLMUsage

    @abstractmethod
    def generate(
        self, prompts: Sequence[Prompt], max_new_tokens: int = 128, temperature: float = 0.0
    ) -> list[LLMReply]:
        """One reply per prompt; failures come back as replies with `error` set, never raised.
        HTTP backends send independent prompts concurrently."""

    @abstractmethod
    def score(self, prompt: Prompt, continuations: Sequence[str]) -> list[float]:
        """Log-likelihood of each continuation after `prompt` (for multiple-choice answering).
        Backends that cannot score raise NotImplementedError; a failed call raises LLMError.
        Every backend here also takes `reduction="mean"` (per-token average) as a keyword."""

    def cache_params(self) -> dict:
        """What besides the prompt decides a reply (model, sampling settings): part of the key
        under which `CachedLLM` stores it. Backends subclassing `LLM` add theirs."""
        return {}

    def close(self) -> None:
        """Release connections, threads or files; nothing by default."""

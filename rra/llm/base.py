"""The LLM layer's contract, shared by RRA's rewriter/answerer and every baseline."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence, runtime_checkable

# A prompt is plain text or chat messages [{"role": "user", "content": ...}, ...].
Prompt = str | list[dict]


@dataclass
class LLMReply:
    text: str
    error: str | None = None  # "timeout: ...", "http 500: ...", "unparseable: ..." - never raised
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class LLMUsage:
    """Running totals per backend; pipelines report calls and tokens per question from it."""

    calls: int = 0
    failures: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    per_call_latency: list[float] = field(default_factory=list)

    def record(self, r: LLMReply) -> None:
        self.calls += 1
        self.failures += int(not r.ok)
        self.cache_hits += int(r.cached)
        self.prompt_tokens += r.prompt_tokens
        self.completion_tokens += r.completion_tokens
        self.seconds += r.latency_s
        self.per_call_latency.append(r.latency_s)


@runtime_checkable
class LLM(Protocol):
    name: str
    usage: LLMUsage

    def generate(
        self, prompts: Sequence[Prompt], max_new_tokens: int = 128, temperature: float = 0.0
    ) -> list[LLMReply]:
        """One reply per prompt; failures come back as replies with `error` set, never raised.
        HTTP backends send independent prompts concurrently."""
        ...

    def score(self, prompt: Prompt, continuations: Sequence[str]) -> list[float]:
        """Log-likelihood of each continuation after `prompt` (for multiple-choice answering).
        Backends that cannot score raise NotImplementedError."""
        ...

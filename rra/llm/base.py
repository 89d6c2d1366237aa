"""The LLM layer's contract, shared by RRA's rewriter/answerer and every baseline.

Every backend (`ScriptedLLM`, `TransformersLLM`, `OpenAICompatibleLLM`, and the `CachedLLM` wrapper)
follows the same rules:
- `generate` never raises for a failed call: the reply carries `error` ("timeout: ...",
  "http 500: ...", "connection: ...", "bad response: ...", "generation: ...") and `text == ""`.
- `score` returns summed log-probabilities; it raises `NotImplementedError` when the backend cannot
  score at all, and `LLMError` when a call that could work failed (there is no reply to carry it).
- every `generate` prompt and every `score` call is recorded in `usage` (calls, failures, tokens,
  seconds, per-call latency) of the whole run. Per question, methods count the replies they get in
  a `rra.methods.Trace`; only `score` calls, which return no reply, are counted as a
  `usage.since(snapshot)` delta of the backend (the choice answerer, the reply cache).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol, Sequence, runtime_checkable

# A prompt is plain text or chat messages [{"role": "user", "content": ...}, ...].
Prompt = str | list[dict]

# One lock for every usage record: backends record from worker threads (HTTP concurrency), and a
# plain lock keeps LLMUsage a copyable, picklable dataclass.
_USAGE_LOCK = threading.Lock()


class LLMError(RuntimeError):
    """A call that should have worked failed (used by `score`, which has no reply to carry it)."""


@dataclass
class LLMReply:
    text: str
    error: str | None = None  # "timeout: ...", "http 500: ...", "unparseable: ..." - never raised
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    truncated_tokens: int = 0  # prompt tokens cut by a backend's max-input guard (0 = none)

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
        with _USAGE_LOCK:
            self.calls += 1
            self.failures += int(not r.ok)
            self.cache_hits += int(r.cached)
            self.prompt_tokens += r.prompt_tokens
            self.completion_tokens += r.completion_tokens
            self.seconds += r.latency_s
            self.per_call_latency.append(r.latency_s)

    def snapshot(self) -> LLMUsage:
        """A frozen copy; `usage.since(snap)` later gives what happened in between."""
        with _USAGE_LOCK:
            return LLMUsage(
                self.calls, self.failures, self.cache_hits, self.prompt_tokens,
                self.completion_tokens, self.seconds, list(self.per_call_latency),
            )

    def since(self, earlier: LLMUsage) -> LLMUsage:
        """Usage accumulated after `earlier` (a snapshot of this same object)."""
        now = self.snapshot()
        return LLMUsage(
            calls=now.calls - earlier.calls,
            failures=now.failures - earlier.failures,
            cache_hits=now.cache_hits - earlier.cache_hits,
            prompt_tokens=now.prompt_tokens - earlier.prompt_tokens,
            completion_tokens=now.completion_tokens - earlier.completion_tokens,
            seconds=now.seconds - earlier.seconds,
            per_call_latency=now.per_call_latency[len(earlier.per_call_latency):],
        )

    def add(self, other: LLMUsage) -> None:
        """Add another counter's totals (e.g. a `since` delta) to this one."""
        with _USAGE_LOCK:
            self.calls += other.calls
            self.failures += other.failures
            self.cache_hits += other.cache_hits
            self.prompt_tokens += other.prompt_tokens
            self.completion_tokens += other.completion_tokens
            self.seconds += other.seconds
            self.per_call_latency += other.per_call_latency

    def to_dict(self) -> dict:
        lat = sorted(self.per_call_latency)

        def pct(q: float) -> float:
            return lat[min(len(lat) - 1, int(q * len(lat)))] if lat else 0.0

        return {
            "calls": self.calls, "failures": self.failures, "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 4),
            "latency_p50_s": round(pct(0.5), 4), "latency_p95_s": round(pct(0.95), 4),
        }


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
        Backends that cannot score raise NotImplementedError; a failed call raises LLMError.
        Every backend here also takes `reduction="mean"` (per-token average) as a keyword."""
        ...

    def cache_params(self) -> dict:
        """What besides the prompt decides a reply (model, sampling settings): part of the key
        under which `CachedLLM` stores it. Backends subclassing `LLM` add theirs."""
        return {}

    def close(self) -> None:
        """Release connections, threads or files; nothing by default."""

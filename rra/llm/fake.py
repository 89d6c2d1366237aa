"""`ScriptedLLM`: a deterministic stand-in for a real LLM, for tests of everything built on the layer.

The script is one of
- a list: replies handed out in call order (one per prompt), then `default` when exhausted;
- a dict substring -> reply: the first key (in insertion order) found in the prompt text wins;
- a function prompt_text -> reply.
A reply is a string or an `LLMReply` (to simulate failures: `ScriptedLLM.timeout()`,
`ScriptedLLM.failure("http 500: ...")`, or an empty string). When nothing matches and `default` is
None the reply is an error "fake: no scripted reply", so a test sees an unexpected call at once.

`score` uses `scores`: a function (prompt_text, continuation) -> float, or a dict continuation ->
float, or by default a deterministic word-overlap score (how many continuation words appear in the
prompt, minus a small length penalty) so "pick the candidate the knowledge mentions" works.

Every prompt is recorded in `prompts` (and `score` calls in `score_calls`); `usage` is counted like a
real backend, with `delay_s` of simulated latency per call. Thread-safe: baselines may call it from
worker threads.
"""
from __future__ import annotations

import re
import threading
import time
from dataclasses import replace
from typing import Callable, Sequence

from rra.llm.base import LLM, Prompt, prompt_to_text
from rra.records import LLMReply, LLMUsage

Reply = str | LLMReply
Script = Sequence[Reply] | dict[str, Reply] | Callable[[str], Reply]


class ScriptedLLM(LLM):
    def __init__(
        self,
        script: Script | None = None,
        default: Reply | None = None,
        scores: Callable[[str, str], float] | dict[str, float] | None = None,
        delay_s: float = 0.0,
        name: str = "fake",
        model: str = "scripted",
    ):
        self.name, self.model = name, model
        self.script = list(script) if isinstance(script, (list, tuple)) else (script or [])
        self.default, self.scores, self.delay_s = default, scores, delay_s
        self.usage = LLMUsage()
        self.prompts: list[Prompt] = []
        self.generate_kwargs: list[dict] = []
        self.score_calls: list[tuple[str, list[str]]] = []
        self._next = 0
        self._lock = threading.Lock()

    # --- ready-made failures -----------------------------------------------------------------
    @staticmethod
    def timeout(msg: str = "scripted") -> LLMReply:
        return LLMReply("", error=f"timeout: {msg}")

    @staticmethod
    def failure(error: str = "http 500: scripted") -> LLMReply:
        return LLMReply("", error=error)

    # --- protocol ------------------------------------------------------------------------------
    @property
    def prompt_texts(self) -> list[str]:
        return [prompt_to_text(p) for p in self.prompts]

    def _pick(self, text: str) -> Reply | None:
        if isinstance(self.script, list):
            with self._lock:
                if self._next < len(self.script):
                    self._next += 1
                    return self.script[self._next - 1]
            return self.default
        if isinstance(self.script, dict):
            for key, reply in self.script.items():
                if key in text:
                    return reply
            return self.default
        out = self.script(text)
        return self.default if out is None else out

    def generate(
        self, prompts: Sequence[Prompt], max_new_tokens: int = 128, temperature: float = 0.0
    ) -> list[LLMReply]:
        replies = []
        for p in prompts:
            start = time.perf_counter()
            if self.delay_s:
                time.sleep(self.delay_s)
            text = prompt_to_text(p)
            with self._lock:
                self.prompts.append(p)
                self.generate_kwargs.append({"max_new_tokens": max_new_tokens, "temperature": temperature})
            try:
                picked = self._pick(text)
            except Exception as e:  # a buggy script function must look like a failed call, not crash
                picked = LLMReply("", error=f"fake: script raised {type(e).__name__}: {e}")
            if picked is None:
                picked = LLMReply("", error="fake: no scripted reply")
            reply = replace(picked) if isinstance(picked, LLMReply) else LLMReply(str(picked))
            reply.prompt_tokens = reply.prompt_tokens or len(text.split())
            reply.completion_tokens = reply.completion_tokens or len(reply.text.split())
            reply.latency_s = reply.latency_s or (time.perf_counter() - start)
            self.usage.record(reply)
            replies.append(reply)
        return replies

    def score(self, prompt: Prompt, continuations: Sequence[str], reduction: str = "sum") -> list[float]:
        """`reduction="mean"` divides each score by the continuation's word count (the fake's tokens)."""
        if reduction not in ("sum", "mean"):
            raise ValueError(f"reduction must be 'sum' or 'mean', got {reduction!r}")
        start = time.perf_counter()
        text = prompt_to_text(prompt)
        with self._lock:
            self.score_calls.append((text, list(continuations)))
        if callable(self.scores):
            out = [float(self.scores(text, c)) for c in continuations]
        elif isinstance(self.scores, dict):
            out = [float(self.scores.get(c, -100.0)) for c in continuations]
        else:
            out = [overlap_score(text, c) for c in continuations]
        if reduction == "mean":
            out = [x / max(1, len(c.split())) for x, c in zip(out, continuations)]
        self.usage.record(LLMReply(
            "", latency_s=time.perf_counter() - start,
            prompt_tokens=len(text.split()) + sum(len(c.split()) for c in continuations),
        ))
        return out


def overlap_score(prompt_text: str, continuation: str) -> float:
    """Words of the continuation found in the prompt, minus 0.01 per word (prefers short exact)."""
    words = re.findall(r"\w+", continuation.lower())
    seen = set(re.findall(r"\w+", prompt_text.lower()))
    return sum(w in seen for w in words) - 0.01 * len(words) - (0.0 if words else 100.0)

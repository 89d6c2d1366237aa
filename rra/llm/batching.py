"""`BatchingLLM`: merge `generate` calls that arrive together from several threads into one backend call.

Why: a local model generates a batch of prompts much faster per prompt than one prompt at a time, but
the multi-step baselines (ToG, StructGPT) ask one small question per step per question. Answering
several questions at once in threads and letting this wrapper pool their concurrent calls turns
those single-prompt calls into batches without changing any method's code.

How: no background thread. A caller queues its prompts; whichever caller holds the runner lock takes
the queued jobs that share its generation settings (up to `max_batch` prompts), runs them in one
`inner.generate`, and hands each job its replies. Before running, it waits up to `wait_s` for the
threads that called in the last few seconds and have nothing queued yet (they are busy between two
calls) so their next call joins the batch. A lone caller never waits.

Usage accounting stays with the inner backend (`usage` is the inner one), so per-question counts
that the baselines keep in their own `Trace` are unaffected. `score` goes straight to the backend.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Sequence

from rra.llm.base import LLM, Prompt
from rra.records import LLMReply


@dataclass
class _Job:
    prompts: list
    key: tuple
    replies: list = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


class BatchingLLM(LLM):
    FORGET_S = 5.0  # a thread that has not called for this long no longer counts as a caller

    def __init__(self, inner, max_batch: int = 32, wait_s: float = 0.05):
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        self.inner, self.max_batch, self.wait_s = inner, int(max_batch), float(wait_s)
        self.name = inner.name
        self.model = getattr(inner, "model", "")
        self._pending: list[_Job] = []
        self._mutex = threading.Lock()
        self._joined = threading.Condition(self._mutex)
        self._seen: dict[int, float] = {}  # thread id -> when it last called generate
        self._runner = threading.Lock()
        self.batches = 0  # backend calls made, to see how much merging happened
        self.merged_prompts = 0

    @property
    def usage(self):
        return self.inner.usage

    def cache_params(self) -> dict:
        return self.inner.cache_params()

    def score(self, prompt: Prompt, continuations: Sequence[str], **kwargs) -> list[float]:
        return self.inner.score(prompt, continuations, **kwargs)

    def generate(self, prompts: Sequence[Prompt], max_new_tokens: int = 128,
                 temperature: float = 0.0) -> list[LLMReply]:
        if not prompts:
            return []
        job = _Job(list(prompts), (max_new_tokens, temperature))
        with self._mutex:
            self._pending.append(job)
            self._seen[threading.get_ident()] = time.monotonic()
            self._joined.notify_all()
        try:
            while not job.done.is_set():
                if self._runner.acquire(timeout=0.005):
                    try:
                        if not job.done.is_set():
                            self._run_once()
                    finally:
                        self._runner.release()
                else:
                    job.done.wait(0.005)
        finally:
            with self._mutex:
                self._seen[threading.get_ident()] = time.monotonic()
        return job.replies

    def _run_once(self) -> None:
        with self._mutex:
            deadline = time.monotonic() + self.wait_s
            while True:  # wait for recently active threads (busy between calls) to queue their next call
                now = time.monotonic()
                self._seen = {t: at for t, at in self._seen.items() if now - at < self.FORGET_S}
                queued = sum(len(j.prompts) for j in self._pending)
                if len(self._pending) >= len(self._seen) or queued >= self.max_batch or now >= deadline:
                    break
                self._joined.wait(deadline - now)
            if not self._pending:
                return
            key, taken, n = self._pending[0].key, [], 0
            for job in list(self._pending):
                if job.key == key and (not taken or n + len(job.prompts) <= self.max_batch):
                    taken.append(job)
                    n += len(job.prompts)
                    self._pending.remove(job)
        prompts = [p for job in taken for p in job.prompts]
        max_new_tokens, temperature = key
        try:
            replies = list(self.inner.generate(prompts, max_new_tokens=max_new_tokens, temperature=temperature))
        except Exception as e:  # the protocol says never raise; keep every waiting caller alive
            replies = [LLMReply("", error=f"generation: {type(e).__name__}: {e}") for _ in prompts]
        if len(replies) != len(prompts):
            replies = (replies + [LLMReply("", error="backend returned too few replies")] * len(prompts))[:len(prompts)]
        self.batches += 1
        self.merged_prompts += len(prompts)
        at = 0
        for job in taken:
            job.replies = replies[at:at + len(job.prompts)]
            at += len(job.prompts)
            job.done.set()

    def close(self) -> None:
        self.inner.close()

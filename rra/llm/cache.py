"""`CachedLLM(inner, path)`: an on-disk cache in front of any backend.

- Keyed by SHA-256 of (backend name, model, call kind, prompt, max_new_tokens, temperature, and the
  backend's own output-affecting settings from `inner.cache_params()` when it has one). Scores are
  cached per (prompt, continuations).
- Stored in one sqlite file (WAL mode): safe for the worker threads of one run (a lock around one
  connection) and for several processes sharing the file (sqlite's own locking).
- Only successful replies are stored, so a time-out is retried on the next run. Sampled replies
  (temperature > 0) are not cached unless `cache_sampled=True`.
- A hit comes back with `cached=True`, the original token counts (what the answer cost when it was
  made) and the lookup time as latency. `self.usage` counts every call (hits and misses,
  `cache_hits` separately); `inner.usage` only sees the misses it actually served.
- Misses of one `generate` call go to the inner backend together, keeping its batching/concurrency.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Sequence

from rra.llm.base import LLM, Prompt
from rra.records import LLMReply, LLMUsage


class CachedLLM(LLM):
    def __init__(self, inner: LLM, path: str | Path, cache_sampled: bool = False):
        self.inner, self.cache_sampled = inner, cache_sampled
        self.name = inner.name
        self.model = str(getattr(inner, "model", ""))
        self.usage = LLMUsage()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=60)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def _key(self, kind: str, payload: dict) -> str:
        params = self.inner.cache_params()
        blob = json.dumps({"backend": self.inner.name, "model": self.model, "kind": kind,
                           "params": params, **payload}, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    def _get(self, key: str) -> dict | list | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM cache WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def _put(self, key: str, value: dict | list) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO cache (key, value) VALUES (?, ?)",
                             (key, json.dumps(value, ensure_ascii=False)))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM cache").fetchone()[0]

    def cache_params(self) -> dict:
        return self.inner.cache_params()

    def generate(
        self, prompts: Sequence[Prompt], max_new_tokens: int = 128, temperature: float = 0.0
    ) -> list[LLMReply]:
        use_cache = temperature == 0 or self.cache_sampled
        replies: list[LLMReply | None] = [None] * len(prompts)
        keys = [self._key("generate", {"prompt": p, "max_new_tokens": max_new_tokens,
                                       "temperature": temperature}) for p in prompts]
        misses = []
        for i, key in enumerate(keys):
            start = time.perf_counter()
            hit = self._get(key) if use_cache else None
            if hit is None:
                misses.append(i)
                continue
            replies[i] = LLMReply(hit["text"], latency_s=time.perf_counter() - start, cached=True,
                                  prompt_tokens=hit.get("prompt_tokens", 0),
                                  completion_tokens=hit.get("completion_tokens", 0))
        if misses:
            fresh = self.inner.generate([prompts[i] for i in misses], max_new_tokens, temperature)
            for i, r in zip(misses, fresh):
                replies[i] = r
                if r.ok and use_cache:
                    self._put(keys[i], {"text": r.text, "prompt_tokens": r.prompt_tokens,
                                        "completion_tokens": r.completion_tokens})
        for r in replies:
            self.usage.record(r)
        return replies  # type: ignore[return-value]

    def score(self, prompt: Prompt, continuations: Sequence[str], reduction: str = "sum") -> list[float]:
        start = time.perf_counter()
        key = self._key("score", {"prompt": prompt, "continuations": list(continuations), "reduction": reduction})
        hit = self._get(key)
        if hit is not None:
            self.usage.record(LLMReply("", latency_s=time.perf_counter() - start, cached=True))
            return [float(x) for x in hit]
        before = self.inner.usage.snapshot()
        try:
            out = (self.inner.score(prompt, continuations) if reduction == "sum"
                   else self.inner.score(prompt, continuations, reduction=reduction))
        except NotImplementedError:
            raise
        except Exception as e:
            self.usage.record(LLMReply("", error=f"score: {e}", latency_s=time.perf_counter() - start))
            raise
        spent = self.inner.usage.since(before)
        self.usage.record(LLMReply("", latency_s=time.perf_counter() - start,
                                   prompt_tokens=spent.prompt_tokens))
        self._put(key, [float(x) for x in out])
        return out

    def close(self) -> None:
        with self._lock:
            self._db.close()
        self.inner.close()

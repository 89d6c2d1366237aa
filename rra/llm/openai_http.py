"""`OpenAICompatibleLLM`: any server speaking the OpenAI HTTP API (vLLM, llama.cpp server, Ollama,
LM Studio, hosted APIs), through httpx.

- Chat prompts go to `POST {base_url}/chat/completions`. Plain-string prompts go there too as one
  user message, or to the legacy `POST {base_url}/completions` with `plain_prompt_endpoint=completions`
  (base models, servers without a chat template).
- `base_url` defaults to a loopback server (http://127.0.0.1:8000/v1, vLLM's default). The API key is
  read from the environment variable named by `api_key_env` (default OPENAI_API_KEY) when the request
  is made; unset means no Authorization header (local servers need none). No key is ever a default.
- Each request has a total deadline (`timeout_s`: connect + the whole reply, not per read; see
  rra.net.request). 429, 5xx and connection failures are retried up to
  `max_retries` times with exponential back-off (`backoff_s * 2**attempt`, jittered, capped by
  `max_backoff_s`, or the server's Retry-After). A time-out is not retried unless
  `retry_on_timeout=True`, so a stuck server costs at most `timeout_s` per prompt.
- A circuit breaker: after `breaker_threshold` failed requests in a row, every further prompt fails
  at once ("unavailable: ...") for `breaker_cooldown_s`, then one probe request decides whether the
  server is back. A dead server costs a run seconds, not a time-out per prompt.
- Independent prompts of one `generate` call run concurrently on a thread pool of
  `max_concurrency`; the pool is shared by all callers of this backend, so it also caps the load
  the whole run puts on the server.
- Failures come back as replies: "timeout: ...", "connection: ..." (refused, reset),
  "http <code>: <body>", "bad response: ..." (non-JSON or HTML body, missing choices),
  "unavailable: ..." (the breaker is open). `reply.attempts` counts the requests sent, retries
  included (0 when the breaker refused it). Token counts come from the response's `usage`.
- `score` needs a server that echoes prompt log-probabilities on /completions (`echo=true,
  logprobs`; vLLM does): enable with `supports_echo=True`. Otherwise NotImplementedError. Chat
  prompts are flattened to "role: content" text for scoring. Start continuations with a space:
  only tokens that begin at or after the continuation's first character are summed.
"""
from __future__ import annotations

import json
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

import httpx

from rra import net
from rra.llm.base import LLM, LLMError, Prompt, as_messages, prompt_to_text
from rra.records import LLMReply, LLMUsage


class OpenAICompatibleLLM(LLM):
    def __init__(
        self,
        model: str = "default",
        base_url: str = "http://127.0.0.1:8000/v1",
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 20.0,
        retry_on_timeout: bool = False,
        max_concurrency: int = 8,
        plain_prompt_endpoint: str = "chat",
        system_prompt: str | None = None,
        stop: list[str] | None = None,
        extra_body: dict | None = None,
        supports_echo: bool = False,
        name: str = "openai",
        breaker_threshold: int = 3,
        breaker_cooldown_s: float = 30.0,
    ):
        if plain_prompt_endpoint not in ("chat", "completions"):
            raise ValueError(f"plain_prompt_endpoint must be 'chat' or 'completions', got {plain_prompt_endpoint!r}")
        self.name, self.model, self.base_url = name, model, base_url.rstrip("/")
        self.api_key_env, self.timeout_s = api_key_env, timeout_s
        self.max_retries, self.backoff_s, self.max_backoff_s = max_retries, backoff_s, max_backoff_s
        self.retry_on_timeout, self.max_concurrency = retry_on_timeout, max(1, int(max_concurrency))
        self.plain_prompt_endpoint, self.system_prompt = plain_prompt_endpoint, system_prompt
        self.stop, self.extra_body = list(stop or []), dict(extra_body or {})
        self.supports_echo = supports_echo
        self.breaker = net.CircuitBreaker(f"LLM server {self.base_url}", breaker_threshold, breaker_cooldown_s)
        self.usage = LLMUsage()
        self._client: httpx.Client | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def cache_params(self) -> dict:
        return {"endpoint": self.plain_prompt_endpoint, "system_prompt": self.system_prompt,
                "stop": self.stop, "extra_body": self.extra_body}

    # --- transport -----------------------------------------------------------------------------
    def _http(self) -> tuple[httpx.Client, ThreadPoolExecutor]:
        with self._lock:
            if self._client is None:
                limits = httpx.Limits(max_connections=self.max_concurrency,
                                      max_keepalive_connections=self.max_concurrency)
                self._client = httpx.Client(base_url=self.base_url, timeout=self.timeout_s, limits=limits)
                self._pool = ThreadPoolExecutor(self.max_concurrency, thread_name_prefix="llm-http")
            return self._client, self._pool  # type: ignore[return-value]

    def _headers(self) -> dict:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _post(self, path: str, body: dict) -> tuple[dict | None, str | None, int]:
        """(decoded JSON, None, requests sent) or (None, error text, requests sent) after bounded retries."""
        client, _ = self._http()
        blocked = self.breaker.blocked()
        if blocked:
            return None, f"unavailable: {blocked}", 0
        try:
            return self._attempts(client, path, body)
        except BaseException as e:  # anything unforeseen still ends a probe, so the circuit cannot stay shut
            self.breaker.failure(net.describe(e))
            raise

    def _attempts(self, client: httpx.Client, path: str, body: dict) -> tuple[dict | None, str | None, int]:
        attempts = 1 if self.breaker.probing else self.max_retries + 1  # a probe after a pause: one try
        error, sent = "no attempt", 0
        url = f"{self.base_url}{path}"
        for attempt in range(attempts):
            retry_after = None
            sent += 1
            try:
                resp = net.request(client, "POST", path, self.timeout_s, json=body, headers=self._headers())
            except net.DeadlineExceeded:
                error = f"timeout: no complete reply within {self.timeout_s:g} s from {url}"
                if not self.retry_on_timeout:
                    break
            except httpx.TransportError as e:
                error = f"connection: {net.describe(e)} ({url})"
            else:
                if resp.status_code == 200:
                    if net.looks_like_html(resp):
                        error = f"bad response: an HTML page, not JSON ({net.html_title(resp)!r}) from {url}"
                        break
                    try:
                        data = json.loads(resp.content)
                    except (json.JSONDecodeError, UnicodeDecodeError):
                        error = f"bad response: body is not JSON: {resp.text[:200]!r}"
                        break
                    self.breaker.success()
                    return data, None, sent
                error = f"http {resp.status_code}: {resp.text[:300]}"
                if resp.status_code != 429 and resp.status_code < 500:
                    # a bad request or a bad key does not get better by repeating it; 401/403/404
                    # will fail every prompt alike, so they count against the server
                    if resp.status_code in (401, 403, 404):
                        self.breaker.failure(error)
                    else:
                        self.breaker.success()
                    return None, error, sent
                retry_after = resp.headers.get("retry-after")
            if attempt < attempts - 1:
                delay = self.backoff_s * 2 ** attempt * random.uniform(0.75, 1.0)
                if retry_after and retry_after.replace(".", "", 1).isdigit():
                    delay = float(retry_after)
                time.sleep(min(delay, self.max_backoff_s))
        self.breaker.failure(error)
        return None, (f"{error} (after {sent} attempts)" if sent > 1 else error), sent

    # --- generation ----------------------------------------------------------------------------
    def _one(self, prompt: Prompt, max_new_tokens: int, temperature: float) -> LLMReply:
        start = time.perf_counter()
        body = {"model": self.model, "max_tokens": max_new_tokens, "temperature": temperature,
                **({"stop": self.stop} if self.stop else {}), **self.extra_body}
        chat = not isinstance(prompt, str) or self.plain_prompt_endpoint == "chat"
        if chat:
            path, body["messages"] = "/chat/completions", as_messages(prompt, self.system_prompt)
        else:
            prefix = f"{self.system_prompt}\n\n" if self.system_prompt else ""
            path, body["prompt"] = "/completions", prefix + prompt
        data, error, sent = self._post(path, body)
        reply = LLMReply("", error=error)
        if data is not None:
            try:
                choice = data["choices"][0]
                text = (choice.get("message") or {}).get("content") if chat else choice.get("text")
                reply = LLMReply(text or "")
                usage = data.get("usage") or {}
                reply.prompt_tokens = int(usage.get("prompt_tokens") or 0)
                reply.completion_tokens = int(usage.get("completion_tokens") or 0)
            except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
                reply = LLMReply("", error=f"bad response: {type(e).__name__} {e}: {str(data)[:200]}")
        reply.latency_s = time.perf_counter() - start
        reply.attempts = sent
        self.usage.record(reply)
        return reply

    def generate(
        self, prompts: Sequence[Prompt], max_new_tokens: int = 128, temperature: float = 0.0
    ) -> list[LLMReply]:
        if len(prompts) <= 1:
            return [self._one(p, max_new_tokens, temperature) for p in prompts]
        _, pool = self._http()
        return list(pool.map(lambda p: self._one(p, max_new_tokens, temperature), prompts))

    # --- scoring -------------------------------------------------------------------------------
    def _score_one(self, prompt_text: str, continuation: str, reduction: str) -> float:
        full = prompt_text + continuation
        body = {"model": self.model, "prompt": full, "max_tokens": 1, "temperature": 0.0,
                "echo": True, "logprobs": 1, **self.extra_body}
        start = time.perf_counter()
        data, error, sent = self._post("/completions", body)
        if error:
            self.usage.record(LLMReply("", error=error, latency_s=time.perf_counter() - start, attempts=sent))
            raise LLMError(f"score failed: {error}")
        try:
            lp = data["choices"][0]["logprobs"]
            tokens, offsets = lp["token_logprobs"], lp["text_offset"]
        except (KeyError, IndexError, TypeError) as e:
            raise NotImplementedError(
                f"{self.base_url} returned no echoed prompt logprobs ({e}); this server cannot score") from e
        # Sum tokens that start inside the continuation; the generated extra token lies past `full`.
        picked = [float(t) for t, off in zip(tokens, offsets)
                  if t is not None and len(prompt_text) <= off < len(full)]
        total = sum(picked) / max(1, len(picked)) if reduction == "mean" else sum(picked)
        usage = data.get("usage") or {}
        self.usage.record(LLMReply("", latency_s=time.perf_counter() - start, attempts=sent,
                                   prompt_tokens=int(usage.get("prompt_tokens") or 0)))
        return total

    def score(self, prompt: Prompt, continuations: Sequence[str], reduction: str = "sum") -> list[float]:
        if reduction not in ("sum", "mean"):
            raise ValueError(f"reduction must be 'sum' or 'mean', got {reduction!r}")
        if not self.supports_echo:
            raise NotImplementedError(
                f"{self.name}: scoring needs a server that echoes prompt logprobs (vLLM does); "
                "set supports_echo=true if yours does")
        text = prompt_to_text(prompt)
        _, pool = self._http()
        return list(pool.map(lambda c: self._score_one(text, c, reduction), continuations))

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._pool.shutdown(wait=False)
                self._client, self._pool = None, None

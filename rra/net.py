"""What every remote backend (SPARQL endpoints, OpenAI-compatible LLM servers) shares about HTTP:
a total deadline per request, a circuit breaker per endpoint, and failures described as what happened.

- `request(...)`: one HTTP request whose connect + send + whole body must finish within `deadline_s`.
  httpx's time-outs are per operation (a server that trickles one byte every 5 s never trips a 10 s
  read time-out), so the request runs in a daemon thread and the caller stops waiting at the
  deadline; the thread stops reading at its next chunk.
- `CircuitBreaker`: after `threshold` consecutive failed requests to one endpoint, further requests
  fail at once (no network) for `cooldown_s`; then one request is let through as a probe, and its
  outcome closes or reopens the circuit. A dead server then costs a run seconds, not minutes.
- `describe(err)`: "connection refused", "connection reset", ... instead of an exception's repr.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import httpx


class DeadlineExceeded(Exception):
    """The request did not complete (connect, send, and the whole reply) within its deadline."""


@dataclass
class Reply:
    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


def request(client: httpx.Client, method: str, url: str, deadline_s: float, **kwargs) -> Reply:
    """`client.request(method, url, **kwargs)` finished within `deadline_s` seconds in all, or
    DeadlineExceeded; transport errors (refused, reset, ...) are raised as httpx raises them."""
    end = time.monotonic() + deadline_s
    done = threading.Event()
    cancelled = threading.Event()
    box: dict = {}

    def fetch() -> None:
        try:
            # per-operation limit = the whole deadline, so the thread itself never outlives it by much
            with client.stream(method, url, timeout=httpx.Timeout(deadline_s), **kwargs) as resp:
                chunks = []
                for chunk in resp.iter_bytes():
                    chunks.append(chunk)
                    if cancelled.is_set() or time.monotonic() > end:
                        raise DeadlineExceeded()
                box["reply"] = Reply(resp.status_code, resp.headers, b"".join(chunks))
        except BaseException as err:  # handed to the caller
            box["error"] = err
        finally:
            done.set()

    threading.Thread(target=fetch, daemon=True, name="rra-http").start()
    if not done.wait(max(0.0, end - time.monotonic())):
        cancelled.set()
        raise DeadlineExceeded()
    if "error" in box:
        err = box["error"]
        if isinstance(err, httpx.TimeoutException):
            raise DeadlineExceeded() from err
        raise err
    return box["reply"]


def describe(err: BaseException) -> str:
    """What happened, in words a user can act on."""
    text = str(err) or type(err).__name__
    low = text.lower()
    if isinstance(err, httpx.ConnectError):
        if "refused" in low:
            return "connection refused (is the server running?)"
        if "name or service" in low or "nodename" in low or "getaddrinfo" in low:
            return f"host name not found ({text})"
        return f"cannot connect ({text})"
    if isinstance(err, (httpx.ReadError, httpx.WriteError)) and ("reset" in low or "errno 104" in low):
        return "connection reset by the server"
    if isinstance(err, httpx.RemoteProtocolError):
        return f"the server closed the connection mid-reply ({text})"
    if isinstance(err, httpx.TransportError):
        return f"{type(err).__name__}: {text}"
    return f"{type(err).__name__}: {text}"


def looks_like_html(reply: Reply) -> bool:
    kind = reply.headers.get("content-type", "").lower()
    head = reply.content[:200].lstrip().lower()
    return "html" in kind or head.startswith((b"<!doctype html", b"<html"))


def html_title(reply: Reply) -> str:
    """The <title> of an HTML page (a proxy's or a login page says who answered), else its start."""
    text = reply.text
    low = text.lower()
    a, b = low.find("<title>"), low.find("</title>")
    if 0 <= a < b:
        return " ".join(text[a + 7:b].split())[:120]
    return " ".join(text.split())[:120]


class CircuitBreaker:
    """Consecutive-failure breaker for one endpoint (thread-safe).

    `blocked()` before a request: None to go ahead, or why not (the circuit is open). A caller that
    goes ahead reports `success()` or `failure(problem)`. After the cooldown the first caller is the
    probe (`probing` is True for it); the others keep failing fast until the probe has answered."""

    def __init__(self, name: str, threshold: int = 3, cooldown_s: float = 30.0, clock=time.monotonic):
        if threshold < 1 or cooldown_s < 0:
            raise ValueError("circuit breaker: need threshold >= 1 and cooldown_s >= 0")
        self.name, self.threshold, self.cooldown_s, self.clock = name, threshold, cooldown_s, clock
        self.failures = 0  # consecutive
        self.open_until: float | None = None
        self.last_problem = ""
        self.fast_failed = 0  # requests refused without touching the network
        self.opened = 0  # times the circuit opened
        self._probe = False
        self._lock = threading.Lock()

    def blocked(self) -> str | None:
        with self._lock:
            if self.open_until is None:
                return None
            now = self.clock()
            if now >= self.open_until and not self._probe:
                self._probe = True  # this caller probes; the others wait for its outcome
                return None
            self.fast_failed += 1
            wait = max(0.0, self.open_until - now)
            return (f"{self.name} is failing ({self.failures} failed requests in a row, last: "
                    f"{self.last_problem}); not sending more for {wait:.0f} s")

    @property
    def probing(self) -> bool:
        return self._probe

    def success(self) -> None:
        with self._lock:
            self.failures, self.open_until, self._probe = 0, None, False

    def failure(self, problem: str) -> None:
        with self._lock:
            self.failures += 1
            self.last_problem = problem
            if self._probe or self.failures >= self.threshold:
                if self.open_until is None or self._probe:
                    self.opened += 1
                self.open_until = self.clock() + self.cooldown_s
            self._probe = False

    def state(self) -> dict:
        return {"open": self.open_until is not None, "consecutive_failures": self.failures,
                "opened": self.opened, "fast_failed": self.fast_failed}

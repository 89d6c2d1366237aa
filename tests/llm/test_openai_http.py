"""OpenAICompatibleLLM against a tiny fake OpenAI server on 127.0.0.1 (http.server in a thread).
The server's behaviour is chosen by words in the prompt: FAIL500ONCE, ALWAYS500, SLOW, BADJSON,
NOCHOICES, BADREQUEST, CONC (sleeps to let concurrent requests overlap)."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rra.llm import LLMError, OpenAICompatibleLLM


class FakeOpenAI:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests: list[tuple[str, dict, dict]] = []
        self.seen: dict[str, int] = {}
        self.active = self.max_active = 0


def make_handler(state: FakeOpenAI):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output quiet
            pass

        def send(self, code: int, payload, raw: bytes | None = None):
            body = raw if raw is not None else json.dumps(payload).encode()
            self.done()  # before the reply: its client may send the next prompt before this thread runs again
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = body.get("prompt") or " ".join(m["content"] for m in body.get("messages", []))
            with state.lock:
                state.requests.append((self.path, body, dict(self.headers)))
                state.seen[text] = state.seen.get(text, 0) + 1
                nth = state.seen[text]
                state.active += 1
                state.max_active = max(state.max_active, state.active)
            self.counted = True
            try:
                self.respond(body, text, nth)
            except (BrokenPipeError, ConnectionResetError):  # the client timed out and left: expected
                pass
            finally:
                self.done()

        def done(self):
            """This request no longer counts as active (once, whichever of send and do_POST comes first)."""
            if getattr(self, "counted", False):
                self.counted = False
                with state.lock:
                    state.active -= 1

        def respond(self, body, text, nth):
            if "CONC" in text:
                time.sleep(0.3)
            if "SLOW" in text:
                time.sleep(1.5)
            if ("FAIL500ONCE" in text and nth == 1) or "ALWAYS500" in text:
                return self.send(500, {"error": "boom"})
            if "BADREQUEST" in text:
                return self.send(400, {"error": "bad model"})
            if "BADJSON" in text:
                return self.send(200, None, raw=b"{not json")
            if "HTMLPAGE" in text:
                return self.send(200, None, raw=b"<!DOCTYPE html><html><head><title>Sign in</title></head></html>")
            if "NOCHOICES" in text:
                return self.send(200, {"choices": []})
            usage = {"prompt_tokens": len(text.split()), "completion_tokens": 2}
            if self.path.endswith("/chat/completions"):
                return self.send(200, {"choices": [{"message": {"role": "assistant", "content": f"echo {text}"}}],
                                       "usage": usage})
            if body.get("echo"):  # fake logprobs: one "token" per character, -1 per character
                full = body["prompt"]
                return self.send(200, {"choices": [{"text": full + "!", "logprobs": {
                    "tokens": list(full) + ["!"], "token_logprobs": [None] + [-1.0] * len(full),
                    "text_offset": list(range(len(full) + 1))}}], "usage": usage})
            return self.send(200, {"choices": [{"text": f"completed {text}"}], "usage": usage})

    return Handler


@pytest.fixture
def server():
    state = FakeOpenAI()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    httpd.daemon_threads = True  # a handler still sleeping (SLOW) must not hold up teardown
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield state
    httpd.shutdown()
    httpd.server_close()


def client(server, **kw):
    kw = {"base_url": server.url, "model": "tiny", "timeout_s": 5.0, "backoff_s": 0.01, **kw}
    return OpenAICompatibleLLM(**kw)


def test_chat_success_usage_and_api_key_from_env(server, monkeypatch):
    monkeypatch.setenv("MY_TEST_KEY", "sk-test-123")
    llm = client(server, api_key_env="MY_TEST_KEY", system_prompt="Be brief.")
    (r,) = llm.generate(["hello there"], max_new_tokens=9)
    assert r.ok and r.text == "echo Be brief. hello there"
    assert (r.prompt_tokens, r.completion_tokens) == (4, 2) and r.latency_s > 0
    path, body, headers = server.requests[0]
    assert path == "/v1/chat/completions" and body["max_tokens"] == 9 and body["model"] == "tiny"
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert headers["Authorization"] == "Bearer sk-test-123"
    assert llm.usage.calls == 1 and llm.usage.prompt_tokens == 4


def test_no_key_no_header_and_completions_endpoint(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = client(server, plain_prompt_endpoint="completions")
    r, chat = llm.generate(["plain text", [{"role": "user", "content": "as chat"}]])
    assert r.text == "completed plain text" and chat.text == "echo as chat"
    paths = sorted(p for p, _, _ in server.requests)
    assert paths == ["/v1/chat/completions", "/v1/completions"]
    assert all("Authorization" not in h for _, _, h in server.requests)


def test_500_then_success_is_retried(server):
    llm = client(server)
    (r,) = llm.generate(["FAIL500ONCE please"])
    assert r.ok and r.text == "echo FAIL500ONCE please"
    assert len(server.requests) == 2 and llm.usage.failures == 0
    assert r.attempts == 2 and llm.usage.calls == 2  # a retry is a call (llm_calls_per_q counts it)


def test_persistent_500_gives_up_after_bounded_retries(server):
    llm = client(server, max_retries=2)
    (r,) = llm.generate(["ALWAYS500"])
    assert r.error.startswith("http 500") and "after 3 attempts" in r.error
    assert len(server.requests) == 3 and llm.usage.failures == 1


def test_client_errors_are_not_retried(server):
    (r,) = client(server).generate(["BADREQUEST"])
    assert r.error.startswith("http 400") and len(server.requests) == 1


def test_timeout_becomes_error_reply(server):
    llm = client(server, timeout_s=0.3)
    start = time.perf_counter()
    (r,) = llm.generate(["SLOW"])
    assert r.error.startswith("timeout") and r.text == ""
    assert time.perf_counter() - start < 1.2  # not retried by default
    assert llm.usage.failures == 1


@pytest.mark.parametrize("word", ["BADJSON", "NOCHOICES"])
def test_bad_body_becomes_error_reply(server, word):
    (r,) = client(server).generate([word])
    assert r.error.startswith("bad response")


def test_connection_refused_is_an_error_reply():
    llm = OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", max_retries=1, backoff_s=0.01, timeout_s=2)
    (r,) = llm.generate(["anyone?"])
    assert r.error.startswith("connection: connection refused") and "after 2 attempts" in r.error


def test_breaker_fails_fast_after_repeated_failures_then_probes(server):
    """Three failed requests in a row (each after its retries) open the circuit: the next prompts
    fail at once without a request ("unavailable: ..."), and still count as calls of their question;
    after the cooldown one probe goes out, and a good reply closes the circuit."""
    llm = client(server, max_retries=0, breaker_threshold=3, breaker_cooldown_s=0.3)
    replies = llm.generate([f"ALWAYS500 {i}" for i in range(3)]) + llm.generate(["ALWAYS500 x", "hello"])
    assert len(server.requests) == 3 and all(r.error for r in replies)
    assert replies[-1].error.startswith("unavailable:") and "3 failed requests in a row" in replies[-1].error
    assert replies[-1].attempts == 0 and llm.usage.calls == 5
    time.sleep(0.35)
    (r,) = llm.generate(["hello"])
    assert r.ok and len(server.requests) == 4 and llm.breaker.state()["open"] is False


def test_html_page_is_a_bad_response(server):
    (r,) = client(server).generate(["HTMLPAGE"])
    assert r.error.startswith("bad response: an HTML page") and "Sign in" in r.error and len(server.requests) == 1


def test_independent_prompts_run_concurrently(server):
    llm = client(server, max_concurrency=4)
    start = time.perf_counter()
    replies = llm.generate([f"CONC {i}" for i in range(8)])
    elapsed = time.perf_counter() - start
    assert [r.text for r in replies] == [f"echo CONC {i}" for i in range(8)]  # order kept
    assert server.max_active == 4
    assert elapsed < 8 * 0.3 * 0.75  # sequential would take 2.4 s
    assert llm.usage.calls == 8


def test_score_via_echo_logprobs(server):
    llm = client(server, supports_echo=True)
    assert llm.score("Q: who? A:", [" ab", " abcd"]) == [-3.0, -5.0]
    assert llm.score("Q: who? A:", [" ab"], reduction="mean") == [-1.0]
    _, body, _ = server.requests[0]
    assert body["echo"] is True and body["logprobs"] == 1
    assert llm.usage.calls == 3


def test_score_unsupported_or_failing(server):
    with pytest.raises(NotImplementedError):
        client(server).score("p", ["a"])
    with pytest.raises(LLMError):
        client(server, supports_echo=True, max_retries=0).score("ALWAYS500", [" a"])
    with pytest.raises(NotImplementedError):
        client(server, supports_echo=True).score("NOCHOICES", [" a"])


def test_bad_endpoint_setting_is_rejected():
    with pytest.raises(ValueError, match="plain_prompt_endpoint"):
        OpenAICompatibleLLM(plain_prompt_endpoint="chats")

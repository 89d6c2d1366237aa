"""A live uvicorn server: concurrent requests share the method's batched call without changing any
answer, and a shutdown lets the requests in flight finish."""
import threading
import time

import httpx
import pytest

from rra.data.builtin import builtin_questions
from rra.serve.app import create_app
from rra.serve.service import Limits, Service
from serve_helpers import LiveServer  # tests/serve/conftest.py puts tests/serve on the path


def own_service(service, wait_ms: float) -> Service:
    """The session's graph and method behind a batcher of its own."""
    return Service(service.kg, None, service.method, Limits(), {"max_batch": 32, "max_wait_ms": wait_ms})


class Slow:
    """The method, one second slower per batch."""

    def __init__(self, method):
        self.method = method

    def answer_batch(self, examples, concurrency=1):
        time.sleep(1.0)
        return self.method.answer_batch(examples)


def ask_all(url: str, bodies: list[dict]) -> list[httpx.Response]:
    out = [None] * len(bodies)

    def ask(i):
        out[i] = httpx.post(f"{url}/v1/answer", json=bodies[i], timeout=60)
    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_concurrent_requests_are_batched_and_answered_as_alone(service):
    qs = builtin_questions("test")[:16]
    alone = {q.qid: service.method.answer_batch([q])[0] for q in qs}  # each question by itself
    served = own_service(service, wait_ms=200)
    with LiveServer(create_app(served)) as live:
        replies = ask_all(live.url, [{"question": q.question, "topic_entities": q.topic_entities} for q in qs])
    assert all(r.status_code == 200 for r in replies), [r.text for r in replies if r.status_code != 200]
    assert served.batcher.batches < len(qs)  # several requests per batch
    assert max(r.json()["timings"]["batch_size"] for r in replies) > 1
    for q, r in zip(qs, replies):
        rec, own = r.json(), alone[q.qid]
        assert rec["answers"] == own.answers and rec["status"] == own.status
        assert [p["path"] for p in rec["paths"]] == [p["path"] for p in own.paths]
        # scores agree to float rounding: a padded batch runs the encoder's kernels on other shapes
        # (infer.py's batch_size changes them the same way); a chain's paths are scored by the plan
        # ranker's softmax over every candidate plan (rank_chains), where rounding moves a share of
        # 0.005 by ~1e-5 of itself
        assert [p["score"] for p in rec["paths"]] == pytest.approx([p["score"] for p in own.paths], rel=1e-4)
        assert rec["triples"] == [list(t.as_tuple()) for t in own.triples]


def test_shutdown_lets_requests_in_flight_finish(service):
    served = own_service(service, wait_ms=25)
    served.method = Slow(service.method)  # the request is being answered while the server stops
    live = LiveServer(create_app(served)).__enter__()
    result = {}
    asker = threading.Thread(target=lambda: result.update(r=httpx.post(
        f"{live.url}/v1/answer", json={"question": "who wrote [The Narrow Tide]"}, timeout=60)))
    asker.start()
    time.sleep(0.5)
    live.server.should_exit = True  # what SIGTERM / Ctrl-C does
    asker.join(timeout=60)
    live.thread.join(timeout=60)
    assert result["r"].status_code == 200 and result["r"].json()["answers"]
    assert not live.thread.is_alive()
    try:  # and it takes no new ones
        httpx.get(f"{live.url}/healthz", timeout=2)
        raise AssertionError("the server still answers after shutdown")
    except httpx.ConnectError:
        pass

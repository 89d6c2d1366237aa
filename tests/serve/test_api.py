"""POST /v1/answer, /v1/info, /healthz, /docs and the refusals: every bad input is a 4xx naming its
field, a graph or LLM failure is that request's 5xx, and nothing but the question reaches the method."""
import json
import threading
import time

import pytest

from rra.data.builtin import builtin_questions

Q = "who wrote [The Narrow Tide]"


def test_one_question_is_the_predictions_record_with_ranked_answers(client, service):
    r = client.post("/v1/answer", json={"question": Q})
    assert r.status_code == 200, r.text
    rec = r.json()
    own = service.method.answer_batch([service.example(Q)])[0].to_dict()
    served = {k: v for k, v in rec.items() if k not in ("ranked", "labels", "timings")}
    assert set(served) == set(own)  # the same record infer.py writes to predictions.jsonl
    for key in set(own) - {"qid", "latency_s"}:
        assert rec[key] == own[key], key
    assert rec["status"] == "ok" and rec["topic_entities"] == ["book/the_narrow_tide"]
    assert [a["id"] for a in rec["ranked"]] == rec["answers"]
    assert all(a["label"] == rec["labels"][a["id"]] and a["score"] > 0 for a in rec["ranked"])
    assert rec["labels"]["book/the_narrow_tide"] == "The Narrow Tide"
    assert rec["paths"][0]["score"] > 0 and rec["triples"]
    assert set(rec["timings"]) == {"answer_s", "queue_s", "batch_s", "batch_size", "total_s"}


def test_a_list_answers_in_order_with_given_topics(client):
    qs = builtin_questions("test")[:3]
    body = {"questions": [qs[0].question, {"question": qs[1].question, "topic_entities": qs[1].topic_entities, "id": "x"},
                          {"question": qs[2].question}]}
    r = client.post("/v1/answer", json=body)
    assert r.status_code == 200, r.text
    recs = r.json()["records"]
    assert [d["question"] for d in recs] == [q.question for q in qs]
    assert recs[1]["qid"] == "x" and recs[1]["topic_entities"] == qs[1].topic_entities


@pytest.mark.parametrize("body, status, field", [
    ({"question": ""}, 422, "question"),
    ({"question": "   "}, 422, "question"),
    ({"question": "x" * 1001}, 422, "question"),
    ({"question": 3}, 422, "question"),
    ({}, 422, "question"),
    ({"question": Q, "questions": [Q]}, 422, "question"),
    ({"questions": []}, 422, "questions"),
    ({"questions": [Q] * 65}, 422, "questions"),
    ({"questions": [Q, ""]}, 422, "questions[1]"),
    ({"questions": [Q, {"question": ""}]}, 422, "questions[1].question"),
    ({"question": Q, "topic_entities": ["person/nobody_at_all"]}, 422, "topic_entities"),
    ({"questions": [Q, {"question": Q, "topic_entities": ["nobody"]}]}, 422, "questions[1].topic_entities"),
    ({"question": "what is the weather like"}, 422, "question"),  # names no entity of the KG
    ({"question": "who wrote [Nobody Wrote This]"}, 422, "question"),
    # nothing but questions reaches the server: a config key or a file is an unknown field
    ({"question": Q, "retriever": {"ckpt": "/etc/passwd"}}, 422, "retriever"),
    ({"questions": [{"question": Q, "kb_path": "/etc/passwd"}]}, 422, "questions[0].kb_path"),
])
@pytest.mark.parametrize("way", ["short", "full"])
def test_bad_input_is_a_4xx_naming_the_field(client, body, status, field, way):
    r = post(client, body, way)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["field"] == field and field in err["message"], err


def post(client, body, way: str):
    """POST /v1/answer by the app's short way in (a JSON body with its Content-Length) or, sent
    chunked (no Content-Length), through FastAPI's full stack (rra.serve.app.App)."""
    data = json.dumps(body).encode()
    headers = {"content-type": "application/json"}
    return client.post("/v1/answer", content=data if way == "short" else iter([data]), headers=headers)


def test_both_ways_in_give_the_same_reply(client):
    qs = builtin_questions("test")[:2]
    for body in ({"question": Q, "id": "a"},
                 {"questions": [qs[0].question, {"question": qs[1].question, "topic_entities": qs[1].topic_entities}]},
                 {"question": "who wrote [Nobody Wrote This]", "id": "b"}):
        short, full = post(client, body, "short"), post(client, body, "full")
        assert short.status_code == full.status_code and short.headers["content-type"] == full.headers["content-type"]
        assert drop_timings(short.json()) == drop_timings(full.json()), body


def drop_timings(reply: dict) -> dict:
    """A reply without what changes from one call to the next (timings, latency, generated qids)."""
    out = {}
    for key, value in reply.items():
        if key in ("timings", "latency_s") or (key == "qid" and str(value).startswith("q")):
            continue
        if isinstance(value, dict):
            value = drop_timings(value)
        elif isinstance(value, list):
            value = [drop_timings(v) if isinstance(v, dict) else v for v in value]
        out[key] = value
    return out


def test_malformed_json_and_oversized_bodies(client):
    r = client.post("/v1/answer", content=b'{"question": "who wrote', headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"] == {**r.json()["error"], "type": "invalid_json", "field": "body"}
    r = client.post("/v1/answer", content=b"x" * 1_000_001, headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["field"] == "body"
    assert client.post("/v1/answer", json={"question": Q}).status_code == 200  # still serving


def test_info_health_and_docs(client, service, serve_cfg):
    info = client.get("/v1/info").json()
    stats = service.kg.stats()
    assert info["kg"]["entities"] == stats.entities and info["kg"]["triples"] == stats.triples
    assert set(info["kg"]["relations"]) == set(stats.relations) and "written_by" in info["kg"]["relations"]
    # what a client needs, not where the server's files live
    assert info["checkpoint"] == "retriever/best.ckpt" and info["method"] == "rra"
    assert str(serve_cfg.paths.root_dir) not in json.dumps(info)
    assert info["llm"] is None and info["limits"]["max_question_chars"] == 1000
    assert info["batching"]["busy_s"] >= 0 and info["batching"]["max_batch"] == 32
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/docs").status_code == 200
    assert "/v1/answer" in client.get("/openapi.json").json()["paths"]
    page = client.get("/")
    assert page.status_code == 200 and '<svg id="graph"' in page.text
    assert "https://" not in page.text and "http://" not in page.text.replace("http://www.w3.org/2000/svg", "")
    assert client.get("/static/app.js").status_code == 200


class FailingGraph:
    """The served graph, except that any call naming `poison` fails as an unreachable store would."""

    def __init__(self, kg, poison: str):
        self.kg, self.poison = kg, poison

    def __getattr__(self, name):
        attr = getattr(self.kg, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            if self.poison in repr(args) + repr(kwargs):
                from rra.graph.base import GraphError

                raise GraphError(f"{name}: store unreachable (test)")
            return attr(*args, **kwargs)
        return call


def service_with(serve_cfg, kg, llm=None, cfg=None):
    from rra.eval.run import build_method
    from rra.serve.service import Limits, Service

    return Service(kg, llm, build_method(cfg or serve_cfg, kg, llm), Limits(), {"max_batch": 32, "max_wait_ms": 50})


def test_a_graph_failure_costs_only_its_request(serve_cfg, service):
    from fastapi.testclient import TestClient

    from rra.serve.app import create_app

    failing = service_with(serve_cfg, FailingGraph(service.kg, "book/the_narrow_tide"))
    method = failing.method

    class SlowFirst:  # the first batch takes a second, so the next two requests queue into one batch
        calls = 0

        def answer_batch(self, examples, concurrency=1):
            SlowFirst.calls += 1
            if SlowFirst.calls == 1:
                time.sleep(1.0)
            return method.answer_batch(examples)

    failing.method = SlowFirst()
    results = {}
    with TestClient(create_app(failing)) as c:
        def ask(key, body):
            results[key] = c.post("/v1/answer", json=body)
        warm = threading.Thread(target=ask, args=("warm", {"question": "who wrote [The Hollow Heron]"}))
        warm.start()
        time.sleep(0.3)
        threads = [threading.Thread(target=ask, args=("bad", {"question": Q})),
                   threading.Thread(target=ask, args=("good", {"question": "who wrote [The Hollow Heron]"}))]
        for t in threads:
            t.start()
        for t in threads + [warm]:
            t.join()
        assert results["bad"].status_code == 502, results["bad"].text
        assert results["bad"].json()["error"]["type"] == "graph_error"
        assert "store unreachable" in results["bad"].json()["error"]["message"]
        assert results["good"].status_code == 200 and results["good"].json()["answers"]
        # both were in one batch, and only one failed
        assert results["good"].json()["timings"]["batch_size"] == 2
        assert results["bad"].json()["record"]["timings"]["batch_size"] == 2
        assert c.get("/healthz").status_code == 200


def test_an_llm_failure_is_a_502_with_its_kind(compose_serve, service):
    from fastapi.testclient import TestClient

    from rra.llm import ScriptedLLM
    from rra.serve.app import create_app

    cfg = compose_serve(["llm=fake", "answer=llm"])
    down = service_with(cfg, service.kg, ScriptedLLM(default=ScriptedLLM.failure("http 503: down (test)")), cfg)
    with TestClient(create_app(down)) as c:
        r = c.post("/v1/answer", json={"question": Q})
        assert r.status_code == 502 and r.json()["error"]["type"] == "llm_error", r.text
        assert "down (test)" in r.json()["error"]["message"]
        assert r.json()["record"]["status"] == "llm_error"  # the record is still there to read
        assert c.get("/healthz").status_code == 200

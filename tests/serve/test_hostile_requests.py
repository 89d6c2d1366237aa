"""What an attacker or a careless client sends (issue 37 items 6-9): every refusal is the one JSON
envelope {"error": {"type", "field", "message"}} with the right status, never plain text or a
traceback, and the server goes on; replies never show server paths or the graph store's address;
cached graph results expire and can be dropped while the server runs."""
import json
import time

import pytest
from fastapi.testclient import TestClient

from rra.graph.base import GraphError
from rra.methods import QAMethod
from rra.records import Prediction, Status
from rra.serve.app import create_app
from rra.serve.service import Limits, Service, public

H = {"content-type": "application/json"}


class Echo(QAMethod):
    """Answers every question with its topic entities; a question naming `fail` fails as a graph
    store would, with the store's address in the error."""
    name = "echo"

    def answer(self, ex):
        if "fail" in ex.question:
            raise GraphError("SPARQL endpoint http://10.1.2.3:7878/query unreachable: connection refused "
                             "(reading /srv/rra/data/kb.nt)")
        return Prediction(ex.qid, ex.question, ["a"], topic_entities=list(ex.topic_entities))


@pytest.fixture
def client():
    from rra.graph.dict_graph import DictGraph

    service = Service(DictGraph([("a", "r", "b")]), None, Echo(), Limits(), {"max_batch": 4, "max_wait_ms": 1})
    with TestClient(create_app(service), raise_server_exceptions=False) as c:
        yield c


def envelope(r, status: int, kind: str, field=None):
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json"), r.headers
    err = r.json()["error"]
    assert set(err) == {"type", "field", "message"} and err["type"] == kind, err
    assert "Traceback" not in r.text
    if field is not None:
        assert err["field"] == field and err["message"].startswith(field), err
    return err


@pytest.mark.parametrize("body, field", [
    (b'{"question": "who wrote \\ud83d"}', "question"),
    (b'{"question": "q", "id": "\\ud83d"}', "id"),
    (b'{"question": "q", "topic_entities": ["\\udc00"]}', "topic_entities"),
    (b'{"questions": ["ok", {"question": "q", "id": "\\ud83d"}]}', "questions[1].id"),
])
@pytest.mark.parametrize("way", ["short", "chunked"])
def test_half_a_surrogate_pair_is_a_422_naming_the_field(client, body, field, way):
    r = client.post("/v1/answer", content=body if way == "short" else iter([body]), headers=H)
    envelope(r, 422, "invalid_text", field)
    assert client.post("/v1/answer", json={"question": "q"}).status_code == 200  # the server goes on


@pytest.mark.parametrize("content, field", [
    ([{"type": "text", "text": 5}], "messages[0].content[0].text"),
    (["just a string"], "messages[0].content[0]"),
    ("who \ud83d", "messages[-1].content"),
])
def test_a_chat_message_that_is_not_text_is_a_422(client, content, field):
    body = json.dumps({"messages": [{"role": "user", "content": content}]}).encode()
    envelope(client.post("/v1/chat/completions", content=body, headers=H), 422,
             "invalid_text" if isinstance(content, str) else "invalid_request", field)


@pytest.mark.parametrize("body, why", [
    (b'{"question": "\xff\xfe"}', "not valid UTF-8"),
    (b'{"question": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
    (b'{"question": "who wrote', "malformed JSON"),
])
@pytest.mark.parametrize("way", ["short", "chunked"])
def test_a_body_that_is_not_json_is_a_400_envelope(client, body, why, way):
    err = envelope(client.post("/v1/answer", content=body if way == "short" else iter([body]), headers=H),
                   400, "invalid_json", "body")
    assert why in err["message"]


def test_a_large_chunked_body_is_a_413_and_routes_refuse_in_the_envelope(client):
    envelope(client.post("/v1/answer", content=iter([b"x" * 1_000_000] * 50), headers=H), 413, "body_too_large", "body")
    envelope(client.get("/no/such/route"), 404, "not_found")
    envelope(client.get("/v1/answer"), 405, "method_not_allowed")
    assert client.post("/v1/answer", json={"question": "q"}).status_code == 200


def test_a_graph_error_does_not_show_the_store_or_server_paths(client):
    r = client.post("/v1/answer", json={"question": "please fail"})
    err = envelope(r, 502, "graph_error")
    shown = r.text
    assert "10.1.2.3" not in shown and "/srv/rra" not in shown, shown
    assert "unreachable" in err["message"] and "kb.nt" in err["message"]
    assert public("see /home/u/rra/checkpoints/x/best.ckpt at https://kg.internal:8890/sparql") == \
        "see best.ckpt at <server>"
    assert public("who wrote book/the_narrow_tide") == "who wrote book/the_narrow_tide"  # ids stay


def test_an_unexpected_exception_is_a_500_envelope(client):
    app = client.app

    @app.get("/boom")
    async def boom():
        raise ZeroDivisionError("secret at /srv/x")

    err = envelope(client.get("/boom"), 500, "error")
    assert "secret" not in err["message"] and "ZeroDivisionError" in err["message"]


# -- item 9: cached graph results on a long-running server ------------------------------------
def test_cached_results_expire_and_can_be_dropped(monkeypatch):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "graph"))
    from test_sparql_http import ANSWER, FakeEndpoint

    from rra.graph import SparqlGraph
    from rra.graph.rdf import RdfMapping

    edited = json.loads(json.dumps(ANSWER))
    edited["results"]["bindings"][0]["n"]["value"] = RdfMapping().entity_iri("Dan O'Bannon")
    endpoint = FakeEndpoint()
    try:
        kg = SparqlGraph(endpoint.url, trust_env=False, retries=0)
        assert kg.neighbors("Alien", "directed_by") == ["Ridley Scott"]
        endpoint.reply = edited  # the store is edited while a reader runs
        assert kg.neighbors("Alien", "directed_by") == ["Ridley Scott"]  # a run trusts its cache
        kg.cache_ttl = 0.05  # what the server sets (graph_cache_ttl_s)
        time.sleep(0.1)
        assert kg.neighbors("Alien", "directed_by") == ["Dan O'Bannon"]
        endpoint.reply = ANSWER
        service = Service(kg, None, Echo(), Limits())
        kg.cache_ttl = None
        assert kg.neighbors("Alien", "directed_by") == ["Dan O'Bannon"]
        service.clear_caches()  # the server's SIGHUP
        assert kg.neighbors("Alien", "directed_by") == ["Ridley Scott"]
    finally:
        endpoint.close()


def test_the_server_sets_the_cache_lifetime_from_its_config(monkeypatch):
    from omegaconf import OmegaConf

    from rra.eval import run

    class Store:
        cache_ttl = None

        def stats(self):
            from rra.graph.base import GraphStats

            return GraphStats(1, 1, {"r": 1})

    store = Store()
    monkeypatch.setattr(run, "build", lambda cfg: (store, None, Echo()))
    cfg = OmegaConf.load(Path_conf("serve.yaml"))
    service = Service.from_config(cfg)
    assert store.cache_ttl == cfg.graph_cache_ttl_s == 60
    assert service.question_seconds == 30 and service.info()["bounds"] == {"max_seconds": 30}


def Path_conf(name: str):
    from pathlib import Path

    return Path(__file__).resolve().parents[2] / "conf" / name


def test_a_question_over_its_budget_is_answered_with_its_status():
    from rra.graph.base import check_time
    from rra.serve import adapter

    class Slow(QAMethod):
        name = "slow"

        def answer(self, ex):
            time.sleep(0.05)
            try:
                check_time()
            except GraphError as err:
                return Prediction(ex.qid, ex.question, [], status=Status.GRAPH_ERROR, errors=[f"{type(err).__name__}: {err}"])
            return Prediction(ex.qid, ex.question, ["a"])

    [pred] = adapter.answer_batch(Slow(), [adapter.QAExample("q", [], [], qid="1")], 4, max_seconds=0.01)
    assert pred.status == Status.OVER_BUDGET and pred.extra["bounds"] == ["time budget of 0.01 s used up"]

"""HTTP behaviour of SparqlGraph: unreachable endpoint, time-outs, bounded retries, the cache."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from graph_small_kg import free_port
from rra.graph import (GraphUnavailableError, SparqlEndpointError, SparqlGraph, SparqlTruncatedError,
                       SparqlUnavailableError)
from rra.graph.rdf import RdfMapping

ANSWER = {
    "head": {"vars": ["e", "n"]},
    "results": {"bindings": [{
        "e": {"type": "uri", "value": RdfMapping().entity_iri("Alien")},
        "n": {"type": "uri", "value": RdfMapping().entity_iri("Ridley Scott")},
    }]},
}


class FakeEndpoint:
    """A tiny SPARQL endpoint on 127.0.0.1 that fails `failures` times with `status`
    (or sleeps `delay` s) before answering ANSWER. Records the queries it receives."""

    def __init__(self, failures: int = 0, status: int = 503, delay: float = 0.0, answer=None,
                 trickle: float = 0.0, html: bool = False, headers: dict | None = None):
        self.failures, self.status, self.delay = failures, status, delay
        self.headers = headers or {}
        self.trickle, self.html = trickle, html  # trickle: seconds between the body's bytes
        self.reply = ANSWER if answer is None else answer
        self.queries: list[str] = []
        self.forms: list[dict] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                try:
                    self.answer()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (time-out test): nothing to answer

            def answer(self):
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                endpoint.forms.append(parse_qs(body))
                endpoint.queries.append(parse_qs(body)["query"][0])
                if endpoint.delay:
                    time.sleep(endpoint.delay)
                if len(endpoint.queries) <= endpoint.failures:
                    self.send_response(endpoint.status)
                    self.end_headers()
                    self.wfile.write(b"try again later")
                    return
                data = json.dumps(endpoint.reply).encode()
                kind = "application/sparql-results+json"
                if endpoint.html:
                    data, kind = b"<!DOCTYPE html><html><head><title>Proxy login</title></head></html>", "text/html"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                for name, value in endpoint.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if endpoint.trickle:
                    for i in range(len(data)):
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                        time.sleep(endpoint.trickle)
                else:
                    self.wfile.write(data)

            def log_message(self, *args):  # keep the test output clean
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/query"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake():
    servers = []

    def make(**kwargs) -> FakeEndpoint:
        servers.append(FakeEndpoint(**kwargs))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def graph(url: str, **kwargs) -> SparqlGraph:
    # 10 s: the tests about time-outs set their own; the others must not time out on a loaded machine
    return SparqlGraph(url, trust_env=False, **{"timeout": 10.0, "backoff": 0.01, **kwargs})


def test_unreachable_endpoint_names_the_url():
    url = f"http://127.0.0.1:{free_port()}/query"  # nothing listens there
    kg = graph(url, retries=1, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(SparqlEndpointError, match="unreachable") as err:
        kg.neighbors("Alien", "directed_by")
    assert url in str(err.value) and "2 attempts" in str(err.value)
    assert kg.requests == 2 and time.monotonic() - start < 5


def test_retries_then_succeeds(fake):
    server = fake(failures=2)
    kg = graph(server.url, retries=2)
    assert kg.neighbors("Alien", "directed_by") == ["Ridley Scott"]
    assert kg.requests == 3 and len(server.queries) == 3


def test_retries_are_bounded(fake):
    server = fake(failures=10)
    kg = graph(server.url, retries=2)
    with pytest.raises(SparqlEndpointError, match="HTTP 503"):
        kg.neighbors("Alien", "directed_by")
    assert len(server.queries) == 3


def test_backoff_grows(fake):
    server = fake(failures=2)
    kg = graph(server.url, retries=2, backoff=0.1)
    start = time.monotonic()
    kg.neighbors("Alien", "directed_by")
    assert time.monotonic() - start >= 0.1 + 0.2  # 0.1 s, then 0.2 s


def test_bad_query_is_not_retried(fake):
    server = fake(failures=1, status=400)
    kg = graph(server.url, retries=3)
    with pytest.raises(SparqlEndpointError, match="refused the query"):
        kg.neighbors("Alien", "directed_by")
    assert len(server.queries) == 1


def test_timeout(fake):
    server = fake(delay=0.5)
    kg = graph(server.url, timeout=0.1, retries=1)
    with pytest.raises(SparqlUnavailableError, match="timed out after 0.1 s") as err:
        kg.neighbors("Alien", "directed_by")
    assert server.url in str(err.value) and kg.requests == 1  # a time-out is not sent again by default
    kg = graph(server.url, timeout=0.1, retries=1, retry_on_timeout=True)
    with pytest.raises(SparqlUnavailableError, match="timed out"):
        kg.neighbors("Alien", "directed_by")
    assert kg.requests == 2


def test_cache_hits_skip_the_server(fake):
    server = fake()
    kg = graph(server.url, cache_size=2)
    for _ in range(3):
        assert kg.neighbors("Alien", "directed_by") == ["Ridley Scott"]
    assert len(server.queries) == 1 and kg.cache_hits == 2 and kg.cache_misses == 1
    kg.neighbors("Blade Runner", "directed_by")
    kg.neighbors("Star Wars", "directed_by")  # evicts the least recently used (Alien)
    kg.neighbors("Alien", "directed_by")
    assert len(server.queries) == 4
    kg.clear_cache()
    kg.neighbors("Alien", "directed_by")
    assert len(server.queries) == 5


def test_batching_uses_values(fake):
    server = fake()
    kg = graph(server.url, batch_size=2)
    kg.neighbors_batch(["a", "b", "c", 'd"} DROP ALL'], "directed_by")
    assert len(server.queries) == 2 and all("VALUES ?e" in q for q in server.queries)
    assert "<http://rra.local/entity/d%22%7D%20DROP%20ALL>" in server.queries[1]


def test_cache_against_real_server(oxigraph_endpoint):
    with graph(oxigraph_endpoint) as kg:
        first = kg.follow_path("Alien", ["directed_by", "^directed_by"])
        sent = kg.requests
        assert kg.follow_path("Alien", ["directed_by", "^directed_by"]) == first
        assert sent == 1  # a whole path is one query
        assert kg.requests == sent and kg.cache_hits == 1


def test_bad_settings():
    with pytest.raises(ValueError):
        SparqlGraph("http://127.0.0.1:1/query", retries=-1)


def test_wrong_path_says_so(oxigraph_endpoint):
    url = oxigraph_endpoint.replace("/query", "/no-such-path")
    with graph(url, retries=0) as kg, pytest.raises(SparqlEndpointError, match="not found.*check the URL"):
        kg.has_entity("Alien")


@pytest.mark.parametrize("answer", [{"head": {}}, {"results": {"bindings": [{"e": {"value": "x"}}]}}, [1, 2]])
def test_malformed_results_name_the_endpoint(fake, answer):
    server = fake(answer=answer)
    with pytest.raises(SparqlEndpointError, match="malformed result") as err:
        graph(server.url).neighbors("Alien", "directed_by")
    assert server.url in str(err.value)


def test_graph_iri_goes_with_every_request(fake):
    server = fake()
    kg = graph(server.url, graph_iri=["http://a.test/g1", "http://a.test/g2"], cache_size=0)
    kg.neighbors("Alien", "directed_by")
    kg.follow_path_batch(["Alien", "Heat"], ["directed_by"])
    assert len(server.forms) == 2
    assert all(f["default-graph-uri"] == ["http://a.test/g1", "http://a.test/g2"] for f in server.forms)
    graph(server.url).neighbors("Heat", "directed_by")
    assert "default-graph-uri" not in server.forms[-1]  # unscoped: the endpoint's default graph
    with pytest.raises(ValueError, match="not an absolute IRI"):
        graph(server.url, graph_iri="metaqa graph")


def test_deadline_is_for_the_whole_reply_not_per_read(fake):
    """A server that trickles a byte every 0.1 s never trips a per-read time-out; the deadline
    is for connect + the whole reply."""
    server = fake(trickle=0.1)
    kg = graph(server.url, timeout=0.5, retries=3)
    start = time.monotonic()
    with pytest.raises(SparqlUnavailableError, match="timed out after 0.5 s"):
        kg.neighbors("Alien", "directed_by")
    assert time.monotonic() - start < 1.5 and kg.requests == 1


def test_html_page_is_a_bad_body_not_results(fake):
    server = fake(html=True)
    kg = graph(server.url, retries=3)
    with pytest.raises(SparqlUnavailableError, match="HTML page.*Proxy login"):
        kg.neighbors("Alien", "directed_by")
    assert len(server.queries) == 1  # the same page would come back


def test_refused_says_refused():
    kg = graph(f"http://127.0.0.1:{free_port()}/query", retries=0)
    with pytest.raises(GraphUnavailableError, match="connection refused"):
        kg.neighbors("Alien", "directed_by")


def test_breaker_fails_fast_then_probes(fake):
    """After `breaker_threshold` failed requests in a row no request reaches the server until the
    cooldown has passed; then one probe, and a good answer closes the circuit."""
    server = fake(failures=3, status=503)
    kg = graph(server.url, retries=0, breaker_threshold=3, breaker_cooldown=0.3)
    for entity in ("a", "b", "c"):
        with pytest.raises(SparqlUnavailableError, match="HTTP 503"):
            kg.neighbors(entity, "directed_by")
    start = time.monotonic()
    for entity in ("d", "e", "f", "g"):
        with pytest.raises(SparqlUnavailableError, match="3 failed requests in a row.*HTTP 503"):
            kg.neighbors(entity, "directed_by")
    assert len(server.queries) == 3 and time.monotonic() - start < 0.2
    time.sleep(0.35)
    assert kg.neighbors("Alien", "directed_by") == ["Ridley Scott"]  # the probe: the server is back
    assert kg.neighbors("Alien", "written_by") == ["Ridley Scott"]  # a new query: the circuit is closed
    assert len(server.queries) == 5 and kg.breaker.state()["open"] is False


def test_failed_probe_reopens(fake):
    server = fake(failures=99, status=502)
    kg = graph(server.url, retries=2, breaker_threshold=1, breaker_cooldown=0.2)
    with pytest.raises(SparqlUnavailableError):
        kg.neighbors("a", "directed_by")
    assert len(server.queries) == 3
    time.sleep(0.25)
    with pytest.raises(SparqlUnavailableError, match="HTTP 502"):
        kg.neighbors("b", "directed_by")  # the probe: one attempt, no retries
    assert len(server.queries) == 4
    with pytest.raises(SparqlUnavailableError, match="in a row"):
        kg.neighbors("c", "directed_by")
    assert len(server.queries) == 4


def test_an_unforeseen_error_in_a_probe_does_not_leave_the_circuit_shut(fake, monkeypatch):
    from rra import net

    server = fake()
    kg = graph(server.url, retries=0, breaker_threshold=1, breaker_cooldown=0.0)
    kg.breaker.failure("down")  # open, cooldown over: the next query is the probe
    monkeypatch.setattr(net, "request", lambda *a, **k: (_ for _ in ()).throw(UnicodeError("odd")))
    with pytest.raises(UnicodeError):
        kg.neighbors("Alien", "directed_by")
    monkeypatch.undo()
    assert kg.neighbors("Alien", "directed_by") == ["Ridley Scott"]  # a new probe went out
    assert repr(kg) == f"SparqlGraph({server.url!r})"


@pytest.mark.parametrize("how,said", [("close", "closed the connection"), ("reset", "connection reset by the server")])
def test_a_dropped_connection_says_how(how, said):
    """A server that closes the connection without a reply, or resets it (RST), is named as such."""
    import socket
    import struct

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.settimeout(0.2)
            try:  # the whole request: unread bytes would make even a plain close() send RST
                while conn.recv(65536):
                    pass
            except socket.timeout:
                pass
            if how == "reset":  # linger 0: close() sends RST instead of FIN
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    kg = graph(f"http://127.0.0.1:{listener.getsockname()[1]}/query", retries=1)
    try:
        with pytest.raises(SparqlUnavailableError, match=said):
            kg.neighbors("Alien", "directed_by")
    finally:
        listener.close()


def test_a_result_the_endpoint_cut_is_an_error_not_fewer_answers(fake):
    """Virtuoso answers at most ResultSetMaxRows rows (10,000 in Debian's ini) and says so only in
    the X-SPARQL-MaxRows header: a reply holding that many rows is refused, naming the setting; one
    under the cap is whole."""
    rows = [{"e": {"type": "uri", "value": RdfMapping().entity_iri("Alien")},
             "n": {"type": "uri", "value": RdfMapping().entity_iri(name)}} for name in ("A", "B", "C")]
    cut = fake(answer={**ANSWER, "results": {"bindings": rows}}, headers={"X-SPARQL-MaxRows": "3"})
    with pytest.raises(SparqlTruncatedError, match="ResultSetMaxRows") as e:
        graph(cut.url).neighbors("Alien", "directed_by")
    assert "3 rows" in str(e.value) and cut.url in str(e.value)
    whole = fake(answer={**ANSWER, "results": {"bindings": rows}}, headers={"X-SPARQL-MaxRows": "10000"})
    assert graph(whole.url).neighbors("Alien", "directed_by") == ["A", "B", "C"]
    # a query's own LIMIT within the cap: as many rows as it asked for, nothing cut
    assert len(graph(cut.url)._select("SELECT ?e ?n WHERE { ?e ?p ?n } LIMIT 3", ("e", "n"))) == 3
    with pytest.raises(SparqlTruncatedError):
        graph(cut.url)._select("SELECT ?e ?n WHERE { ?e ?p ?n } LIMIT 4", ("e", "n"))


def test_names_are_read_once_on_a_loopback_endpoint_by_default():
    """graph.names_in_memory=auto: an endpoint on this machine (a store you loaded) answers
    case-insensitive lookups from its names read once; a remote one filters on its side."""
    from rra.graph.sparql_graph import on_loopback

    for url, local in [("http://127.0.0.1:7878/query", True), ("http://localhost:8890/sparql", True),
                       ("http://[::1]:8890/sparql", True), ("http://127.0.0.5/q", True),
                       ("https://query.wikidata.org/sparql", False), ("http://10.0.0.7:8890/sparql", False)]:
        assert on_loopback(url) is local, url
        assert SparqlGraph(url).names_in_memory is local
    assert SparqlGraph("https://query.wikidata.org/sparql", names_in_memory=True).names_in_memory is True
    assert SparqlGraph("http://127.0.0.1:7878/query", names_in_memory=False).names_in_memory is False
    with pytest.raises(ValueError, match="names_in_memory"):
        SparqlGraph("http://127.0.0.1:7878/query", names_in_memory="yes")

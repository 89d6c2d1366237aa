"""Graph-layer fixtures: a small adversarial KG, and an `oxigraph serve` on 127.0.0.1 holding it.

The server is session-scoped (started once, ~1 s) and read-write on purpose: an injection that
got through would really change the store, and the tests would see it.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from rra.graph import NetworkXGraph, OxigraphGraph, SparqlGraph, write_ntriples

from graph_small_kg import LABELS, LITERAL_PROBE_NT, LITERAL_PROBE_TSV, TRIPLES, free_port
from rra.graph import Triple

NAMED_GRAPH = "http://rra.test/graph/kg"
OTHER_GRAPH = "http://rra.test/graph/other"
OTHER_TRIPLES = [Triple("Unrelated", "other_relation", "Thing"), Triple("Alien", "other_relation", "Noise")]

@pytest.fixture(scope="session")
def oxigraph_endpoint(tmp_path_factory) -> str:
    """URL of the query endpoint of a fresh `oxigraph serve` holding TRIPLES + LABELS."""
    # The `oxigraph` pip package puts the binary next to the interpreter, which is not on PATH
    # when the venv's python is called directly.
    binary = shutil.which("oxigraph") or shutil.which("oxigraph", path=str(Path(sys.executable).parent))
    if binary is None:
        pytest.skip("the `oxigraph` server binary is not installed (pip install oxigraph)")
    root = tmp_path_factory.mktemp("oxigraph")
    nt = root / "kg.nt"
    write_ntriples(nt, TRIPLES, LABELS)
    store = root / "store"
    subprocess.run([binary, "load", "--location", str(store), "--file", str(nt)],
                   check=True, capture_output=True, timeout=60)
    # The same KG in a named graph, beside another graph of unrelated facts: the `sparql_named`
    # backend must see exactly the KG (as Virtuoso users scope their endpoint to one graph).
    subprocess.run([binary, "load", "--location", str(store), "--file", str(nt), "--graph", NAMED_GRAPH],
                   check=True, capture_output=True, timeout=60)
    junk = root / "junk.nt"
    write_ntriples(junk, OTHER_TRIPLES)
    subprocess.run([binary, "load", "--location", str(store), "--file", str(junk), "--graph", OTHER_GRAPH],
                   check=True, capture_output=True, timeout=60)
    with _serving(binary, "serve", store, root) as url:
        yield url


@contextmanager
def _serving(binary: str, command: str, store: Path, root: Path):
    """`oxigraph <command>` (serve or serve-read-only) over `store` on a free port, logging to
    root/server.log; yields its query URL once it answers, and stops it afterwards."""
    port = free_port()
    log = open(root / "server.log", "wb")
    proc = subprocess.Popen([binary, command, "--location", str(store), "--bind", f"127.0.0.1:{port}"],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/query"
    try:
        _wait_ready(url, proc, root / "server.log")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _wait_ready(url: str, proc: subprocess.Popen, log: Path, deadline_s: float = 30.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"oxigraph serve exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            r = httpx.post(url, data={"query": "ASK {}"}, timeout=1.0, trust_env=False)
            if r.status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"oxigraph serve not ready at {url} after {deadline_s} s")


def _serve_file(tmp_path_factory, path: Path, name: str):
    """An `oxigraph serve-read-only` holding the file as written (`oxigraph load`, not through rra):
    yields its query URL; skips where the server binary is not installed."""
    binary = shutil.which("oxigraph") or shutil.which("oxigraph", path=str(Path(sys.executable).parent))
    if binary is None:
        pytest.skip("the `oxigraph` server binary is not installed (pip install oxigraph)")
    root = tmp_path_factory.mktemp(name)
    subprocess.run([binary, "load", "--location", str(root / "store"), "--file", str(path)],
                   check=True, capture_output=True, timeout=60)
    with _serving(binary, "serve-read-only", root / "store", root) as url:
        yield url


def _file_kg(request, path: Path, endpoint_fixture: str, in_virtuoso):
    """One RDF file on the backend `request.param` names: networkx / oxigraph (read by rra), sparql
    (the file served as written), virtuoso (`in_virtuoso(server)` loads it and gives its graph IRI)."""
    from rra.graph import load_graph

    if request.param in ("networkx", "oxigraph"):
        yield load_graph(path, backend=request.param)
    elif request.param == "sparql":
        with SparqlGraph(request.getfixturevalue(endpoint_fixture), batch_size=2, timeout=5.0, retries=0,
                         trust_env=False) as graph:
            yield graph
    else:
        server = request.getfixturevalue("virtuoso")
        with SparqlGraph(server.endpoint, batch_size=2, timeout=10.0, retries=0, trust_env=False,
                         graph_iri=in_virtuoso(server)) as graph:
            yield graph


def _file_fixtures(stem: str, text: str, graph: str):
    """The four fixtures of a KG written as one N-Triples text: `{stem}_file`, `{stem}_endpoint` (an
    `oxigraph serve` holding the file as written), `{stem}_in_virtuoso` (the file as written in
    Virtuoso's named graph `graph`) and `{stem}_kg` (the KG on every backend that reads an RDF file
    or a store)."""

    @pytest.fixture(scope="session", name=f"{stem}_file")
    def file_(tmp_path_factory) -> Path:
        path = tmp_path_factory.mktemp(stem) / f"{stem}.nt"
        path.write_text(text, encoding="utf-8")
        return path

    @pytest.fixture(scope="session", name=f"{stem}_endpoint")
    def endpoint(tmp_path_factory, request) -> str:
        yield from _serve_file(tmp_path_factory, request.getfixturevalue(f"{stem}_file"), f"{stem}_store")

    @pytest.fixture(scope="session", name=f"{stem}_in_virtuoso")
    def in_virtuoso(virtuoso, request) -> str:
        virtuoso.load(request.getfixturevalue(f"{stem}_file"), graph)
        return graph

    @pytest.fixture(params=["networkx", "oxigraph", "sparql", "virtuoso"], name=f"{stem}_kg")
    def kg(request):
        yield from _file_kg(request, request.getfixturevalue(f"{stem}_file"), f"{stem}_endpoint",
                            lambda server: request.getfixturevalue(f"{stem}_in_virtuoso"))

    return file_, endpoint, in_virtuoso, kg


@pytest.fixture(scope="session")
def reference() -> NetworkXGraph:
    return NetworkXGraph(TRIPLES, LABELS)


@pytest.fixture(scope="session")
def virtuoso_graph(virtuoso, tmp_path_factory) -> str:
    """The small KG bulk-loaded into a named graph of the private Virtuoso; its IRI."""
    root = tmp_path_factory.mktemp("virtuoso_kg")
    write_ntriples(root / "kg.nt", TRIPLES, LABELS)
    assert virtuoso.load(root / "kg.nt", NAMED_GRAPH) > len(TRIPLES)
    return NAMED_GRAPH


@pytest.fixture(params=["networkx", "dict", "subgraphs", "oxigraph", "oxigraph_named", "sparql", "sparql_named", "virtuoso"])
def kg(request):
    """The same KG on each backend. Batch sizes are tiny so that batching is exercised. The
    `_named` variants hold it in a named graph next to unrelated facts (default graph / another
    named graph) and are scoped to it with `graph_iri`."""
    if request.param == "networkx":
        yield NetworkXGraph(TRIPLES, LABELS)
    elif request.param == "dict":  # the per-question graphs' backend
        from rra.graph.dict_graph import DictGraph

        yield DictGraph(TRIPLES, LABELS)
    elif request.param == "subgraphs":  # a per-question graph, inside its one question (no CVTs here)
        from rra.graph.subgraphs import QuestionGraphs, Subgraph

        graphs = QuestionGraphs(cvt={"pattern": None})
        graphs.add("q", Subgraph([t.as_tuple() for t in TRIPLES], LABELS))
        with graphs.scope("q"):
            yield graphs
    elif request.param == "oxigraph":
        yield OxigraphGraph.from_triples(TRIPLES, LABELS, batch_size=2)
    elif request.param == "oxigraph_named":
        graph = OxigraphGraph.from_triples(TRIPLES, LABELS, batch_size=2, graph_iri=NAMED_GRAPH)
        OxigraphGraph(graph.store).add_triples(OTHER_TRIPLES)  # into the default graph
        OxigraphGraph(graph.store, graph_iri=OTHER_GRAPH).add_triples(OTHER_TRIPLES)
        yield graph
    elif request.param == "virtuoso":
        iri = request.getfixturevalue("virtuoso_graph")
        server = request.getfixturevalue("virtuoso")
        with SparqlGraph(server.endpoint, batch_size=2, timeout=10.0, retries=0, trust_env=False, graph_iri=iri) as graph:
            yield graph
    else:
        url = request.getfixturevalue("oxigraph_endpoint")
        scope = NAMED_GRAPH if request.param == "sparql_named" else None
        # sparql: names read once (the default on loopback); sparql_named: the store's own case-insensitive lookups
        with SparqlGraph(url, batch_size=2, timeout=5.0, retries=0, trust_env=False, graph_iri=scope,
                         names_in_memory=request.param == "sparql") as graph:
            yield graph


@pytest.fixture(scope="session")
def literal_probe_files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("literal_probe")
    (root / "probe.nt").write_text(LITERAL_PROBE_NT, encoding="utf-8")
    (root / "probe.tsv").write_text(LITERAL_PROBE_TSV, encoding="utf-8")
    return {"nt": root / "probe.nt", "tsv": root / "probe.tsv"}


@pytest.fixture(scope="session")
def literal_probe_endpoint(tmp_path_factory, literal_probe_files) -> str:
    """An `oxigraph serve` holding the probe file as written (its literals are RDF literals)."""
    yield from _serve_file(tmp_path_factory, literal_probe_files["nt"], "literal_probe_store")


LITERAL_PROBE_GRAPH = "http://rra.test/graph/literal_probe"


@pytest.fixture(params=["networkx_nt", "networkx_tsv", "oxigraph_nt", "oxigraph_tsv", "dict", "sparql", "virtuoso"])
def literal_kg(request, literal_probe_files):
    """The literal probe on every backend: read from the .nt file and from the .tsv file (NetworkX,
    embedded Oxigraph), the .nt file's facts in a per-question DictGraph, and the .nt file loaded as
    is into a SPARQL server (Oxigraph, Virtuoso)."""
    from rra.graph import load_graph

    name = request.param
    if name == "dict":
        from rra.graph.dict_graph import DictGraph

        yield DictGraph(list(load_graph(literal_probe_files["nt"]).all_triples()))
    elif name.startswith(("networkx", "oxigraph")):
        backend, fmt = name.split("_")
        yield load_graph(literal_probe_files[fmt], backend=backend)
    elif name == "sparql":
        with SparqlGraph(request.getfixturevalue("literal_probe_endpoint"), batch_size=2, timeout=5.0, retries=0,
                         trust_env=False) as graph:
            yield graph
    else:
        server = request.getfixturevalue("virtuoso")
        request.getfixturevalue("literal_probe_in_virtuoso")
        with SparqlGraph(server.endpoint, batch_size=2, timeout=10.0, retries=0, trust_env=False,
                         graph_iri=LITERAL_PROBE_GRAPH) as graph:
            yield graph


@pytest.fixture(scope="session")
def literal_probe_in_virtuoso(virtuoso, literal_probe_files) -> str:
    virtuoso.load(literal_probe_files["nt"], LITERAL_PROBE_GRAPH)
    return LITERAL_PROBE_GRAPH


NONCANONICAL_GRAPH = "http://rra.test/graph/noncanonical"


@pytest.fixture(scope="session")
def noncanonical_file(tmp_path_factory) -> Path:
    from graph_small_kg import NONCANONICAL_NT

    path = tmp_path_factory.mktemp("noncanonical") / "values.nt"
    path.write_text(NONCANONICAL_NT, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def noncanonical_endpoint(tmp_path_factory, noncanonical_file) -> str:
    """An `oxigraph serve` holding the file as written (`oxigraph load`, not through rra)."""
    yield from _serve_file(tmp_path_factory, noncanonical_file, "noncanonical_store")


@pytest.fixture(scope="session")
def noncanonical_in_virtuoso(virtuoso, noncanonical_file) -> str:
    """The file loaded into Virtuoso the way the docs say: `rra-kg load --virtuoso`, which writes
    the canonical N-Triples Virtuoso's bulk loader reads (it would load "abc"^^xsd:integer as 0)."""
    from rra.graph.cli import main

    assert main(["load", str(noncanonical_file), "--virtuoso", f"127.0.0.1:{virtuoso.sql_port}",
                 "--graph", NONCANONICAL_GRAPH, "--load-dir", str(virtuoso.root)]) == 0
    return NONCANONICAL_GRAPH


@pytest.fixture(params=["networkx", "oxigraph", "sparql", "virtuoso"])
def noncanonical_kg(request, noncanonical_file):
    yield from _file_kg(request, noncanonical_file, "noncanonical_endpoint",
                        lambda server: request.getfixturevalue("noncanonical_in_virtuoso"))


# A KG whose entities have other names (Wikidata's skos:altLabel, Freebase's common.topic.alias):
# linking finds an entity by them on every backend.
ALIAS_GRAPH = "http://rra.test/graph/aliases"
_Q, _P = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
_LABEL, _ALT = "http://www.w3.org/2000/01/rdf-schema#label", "http://www.w3.org/2004/02/skos/core#altLabel"
ALIAS_NT = "".join(f"{line} .\n" for line in [
    f"<{_Q}Q9696> <{_P}P19> <{_Q}Q100>", f"<{_Q}Q9696> <{_LABEL}> \"John F. Kennedy\"@en",
    f"<{_Q}Q9696> <{_ALT}> \"JFK\"@en", f"<{_Q}Q9696> <{_ALT}> \"John Kennedy\"@en",
    f"<{_Q}Q9696> <{_ALT}> \"John Fitzgerald Kennedy\"",
    f"<{_Q}Q100> <{_LABEL}> \"Brookline\"@en", f"<{_Q}Q8685> <{_LABEL}> \"John F. Kennedy International Airport\"@en",
    f"<{_Q}Q8685> <{_ALT}> \"JFK\"@en", f"<{_Q}Q8685> <{_P}P131> <{_Q}Q60>", f"<{_Q}Q60> <{_LABEL}> \"New York City\"@en",
    f"<{_Q}Q60> <{_ALT}> \"NYC\"@en", f"<{_Q}Q60> <{_ALT}> \"New York\"@en",
    f"<{_Q}Q1384> <{_LABEL}> \"New York\"@en", f"<{_Q}Q1384> <{_P}P36> <{_Q}Q24>",
    f"<{_Q}Q24> <{_LABEL}> \"Albany\"@en",
    f"<http://rdf.freebase.com/ns/m.0d3k14> <http://rdf.freebase.com/ns/common.topic.alias> \"Jack Kennedy\"@en",
    f"<http://rdf.freebase.com/ns/m.0d3k14> <{_LABEL}> \"Kennedy (fb)\"",
    f"<http://rdf.freebase.com/ns/m.0d3k14> <http://rdf.freebase.com/ns/people.person.place_of_birth> <{_Q}Q100>",
])


alias_file, alias_endpoint, alias_in_virtuoso, alias_kg = _file_fixtures("alias", ALIAS_NT, ALIAS_GRAPH)


# A KG that names its entities without rdfs:label (schema:name, foaf:name, Freebase's
# type.object.name, dcterms:title, skos:prefLabel), as many real ones do.
NAMES_GRAPH = "http://rra.test/graph/names"
_EX, _FB = "http://example.org/", "http://rdf.freebase.com/ns/"
NAMES_NT = "".join(f"{line} .\n" for line in [
    f"<{_EX}ann> <http://schema.org/name> \"Ann Smith\"", f"<{_EX}ann> <{_EX}bornIn> <{_EX}oslo>",
    f"<{_EX}oslo> <https://schema.org/name> \"Oslo\"@en", f"<{_EX}oslo> <{_LABEL}> \"Oslo (city)\"@en",
    f"<{_EX}bob> <http://xmlns.com/foaf/0.1/name> \"Bob Jones\"", f"<{_EX}bob> <{_EX}bornIn> <{_EX}oslo>",
    f"<{_FB}m.0abc> <{_FB}type.object.name> \"Karl Berg\"@de", f"<{_FB}m.0abc> <{_FB}type.object.name> \"Carl Berg\"@en",
    f"<{_FB}m.0abc> <{_FB}people.person.place_of_birth> <{_EX}oslo>",
    f"<{_EX}walks> <http://purl.org/dc/terms/title> \"Graph Walks\"", f"<{_EX}walks> <{_EX}author> <{_EX}ann>",
    f"<{_EX}dora> <http://www.w3.org/2004/02/skos/core#prefLabel> \"Dora Lind\"@en", f"<{_EX}dora> <{_EX}bornIn> <{_EX}oslo>",
])


names_file, names_endpoint, names_in_virtuoso, names_kg = _file_fixtures("names", NAMES_NT, NAMES_GRAPH)

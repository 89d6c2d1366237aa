"""conf/graph/*.yaml build working graphs through Hydra's instantiate."""
from __future__ import annotations

import pytest
from hydra.utils import instantiate

from graph_small_kg import TRIPLES
from rra.graph import NetworkXGraph, write_ntriples


def build(cfg_infer, name: str, data: dict, **overrides):
    """conf/graph/NAME.yaml instantiated inside the infer config, beside a data config naming `data`."""
    cfg = cfg_infer([f"graph={name}", "data=files", *(f"data.{k}={v}" for k, v in data.items()),
                     *(f"graph.{k}={v}" for k, v in overrides.items())])
    return instantiate(cfg.graph)


@pytest.mark.parametrize("name", ["networkx", "oxigraph"])
def test_file_backends(cfg_infer, tmp_path, name):
    kb = tmp_path / "kb.nt"
    write_ntriples(kb, TRIPLES)
    kg = build(cfg_infer, name, {"kb_path": str(kb)})
    assert kg.stats() == NetworkXGraph(TRIPLES).stats()
    labels = tmp_path / "labels.tsv"
    labels.write_text("Alien\tAlien (1979)\n", encoding="utf-8")
    kg = build(cfg_infer, name, {"kb_path": str(kb), "labels_path": str(labels)})
    assert kg.label("Alien") == "Alien (1979)"


def test_sparql_backend(cfg_infer, oxigraph_endpoint):
    kg = build(cfg_infer, "sparql", {}, endpoint=oxigraph_endpoint, trust_env=False)
    assert kg.neighbors("Ridley Scott", "^directed_by")[:2] == ["Alien", "Blade Runner"]
    assert kg.stats() == NetworkXGraph(TRIPLES).stats()


@pytest.mark.parametrize("entry", ["train", "infer"])
@pytest.mark.parametrize("backend", ["networkx", "oxigraph", "sparql"])
def test_the_graph_group_alone_picks_the_backend(compose_cfg, tmp_path, request, entry, backend):
    """data=files names the KG file; graph=... builds exactly that backend for both entry points."""
    from rra.config import build_graph, graph_description
    from rra.graph import OxigraphGraph, SparqlGraph

    kb = tmp_path / "kb.nt"  # the adversarial KG has tabs and newlines in ids: N-Triples holds them
    write_ntriples(kb, TRIPLES)
    overrides = ["data=files", f"data.kb_path={kb}", f"graph={backend}"]
    if backend == "sparql":
        url = request.getfixturevalue("oxigraph_endpoint")
        overrides += [f"graph.endpoint={url}", "graph.trust_env=false"]
    kg = build_graph(compose_cfg(entry, overrides, tmp_path))
    expected = {"networkx": NetworkXGraph, "oxigraph": OxigraphGraph, "sparql": SparqlGraph}[backend]
    assert type(kg) is expected
    assert kg.stats() == NetworkXGraph(TRIPLES).stats()
    assert graph_description(kg).startswith(expected.__name__)


def test_a_file_backend_without_a_kb_path_is_an_error_not_a_fallback(cfg_infer):
    from rra.config import build_graph

    cfg = cfg_infer(["data=webnlg", "graph=oxigraph"])  # names no KG file
    with pytest.raises(ValueError, match="data.kb_path"):
        build_graph(cfg)


@pytest.mark.parametrize("backend", ["networkx", "oxigraph"])
def test_the_data_config_says_where_predicates_are_named_for_both_entry_points(compose_cfg, tmp_path, backend):
    """data.property_namespaces reaches the graph that train.py and infer.py build: Wikidata's by default."""
    from test_relation_labels import NAMES, WDT, WIKIDATA_NT

    from rra.config import build_graph

    kb = tmp_path / "wd.nt"
    kb.write_text(WIKIDATA_NT, encoding="utf-8")
    for entry in ("train", "infer"):
        base = ["data=files", f"data.kb_path={kb}", f"graph={backend}"]
        assert build_graph(compose_cfg(entry, base, tmp_path)).relation_labels(list(NAMES)) == NAMES
        off = build_graph(compose_cfg(entry, [*base, "data.property_namespaces={}"], tmp_path))
        assert off.relation_labels(list(NAMES)) == {f"{WDT}P27": "citizen of"}

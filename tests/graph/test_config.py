"""conf/graph/*.yaml build working graphs through Hydra's instantiate."""
from __future__ import annotations

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf

from graph_small_kg import TRIPLES
from rra.graph import NetworkXGraph, write_ntriples


def build(repo_root, name: str, data: dict, **overrides):
    with initialize_config_dir(config_dir=str(repo_root / "conf" / "graph"), version_base="1.3"):
        cfg = compose(config_name=name, overrides=[f"{k}={v}" for k, v in overrides.items()])
    return instantiate(OmegaConf.merge({"data": data}, {"graph": cfg}).graph)


@pytest.mark.parametrize("name", ["networkx", "oxigraph"])
def test_file_backends(repo_root, tmp_path, name):
    kb = tmp_path / "kb.nt"
    write_ntriples(kb, TRIPLES)
    kg = build(repo_root, name, {"kb_path": str(kb)})
    assert kg.stats() == NetworkXGraph(TRIPLES).stats()
    labels = tmp_path / "labels.tsv"
    labels.write_text("Alien\tAlien (1979)\n", encoding="utf-8")
    kg = build(repo_root, name, {"kb_path": str(kb), "labels_path": str(labels)})
    assert kg.label("Alien") == "Alien (1979)"


def test_sparql_backend(repo_root, oxigraph_endpoint):
    kg = build(repo_root, "sparql", {}, endpoint=oxigraph_endpoint, trust_env=False)
    assert kg.neighbors("Ridley Scott", "^directed_by")[:2] == ["Alien", "Blade Runner"]
    assert kg.stats() == NetworkXGraph(TRIPLES).stats()

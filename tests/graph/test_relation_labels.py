"""A KG's own names for its relations (an rdfs:label on a property IRI), read alike from an
N-Triples file on every backend: what the relation scorer reads of an opaque relation id."""
from __future__ import annotations

import pytest

from rra.graph import load_graph

NT = """<http://ex.org/r/p1> <http://ex.org/o/P50> <http://ex.org/r/a1> .
<http://ex.org/r/p1> <http://ex.org/o/year> "2017"^^<http://www.w3.org/2001/XMLSchema#gYear> .
<http://ex.org/r/p1> <http://www.w3.org/2000/01/rdf-schema#label> "On Things: A Survey" .
<http://ex.org/r/a1> <http://www.w3.org/2000/01/rdf-schema#label> "José Núñez" .
<http://ex.org/o/P50> <http://www.w3.org/2000/01/rdf-schema#label> "author" .
"""


@pytest.mark.parametrize("backend", ["networkx", "oxigraph"])
def test_relation_labels_from_an_nt_file(tmp_path, backend):
    path = tmp_path / "kg.nt"
    path.write_text(NT, encoding="utf-8")
    kg = load_graph(path, backend=backend)
    try:
        rels = kg.relation_types()
        author = next(r for r in rels if r.endswith("P50"))
        year = next(r for r in rels if r.endswith("year"))
        assert kg.relation_labels([author, year, "^" + author]) == {author: "author"}
        assert not kg.has_entity(author)  # a labelled property is still not an entity
    finally:
        kg.close()

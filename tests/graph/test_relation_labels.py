"""A KG's own names for its relations (an rdfs:label on a property IRI, or on the entity that
describes the predicate, as Wikidata's `wd:P19` names `wdt:P19`), read alike from an N-Triples file
on every backend: what the relation scorer reads of an opaque relation id."""
from __future__ import annotations

import pyoxigraph as ox
import pytest

from rra.graph import OxigraphGraph, RdfMapping, load_graph
from rra.graph import cli as kg_cli
from rra.text.relations import RelationText

NT = """<http://ex.org/r/p1> <http://ex.org/o/P50> <http://ex.org/r/a1> .
<http://ex.org/r/p1> <http://ex.org/o/year> "2017"^^<http://www.w3.org/2001/XMLSchema#gYear> .
<http://ex.org/r/p1> <http://www.w3.org/2000/01/rdf-schema#label> "On Things: A Survey" .
<http://ex.org/r/a1> <http://www.w3.org/2000/01/rdf-schema#label> "José Núñez" .
<http://ex.org/o/P50> <http://www.w3.org/2000/01/rdf-schema#label> "author" .
"""


def load(tmp_path, text: str, backend: str, **kwargs):
    path = tmp_path / "kg.nt"
    path.write_text(text, encoding="utf-8")
    return load_graph(path, backend=backend, **kwargs)


@pytest.mark.parametrize("backend", ["networkx", "oxigraph"])
def test_relation_labels_from_an_nt_file(tmp_path, backend):
    kg = load(tmp_path, NT, backend)
    try:
        rels = kg.relation_types()
        author = next(r for r in rels if r.endswith("P50"))
        year = next(r for r in rels if r.endswith("year"))
        assert kg.relation_labels([author, year, "^" + author]) == {author: "author"}
        assert not kg.has_entity(author)  # a labelled property is still not an entity
    finally:
        kg.close()


# Wikidata's shape: statements use wdt:/p:/ps:/pq: predicates, names sit on the property entity wd:P..
WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
WIKIDATA_NT = f"""<{WD}Q1> <{WDT}P19> <{WD}Q64> .
<{WD}Q1> <{WDT}P569> "1952-03-11T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
<{WD}Q1> <http://www.wikidata.org/prop/P39> <http://www.wikidata.org/entity/statement/S1> .
<http://www.wikidata.org/entity/statement/S1> <http://www.wikidata.org/prop/statement/P39> <{WD}Q5> .
<http://www.wikidata.org/entity/statement/S1> <http://www.wikidata.org/prop/qualifier/P580> "1990"^^<http://www.w3.org/2001/XMLSchema#gYear> .
<{WD}Q1> <{WDT}P27> <{WD}Q183> .
<{WD}Q1> {LABEL} "Anna Schmidt"@en .
<{WD}Q64> {LABEL} "Berlin"@de .
<{WD}P19> {LABEL} "Geburtsort"@de .
<{WD}P19> {LABEL} "place of birth"@en .
<{WD}P569> {LABEL} "date of birth"@en .
<{WD}P39> {LABEL} "position held"@en .
<{WD}P580> {LABEL} "start time"@en .
<{WD}P27> {LABEL} "country of citizenship"@en .
<{WDT}P27> {LABEL} "citizen of" .
<{WD}P19> <http://wikiba.se/ontology#directClaim> <{WDT}P19> .
"""
NAMES = {f"{WDT}P19": "place of birth", f"{WDT}P569": "date of birth", "http://www.wikidata.org/prop/P39": "position held",
         "http://www.wikidata.org/prop/statement/P39": "position held",
         "http://www.wikidata.org/prop/qualifier/P580": "start time",
         f"{WDT}P27": "citizen of"}  # a predicate's own label wins over its property entity's


def _relations(kg) -> list[str]:
    return [r for r in kg.relation_types() if "wikidata.org/prop/" in r]


@pytest.mark.parametrize("backend", ["networkx", "oxigraph"])
def test_wikidata_predicates_read_the_label_of_their_property_entity(tmp_path, backend):
    kg = load(tmp_path, WIKIDATA_NT, backend)
    try:
        rels = _relations(kg)
        assert sorted(rels) == sorted(NAMES)
        assert kg.relation_labels(rels + ["^" + f"{WDT}P19"]) == NAMES
        text = RelationText(kg=kg)
        assert text("^" + f"{WDT}P19") == "place of birth (reverse)"
        assert kg.label(f"{WD}Q1") == "Anna Schmidt" and not kg.has_entity(f"{WD}P569")  # a label-only subject
        # a triple pointing at one of the KG's predicates (wd:P19 wikibase:directClaim wdt:P19) is schema, not a
        # fact: the property entity is no topic to link and no node to walk through
        assert "http://wikiba.se/ontology#directClaim" not in kg.relation_types() and not kg.has_entity(f"{WD}P19")
    finally:
        kg.close()
    german = load(tmp_path, WIKIDATA_NT, backend, label_language="de")
    off = load(tmp_path, WIKIDATA_NT, backend, property_namespaces={})
    try:
        assert german.relation_labels([f"{WDT}P19"]) == {f"{WDT}P19": "Geburtsort"}
        assert off.relation_labels(list(NAMES)) == {f"{WDT}P27": "citizen of"}  # only its own label
        assert RelationText(kg=off)(f"{WDT}P19") == "p19"  # what the encoder read before
    finally:
        german.close(), off.close()


def test_a_store_filled_without_rra_names_them_in_its_queries(tmp_path):
    """A store loaded from the raw file (not through rra's loader, which writes the names onto the
    predicates) is asked for the property entity's label; a node labelled by its own IRI names nothing."""
    store = ox.Store()
    store.load(WIKIDATA_NT.encode("utf-8"), ox.RdfFormat.N_TRIPLES)
    # what a store whose every node is labelled by its id holds for wdt:P19 (the directClaim object)
    store.add(ox.Quad(ox.NamedNode(f"{WDT}P19"), ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label"),
                      ox.Literal(f"{WDT}P19")))
    kg = OxigraphGraph(store)
    assert kg.relation_labels(list(NAMES)) == NAMES
    assert OxigraphGraph(store, mapping=RdfMapping(property_namespaces={})).relation_labels(list(NAMES)) == {
        f"{WDT}P27": "citizen of"}


def test_rra_kg_convert_writes_the_names_onto_the_predicates(tmp_path):
    src = tmp_path / "wd.nt"
    src.write_text(WIKIDATA_NT, encoding="utf-8")
    out = tmp_path / "out.nt"
    assert kg_cli.main(["convert", str(src), str(out)]) == 0
    assert f'<{WDT}P19> {LABEL} "place of birth" .' in out.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("namespaces", [{"http://ex.org/p > } DROP ALL #": WD}, {f"{WDT}": "not an iri"}])
def test_a_bad_property_namespace_is_a_configuration_error(namespaces):
    with pytest.raises(ValueError):
        RdfMapping(property_namespaces=namespaces)


def test_the_endpoint_backend_takes_the_namespaces_from_its_config():
    from rra.graph import SparqlGraph

    assert SparqlGraph(property_namespaces={}).mapping.property_namespaces == {}
    assert SparqlGraph().mapping.property_entity_iri(f"{WDT}P19") == f"{WD}P19"

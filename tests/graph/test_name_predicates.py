"""A KG that names its entities by schema:name, foaf:name, Freebase's type.object.name,
dcterms:title or skos:prefLabel instead of rdfs:label: those names are its labels on every
backend (rdfs:label first where an entity has both), so its questions link and its answers read
as names; the naming triples are not facts. An entity's other names (its labels in other
languages, other naming predicates' values) find it too."""
from __future__ import annotations

from rra.graph import load_graph
from rra.linking import link_entities

EX, FB = "http://example.org/", "http://rdf.freebase.com/ns/"
ANN, OSLO, BOB, CARL, WALKS, DORA = EX + "ann", EX + "oslo", EX + "bob", FB + "m.0abc", EX + "walks", EX + "dora"


def test_name_predicates_name_entities_on_every_backend(names_kg):
    kg = names_kg
    assert kg.labels([ANN, OSLO, BOB, CARL, WALKS, DORA]) == {
        ANN: "Ann Smith", OSLO: "Oslo (city)", BOB: "Bob Jones", CARL: "Carl Berg",  # English before German
        WALKS: "Graph Walks", DORA: "Dora Lind"}
    # the other names, which the fuzzy name index reads: the same on a store served as written; and
    # every node's names, label first (a store answers from its naming triples, not every fact)
    assert {e: sorted(ns) for e, ns in kg.all_aliases().items()} == {CARL: ["Karl Berg"], OSLO: ["Oslo"]}
    assert kg.all_names() == {ANN: ["Ann Smith"], OSLO: ["Oslo (city)", "Oslo"], BOB: ["Bob Jones"],
                              CARL: ["Carl Berg", "Karl Berg"], WALKS: ["Graph Walks"], DORA: ["Dora Lind"]}
    # the naming triples are labels, not facts
    assert kg.relation_types() == [EX + "author", EX + "bornIn", FB + "people.person.place_of_birth"]
    assert len(list(kg.all_triples())) == 5 and kg.relations(CARL) == [FB + "people.person.place_of_birth"]
    assert kg.find_entities("Carl Berg", "exact") == [CARL] and kg.find_entities("bob jones", "casefold") == [BOB]
    assert kg.find_entities("graph walks", "casefold") == [WALKS]
    # an entity's other names (another language's, another naming predicate's) find it, never shown
    assert kg.find_entities("karl berg", "casefold") == [CARL] and kg.find_entities("oslo", "casefold") == [OSLO]
    assert link_entities(kg, "wo wurde Karl Berg geboren").entities[:1] == [CARL]
    from rra.linking import FuzzyIndex

    assert [e for e, _ in FuzzyIndex(kg).match("Karl Bergg")] == [CARL]  # misspelt, in another language
    for question, topic in [("where was Dora Lind born", DORA), ("who wrote Graph Walks?", WALKS),
                            ("where was Ann Smith born", ANN), ("Carl Berg's birthplace", CARL)]:
        assert link_entities(kg, question).entities[:1] == [topic], question


def test_name_predicates_can_be_turned_off(names_file):
    off = load_graph(names_file, name_predicates=[])
    assert off.labels([ANN]) == {ANN: ANN} and "http://schema.org/name" in off.relation_types()
    assert load_graph(names_file, backend="oxigraph", name_predicates=["foaf:name"]).labels([ANN, BOB]) == {
        ANN: ANN, BOB: "Bob Jones"}


def test_a_predicate_of_an_unknown_prefix_is_a_configuration_error():
    """A CURIE whose prefix is not known would name no predicate, and the setting would do nothing."""
    import pytest

    from rra.graph import RdfMapping

    assert RdfMapping(label_predicate="schema:name").label_predicate == "http://schema.org/name"
    for field in ("label_predicate", "name_predicates", "alias_predicates"):
        value = "nope:name" if field == "label_predicate" else ["nope:name"]
        with pytest.raises(ValueError, match=f"{field}: unknown prefix 'nope'"):
            RdfMapping(**{field: value})
    assert RdfMapping(alias_predicates=["urn:x:alias"]).alias_predicates == ("urn:x:alias",)


def test_other_names_are_kept_where_rra_loads_the_kg(names_file, tmp_path):
    """The in-memory graph holds them as aliases; a store rra loads, as OTHER_NAME triples (a store
    served as written finds the file's own triples instead); a labels file's label makes the file's
    own label another name."""
    from rra.graph.rdf import OTHER_NAME

    for backend in ("networkx", "oxigraph"):
        kg = load_graph(names_file, backend=backend)
        assert {e: sorted(ns) for e, ns in kg.all_aliases().items()} == {CARL: ["Karl Berg"], OSLO: ["Oslo"]}
        assert OTHER_NAME not in kg.relation_types()
    labels = tmp_path / "labels.tsv"
    labels.write_text(f"{ANN}\tA. Smith\n", encoding="utf-8")
    kg = load_graph(names_file, labels_path=labels)
    assert kg.label(ANN) == "A. Smith" and kg.find_entities("Ann Smith", "exact") == [ANN]


def test_evidence_prints_well_known_iris_as_curies():
    """infer.py's printout reads `dbo:birthPlace`, not the full IRI; unknown namespaces, odd local
    names and non-IRIs stay as they are, and a path joined with '/' is compacted inside."""
    from rra.eval.run import format_prediction
    from rra.graph.rdf import compact, compact_joined
    from rra.records import Prediction, Triple

    dbo, wdt = "http://dbpedia.org/ontology/", "http://www.wikidata.org/prop/direct/"
    assert compact(dbo + "birthPlace") == "dbo:birthPlace" and compact("^" + wdt + "P19") == "^wdt:P19"
    assert compact("http://example.org/x/birthPlace") == "http://example.org/x/birthPlace"
    assert compact(dbo + "a/b") == dbo + "a/b" and compact("written_by") == "written_by"
    assert compact_joined(f"{dbo}director/^{dbo}birthPlace") == "dbo:director/^dbo:birthPlace"
    pred = Prediction(qid="q", question="where was X born", answers=["c"])
    pred.paths = [{"path": [dbo + "birthPlace"], "score": 1.0, "instances": 1}]
    pred.triples = [Triple("http://dbpedia.org/resource/X", dbo + "birthPlace", "http://dbpedia.org/resource/Y")]
    pred.extra["evidence_paths"] = [dbo + "birthPlace"]
    text = format_prediction(pred)
    assert "1.0000  dbo:birthPlace  (1 instances)" in text
    assert "(http://dbpedia.org/resource/X, dbo:birthPlace, http://dbpedia.org/resource/Y)   [dbo:birthPlace]" in text

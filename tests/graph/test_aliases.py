"""An entity's other names (skos:altLabel "JFK"@en, Freebase's common.topic.alias): `find_entities`
finds an entity by them as by its label, alike on every backend, so a question that says "JFK" or
"NYC" links; the alias triples stay facts."""
from __future__ import annotations

import pytest

from rra.graph import RdfMapping, load_graph
from rra.linking import link_entities

Q = "http://www.wikidata.org/entity/"
JFK, AIRPORT, NYC, NY_STATE = Q + "Q9696", Q + "Q8685", Q + "Q60", Q + "Q1384"
FB_JFK = "http://rdf.freebase.com/ns/m.0d3k14"


def test_an_entity_is_found_by_its_aliases_on_every_backend(alias_kg):
    kg = alias_kg
    # an alias two entities share finds both, ranked by (name length, name, id) as every backend does
    assert kg.find_entities("jfk", "casefold") == [AIRPORT, JFK]
    # exact lookups: untagged and English names (or `label_language`'s) on every backend
    assert kg.find_entities("John Fitzgerald Kennedy", "exact") == [JFK]
    assert kg.find_entities("JFK", "exact") == [AIRPORT, JFK] and kg.find_entities("jfk", "exact") == []
    assert kg.find_entities("NYC", "casefold") == [NYC]
    assert kg.find_entities("Jack Kennedy", "casefold") == [FB_JFK]  # Freebase's alias predicate
    # a name that is one entity's label and another's alias: both
    assert set(kg.find_entities("New York", "casefold")) == {NYC, NY_STATE}
    assert kg.find_entities_batch(["NYC", "jfk", "nothing"], "casefold") == {
        t: kg.find_entities(t, "casefold") for t in ["NYC", "jfk", "nothing"]}
    assert JFK in kg.find_entities("Fitzgerald", "substring")  # substring mode reads aliases too
    # labels are unchanged (an alias never names an answer), and the alias triples stay facts
    assert kg.labels([JFK, NYC]) == {JFK: "John F. Kennedy", NYC: "New York City"}
    assert any(r.endswith("altLabel") for r in kg.relation_types())


def test_every_backend_ranks_alias_lookups_alike(alias_kg, alias_file):
    reference = load_graph(alias_file)
    for text in ["JFK", "jfk", "New York", "NYC", "Jack Kennedy", "John Kennedy", "Albany"]:
        for mode in ("exact", "casefold", "substring"):
            assert alias_kg.find_entities(text, mode) == reference.find_entities(text, mode), (text, mode)


def test_a_question_naming_an_alias_links_to_its_entity(alias_kg):
    link = link_entities(alias_kg, "where was JFK born")
    assert link.entities[:1] == [AIRPORT] and link.ambiguous  # two entities are "JFK": said, not hidden
    assert link_entities(alias_kg, "what is the capital of NYC").entities[:1] == [NYC]
    assert link_entities(alias_kg, "where was John Fitzgerald Kennedy born").entities[:1] == [JFK]


def test_aliases_can_be_turned_off(alias_file):
    off = load_graph(alias_file, alias_predicates=[])
    assert off.find_entities("NYC", "casefold") == [] and off.find_entities("New York City", "exact") == [NYC]
    on = load_graph(alias_file, backend="oxigraph", alias_predicates=["skos:altLabel"])
    assert on.find_entities("NYC", "casefold") == [NYC]
    assert on.find_entities("Jack Kennedy", "casefold") == []  # Freebase's predicate not among those given


@pytest.mark.parametrize("bad", ["skos:altLabel", ["has space"]])
def test_a_bad_alias_predicate_is_a_configuration_error(bad):
    with pytest.raises(ValueError):
        RdfMapping(alias_predicates=bad)


def test_a_given_topic_written_by_its_alias_is_masked_where_the_text_names_it(alias_kg):
    """Given topics (a dataset's ids): the mention that masking and marking look for is the span the
    question writes, "JFK", not the label it does not hold; in one batched lookup on every backend."""
    from rra.linking import TopicLinker, name_in_text
    from rra.records import QAExample
    from rra.text.questions import mask_topic

    examples = [QAExample("where was JFK born?", [JFK], [], qid="a"),
                QAExample("where was John F. Kennedy born?", [JFK], [], qid="b"),
                QAExample("which state has the capital of new york", [NY_STATE], [], qid="c"),
                QAExample("where was he born?", [JFK], [], qid="d")]
    links = TopicLinker(alias_kg).link_batch(examples)
    assert [link.entities for link in links] == [[JFK], [JFK], [NY_STATE], [JFK]]
    assert [link.mentions for link in links] == [["JFK"], ["John F. Kennedy"], ["New York"], ["John F. Kennedy"]]
    assert mask_topic(examples[0].question, links[0].mentions) == "where was [E] born?"
    assert name_in_text(alias_kg, "is NYC big", NYC, "New York City") == "NYC"
    assert name_in_text(alias_kg, "how big is NYC?", NYC, "New York City") == "NYC"  # the sentence's mark is not the name's


def test_training_items_mask_a_topic_written_by_its_alias_in_one_batched_lookup(alias_file, monkeypatch):
    """The datamodule reads the names questions write their topics by ahead, for all of them in one
    `find_entities_batch` call (no lookup per span and question: on a store each would be a scan)."""
    from rra.data.datamodule import RetrieverDataModule
    from rra.data.dataset import Dataset
    from rra.records import QAExample
    from rra.text.spans import name_in_text, names_in_text

    kg = load_graph(alias_file)
    born = "http://www.wikidata.org/prop/direct/P19"
    qs = [QAExample("where was JFK born?", [JFK], [], [born], qid="a"),
          QAExample("where was John F. Kennedy born?", [JFK], [], [born], qid="b"),
          QAExample("where was he born?", [JFK], [], [born], qid="c"),
          QAExample("what state is NYC in?", [NYC], [], ["http://www.wikidata.org/prop/direct/P36"], qid="d")]
    asked = [(q.question, q.topic_entities[0], kg.label(q.topic_entities[0])) for q in qs]
    assert names_in_text(kg, asked) == [name_in_text(kg, *a) for a in asked] == [
        "JFK", "John F. Kennedy", "John F. Kennedy", "NYC"]
    dm = RetrieverDataModule(Dataset(train=qs), kg, val_fraction=0.0, train_paths="given", path_head="classifier")
    dm.kg = kg
    calls = []
    batch = kg.find_entities_batch
    monkeypatch.setattr(kg, "find_entities_batch", lambda *a, **k: calls.append("batch") or batch(*a, **k))
    items = dm._items(qs, dedupe=False)
    assert [x["question"] for x in items] == ["where was [E] born?", "where was [E] born?", "where was he born?",
                                              "what state is [E] in?"]
    assert calls == ["batch"]


def test_every_backend_lists_the_aliases_alike(alias_kg, alias_file):
    """`all_aliases`: what the fuzzy name index reads beside the labels, the same on every backend."""
    aliases = alias_kg.all_aliases()
    assert {e: sorted(names) for e, names in aliases.items()} == {
        e: sorted(names) for e, names in load_graph(alias_file).all_aliases().items()}
    assert sorted(aliases[JFK]) == ["JFK", "John Fitzgerald Kennedy", "John Kennedy"] and aliases[FB_JFK] == ["Jack Kennedy"]
    assert load_graph(alias_file, backend="oxigraph", alias_predicates=[]).all_aliases() == {}
    # every node's names, label first: a node no triple names reads by its id (Q100's label is its
    # only name; the literal "JFK" is no node)
    names = {e: [ns[0], *sorted(ns[1:])] for e, ns in alias_kg.all_names().items()}
    assert names == {e: [ns[0], *sorted(ns[1:])] for e, ns in load_graph(alias_file).all_names().items()}
    assert names[JFK] == ["John F. Kennedy", "JFK", "John Fitzgerald Kennedy", "John Kennedy"]
    assert names[Q + "Q100"] == ["Brookline"] and all(not e.startswith('"') for e in names)


def test_a_misspelt_alias_links_by_the_fuzzy_index(alias_kg):
    from rra.linking import FuzzyIndex

    fuzzy = FuzzyIndex(alias_kg)
    assert [e for e, _ in fuzzy.match("John Fitzgerld Kennedy")] == [JFK]  # one letter dropped
    assert [e for e, _ in fuzzy.match("Jack Kenedy")] == [FB_JFK]
    link = link_entities(alias_kg, "where was John Fitzgerld Kennedy born", fuzzy=fuzzy)
    assert link.entities[:1] == [JFK] and link.candidates[0].fuzzy

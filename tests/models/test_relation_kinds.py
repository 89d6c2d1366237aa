"""A relation read with what it leads to ("place of birth giving city"): the graph's far ends of the
relation named by their class or value kind (rra.plans.reads.KindCheck.relation_kinds), read by
the relation scorer where the KG says (rra.text.relations.KindedRelationText), never by plan texts, and never
by a checkpoint trained without it."""
import pytest

from rra.data.datamodule import RetrieverDataModule
from rra.data.dataset import Dataset
from rra.graph.base import Triple
from rra.graph.networkx_graph import NetworkXGraph
from rra.graph.rdf import literal_id
from rra.graph.xsd import XSD
from rra.models.retriever import Retriever
from rra.plans.reads import KindCheck
from rra.text.relations import RelationText
from toy_data import toy_kg, toy_questions, toy_triples

TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
YEAR = literal_id("1985", XSD + "gYear")


def people_kg() -> NetworkXGraph:
    return NetworkXGraph([
        Triple("Ann", "born_in", "Paris"), Triple("Bob", "born_in", "Lyon"), Triple("Ann", "works_at", "Sorbonne"),
        Triple("Ann", "birth_year", YEAR),
        Triple("Ann", TYPE, "Person"), Triple("Bob", TYPE, "Person"), Triple("Paris", TYPE, "City"),
        Triple("Lyon", TYPE, "City"), Triple("Sorbonne", TYPE, "University"),
    ], labels={"City": "city", "Person": "person", "University": "research institution", "born_in": "place of birth"})


def test_a_relation_reads_with_what_it_leads_to_where_the_graph_says():
    kg = people_kg()
    text = RelationText({}, kg, KindCheck(kg))
    kinded = text.with_kinds()
    kinded.prepare(["born_in", "^born_in", "works_at", "birth_year", TYPE, "^" + TYPE])
    assert kinded("born_in") == "place of birth giving city"
    assert kinded("^born_in") == "place of birth (reverse) giving person"
    assert kinded("works_at") == "works at giving research institution"
    assert kinded("birth_year") == "birth year giving year"  # a typed value names its kind
    assert kinded(TYPE) == text(TYPE) and kinded("^" + TYPE) == text("^" + TYPE)  # classes, or members of any kind
    assert text("born_in") == "place of birth"  # plan texts read the name alone
    plain = RelationText({}, toy_kg(), KindCheck(toy_kg())).with_kinds()  # no classes, no typed values: names
    assert [plain(r) for r in ("directed_by", "^directed_by", "release_year")] == [
        "directed by", "directed by (reverse)", "release year"]
    assert RelationText({}, kg).with_kinds()("born_in") == "place of birth"  # nothing to read kinds with


def test_relation_ends_are_the_smallest_far_ends_whatever_the_fact_order():
    facts = [Triple(f"P{i}", "born_in", f"C{i % 7}") for i in range(40)]
    for kg in (NetworkXGraph(facts), NetworkXGraph(list(reversed(facts)))):
        ends = kg.relation_ends(["born_in", "^born_in", "missing"], limit=3)
        assert ends == {"born_in": ["C0", "C1", "C2"], "^born_in": ["P0", "P1", "P10"], "missing": []}


def typed_toy_kg() -> NetworkXGraph:
    people = {t.tail for t in toy_triples() if t.relation in ("directed_by", "starred_actors")}
    return NetworkXGraph(toy_triples() + [Triple(f"Movie {m}", TYPE, "Film") for m in range(12)]
                         + [Triple(p, TYPE, "Person") for p in sorted(people)],
                         labels={"Film": "film", "Person": "person"})


@pytest.mark.parametrize("kinds", [True, False])
def test_training_texts_and_the_checkpoint_agree_on_kinds(tiny_kwargs, kinds):
    dm = RetrieverDataModule(Dataset(train=lambda: toy_questions(24)), typed_toy_kg, val_fraction=0.0, batch_size=8,
                             train_paths="given", relation_kinds=kinds)
    kwargs = dm.model_kwargs()
    texts = {r: t for x in dm.splits["train"] for r, t in (x.get("texts") or {}).items()}
    if kinds:
        assert texts["directed_by"] == "directed by giving person"
        assert texts["^directed_by"] == "directed by (reverse) giving film"
        assert texts["has_genre"] == "has genre"  # genres have no class: the name alone
    else:
        assert texts["directed_by"] == "directed by" and "relation_kinds" not in kwargs
    model = Retriever(**kwargs, **tiny_kwargs)
    read = model.relation_reader(dm.relation_text)
    assert read("directed_by") == texts["directed_by"]  # inference reads relations as training did


def test_a_kg_without_kinds_trains_the_model_it_always_did(tiny_kwargs):
    dm = RetrieverDataModule(Dataset(train=lambda: toy_questions(24)), toy_kg, val_fraction=0.0, batch_size=8,
                             train_paths="given")
    assert "relation_kinds" not in dm.model_kwargs()
    model = Retriever(**dm.model_kwargs(), **tiny_kwargs)
    typed = typed_toy_kg()  # answering another KG that has classes: still by names, as it was trained
    read = model.relation_reader(RelationText({}, typed, KindCheck(typed)))
    assert read("directed_by") == "directed by"


def test_a_store_that_cannot_sample_a_relation_reads_names_and_an_unreachable_one_is_an_error(caplog):
    from rra.graph.base import GraphUnavailableError

    class Refuses(NetworkXGraph):
        def __init__(self, error, *a, **kw):
            super().__init__(*a, **kw)
            self.error = error

        def relation_ends(self, relations, limit=16):
            raise self.error

    triples = list(people_kg().all_triples())
    kg = Refuses(ValueError("subqueries not supported"), triples)
    with caplog.at_level("WARNING"):
        assert RelationText({}, kg, KindCheck(kg)).with_kinds()("born_in") == "born in"
    assert "subqueries not supported" in caplog.text
    down = Refuses(GraphUnavailableError("endpoint http://127.0.0.1:9/sparql unreachable"), triples)
    with pytest.raises(GraphUnavailableError, match="unreachable"):
        RelationText({}, down, KindCheck(down)).with_kinds()("born_in")


def test_an_in_memory_graph_reads_every_relations_ends_once_and_again_after_a_change():
    kg = NetworkXGraph([Triple("Ann", "born_in", "Paris")])
    assert kg.relation_ends(["born_in"]) == {"born_in": ["Paris"]}
    kg.add_triples([Triple("Bob", "born_in", "Lyon")])
    assert kg.relation_ends(["born_in", "^born_in"]) == {"born_in": ["Lyon", "Paris"], "^born_in": ["Ann", "Bob"]}


def test_every_backend_names_a_relations_kind_from_the_same_nodes(tmp_path):
    """100 places, the 20 with the smallest ids towns, the rest cities, written in an order that is
    not the ids': NetworkX and embedded Oxigraph read the same smallest ends, so the same kind."""
    from rra.graph import load_graph

    ex, rdf_type, label = "http://ex.org/", f"<{TYPE}>", "<http://www.w3.org/2000/01/rdf-schema#label>"
    lines = [f'<{ex}Town> {label} "town" .', f'<{ex}City> {label} "city" .']
    for i in reversed(range(100)):  # names long enough that a store keeps them by hash, not inline
        place = f"<{ex}place_{i:03d}_of_a_name_long_enough_not_to_be_stored_inline>"
        lines += [f"<{ex}person_{i:03d}> <{ex}born_in> {place} .", f"{place} {rdf_type} <{ex}{'Town' if i < 20 else 'City'}> ."]
    (tmp_path / "kg.nt").write_text("\n".join(lines) + "\n")
    kinds = []
    for backend in ("networkx", "oxigraph"):
        kg = load_graph(tmp_path / "kg.nt", backend=backend)
        ends = kg.relation_ends([f"{ex}born_in"], limit=3)[f"{ex}born_in"]
        assert [e.split("_")[1] for e in ends] == ["000", "001", "002"]
        kinds.append(RelationText({}, kg, KindCheck(kg)).with_kinds()(f"{ex}born_in"))
    assert kinds == ["born in giving town"] * 2


def test_entities_of_several_classes_are_named_by_the_most_specific():
    """DBpedia types a person Person, Agent and owl:Thing: every class ties, and alphabetical order
    alone would say "agent". The class of everything and a class's superclass name nothing."""
    owl_thing, sub = "http://www.w3.org/2002/07/owl#Thing", "http://www.w3.org/2000/01/rdf-schema#subClassOf"
    facts = [Triple("Person", sub, "Agent"), Triple("Agent", sub, owl_thing), Triple("City", sub, "Place")]
    for i in range(4):
        facts += [Triple(f"P{i}", "born_in", f"C{i}"), Triple(f"Film{i}", "directed_by", f"P{i}")]
        facts += [Triple(f"P{i}", TYPE, c) for c in ("Person", "Agent", owl_thing)]
        facts += [Triple(f"C{i}", TYPE, c) for c in ("City", "Place")]
    kg = NetworkXGraph(facts, labels={"Person": "person", "Agent": "agent", "City": "city", "Place": "place"})
    kinds = KindCheck(kg).relation_kinds(["born_in", "^born_in", "directed_by"])
    assert kinds == {"born_in": "city", "^born_in": "person", "directed_by": "person"}
    wizards = NetworkXGraph([Triple("Film0", "directed_by", "W0"), Triple("W0", TYPE, "Wizard"),
                             Triple("W0", TYPE, owl_thing)], labels={"Wizard": "wizard"})
    assert KindCheck(wizards).relation_kinds(["directed_by"]) == {"directed_by": "wizard"}  # not "thing"
    mixed = NetworkXGraph([Triple("a", "r", "C0"), Triple("C0", TYPE, "City"), Triple("b", "r", YEAR)])
    assert KindCheck(mixed).relation_kinds(["r"]) == {"r": "city"}  # a value kind ties and stays: alphabetical


def test_kind_cosines_read_words_with_the_retrievers_encoder(tiny_kwargs):
    model = Retriever(relations=["r"], **tiny_kwargs)
    cos = model.kind_cosines(["university", None], [["university", "city", None], ["city"]])
    assert cos[0][0] == pytest.approx(1.0, abs=1e-5) and -1.0 <= cos[0][1] <= 1.0
    assert cos[0][2] is None and cos[1] == [None]


def test_kind_cosines_may_read_words_with_the_pretrained_encoder(tiny_kwargs, monkeypatch):
    """reader="pretrained": the encoder the retriever was fine-tuned from reads the words (its
    PretrainedReading), not the fine-tuned one; an unknown reader is refused by name."""
    import torch

    from rra.models.encoder import tiny_encoder
    from rra.models.pretrained_reading import PretrainedReading

    torch.manual_seed(0)
    model = Retriever(relations=["r"], **tiny_kwargs)
    torch.manual_seed(1)
    other = PretrainedReading(tiny_encoder())
    monkeypatch.setattr(model, "_pretrained_reading", other)
    # one kind a row: what a role asked for reads (test below) cannot move a row of one kind
    trained = [c for row in model.kind_cosines(["town", "town"], [["city"], ["stadium"]]) for c in row]
    pretrained = [c for row in model.kind_cosines(["town", "town"], [["city"], ["stadium"]], reader="pretrained")
                  for c in row]
    expected = (other.vectors(["town"]) @ other.vectors(["city", "stadium"]).T)[0].tolist()
    assert pretrained == pytest.approx(expected, abs=1e-5) and pretrained != pytest.approx(trained, abs=1e-3)
    with pytest.raises(ValueError, match="kind reader 'fine-tuned'"):
        model.kind_cosines(["town"], [["city"]], reader="fine-tuned")


def test_continuations_score_one_more_step_of_the_search(tiny_kwargs):
    """`continuations`: the relations at a walked prefix's frontier in the graph with the search's
    (log P(r), log P(end), log P(go on)): P(r) sums to 1 over the frontier and P(end) + P(go on) to 1."""
    import math

    kg = people_kg()
    model = Retriever(relations=["born_in", "works_at"], path_head="scorer", **tiny_kwargs)
    out = model.continuations(["where was [E] born"], [["born_in"]], kg, ["Ann"])
    assert set(out[0]) == {"^born_in", TYPE}  # what Paris holds: the people born there, its class
    assert sum(math.exp(lp) for lp, _, _ in out[0].values()) == pytest.approx(1.0, abs=1e-5)
    assert all(math.exp(end) + math.exp(go) == pytest.approx(1.0) for _, end, go in out[0].values())
    two = model.continuations(["what is [E]"], [[]], kg, ["Ann"])[0]
    assert {"born_in", "works_at", "birth_year"} <= set(two)
    assert sum(math.exp(v[0]) for v in two.values()) == pytest.approx(1.0, abs=1e-4)


def test_kind_cosines_fall_back_to_the_trained_encoder_where_the_pretrained_one_cannot_load(tiny_kwargs, monkeypatch,
                                                                                            caplog):
    model = Retriever(relations=["r"], **tiny_kwargs)

    def offline():
        raise OSError("no such model: some/hub-name (offline)")

    monkeypatch.setattr(model, "pretrained_reader", offline)
    with caplog.at_level("WARNING"):
        got = model.kind_cosines(["town"], [["city", "stadium"]], reader="pretrained")
    assert got == model.kind_cosines(["town"], [["city", "stadium"]])
    assert "cannot be loaded" in caplog.text and "offline" in caplog.text


class AxisReading:
    """A reader whose vectors are set by hand: role words (rra.plans.text.ROLE_WORDS) on one axis,
    thing words on another, the rest as given."""

    def __init__(self, extra: dict):
        import torch

        from rra.plans.text import ROLE_WORDS

        self.torch, self.role, self.extra = torch, set(ROLE_WORDS), extra

    def vectors(self, words):
        F = self.torch.nn.functional
        rows = [self.extra.get(w) or ([1.0, 0, 0, 0] if w in self.role else [0, 1.0, 0, 0]) for w in words]
        return F.normalize(self.torch.tensor(rows), dim=-1)


def test_a_role_asked_for_is_given_by_a_role_kind_at_least_as_well_as_by_a_thing(tiny_kwargs, monkeypatch):
    """"which musicians": an encoder reads the role nearer the band (a thing) than "person"; a word
    nearer the role words than the thing words asks for people, so a role kind counts at least as the
    best thing kind of its row. A thing asked for, or a row without a role kind, reads as before."""
    model = Retriever(relations=["r"], **tiny_kwargs)
    reading = AxisReading({"musicians": [0.6, 0, 0.8, 0], "band": [0, 0.2, 0.98, 0], "town": [0, 0.5, 0, 0.86],
                           "city": [0, 0.3, 0, 0.95]})
    monkeypatch.setattr(model, "_pretrained_reading", reading)
    (person, band), = model.kind_cosines(["musicians"], [["person", "band"]], reader="pretrained")
    assert band == pytest.approx(0.8 * 0.98 / (0.2 ** 2 + 0.98 ** 2) ** 0.5, abs=1e-5) and person == pytest.approx(band)
    (person, city), = model.kind_cosines(["town"], [["person", "city"]], reader="pretrained")
    assert person == pytest.approx(0.0, abs=1e-6) and city > 0.9  # a town is a thing: nothing lifted
    (band,), = model.kind_cosines(["musicians"], [["band"]], reader="pretrained")
    assert band < 0.8

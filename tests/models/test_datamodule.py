import pytest

from rra.data.datamodule import RetrieverDataModule, relation_vocabulary
from rra.data.dataset import Dataset
from rra.records import QAExample
from toy_data import toy_kg, toy_questions


def test_vocabulary_has_both_directions():
    rels = relation_vocabulary(toy_kg())
    assert rels[:4] == ["directed_by", "has_genre", "release_year", "starred_actors"]
    assert rels[4:] == ["^" + r for r in rels[:4]]


def test_validation_hold_out_is_fixed_by_seed():
    def split(seed):
        dm = RetrieverDataModule(Dataset(train=toy_questions(60)), toy_kg(), val_fraction=0.25, dedupe=False, seed=seed,
                                 train_paths="given")
        dm.setup()
        return [x["question"] for x in dm.splits["val"]], [x["question"] for x in dm.splits["train"]]

    val, train = split(0)
    assert len(val) == 15 and len(train) == 45
    assert split(0) == (val, train)
    assert split(1)[0] != val


def test_dedupe_keeps_the_majority_path_per_masked_question():
    qs = [QAExample(f"who wrote [{m}]", [m], [], ["directed_by" if m == "Movie 0" else "release_year"])
          for m in ("Movie 0", "Movie 1", "Movie 2")]
    dm = RetrieverDataModule(Dataset(train=qs), toy_kg(), val_fraction=0.0, train_paths="given", path_head="classifier")
    dm.setup()
    assert dm.splits["train"] == [{"question": "who wrote [E]", "path": ["release_year"]}]


def test_dedupe_prefers_the_path_with_the_highest_summed_f1():
    # 3 questions of one template: labelled directed_by twice (ties), written_by once, but
    # written_by explains every question's answers (f1 1.0) and directed_by only some
    qs = []
    for m, label in (("Movie 0", "directed_by"), ("Movie 1", "directed_by"), ("Movie 2", "release_year")):
        q = QAExample(f"who wrote [{m}]", [m], [], [label])
        q.extra["path_candidates"] = [{"path": ["directed_by"], "f1": 1.0 if m == "Movie 0" else 0.5},
                                      {"path": ["release_year"], "f1": 1.0}]
        q.extra["label_source"] = "kg"  # KG-derived labels: the candidates' F1 decides
        qs.append(q)
    dm = RetrieverDataModule(Dataset(train=qs), toy_kg(), val_fraction=0.0, train_paths="given", path_head="classifier")
    assert dm._items(qs, dedupe=True) == [{"question": "who wrote [E]", "path": ["release_year"]}]
    # labels the dataset gave are votes of their own: the majority of given labels wins
    for q in qs:
        q.extra["label_source"] = "given"
    assert dm._items(qs, dedupe=True) == [{"question": "who wrote [E]", "path": ["directed_by"]}]


def test_kg_supervision_labels_training_paths_and_keeps_gold(tmp_path):
    qs = toy_questions(8, templates=4)  # 1-hop templates: the KG-derived path is the gold one
    gold = [list(q.relation_path) for q in qs]
    for q in qs[::2]:
        q.relation_path = ["has_genre"]  # wrong given labels: train_paths=kg must replace them
    dm = RetrieverDataModule(Dataset(train=qs), toy_kg(), val_fraction=0.0, dedupe=False, train_paths="kg",
                             supervision_cache=str(tmp_path))
    dm.setup()
    assert [x["path"] for x in dm.splits["train"]] == gold
    assert dm.summary["supervision"]["train"]["covered"] == 8
    assert dm.summary["coverage"]["train"]["coverage"] == 1.0


def test_given_paths_label_only_missing_ones():
    qs = toy_questions(4)
    qs[2].relation_path = None
    seen = []

    def label(kg, examples, max_hops):
        seen.extend(examples)
        for e in examples:
            e.relation_path = ["directed_by"]

    dm = RetrieverDataModule(Dataset(train=qs), toy_kg(), val_fraction=0.0, label_paths=label, dedupe=False,
                             train_paths="given")
    dm.setup()
    assert seen == [qs[2]] and dm.splits["train"][2]["path"] == ["directed_by"]
    assert dm.splits["train"][0]["path"] == toy_questions(4)[0].relation_path


def test_relation_outside_the_kg_is_an_error():
    qs = toy_questions(3)
    qs[1].relation_path = ["written_by"]
    with pytest.raises(ValueError, match="written_by"):
        RetrieverDataModule(Dataset(train=qs), toy_kg(), val_fraction=0.0, train_paths="given").setup()


def test_toy_kb_file_is_the_toy_kg():
    from pathlib import Path

    from rra.graph import load_graph
    from toy_data import toy_triples

    kg = load_graph(Path(__file__).parent / "toy_kb.txt")
    assert sorted(kg.all_triples()) == sorted(toy_triples())


def test_kb_path_alone_builds_the_graph(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("".join(f"{t.head}|{t.relation}|{t.tail}\n" for t in toy_kg().all_triples()))
    dm = RetrieverDataModule(Dataset(kb_path=str(kb), train=toy_questions(12)), val_fraction=0.0, dedupe=False)
    dm.setup()
    assert len(dm.splits["train"]) == 12 and dm.relations == relation_vocabulary(toy_kg())
    with pytest.raises(ValueError, match="needs a knowledge graph"):
        RetrieverDataModule(Dataset(train=toy_questions(2)))


def test_coverage_per_hop_with_reasons_and_a_loud_warning(caplog):
    qs = toy_questions(16, templates=4)
    qs[0].answers, qs[0].relation_path = ["Nowhere"], None  # no answer in the KG
    qs[1].topic_entities, qs[1].relation_path = ["Ghost"], None  # topic not in the KG
    dm = RetrieverDataModule(Dataset(train=qs), toy_kg(), val_fraction=0.0, dedupe=False, supervision_cache=False)
    with caplog.at_level("WARNING"):
        dm.setup()
    cov = dm.summary["coverage"]["train"]
    assert (cov["n"], cov["covered"]) == (16, 14)
    assert cov["reasons"] == {"no answer in KG": 1, "topic not in KG": 1}
    assert cov["per_hop"]["1"]["hop_labels"] == {"1": 14}
    assert "LOW SUPERVISION COVERAGE" in caplog.text and "train" in caplog.text


def test_questions_whose_topics_are_mostly_missing_stop_the_run():
    qs = toy_questions(6, templates=4)
    for q in qs[:4]:
        q.topic_entities, q.relation_path = [f"Ghost {q.qid}"], None
    dm = RetrieverDataModule(Dataset(train=qs), toy_kg(), val_fraction=0.0, supervision_cache=False)
    with pytest.raises(ValueError, match="4 of 6 questions are not in the knowledge graph"):
        dm.setup()


def test_topics_given_by_name_train_as_their_entities(caplog):
    """A question file that names its topics ("Ann Lee", as a spreadsheet would) trains as one giving
    the ids: the name is looked up as answering looks it up (exact, then any case); a name shared by
    two entities takes the first match from which a path reaches the answers (both reach Bergen here:
    the first); a name the KG lacks stays a missing topic."""
    from rra.graph.networkx_graph import NetworkXGraph
    from rra.records import Triple

    facts = [Triple(f"ex:p{i}", "ex:bornIn", f"ex:c{i % 2}") for i in range(6)] + [Triple("ex:p9", "ex:bornIn", "ex:c1")]
    labels = {**{f"ex:p{i}": f"Person {i}" for i in range(6)}, "ex:p9": "Person 5", "ex:c0": "Oslo", "ex:c1": "Bergen"}
    kg = NetworkXGraph(facts, labels=labels)
    qs = [QAExample(f"where was Person {i} born", [f"person {i}" if i == 2 else f"Person {i}"], ["Oslo" if i % 2 == 0 else "Bergen"])
          for i in range(6)]
    qs += [QAExample("where was p0 born", ["ex:p0"], ["Oslo"]), QAExample("where was Nobody born", ["Nobody"], ["Oslo"])]
    dm = RetrieverDataModule(Dataset(train=qs), kg, val_fraction=0.0, dedupe=False, supervision_cache=False)
    with caplog.at_level("INFO"):
        dm.setup()
    assert [q.topic_entities for q in qs] == [[f"ex:p{i}"] for i in range(6)] + [["ex:p0"], ["Nobody"]]
    assert dm.summary["topics_by_name"]["train"] == {"by_name": 6, "shared_name": 1, "chosen_by_path": 0, "not_found": 1}
    assert dm.summary["coverage"]["train"]["covered"] == 7
    assert dm.summary["coverage"]["train"]["reasons"] == {"topic not in KG": 1}
    # a name is masked as an id's label is (the last question names its topic by neither)
    assert [x["question"] for x in dm.splits["train"]] == ["where was [E] born"] * 6 + ["where was p0 born"]
    assert "6 topic entities given by name" in caplog.text


def test_training_questions_without_topics_say_training_needs_them():
    """A training file whose questions give no topic (loaded with require_topic=False) stops with what
    training needs, not with 'not in the knowledge graph'; a few such questions are dropped and counted."""
    qs = toy_questions(6, templates=4)
    for q in qs[:4]:
        q.topic_entities, q.relation_path = [], None
    dm = RetrieverDataModule(Dataset(train=qs), toy_kg(), val_fraction=0.0, supervision_cache=False)
    with pytest.raises(ValueError, match="train: 4 of 6 questions have no topic entity: training needs each question's topic"):
        dm.setup()
    qs = toy_questions(6, templates=4)
    qs[0].topic_entities, qs[0].relation_path = [], None
    dm = RetrieverDataModule(Dataset(train=qs), toy_kg(), val_fraction=0.0, supervision_cache=False)
    dm.setup()
    assert dm.summary["coverage"]["train"]["reasons"] == {"no topic entity given": 1}



def test_training_topics_can_be_linked_from_the_text(monkeypatch):
    """datamodule.link_topics: a training question that gives no topic is linked from its text as
    answering links it; of the entities it names, the one whose paths reach its answers is taken
    (here the class 'city' and the person are both named, and only the person leads to the answer).
    Linking and labelling every split share one pass over the graph."""
    from rra.graph.networkx_graph import NetworkXGraph
    from rra.linking import link_training_topics
    from rra.records import Triple

    facts = [Triple(f"ex:p{i}", "ex:bornIn", f"ex:c{i % 2}") for i in range(6)]
    facts += [Triple("ex:c0", "rdf:type", "ex:City"), Triple("ex:c1", "rdf:type", "ex:City")]
    labels = {**{f"ex:p{i}": f"Person {i}" for i in range(6)}, "ex:c0": "Oslo", "ex:c1": "Bergen", "ex:City": "city"}
    kg = NetworkXGraph(facts, labels=labels)
    qs = [QAExample(f"in which city was Person {i} born", [], ["Oslo" if i % 2 == 0 else "Bergen"]) for i in range(6)]
    qs.append(QAExample("where was Nobody born", [], ["Oslo"]))
    with pytest.raises(ValueError, match="link_topics=true needs the linker"):
        RetrieverDataModule(Dataset(train=qs), kg, link_topics=True)
    import rra.data.supervision as supervision

    passes = []
    build = supervision.build_adjacency
    monkeypatch.setattr(supervision, "build_adjacency", lambda g: passes.append(g) or build(g))
    dm = RetrieverDataModule(Dataset(train=qs, val=[QAExample("where was Person 0 born", ["ex:p0"], ["Oslo"])]),
                             kg, dedupe=False, supervision_cache=False, plan_ranker=True,
                             link_topics=link_training_topics)
    dm.setup()
    # topics linked, paths and plans of both splits labelled: the graph read once for them all
    assert passes == [kg] and dm._adjacency is None and dm.summary["plans"]["val"]["ranked"] == 1
    assert [q.topic_entities[0] for q in qs[:6]] == [f"ex:p{i}" for i in range(6)]
    assert qs[6].topic_entities == [] and dm.summary["topics_linked"]["train"] == {"linked": 6, "no_path": 0, "not_found": 1}
    assert dm.summary["coverage"]["train"]["covered"] == 6
    assert {tuple(x["path"]) for x in dm.splits["train"]} == {("ex:bornIn",)}


def test_a_plan_ranker_on_chain_only_data_when_asked_for():
    """plan_ranker=true: a set of chain questions trains a ranker over chains too, every question
    (none sampled away), at most CHAIN_RANKING_NEGATIVES wrong plans each; auto keeps it off."""
    from rra.data.training_items import CHAIN_RANKING_NEGATIVES

    def ranked(setting):
        dm = RetrieverDataModule(Dataset(train=toy_questions(40, templates=4)), toy_kg(), val_fraction=0.0,
                                 supervision_cache=False, plan_ranker=setting)
        dm.setup()
        return dm, [r["ranking"] for x in dm.splits["train"] for r in x.get("with", ())]

    dm, rankings = ranked(True)
    assert dm.plan_ranker and dm.model_kwargs()["plan_ranker"] is True
    assert sum(r["weight"] for r in rankings) == dm.summary["plans"]["train"]["ranked"] == 40
    assert all(r["positive"] and 0 < len(r["negative"]) <= CHAIN_RANKING_NEGATIVES for r in rankings)
    dm, rankings = ranked("auto")
    assert not dm.plan_ranker and not rankings and "plan_ranker" not in dm.model_kwargs()
    with pytest.raises(ValueError, match="plan_ranker must be"):
        RetrieverDataModule(Dataset(train=toy_questions(4)), toy_kg(), plan_ranker="yes")


def test_round_trips_are_plans_where_the_training_questions_ask_them():
    """Some built-in questions are answered by their own topic ("which books won the prize [X]
    won", X the only one: 55 of 2,200). A set with them (at least 1%) trains on chains back to the
    anchor and says so in the checkpoint (plan_round_trips); a set without them has no such
    candidate, so "who leads [X]'s council" is never answered X by `mayor, ^mayor`."""
    import dataclasses

    from rra.data.builtin import builtin_questions, load_builtin_graph
    from rra.data.plan_supervision import label_plans
    from rra.graph.base import inverse
    from rra.text.matching import normalize_answer

    kg = load_builtin_graph()
    own, other = [], []
    for q in builtin_questions("train"):
        t = q.topic_entities[0]
        alone = all(normalize_answer(a) in {normalize_answer(t), normalize_answer(kg.label(t))} for a in q.answers)
        (own if alone else other).append(q)
    assert len(own) == 55

    def flag(questions):
        dm = RetrieverDataModule(Dataset(train=questions), kg, val_fraction=0.0, supervision_cache=False,
                                 plan_ranker=True)
        return dm.summary, dm.model_kwargs()

    summary, kwargs = flag(own[:10] + other[:150])
    assert summary["answered_by_topic"] == 10 and kwargs["plan_round_trips"] is True
    summary, kwargs = flag(other[:160])
    assert summary["answered_by_topic"] == 0 and "plan_ranker" in kwargs and "plan_round_trips" not in kwargs

    def explained(round_trips: bool) -> list[list]:
        # answers only, as a user's file gives them (the built-in questions also carry their plan)
        qs = [dataclasses.replace(q, extra={k: v for k, v in q.extra.items() if k != "plan"}) for q in own[:5]]
        label_plans(kg, qs, every_question=True, round_trips=round_trips)
        return [[p["paths"] for p in (q.extra.get("plan_candidates") or {}).get("positive", ())] for q in qs]

    # with round trips every one is explained (by a chain back to its topic); without, only those
    # whose answer a chain reaching other entities too happens to match
    assert all(any(len(ps[0]) > 1 and ps[0][-1] == inverse(ps[0][0]) for ps in q) for q in explained(True))
    assert sum(map(bool, explained(False))) <= 3

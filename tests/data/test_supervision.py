import pytest

from rra.data.supervision import (SupervisionConfig, build_adjacency, enumerate_paths, label_examples,
                                  path_candidates)
from rra.records import AnswerSemantics, QAExample


def q(topic, answers, **kw):
    return QAExample(f"question about [{topic}]", [topic], answers, **kw)


def test_one_hop_forward_inverse_and_tie_order(tiny_kg):
    (c,) = [path_candidates(tiny_kg, "m1", ["d1"])]
    # directed_by and written_by both reach exactly {d1}: same F1, same length -> name order
    assert [x["path"] for x in c[:2]] == [["directed_by"], ["written_by"]]
    assert c[0]["f1"] == c[1]["f1"] == 1.0
    c = path_candidates(tiny_kg, "d1", ["m1", "m2"])
    assert c[0]["path"] == ["^directed_by"] and c[0]["f1"] == 1.0
    (wrote,) = [x for x in c if x["path"] == ["^written_by"]]
    assert wrote["precision"] == 1.0 and wrote["recall"] == 0.5 and wrote["f1"] == pytest.approx(2 / 3)
    # ranked by F1, then length, then names: 3-hop F1 = 1 paths come before the 1-hop F1 = 2/3 one
    keys = [(-x["f1"], len(x["path"]), x["path"]) for x in c]
    assert keys == sorted(keys) and any(len(x["path"]) == 3 and x["f1"] == 1.0 for x in c[: c.index(wrote)])


def test_shorter_path_wins_a_tie(tiny_kg):
    c = path_candidates(tiny_kg, "m3", ["y2000"])
    assert c[0]["path"] == ["release_year"]
    # a longer path with the same end set exists but ranks after it
    longer = [x for x in c if len(x["path"]) == 3 and x["f1"] == 1.0]
    assert longer and c.index(longer[0]) > 0


METAQA_RULE = AnswerSemantics(topic_can_be_answer=False, revisit_topic=False)


def test_metaqa_rule_topic_is_never_an_answer_nor_walked_through(tiny_kg):
    adj = build_adjacency(tiny_kg)
    paths = enumerate_paths(adj, "m1", SupervisionConfig(semantics=METAQA_RULE))
    assert paths[("directed_by", "^directed_by")] == {"m2"}  # not m1 itself
    assert paths[("directed_by", "^directed_by", "release_year")] == {"y2001"}  # m1's year not via m1
    rule = AnswerSemantics(topic_can_be_answer=False, revisit_topic=True)
    revisit = enumerate_paths(adj, "m1", SupervisionConfig(semantics=rule))
    assert revisit[("directed_by", "^directed_by", "release_year")] == {"y2000", "y2001"}
    assert all("m1" not in ends for ends in revisit.values())


def test_one_hop_rule_answers_with_the_topic_only_through_a_self_loop():
    """MetaQA's questions: the film "Lemmy" stars Lemmy ("who acted in [Lemmy]": Lemmy), but "films
    by the director of [X]" are the other films. `topic_can_be_answer: one_hop` labels both so."""
    from rra.data.question_generator import path_answers
    from rra.graph import NetworkXGraph
    from rra.records import Triple

    kg = NetworkXGraph([Triple("Lemmy", "starred_actors", "Lemmy"), Triple("Lemmy", "directed_by", "Greg"),
                        Triple("Other", "directed_by", "Greg")])
    adj = build_adjacency(kg)
    rule = AnswerSemantics.of({"topic_can_be_answer": "one_hop", "revisit_topic": False})
    paths = enumerate_paths(adj, "Lemmy", SupervisionConfig(semantics=rule))
    assert paths[("starred_actors",)] == {"Lemmy"} and paths[("directed_by", "^directed_by")] == {"Other"}
    assert ("starred_actors",) not in enumerate_paths(adj, "Lemmy", SupervisionConfig(semantics=METAQA_RULE))
    assert path_answers(adj, "Lemmy", ["^starred_actors"], rule) == {"Lemmy"}
    assert path_answers(adj, "Lemmy", ["directed_by", "^directed_by"], rule) == {"Other"}
    from rra.plans.reads import Walker  # what query plans execute with

    walker = Walker(kg, rule)
    assert walker.reach("Lemmy", ["starred_actors"]) == {"Lemmy"}
    assert walker.reach("Lemmy", ["directed_by", "^directed_by"]) == {"Other"}
    assert walker.reach("Lemmy", ["^directed_by"], start=frozenset({"Greg"}), walked=1) == {"Other"}
    assert Walker(kg, METAQA_RULE).reach("Lemmy", ["starred_actors"]) == frozenset()


def test_one_hop_rule_walks_on_from_a_self_loop_and_nowhere_else_through_the_topic():
    """MetaQA merges entities by name: the writer Antwone Fisher wrote the film Antwone Fisher, one node
    with a self-loop, and "the actors of the screenwriter [Antwone Fisher]" walks through it. Under
    one_hop the self-loop's far end is the same-named other entity, so a walk goes on from it; a walk
    that comes back to the topic later still stops there. Every reader of the rule agrees."""
    from rra.data.question_generator import path_answers
    from rra.graph import NetworkXGraph
    from rra.plans.reads import Walker
    from rra.records import Triple

    kg = NetworkXGraph([Triple("Fisher", "written_by", "Fisher"), Triple("Fisher", "starred_actors", "Derek"),
                        Triple("Other", "starred_actors", "Derek"), Triple("Other", "written_by", "Wes")])
    adj = build_adjacency(kg)
    rule = AnswerSemantics.of({"topic_can_be_answer": "one_hop", "revisit_topic": False})
    assert rule.passes_topic(1) and not rule.passes_topic(2) and not METAQA_RULE.passes_topic(1)
    assert rule.drops_topic(2, last=False) and not rule.drops_topic(1, last=False)
    assert rule.drops_topic(2, last=True) and not rule.drops_topic(1, last=True)
    stays = ("^written_by", "starred_actors")
    assert enumerate_paths(adj, "Fisher", SupervisionConfig(semantics=rule))[stays] == {"Derek"}
    assert stays not in enumerate_paths(adj, "Fisher", SupervisionConfig(semantics=METAQA_RULE))
    assert path_answers(adj, "Fisher", stays, rule) == {"Derek"}
    assert path_answers(adj, "Fisher", stays, METAQA_RULE) == set()
    assert Walker(kg, rule).reach("Fisher", list(stays)) == {"Derek"}
    assert Walker(kg, METAQA_RULE).reach("Fisher", list(stays)) == frozenset()
    # back at the topic after two relations: no walk goes on from there, under either rule
    back = ("starred_actors", "^starred_actors", "written_by")
    assert path_answers(adj, "Fisher", back, rule) == {"Wes"}  # through Other only
    assert Walker(kg, rule).reach("Fisher", list(back)) == {"Wes"}
    assert not rule.keeps(["Fisher", "Derek", "Fisher", "Fisher"], "Fisher")  # a walk, entities in order
    assert rule.keeps(["Fisher", "Fisher", "Derek"], "Fisher")
    assert not METAQA_RULE.keeps(["Fisher", "Fisher", "Derek"], "Fisher")


def test_general_rule_lets_the_topic_be_an_answer_and_be_walked_through(tiny_kg):
    adj = build_adjacency(tiny_kg)
    paths = enumerate_paths(adj, "m1", SupervisionConfig())  # the default: the general rule
    assert paths[("directed_by", "^directed_by")] == {"m1", "m2"}
    assert paths[("directed_by", "^directed_by", "release_year")] == {"y2000", "y2001"}
    # topic may be an answer but not a waypoint
    rule = AnswerSemantics(topic_can_be_answer=True, revisit_topic=False)
    strict = enumerate_paths(adj, "m1", SupervisionConfig(semantics=rule))
    assert strict[("directed_by", "^directed_by")] == {"m1", "m2"}
    assert strict[("directed_by", "^directed_by", "release_year")] == {"y2001"}


def test_f1_scoring_and_answers_outside_the_kg(tiny_kg):
    c = path_candidates(tiny_kg, "d1", ["m1", "not-in-kg"])
    best = c[0]
    assert best["path"] == ["^written_by"] and best["f1"] == pytest.approx(2 / 3)
    assert best["recall"] == 0.5 and best["n_end"] == 1


def test_label_examples_sets_paths_and_report(tiny_kg, tmp_path):
    exs = [
        q("m1", ["m2"], hops=2, relation_path=["directed_by", "^directed_by"]),
        q("d2", ["m3"], hops=1),
        q("m1", ["nowhere"], hops=1),
        QAExample("no topic", [], ["m1"]),
        q("ghost", ["m1"]),
    ]
    rep = label_examples(tiny_kg, exs, cache_dir=None)
    assert exs[0].relation_path == ["directed_by", "^directed_by"] == exs[0].gold_path
    assert exs[0].extra["hop_label"] == 2
    assert exs[1].relation_path == ["^directed_by"] and exs[1].gold_path is None
    assert exs[2].relation_path is None and exs[2].extra["hop_label"] is None
    assert rep.n == 5 and rep.covered == 2 and rep.coverage == pytest.approx(0.4)
    assert rep.topic_missing == 1 and rep.gold_known == 1 and rep.gold_agree == 1
    assert rep.per_hop["1"]["n"] == 2 and rep.per_hop["1"]["covered"] == 1
    assert rep.hop_label_counts == {"1": 1, "2": 1, "none": 3}
    assert exs[2].extra["no_path_reason"] == "no answer in KG"
    assert exs[3].extra["no_path_reason"] == "no topic entity given"
    assert exs[4].extra["no_path_reason"] == "topic not in KG"
    assert rep.reasons == {"no answer in KG": 1, "topic not in KG": 1, "no topic entity given": 1}
    assert rep.per_hop["1"]["reasons"] == {"no answer in KG": 1}


def test_stated_hop_count_fixes_the_path_length(tiny_kg):
    # "who directed m1": 1 hop reaches {d1}; a question that says it is 3-hop gets a 3-hop path
    free, three, none = q("m1", ["d1"]), q("m1", ["d1"], hops=3), q("m4", ["d1"], hops=1)
    rep = label_examples(tiny_kg, [free, three, none], cache_dir=None)
    assert free.relation_path == ["directed_by"]
    assert len(three.relation_path) == 3 and all(len(c["path"]) == 3 for c in three.extra["path_candidates"])
    assert none.relation_path is None and none.extra["no_path_reason"] == "no path of the stated hop count"
    loose = q("m1", ["d1"], hops=3)
    label_examples(tiny_kg, [loose], SupervisionConfig(exact_hops=False), cache_dir=None)
    assert loose.relation_path == ["directed_by"]
    assert rep.per_hop["3"]["hop_label_counts"] == {"3": 1}


def test_gold_path_kept_when_kg_prefers_another(tiny_kg):
    ex = q("m1", ["d1"], relation_path=["written_by"])
    label_examples(tiny_kg, [ex], cache_dir=None)
    assert ex.relation_path == ["directed_by"] and ex.gold_path == ["written_by"]
    assert [c["path"] for c in ex.extra["path_candidates"]][:2] == [["directed_by"], ["written_by"]]


def test_cache_hit_gives_the_same_labels(tiny_kg, tmp_path):
    def fresh():
        return [q("m1", ["m2"]), q("a1", ["y2000", "y2001"]), q("d1", ["m1", "m2"])]

    first = fresh()
    rep1 = label_examples(tiny_kg, first, cache_dir=tmp_path)
    second = fresh()
    rep2 = label_examples(tiny_kg, second, cache_dir=tmp_path)
    assert not rep1.cache_hit and rep2.cache_hit and rep1.cache_file == rep2.cache_file
    assert [e.extra for e in first] == [e.extra for e in second]
    assert [e.relation_path for e in first] == [e.relation_path for e in second]
    rep3 = label_examples(tiny_kg, fresh(), SupervisionConfig(max_hops=2), cache_dir=tmp_path)
    assert not rep3.cache_hit  # H is part of the key
    changed = fresh()
    changed[0].answers = ["m3"]
    assert not label_examples(tiny_kg, changed, cache_dir=tmp_path).cache_hit  # so is the question set


def test_max_hops_and_frontier_cap(tiny_kg):
    assert all(len(c["path"]) <= 2 for c in path_candidates(tiny_kg, "a1", ["y2000"], SupervisionConfig(max_hops=2)))
    # y2000 -> {m1, m3} is larger than a cap of 1, so nothing is walked beyond it
    capped = path_candidates(tiny_kg, "y2000", ["d1", "d2"], SupervisionConfig(max_frontier=1))
    assert capped == []
    assert path_candidates(tiny_kg, "y2000", ["d1", "d2"])[0]["path"] == ["^release_year", "directed_by"]


class ProtocolOnly:
    """A KG reachable only through the protocol (like a SPARQL endpoint): lazy adjacency."""

    def __init__(self, kg):
        self.kg = kg

    def __getattr__(self, name):
        if name in ("g", "all_triples"):
            raise AttributeError(name)
        return getattr(self.kg, name)


def test_lazy_protocol_adjacency_gives_the_same_labels(tiny_kg):
    for topic, answers in [("m1", ["y2001"]), ("d1", ["a1"]), ("y2000", ["d1", "d2"])]:
        assert path_candidates(ProtocolOnly(tiny_kg), topic, answers) == path_candidates(tiny_kg, topic, answers)


@pytest.mark.shared_data
def test_real_metaqa_sample(metaqa_root):
    from rra.data.metaqa import load_metaqa, load_metaqa_graph

    kg = load_metaqa_graph(metaqa_root)
    exs = load_metaqa(metaqa_root, split="dev", limit=100)
    rep = label_examples(kg, exs, cache_dir=None)
    assert rep.coverage == 1.0
    assert rep.per_hop["2"]["hop_label_counts"].get("2", 0) >= 95
    assert rep.gold_best_f1 >= 0.97 * rep.gold_known  # the qtype path is (one of) the best


def test_an_answer_named_by_a_shared_label_is_one_answer():
    """DBpedia has a film and a band both labelled "The Burning Compass". "Which band made the album
    [Wandering Meridian]?" answered "The Burning Compass" names both nodes; the album's `artist` answers
    it, and a walk that happens to end at the band (albums of the same release date) must not win by
    counting the film as a second answer the 1-hop path missed."""
    from rra.graph import NetworkXGraph
    from rra.records import Triple

    kg = NetworkXGraph(
        [Triple("album", "artist", "band"), Triple("album", "release", "d1995"),
         Triple("album2", "release", "d1995"), Triple("album2", "artist", "band"),
         Triple("film", "director", "someone")],
        labels={"band": "The Burning Compass", "film": "The Burning Compass", "album": "Wandering Meridian"})
    (ex,) = exs = [QAExample("which band made the album [E]?", ["album"], ["The Burning Compass"])]
    label_examples(kg, exs, cache_dir=None)
    assert sorted(ex.answer_ids[0]) == ["band", "film"]
    assert ex.relation_path == ["artist"]
    best = ex.extra["path_candidates"][0]
    assert best["f1"] == 1.0 and best["precision"] == 1.0 and best["recall"] == 1.0


def test_shared_label_f1_counts_answers_not_nodes():
    from rra.data.supervision import score_paths

    paths = {("a",): {"x1"}, ("b",): {"x1", "x2"}, ("c",): {"x1", "y"}, ("d",): {"z"}}
    got = {tuple(c["path"]): c for c in score_paths(paths, [("x1", "x2"), "z"])}
    # each answer is hit or not; precision is the share of the end set that some answer names
    assert got[("a",)]["recall"] == got[("b",)]["recall"] == 0.5 and got[("b",)]["precision"] == 1.0
    assert got[("a",)]["f1"] == got[("b",)]["f1"] == pytest.approx(2 / 3)
    assert got[("c",)]["precision"] == 0.5 and got[("c",)]["f1"] == pytest.approx(0.5)
    # one node per answer: the F1 of two sets, to the last bit
    plain = score_paths(paths, ["x1", "x2", "z"])
    assert {tuple(c["path"]): c["f1"] for c in plain} == {("a",): 2 / 4, ("b",): 4 / 5, ("c",): 2 / 5, ("d",): 2 / 4}


def test_a_topic_named_by_a_shared_label_trains_from_the_entity_that_reaches_its_answers():
    """A question file that names its topic ("who directed Atlas?") where a film and an album share
    the name: the film, which the lookup finds second, is the one whose paths reach the answer, so
    the question trains from it; with no path from either, or without a supervision config, the
    lookup's first."""
    from rra.data.supervision import resolve_topic_names
    from rra.graph import NetworkXGraph
    from rra.records import Triple

    kg = NetworkXGraph([Triple("film/atlas", "director", "person/kim"), Triple("album/atlas", "artist", "band/tide")],
                       labels={"film/atlas": "Atlas", "album/atlas": "Atlas", "band/tide": "The Tide",
                               "person/kim": "Kim"})
    plain = [QAExample("who directed Atlas?", ["Atlas"], ["Kim"])]
    assert resolve_topic_names(kg, plain)["shared_name"] == 1
    assert plain[0].topic_entities == ["album/atlas"]  # the lookup's first match
    exs = [QAExample("which band made the album Atlas?", ["Atlas"], ["The Tide"]),
           QAExample("who directed Atlas?", ["Atlas"], ["Kim"]),
           QAExample("who painted Atlas?", ["Atlas"], ["Nobody"])]
    counts = resolve_topic_names(kg, exs, SupervisionConfig(max_hops=2))
    assert [e.topic_entities for e in exs] == [["album/atlas"], ["film/atlas"], ["album/atlas"]]
    assert counts == {"by_name": 1, "shared_name": 1, "chosen_by_path": 1, "not_found": 0}
    label_examples(kg, exs, cache_dir=None)
    assert exs[0].relation_path == ["artist"] and exs[1].relation_path == ["director"]

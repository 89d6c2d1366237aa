from dataclasses import dataclass

import pytest

from rra.graph import NetworkXGraph, Triple
from rra.graph.base import GraphError
from rra.pipeline.retrieve import sample_triples


@dataclass
class Cand:
    path: list
    score: float
    hop: int = 1


def test_paths_without_instance_are_dropped_and_next_best_fills_in(movie_kg):
    cands = [Cand(["^directed_by"], 0.6), Cand(["^starred_actors"], 0.3),
             Cand(["^starred_actors", "directed_by"], 0.05, 2), Cand(["^starred_actors", "release_year"], 0.01, 2)]
    r = sample_triples(movie_kg, "Harrison Ford", cands, topk=2)
    assert r.status == "ok"
    assert [p.path for p in r.paths] == [["^starred_actors"], ["^starred_actors", "directed_by"]]
    assert [p.path for p in r.dropped] == [["^directed_by"]]  # the 4th candidate was never needed
    assert r.paths[0].ends == ["Blade Runner", "Witness"]
    assert r.paths[1].ends == ["Peter Weir", "Ridley Scott"]


def test_triple_cap_is_deterministic_and_evidence_names_its_path(movie_kg):
    cands = [Cand(["^directed_by", "starred_actors"], 0.7, 2), Cand(["^directed_by", "release_year"], 0.2, 2)]
    a = sample_triples(movie_kg, "Ridley Scott", cands, topk=2, max_triples=3, seed=1)
    b = sample_triples(movie_kg, "Ridley Scott", cands, topk=2, max_triples=3, seed=1)
    assert len(a.evidence) == 3
    assert [e.triple for e in a.evidence] == [e.triple for e in b.evidence]
    for e in a.evidence:  # each triple's relation lies on the path it is attributed to
        assert e.triple.relation in {r.lstrip("^") for r in e.path}
        assert e.score in (0.7, 0.2)
    # both kept paths get a share of the budget
    assert {e.path for e in a.evidence} == {tuple(c.path) for c in cands}
    full = sample_triples(movie_kg, "Ridley Scott", cands, topk=2, max_triples=100)
    assert len(full.evidence) == 9  # 3 movies x (director + actor + year), director triples shared


def test_metaqa_rule_topic_entity_is_not_an_end_entity(movie_kg):
    from rra.records import AnswerSemantics

    metaqa = AnswerSemantics(topic_can_be_answer=False, revisit_topic=False)
    r = sample_triples(movie_kg, "Alien", [Cand(["directed_by", "^directed_by"], 0.9, 2)], semantics=metaqa)
    assert "Alien" not in r.paths[0].ends
    assert r.paths[0].ends == ["Blade Runner", "Gladiator"]
    # Witness shares no director with anything: its only instance returns to itself -> no path
    r2 = sample_triples(movie_kg, "Witness", [Cand(["directed_by", "^directed_by"], 0.9, 2)], semantics=metaqa)
    assert r2.status == "no_path" and r2.paths == [] and r2.errors
    # the general rule (the default) keeps the walk back: "films by Alien's director" include Alien
    general = sample_triples(movie_kg, "Alien", [Cand(["directed_by", "^directed_by"], 0.9, 2)])
    assert general.paths[0].ends == ["Alien", "Blade Runner", "Gladiator"]


def test_end_scores_sum_and_max(movie_kg):
    cands = [Cand(["^directed_by"], 0.5), Cand(["^starred_actors", "^starred_actors"], 0.4, 2)]
    r = sample_triples(movie_kg, "Ridley Scott", cands, topk=2)
    assert dict(r.end_scores("max"))["Alien"] == 0.5
    with pytest.raises(ValueError, match="aggregate"):
        r.end_scores("mean")


def test_unknown_entity_status(movie_kg):
    r = sample_triples(movie_kg, "Nobody", [Cand(["directed_by"], 1.0)])
    assert r.status == "unknown_entity"
    assert r.errors and r.evidence == []


class SilentGraph(NetworkXGraph):
    """An endpoint that knows the entity but returns no rows at all."""

    def follow_path(self, entity, path, limit=None):
        return []

    def relations(self, entity, direction="both"):
        return []


class BrokenGraph(NetworkXGraph):
    def follow_path(self, entity, path, limit=None):
        raise GraphError("endpoint down")


def test_empty_graph_reply_and_graph_error():
    triples = [Triple("a", "r", "b")]
    r = sample_triples(SilentGraph(triples), "a", [Cand(["r"], 1.0)])
    assert r.status == "empty_graph_reply"
    r = sample_triples(BrokenGraph(triples), "a", [Cand(["r"], 1.0)])
    assert r.status == "graph_error" and "endpoint down" in r.errors[0]


FAMILY = [("Ann", "spouse", "Bob"), ("Bob", "spouse", "Ann"), ("Ann", "child", "Cid"), ("Bob", "child", "Cid"),
          ("Dee", "likes", "Dee")]  # Dee likes herself: a self-loop


def test_general_rule_answers_with_the_topic_when_the_path_leads_back():
    from rra.records import AnswerSemantics

    kg = NetworkXGraph([Triple(*t) for t in FAMILY])
    spouse_of_spouse = sample_triples(kg, "Ann", [Cand(["spouse", "spouse"], 0.9, 2)])
    assert spouse_of_spouse.status == "ok" and spouse_of_spouse.paths[0].ends == ["Ann"]
    mother_of_son = sample_triples(kg, "Ann", [Cand(["child", "^child"], 0.9, 2)])  # a parent of Ann's child
    assert mother_of_son.paths[0].ends == ["Ann", "Bob"]
    assert sample_triples(kg, "Dee", [Cand(["likes"], 0.9)]).paths[0].ends == ["Dee"]
    assert sample_triples(kg, "Dee", [Cand(["^likes"], 0.9)]).paths[0].ends == ["Dee"]
    # MetaQA's rule: the topic is never an answer, and no walk may pass back through it
    metaqa = AnswerSemantics(topic_can_be_answer=False, revisit_topic=False)
    r = sample_triples(kg, "Ann", [Cand(["spouse", "spouse"], 0.9, 2)], semantics=metaqa)
    assert r.status == "no_path" and not r.paths
    assert sample_triples(kg, "Ann", [Cand(["child", "^child"], 0.9, 2)], semantics=metaqa).paths[0].ends == ["Bob"]
    # MetaQA as its questions have it: a self-loop answers with its own entity (the film "Lemmy" starring
    # Lemmy: 3 of 9,947 1-hop test questions), a longer path never with its topic
    one_hop = AnswerSemantics.of({"topic_can_be_answer": "one_hop", "revisit_topic": False})
    assert sample_triples(kg, "Dee", [Cand(["likes"], 0.9)], semantics=one_hop).paths[0].ends == ["Dee"]
    assert sample_triples(kg, "Dee", [Cand(["likes"], 0.9)], semantics=metaqa).status == "no_path"
    assert sample_triples(kg, "Ann", [Cand(["spouse", "spouse"], 0.9, 2)], semantics=one_hop).status == "no_path"
    with pytest.raises(ValueError, match="topic_can_be_answer must be true, false or one_hop, not 'sometimes'"):
        AnswerSemantics.of({"topic_can_be_answer": "sometimes"})
    # a waypoint rule alone: Ann -> Bob -> Ann -> Cid is dropped, Ann -> Bob -> Cid kept
    no_revisit = AnswerSemantics(topic_can_be_answer=True, revisit_topic=False)
    r = sample_triples(kg, "Ann", [Cand(["spouse", "spouse", "child"], 0.9, 3)], semantics=no_revisit)
    assert r.status == "no_path"
    r = sample_triples(kg, "Ann", [Cand(["spouse", "spouse", "child"], 0.9, 3)])
    assert r.paths[0].ends == ["Cid"] and r.paths[0].instances == 1


def test_prefetch_sends_one_query_per_round(movie_kg):
    """Retrieval for a batch on a SPARQL backend: one UNION query per round of candidates, and
    the same paths as question by question."""
    from rra.graph import OxigraphGraph
    from rra.pipeline.retrieve import PathRetrieval

    kg = OxigraphGraph.from_triples(movie_kg.all_triples())
    r = PathRetrieval(model=None, topk=2)
    queries = [("Ridley Scott", [Cand(["^directed_by"], 0.9), Cand(["^directed_by", "release_year"], 0.1, 2)]),
               ("Peter Weir", [Cand(["^directed_by"], 0.9), Cand(["^directed_by", "release_year"], 0.1, 2)]),
               ("Harrison Ford", [Cand(["^directed_by"], 0.9), Cand(["in_language"], 0.5),
                                  Cand(["^starred_actors"], 0.3), Cand(["^starred_actors", "directed_by"], 0.1, 2)])]
    before = kg.requests
    found, errors = r.prefetch(kg, queries)
    assert errors == [] and kg.requests - before == 2  # round 1: three paths; round 2: Harrison Ford's next two
    for topic, cands in queries:
        alone = r.retrieve(movie_kg, topic, cands)
        batched = r.retrieve(kg, topic, cands, found)
        assert [p.path for p in batched.paths] == [p.path for p in alone.paths]
        assert batched.evidence == alone.evidence
    assert kg.requests - before == 2  # nothing fetched again


def test_prefetch_round_failure_falls_back_path_by_path(movie_kg):
    from rra.graph import OxigraphGraph
    from rra.graph.base import GraphError
    from rra.pipeline.retrieve import PathRetrieval

    class NoUnion(OxigraphGraph):
        def follow_paths_batch(self, requests, limit=None):
            raise GraphError("HTTP 500: query too large")

    kg = NoUnion.from_triples(movie_kg.all_triples())
    r = PathRetrieval(model=None, topk=1)
    found, errors = r.prefetch(kg, [("Ridley Scott", [Cand(["^directed_by"], 0.9)]),
                                    ("Heat", [Cand(["directed_by"], 0.9)])])
    assert errors == [] and [i.end for i in found[("Heat", ("directed_by",))]] == ["Michael Mann"]

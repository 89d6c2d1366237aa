"""Linking from the question text on a SPARQL store: a batch's label lookups are made ahead in
batches (rra.linking.LookAhead), with the links NetworkX gives and a handful of queries."""
import pytest

from rra.pipeline.answer import GraphScorer
from rra.graph import OxigraphGraph
from rra.linking import LookAhead
from rra.pipeline.method import RRAPipeline
from rra.pipeline.retrieve import PathRetrieval
from rra.pipeline.rewrite import TemplateRewriter

QUESTIONS = ["who directed Alien", "when was heat released", "what movies did Ridley Scott direct",
             "who acted in Blade Runner?", "who directed the movies harrison ford acted in",
             "what is this about", "films in Esperanto"]


@pytest.fixture(scope="module")
def retrieval(retriever_ckpt):
    return PathRetrieval.from_checkpoint(retriever_ckpt, topk=2, candidates=4, max_triples=20)


def run(kg, retrieval, exs):
    pipe = RRAPipeline(kg, retrieval, TemplateRewriter(), GraphScorer(), use_gold_topic=False)
    return pipe.answer_batch(exs)


def test_unmarked_questions_link_as_on_networkx_with_few_queries(movie_kg, retrieval, example):
    exs = [example(q, [], qid=str(i)) for i, q in enumerate(QUESTIONS)]
    ox = OxigraphGraph.from_triples(movie_kg.all_triples())
    on_nx, on_ox = run(movie_kg, retrieval, exs), run(ox, retrieval, exs)
    assert [p.topic_entities for p in on_ox] == [p.topic_entities for p in on_nx]
    assert [p.status for p in on_ox] == [p.status for p in on_nx]
    assert [p.answers for p in on_ox] == [p.answers for p in on_nx]
    assert on_ox[0].topic_entities[0] == "Alien" and on_ox[1].topic_entities[0] == "Heat"
    # linking: one labels call + one exact and one casefold lookup (question by question it was
    # several queries per n-gram); the rest is retrieval
    assert ox.requests < 3 * len(QUESTIONS)


def test_look_ahead_answers_what_it_recorded_and_passes_the_rest(movie_kg):
    ahead = LookAhead(movie_kg)
    assert ahead.find_entities("alien", "casefold") == [] and not ahead.has_entity("Heat")  # recorded
    ahead.resolve()
    assert ahead.find_entities("alien", "casefold") == movie_kg.find_entities("alien", "casefold") == ["Alien"]
    assert ahead.has_entity("Heat") and not ahead.has_entity("Nobody")
    assert ahead.find_entities("Witness") == ["Witness"]  # not asked ahead: goes to the graph
    assert ahead.relation_types() == movie_kg.relation_types()

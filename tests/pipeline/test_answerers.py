from dataclasses import dataclass

import pytest

from rra.pipeline.answer import ChoiceAnswerer, GraphScorer, LLMAnswerer
from rra.llm import ScriptedLLM
from rra.records import AnswerSemantics
from rra.pipeline.retrieve import QuestionContext, sample_triples
from rra.text.matching import mentioned_entities as mentioned


@dataclass
class Cand:
    path: list
    score: float
    hop: int = 1


@pytest.fixture
def retrieval(movie_kg):
    # "which movies have the same director as [Alien]" with a weaker wrong path beside the right one
    # (read as "the *other* movies": the MetaQA answer rule, not the general default)
    metaqa = AnswerSemantics(topic_can_be_answer=False, revisit_topic=False)
    return sample_triples(movie_kg, "Alien", [Cand(["directed_by", "^directed_by"], 0.8, 2),
                                              Cand(["release_year"], 0.1)], topk=2, semantics=metaqa)


def ctx(question, knowledge, retrieval, labels):
    return QuestionContext(question, knowledge=knowledge, retrieval=retrieval, labels=labels)


def labels_of(r):
    return {e: e for t in r.triples for e in (t.head, t.tail)}


def test_graph_scorer_ranks_end_entities_by_path_score(retrieval):
    a = GraphScorer().answer(ctx("q", "", retrieval, {}))
    assert a.answers[:2] == ["Blade Runner", "Gladiator"] and a.answers[2] == "1979"
    assert a.answer_set == ["Blade Runner", "Gladiator"] and a.status == "ok"


def test_graph_scorer_cuts_weak_path_ends_but_keeps_them_as_scored_candidates(movie_kg):
    r = sample_triples(movie_kg, "Alien", [Cand(["directed_by"], 0.977), Cand(["release_year"], 0.0025),
                                           Cand(["starred_actors"], 0.0014)], topk=3)
    a = GraphScorer().answer(ctx("who directed [Alien]", "", r, {"Ridley Scott": "Sir Ridley Scott"}))
    assert a.answers == ["Ridley Scott"]
    assert [(c["entity"], c["score"], c["path"]) for c in a.extra["candidates"]] == [
        ("Ridley Scott", 0.977, ["directed_by"]), ("1979", 0.0025, ["release_year"]),
        ("Sigourney Weaver", 0.0014, ["starred_actors"])]
    assert a.extra["candidates"][0]["label"] == "Sir Ridley Scott"
    assert GraphScorer(min_relative_score=0.0).answer(ctx("q", "", r, {})).answers == ["Ridley Scott", "1979", "Sigourney Weaver"]
    with pytest.raises(ValueError, match="min_relative_score"):
        GraphScorer(min_relative_score=2)


def test_free_form_answers_are_entities_named_in_reply(retrieval):
    llm = ScriptedLLM(default="Gladiator, and also Blade Runner.")
    c = ctx("which movies have the same director as [Alien]", "facts", retrieval, labels_of(retrieval))
    a = LLMAnswerer(llm).answer(c)
    assert c.trace.usage.calls == 1 and c.trace.usage.prompt_tokens > 0  # the question's own trace counts its call
    assert a.answers == ["Gladiator", "Blade Runner"] and a.hits_mode == "reply"
    assert "Alien" in llm.prompt_texts[0] and "[Alien]" not in llm.prompt_texts[0]
    assert "facts" in llm.prompt_texts[0]


def test_free_form_failures_fall_back_to_graph_ranking(retrieval):
    down = LLMAnswerer(ScriptedLLM(default=ScriptedLLM.failure("connection: refused")))
    a = down.answer(ctx("q", "k", retrieval, {}))
    assert a.status == "llm_error" and "refused" in a.errors[0] and a.answers[0] == "Blade Runner"
    assert a.hits_mode == "top"
    empty = LLMAnswerer(ScriptedLLM(default="   ")).answer(ctx("q", "k", retrieval, {}))
    assert empty.status == "unparseable" and empty.answers[0] == "Blade Runner"


def test_choice_by_likelihood(retrieval):
    llm = ScriptedLLM(scores={" Gladiator": -1.0, " Blade Runner": -5.0})
    c = ctx("q", "k", retrieval, labels_of(retrieval))
    a = ChoiceAnswerer(llm, mode="score").answer(c)
    assert c.trace.usage.calls == 1
    assert a.answers[0] == "Gladiator" and a.answer_set == ["Gladiator"]
    # candidates come from the knowledge, topic entity excluded
    assert "Alien" not in a.extra["candidates"] and "Ridley Scott" in a.extra["candidates"]
    assert llm.usage.calls == 1


def test_choice_by_number_and_unparseable_reply(retrieval):
    llm = ScriptedLLM(default="Option 2")
    ans = ChoiceAnswerer(llm, mode="number")
    a = ans.answer(ctx("q", "k", retrieval, labels_of(retrieval)))
    assert a.answers[0] == a.extra["candidates"][1] and a.status == "ok"
    bad = ChoiceAnswerer(ScriptedLLM(default="I like turtles"), mode="number")
    b = bad.answer(ctx("q", "k", retrieval, labels_of(retrieval)))
    assert b.status == "unparseable" and b.answers[0] == "Blade Runner"


def test_choice_without_scoring_backend_reports_llm_error(retrieval):
    class NoScore(ScriptedLLM):
        def score(self, prompt, continuations):
            raise NotImplementedError

    a = ChoiceAnswerer(NoScore()).answer(ctx("q", "k", retrieval, labels_of(retrieval)))
    assert a.status == "llm_error" and "cannot score" in a.errors[0]


def test_mentioned_prefers_longer_labels_and_word_bounds():
    labels = {"a": "Blade", "b": "Blade Runner", "c": "Ran"}
    assert mentioned("I think Blade Runner.", labels) == ["b"]
    assert mentioned("Ranger", labels) == []

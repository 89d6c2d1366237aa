"""The pipeline's plan path with a scripted retriever (what the plan heads and the path predictor
say is fixed, so what is tested is how the pipeline executes, ranks and shows a plan)."""
from __future__ import annotations

import re

import pytest

from rra.pipeline.answer import GraphScorer, candidate_entities
from rra.data.builtin import load_builtin_graph
from rra.data.records import QAExample
from rra.models.plan_head import PlanPrediction
from rra.models.retriever import PathPrediction
from rra.pipeline.method import RRAPipeline
from rra.plan import Constraint
from rra.pipeline.plan_retrieval import PlanSpec, retrieve_plan
from rra.pipeline.retrieve import PathRetrieval
from rra.pipeline.rewrite import TemplateRewriter

WRITER = "person/marit_lindgrave"
KG = load_builtin_graph()
BOOKS = {b: int(KG.label(KG.neighbors(b, "published_in")[0])) for b in KG.neighbors(WRITER, "^written_by")}
FIRST = min(BOOKS, key=BOOKS.get)
AFTER_1980 = {b for b, y in BOOKS.items() if y > 1980}
IN_MIREVAL = [b for b in BOOKS if "city/mireval" in KG.neighbors(b, "set_in")]
# the relation a question asks for, by the words before its focused anchor "[...]"
PATTERNS = [(r"written by \[|books did \[|books? by \[", "^written_by"), (r"set in \[", "^set_in")]


class Scripted:
    """predict(): the path named by the words before the `[...]` anchor; predict_plan(): a reading
    by keywords (two anchors when two are marked, argmin for "first", > for "after")."""

    def __init__(self, plans: bool = True):
        self.plans = plans

    def predict(self, questions, topk=3, try_second_hop=False, **graph):
        out = []
        for q in questions:
            path = next((p for pat, p in PATTERNS if re.search(pat, q)), "^published_by")
            out.append([PathPrediction([path], 0.9, 1, 1.0), PathPrediction(["^published_by"], 0.05, 1, 1.0)])
        return out

    def predict_plan(self, questions):
        if not self.plans:
            return None
        out = []
        for q in questions:
            two = q.count("[") > 1
            cond = "argmin" if "first" in q else ">" if "after" in q else "none"
            out.append(PlanPrediction([0.1, 0.9] if two else [0.9, 0.1], [(cond, 0.95), ("none", 0.05)],
                                      [("published_in", 0.9), ("set_in", 0.1)]))
        return out


def pipeline(plans: bool = True) -> RRAPipeline:
    return RRAPipeline(load_builtin_graph(), PathRetrieval(Scripted(plans)), TemplateRewriter(), GraphScorer())


@pytest.fixture(scope="module")
def rra():
    return pipeline()


def test_two_anchors_are_intersected_and_both_chains_shown(rra):
    ex = QAExample("which books written by [Marit Lindgrave] and set in [Mireval]", [WRITER, "city/mireval"],
                   IN_MIREVAL, qid="c")
    pred = rra.answer(ex)
    assert pred.status == "ok" and pred.answers == IN_MIREVAL and len(IN_MIREVAL) == 1
    assert pred.extra["plan"]["shape"] == "conjunction" and pred.extra["plan"]["paths"] == [["^written_by"], ["^set_in"]]
    relations = {t.relation for t in pred.triples}
    assert {"written_by", "set_in"} <= relations  # evidence of both chains
    assert "Query plan" in pred.knowledge and "Mireval" in pred.knowledge


def test_conditions_filter_and_order_by_a_literal_of_the_question(rra):
    first = rra.answer(QAExample("what is the first book by [Marit Lindgrave]", [WRITER], [FIRST]))
    assert first.answers == [FIRST] and first.extra["plan"]["shape"] == "order"
    assert any(t.relation == "published_in" for t in first.triples)  # the condition's facts are evidence
    after = rra.answer(QAExample("which books by [Marit Lindgrave] came out after 1980", [WRITER], sorted(AFTER_1980)))
    assert set(after.answer_set) == AFTER_1980 and 0 < len(AFTER_1980) < len(BOOKS)
    assert after.extra["plan"]["constraint"] == {"relation": "published_in", "op": ">", "value": 1980}


def test_chain_questions_take_the_chain_path_unchanged():
    ex = QAExample("what books did [Marit Lindgrave] write", [WRITER], [])
    with_heads, without = pipeline(True).answer(ex), pipeline(False).answer(ex)
    assert "plan" not in with_heads.extra
    keep = ("answers", "answer_set", "paths", "triples", "knowledge", "status")
    assert {k: getattr(with_heads, k) for k in keep} == {k: getattr(without, k) for k in keep}


def test_a_plan_with_no_answer_falls_back_to_the_chain(rra):
    pred = rra.answer(QAExample("which books by [Marit Lindgrave] came out after 2990", [WRITER], []))
    assert pred.status == "ok" and "plan" not in pred.extra and pred.extra["plan_fallback"]
    assert set(pred.answer_set) == set(BOOKS)  # the chain's answers, and the record says why


def test_infer_prints_the_plan(rra, capsys):
    from rra.eval.run import format_prediction

    pred = rra.answer(QAExample("which books written by [Marit Lindgrave] and set in [Mireval]", [], []))
    text = format_prediction(pred)
    assert "plan:     conjunction" in text and "^written_by  AND  city/mireval: ^set_in" in text


def test_a_plan_offers_its_answers_not_its_anchors_or_values_as_choices(rra):
    spec = PlanSpec([WRITER], [[PathPrediction(["^written_by"], 0.9, 1, 1.0)]],
                    [(Constraint("published_in", ">", 1980), 0.9)])
    r = retrieve_plan(rra.kg, spec)
    assert WRITER in {t.tail for t in r.triples} and any(t.tail.startswith("year/") for t in r.triples)
    assert set(candidate_entities(r, {WRITER}, "knowledge")) == AFTER_1980  # ... the choices only the answers

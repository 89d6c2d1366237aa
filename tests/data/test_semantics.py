"""Dataset answer semantics end to end on a family KG where some answers are the topic itself:
"who is the spouse of [Ann]'s spouse" (Ann), "who are the parents of [Ann]'s child" (Ann and Bob).
Generated questions, KG supervision and the RRA graph scorer must agree under the general rule."""
from dataclasses import dataclass

import pytest

from rra.pipeline.answer import GraphScorer
from rra.data.question_generator import generate_questions
from rra.data.supervision import label_examples
from rra.graph import NetworkXGraph, Triple
from rra.pipeline.method import RRAPipeline
from rra.records import AnswerSemantics
from rra.pipeline.retrieve import PathRetrieval
from rra.pipeline.rewrite import TripleRewriter


def family_kg(couples: int = 30) -> NetworkXGraph:
    triples = []
    for i in range(couples):
        a, b, kid = f"p{i}a", f"p{i}b", f"k{i}"
        triples += [Triple(a, "spouse", b), Triple(b, "spouse", a), Triple(a, "child", kid),
                    Triple(b, "child", kid), Triple(kid, "lives_in", f"town{i % 4}"),
                    Triple(a, "born_in", f"town{(i + 1) % 4}")]
    triples.append(Triple("k0", "likes", "k0"))  # a self-loop
    return NetworkXGraph(triples)


@dataclass
class GoldPath:
    """Stands in for the trained model: it predicts each question's gold path."""

    paths: dict

    def predict(self, questions, topk, hops=None, try_second_hop=False):
        @dataclass
        class P:
            path: list
            score: float = 1.0
            hop: int = 1

        return [[P(list(self.paths[q]), 1.0, len(self.paths[q]))] for q in questions]


def test_topic_answers_are_covered_by_supervision_and_answered_by_the_graph_scorer():
    kg = family_kg()
    questions = generate_questions(kg, n=300, seed=0, max_answers=10)
    topic_answer = [q for q in questions if q.topic_entities[0] in q.answers]
    assert len(topic_answer) >= len(questions) / 10  # plenty of them: spouse of spouse, parent of child...
    report = label_examples(kg, questions, cache_dir=None)
    assert report.covered == report.n == 300 and report.exact == 300  # every answer set reached exactly

    pipe = RRAPipeline(kg, PathRetrieval(GoldPath({q.question: q.gold_path for q in questions})),
                       TripleRewriter(), GraphScorer())
    preds = pipe.answer_batch(topic_answer)
    for q, p in zip(topic_answer, preds):
        assert p.status == "ok", (q.question, p.errors)
        assert set(p.answer_set) == set(q.answers)
        assert q.topic_entities[0] in p.answers


def test_self_loop_is_an_answer_under_the_general_rule_only():
    kg = family_kg(2)
    general = label_examples(kg, [q := _q("k0", ["k0"], hops=1)], cache_dir=None)
    assert general.covered == 1 and q.relation_path in (["likes"], ["^likes"])
    metaqa = AnswerSemantics(topic_can_be_answer=False, revisit_topic=False)
    from rra.data.supervision import SupervisionConfig

    strict = label_examples(kg, [q2 := _q("k0", ["k0"], hops=1)], SupervisionConfig(semantics=metaqa), cache_dir=None)
    assert strict.covered == 0 and q2.extra["no_path_reason"] == "no path of the stated hop count"


def _q(topic, answers, **kw):
    from rra.records import QAExample

    return QAExample(f"about [{topic}]", [topic], answers, **kw)


@pytest.mark.parametrize("value", [None, {"topic_can_be_answer": False}, AnswerSemantics(False, True)])
def test_semantics_from_config_values(value):
    s = AnswerSemantics.of(value)
    assert isinstance(s, AnswerSemantics)
    with pytest.raises(ValueError, match="unknown answer-semantics keys"):
        AnswerSemantics.of({"topic_is_answer": True})

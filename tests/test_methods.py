"""The QAMethod protocol's default batch method: what the evaluation loop calls for every method."""
import pytest

from rra.graph.base import GraphError
from rra.methods import QAMethod
from rra.records import Prediction, QAExample


class Counting(QAMethod):
    name = "counting"

    def __init__(self, failing=()):
        self.failing, self.asked = set(failing), []

    def answer(self, example):
        self.asked.append(example.qid)
        if example.qid in self.failing:
            raise GraphError(f"endpoint down for {example.qid}")
        return Prediction(example.qid, example.question, [example.question.upper()])


def examples(n):
    return [QAExample(f"q{i}", [], [], qid=str(i)) for i in range(n)]


@pytest.mark.parametrize("concurrency", [1, 3])
def test_default_batch_keeps_order_and_a_failure_costs_one_question(concurrency):
    preds = list(Counting(failing={"2"}).answer_batch(examples(6), concurrency))
    assert [p.qid for p in preds] == [str(i) for i in range(6)]
    assert [p.status for p in preds] == ["ok", "ok", "graph_error", "ok", "ok", "ok"]
    assert "endpoint down for 2" in preds[2].errors[0] and preds[0].answers == ["Q0"]


def test_default_batch_streams_one_question_at_a_time():
    method = Counting()
    stream = method.answer_batch(examples(5))
    assert next(iter(stream)).qid == "0" and method.asked == ["0"]  # nothing asked ahead of the reader


def test_a_bug_inside_a_method_is_raised_when_the_method_is_strict():
    class Buggy(Counting):
        def answer(self, example):
            raise TypeError("a bug")

    lenient, strict = Buggy(), Buggy()
    lenient.strict, strict.strict = False, True
    (pred,) = list(lenient.answer_batch(examples(1)))
    assert pred.status == "error" and pred.errors == ["TypeError: a bug"]
    with pytest.raises(TypeError):
        list(strict.answer_batch(examples(1)))


def test_a_status_is_an_enum_written_as_its_value():
    import json

    from rra.records import Status

    p = Prediction("q", "?", [], status="no_path")
    assert p.status is Status.NO_PATH and json.loads(json.dumps(p.to_dict()))["status"] == "no_path"
    with pytest.raises(ValueError, match="no_such_status"):
        Prediction("q", "?", [], status="no_such_status")


def test_what_scoring_reads_of_a_question_is_typed_not_extra():
    """Records written when the gold path and answer names travelled in `extra` still load."""
    old = QAExample("q", ["t"], ["a"], extra={"gold_path": ["r"], "answer_labels": ["A"], "answer_ids": [["a"]],
                                              "qtype": "x"})
    assert (old.gold_path, old.answer_labels, old.answer_ids, old.extra) == (["r"], ["A"], [["a"]], {"qtype": "x"})
    given = QAExample("q", ["t"], ["a"], relation_path=["r"])
    assert given.gold_path == ["r"]  # the dataset's own path, kept when supervision relabels relation_path

"""Query plans: literal values, execution on every backend, the data contract, KG-derived plan
supervision, the built-in questions of each shape, the plan heads and the pipeline's plan path."""
from __future__ import annotations

import json

import pytest

from rra.data.builtin import builtin_questions, load_builtin_graph
from rra.data.records import DataFormatError, QAExample
from rra.plan import (Constraint, QueryPlan, apply_condition, execute, focus_text, literal_value,
                      question_literals)

WRITER, CITY = "person/ilse_pellinore", "city/vessmoor"


@pytest.fixture(scope="module")
def kg():
    return load_builtin_graph()


def test_literal_values_compare_as_numbers_and_dates():
    assert literal_value("1985") == 1985.0 and literal_value("year/1985") == 1985.0
    assert literal_value('"1985"^^<http://www.w3.org/2001/XMLSchema#gYear>') == 1985.0
    assert literal_value("-3.5") == -3.5
    assert 1990 < literal_value("1990-07-02") < 1991 and literal_value("1990-02-30") is None
    assert literal_value("Iron Atlas") is None and literal_value(None) is None
    assert literal_value("9") < literal_value("10")  # as numbers, not strings


def test_question_literals_skip_the_anchors():
    assert question_literals("which books by [Route 66] came out after 1990") == ["1990"]
    assert question_literals("films of Apollo 13 after 2001-05-03", ["Apollo 13"]) == ["2001-05-03"]


def test_conditions_filter_and_order_with_ties():
    values = {"a": [1990.0], "b": [2001.0], "c": [2001.0], "d": []}
    assert apply_condition(values, ">", 1995) == {"b", "c"}
    assert apply_condition(values, "<=", 1990) == {"a"}
    assert apply_condition(values, "argmax") == {"b", "c"} and apply_condition(values, "argmin") == {"a"}
    with pytest.raises(ValueError):
        Constraint("published_in", ">", "soon")
    with pytest.raises(ValueError):
        Constraint("published_in", "between", 3)


@pytest.mark.parametrize("backend", ["networkx", "oxigraph"])
def test_plans_execute_alike_on_every_backend(backend, kg):
    other = load_builtin_graph(backend)
    books = set(kg.neighbors(WRITER, "^written_by"))
    years = {b: int(kg.label(kg.neighbors(b, "published_in")[0])) for b in books}
    plans = {
        "conjunction": QueryPlan(["genre/poetry", "publisher/lamplight_press"], [["^has_genre"], ["^published_by"]]),
        "comparison": QueryPlan([WRITER], [["^written_by"]], Constraint("published_in", ">", 1952)),
        "order": QueryPlan([WRITER], [["^written_by"]], Constraint("published_in", "argmin")),
    }
    want = {
        "conjunction": set(kg.neighbors("genre/poetry", "^has_genre")) & set(kg.neighbors("publisher/lamplight_press", "^published_by")),
        "comparison": {b for b in books if years[b] > 1952},
        "order": {b for b in books if years[b] == min(years.values())},
    }
    for shape, plan in plans.items():
        got = execute(other, plan)
        assert plan.shape == shape and set(got.answers) == want[shape] and got.answers
        assert all(w.end in got.answers for ws in got.walks for w in ws)  # evidence reaches the answers
    cond = execute(other, plans["order"])
    assert cond.condition_triples and all(t.relation == "published_in" for t in cond.condition_triples)


def test_focus_text_masks_one_anchor_and_marks_the_other():
    q = "which books written by [Ilse Varga] and set in [Vessmoor]"
    assert focus_text(q, ["Ilse Varga", "Vessmoor"], 0) == "which books written by [E] and set in <e>"
    assert focus_text(q, ["Ilse Varga", "Vessmoor"], 1) == "which books written by <e> and set in [E]"
    assert focus_text("books by Ilse Varga set in Vessmoor", ["Ilse Varga", "Vessmoor"], 1) == "books by <e> set in [E]"


def test_question_files_carry_plans_and_name_bad_ones(tmp_path):
    from rra.data.qa_files import load_qa_file

    good = tmp_path / "q.jsonl"
    good.write_text(json.dumps({"question": "books by [X] set in [Y]", "topic_entities": ["x", "y"], "answers": ["b"],
                                "relation_paths": [["^written_by"], ["^set_in"]]}) + "\n"
                    + json.dumps({"question": "books by [X] after 1990", "topic_entities": ["x"], "answers": ["b"],
                                  "constraint": {"relation": "published_in", "op": ">", "value": 1990}}) + "\n")
    first, second = load_qa_file(good)
    assert first.extra["plan"]["shape"] == "conjunction" and first.extra["plan"]["anchors"] == ["x", "y"]
    assert second.extra["plan"]["constraint"] == {"relation": "published_in", "op": ">", "value": 1990}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "q", "topic_entities": ["x"], "answers": ["b"],
                               "constraint": {"relation": "published_in", "op": "~", "value": 1}}) + "\n")
    with pytest.raises(DataFormatError, match=r"bad.jsonl:1.*constraint op"):
        load_qa_file(bad)


def test_supervision_derives_each_shape_from_answers_alone(kg):
    from rra.data.plan_supervision import label_plans
    from rra.data.supervision import label_examples

    books = sorted(kg.neighbors(WRITER, "^written_by"), key=lambda b: kg.label(kg.neighbors(b, "published_in")[0]))
    conj = sorted(set(kg.neighbors("genre/poetry", "^has_genre")) & set(kg.neighbors("publisher/lamplight_press", "^published_by")))
    examples = [
        QAExample("which [poetry] books did [Lamplight Press] publish", ["genre/poetry", "publisher/lamplight_press"], conj),
        QAExample("what was the first book by [Ilse Pellinore]", [WRITER], books[:1]),
        QAExample("what books did [Ilse Pellinore] write", [WRITER], books),
    ]
    label_examples(kg, examples, cache_dir=None)
    report = label_plans(kg, examples)
    shapes = [e.extra["plan"]["shape"] for e in examples]
    assert shapes == ["conjunction", "order", "chain"] and report.shapes["chain"] == 1
    assert examples[1].extra["plan"]["constraint"] == {"relation": "published_in", "op": "argmin"}


def test_builtin_questions_of_every_shape_are_answered_by_their_plans(kg):
    from collections import Counter

    test = builtin_questions("test")
    shapes = Counter(q.extra.get("shape", "chain") for q in test)
    assert shapes == {"chain": 200, "conjunction": 50, "comparison": 50, "order": 50}
    for q in test:
        if "plan" in q.extra:
            assert set(execute(kg, QueryPlan.from_dict(q.extra["plan"])).answers) == set(q.answers)
            assert q.question.count("[") == len(q.extra["plan"]["anchors"])
    train_plans = {(tuple(q.topic_entities), str(q.extra["plan"])) for q in builtin_questions("train") if "plan" in q.extra}
    assert not train_plans & {(tuple(q.topic_entities), str(q.extra["plan"])) for q in test if "plan" in q.extra}


def test_metrics_report_each_shape():
    from rra.eval.metrics import compute_metrics

    def pred(shape, hit):
        return {"answers": ["a" if hit else "z"], "gold_answers": ["a"], "extra": {"gold_shape": shape}}

    m = compute_metrics([pred("chain", True), pred("chain", False), pred("order", True)])
    assert m["by_shape"]["chain"] == {"n": 2, "hits@1": 50.0, "f1": 50.0} and m["by_shape"]["order"]["hits@1"] == 100
    assert "by_shape" not in compute_metrics([pred("chain", True)])  # one shape: nothing extra


def test_plan_heads_train_only_on_data_beyond_chains():
    import torch

    from rra.models.encoder import TINY_CONFIG
    from rra.models.retriever import Retriever

    rels = ["published_in", "written_by", "^published_in", "^written_by"]
    chain = Retriever(rels, max_hops=2, encoder_config=TINY_CONFIG, pretrained=False)
    assert chain.plan_head is None and chain.predict_plan(["who wrote [X]"]) is None
    model = Retriever(rels, max_hops=2, encoder_config=TINY_CONFIG, pretrained=False, plan_heads=True)
    batch = {"question": ["who wrote [X]", "books by [E] and [E]", "first book by [X]"],
             "path": [["written_by"], None, ["^written_by"]],
             "plan": [{"anchors": 1, "condition": "none", "attribute": None},
                      {"anchors": 2, "condition": "none", "attribute": None},
                      {"anchors": 1, "condition": "argmin", "attribute": "published_in"}]}
    out = model.model_step(batch)
    assert torch.isfinite(out["loss"]) and out["plan_correct"].shape == (3,) and len(out["paths"]) == 2
    reading = model.predict_plan(["first book by [X]"])[0]
    assert reading.n_anchors in (1, 2) and reading.conditions[0][0] in ("none", ">", ">=", "<", "<=", "=", "argmax", "argmin")

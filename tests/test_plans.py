"""Query plans: literal values, execution of every shape on every backend, the data contract,
candidate plans built from the graph, KG-derived positives and negatives, the built-in questions of
each shape, the plan ranker and the metrics by shape."""
from __future__ import annotations

import json

import pytest

from rra.data.builtin import builtin_questions, load_builtin_graph
from rra.data.records import DataFormatError, QAExample
from rra.plans.candidates import answers_match, enumerate_plans
from rra.plans.execution import apply_condition, execute
from rra.plans.plan import Constraint, QueryPlan, Via, focus_text, literal_value, question_literals
from rra.plans.reads import Chain, PlanLimits

WRITER, CITY = "person/ilse_pellinore", "city/vessmoor"
RANGED = "person/marit_lindgrave"  # books of 1976, 1977, 1987, 1992


@pytest.fixture(scope="module")
def kg():
    return load_builtin_graph()


def years_of(kg, books):
    return {b: int(kg.label(kg.neighbors(b, "published_in")[0])) for b in books}


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
    with pytest.raises(ValueError, match="at most one order"):
        QueryPlan(["x"], [["r"]], [Constraint("a", "argmax"), Constraint("b", "argmin")])
    with pytest.raises(ValueError, match="via.step"):
        QueryPlan(["x"], [["r"]], via=Via(1, "s", "y"))


@pytest.mark.parametrize("backend", ["networkx", "oxigraph"])
def test_every_shape_executes_alike_on_every_backend(backend, kg):
    other = load_builtin_graph(backend)
    books = set(kg.neighbors(WRITER, "^written_by"))
    years = years_of(kg, books)
    lo, hi = sorted(years.values())[0], sorted(years.values())[-1]
    poetry_lamplight = set(kg.neighbors("genre/poetry", "^has_genre")) & set(kg.neighbors("publisher/lamplight_press",
                                                                                            "^published_by"))
    a_book = sorted(books)[0]
    genre = kg.neighbors(a_book, "has_genre")[0]
    plans = {
        "conjunction": (QueryPlan(["genre/poetry", "publisher/lamplight_press"], [["^has_genre"], ["^published_by"]]),
                        sorted(poetry_lamplight)),
        "comparison": (QueryPlan([WRITER], [["^written_by"]], Constraint("published_in", ">", lo)),
                       sorted(b for b in books if years[b] > lo)),
        "two_conditions": (QueryPlan([WRITER], [["^written_by"]], [Constraint("published_in", ">=", lo),
                                                                  Constraint("published_in", "<", hi)]),
                           sorted(b for b in books if lo <= years[b] < hi)),
        "order": (QueryPlan([WRITER], [["^written_by"]], Constraint("published_in", "argmin")),
                  sorted(b for b in books if years[b] == lo)),
        "intermediate": (QueryPlan([WRITER], [["^written_by", "set_in"]], via=Via(1, "has_genre", genre)),
                         sorted({c for b in books if genre in kg.neighbors(b, "has_genre") for c in kg.neighbors(b, "set_in")})),
        "count": (QueryPlan([WRITER], [["^written_by"]], aggregate="count"), [str(len(books))]),
        "yes_no": (QueryPlan([WRITER], [["^written_by"]], aggregate="ask", ask=a_book), ["yes"]),
    }
    for shape, (plan, want) in plans.items():
        got = execute(other, plan)
        assert plan.shape == shape and got.answers == want and got.answers, shape
        assert all(w.end in got.nodes for ws in got.walks for w in ws)  # evidence reaches the results
        assert QueryPlan.from_dict(json.loads(json.dumps(plan.to_dict()))) == plan
    assert execute(other, QueryPlan([WRITER], [["^written_by"]], aggregate="ask", ask="book/none")).answers == ["no"]
    cond = execute(other, plans["order"][0])
    assert cond.condition_triples and all(t.relation == "published_in" for t in cond.condition_triples)
    via = execute(other, plans["intermediate"][0])
    assert via.via_triples and all(t.relation == "has_genre" and t.tail == genre for t in via.via_triples)


def test_focus_text_masks_one_anchor_and_marks_the_other():
    q = "which books written by [Ilse Varga] and set in [Vessmoor]"
    assert focus_text(q, ["Ilse Varga", "Vessmoor"], 0) == "which books written by [E] and set in <e>"
    assert focus_text(q, ["Ilse Varga", "Vessmoor"], 1) == "which books written by <e> and set in [E]"
    # the anchors' order is not the text's: the span spelling the mention is the focus
    assert focus_text(q, ["Vessmoor", "Ilse Varga"], 0) == "which books written by <e> and set in [E]"
    assert focus_text("books by Ilse Varga set in Vessmoor", ["Ilse Varga", "Vessmoor"], 1) == "books by <e> set in [E]"


def test_question_files_carry_plans_and_name_bad_ones(tmp_path):
    from rra.data.qa_files import load_qa_file

    rows = [
        {"question": "books by [X] set in [Y]", "topic_entities": ["x", "y"], "answers": ["b"],
         "relation_paths": [["^written_by"], ["^set_in"]], "shape": "two_anchors"},
        {"question": "books by [X] after 1990", "topic_entities": ["x"], "answers": ["b"],
         "constraint": {"relation": "published_in", "op": ">", "value": 1990}},
        {"question": "books by [X] from 1990 to 2000", "topic_entities": ["x"], "answers": ["b"], "relation_path": ["^w"],
         "constraint": [{"relation": "p", "op": ">=", "value": 1990}, {"relation": "p", "op": "<=", "value": 2000}]},
        {"question": "how many books did [X] write", "topic_entities": ["x"], "answers": ["3"],
         "relation_path": ["^w"], "aggregate": "count"},
        {"question": "did [X] write [B]", "topic_entities": ["x", "b"], "answers": ["yes"],
         "relation_path": ["^w"], "aggregate": "ask"},
        {"question": "where is [X]'s [poetry] book set", "topic_entities": ["x", "g"], "answers": ["c"],
         "plan": {"anchors": ["x"], "paths": [["^w", "set_in"]], "via": {"step": 1, "relation": "has_genre", "entity": "g"}}},
    ]
    good = tmp_path / "q.jsonl"
    good.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = load_qa_file(good)
    assert [q.extra["plan"].get("shape") for q in got] == ["conjunction", None, "two_conditions", "count", "yes_no",
                                                           "intermediate"]
    assert got[0].extra["shape"] == "two_anchors" and got[0].extra["plan"]["anchors"] == ["x", "y"]
    assert got[1].extra["plan"]["constraint"] == {"relation": "published_in", "op": ">", "value": 1990}
    assert got[4].extra["plan"]["ask"] == "b" and got[4].extra["plan"]["anchors"] == ["x"]
    assert got[5].extra["plan"]["via"] == {"step": 1, "relation": "has_genre", "entity": "g"}
    for row, message in [({"constraint": {"relation": "p", "op": "~", "value": 1}}, "constraint op"),
                         ({"relation_path": ["^w"], "aggregate": "sum"}, "aggregate must be"),
                         ({"relation_path": ["^w"], "aggregate": "ask"}, "asks about"),
                         ({"plan": {"anchors": ["x"], "paths": [["r"]], "via": {"step": 1}}}, "via must be")]:
        bad = tmp_path / "bad.jsonl"
        bad.write_text(json.dumps({"question": "q", "topic_entities": ["x"], "answers": ["b"], **row}) + "\n")
        with pytest.raises(DataFormatError, match=rf"bad.jsonl:1.*{message}"):
            load_qa_file(bad)


def test_candidates_hold_every_shape_and_stay_within_bounds(kg):
    """Given each built-in test question's gold chains (a perfect path predictor), its gold plan's
    answers are among the candidates' for every shape; a hub stays within max_plans."""
    seen = {}
    for q in builtin_questions("test"):
        plan = QueryPlan.from_dict(q.extra["plan"]) if "plan" in q.extra else None
        if plan is None or q.extra["shape"] in seen:
            continue
        mentions = [kg.label(t) for t in q.topic_entities]
        chains = [Chain(a, tuple(p), 0.9) for a, p in zip(plan.anchors, plan.paths)]
        found = enumerate_plans(kg, chains, question_literals(q.question, mentions), q.topic_entities)
        assert any(answers_match(c.answers, q.answers) for c in found), q.question
        seen[q.extra["shape"]] = len(found)
    assert len(seen) == 9
    hub = [Chain("genre/poetry", ("^has_genre",), 0.9), Chain("language/calderran", ("^written_in",), 0.8),
           Chain(WRITER, ("^written_by",), 0.7)]
    assert len(enumerate_plans(kg, hub, ["1950", "2000"], [], PlanLimits(max_plans=25))) == 25


def _batch_of_questions(kg, n: int) -> list[tuple[list[Chain], list[str], list[str]]]:
    """(chains, literals, named) of the first `n` built-in test questions with a plan: the gold
    chains plus a wrong one of each anchor, as a path predictor would give them."""
    out = []
    for q in builtin_questions("test"):
        if "plan" not in q.extra or len(out) >= n:
            continue
        plan = QueryPlan.from_dict(q.extra["plan"])
        chains = [Chain(a, tuple(p), 0.9) for a, p in zip(plan.anchors, plan.paths)]
        chains += [Chain(a, (r,), 0.1) for a in plan.anchors for r in kg.relations(a)[:2]]
        out.append((chains, question_literals(q.question, [kg.label(t) for t in q.topic_entities]), q.topic_entities))
    return out


def test_a_batch_read_together_gives_each_question_the_plans_it_gets_alone(kg):
    """PlanReads.prefetch reads a batch's walks, classes, attributes and neighbourhoods together:
    on a SPARQL store the batch costs a few requests per hop and kind of read, not per question,
    and every question gets exactly the candidates (plans, answers, kinds) it gets alone."""
    from rra.plans.reads import PlanReads

    store = load_builtin_graph("oxigraph")
    batch = _batch_of_questions(kg, 24)
    alone = [enumerate_plans(store, cs, lits, named) for cs, lits, named in batch]
    costs = {}
    for n in (6, 24):
        before = store.requests
        reads = PlanReads(store)
        reads.prefetch([(cs, named) for cs, _, named in batch[:n]])
        together = [enumerate_plans(store, cs, lits, named, reads=reads) for cs, lits, named in batch[:n]]
        costs[n] = store.requests - before
        assert [[(c.plan.key(), c.answers, c.kind) for c in found] for found in together] == \
               [[(c.plan.key(), c.answers, c.kind) for c in found] for found in alone[:n]]
    before = store.requests
    for cs, lits, named in batch:
        enumerate_plans(store, cs, lits, named)
    assert costs[24] < 1.5 * costs[6] and costs[24] * 4 < store.requests - before, costs


def test_a_range_is_offered_with_every_operator_that_keeps_its_entities(kg):
    """No book of RANGED came out in 1980 or 1990, so `> 1980 < 1990` and `>= 1980 <= 1990` keep the
    same book: both are candidates ("between" reads the second, "after ... but before" the first)."""
    found = enumerate_plans(kg, [Chain(RANGED, ("^written_by",), 0.9)], ["1980", "1990"], [RANGED])
    ranges = {tuple(c.op for c in p.plan.comparisons) for p in found if len(p.plan.comparisons) == 2}
    assert ranges == {(">", "<"), (">", "<="), (">=", "<"), (">=", "<=")}
    assert len({frozenset(p.answers) for p in found if len(p.plan.comparisons) == 2}) == 1


def test_supervision_explains_each_shape_from_answers_alone(kg):
    from rra.data.plan_supervision import label_plans
    from rra.data.supervision import label_examples

    books = sorted(kg.neighbors(WRITER, "^written_by"), key=lambda b: years_of(kg, [b])[b])
    years = years_of(kg, books)
    conj = sorted(set(kg.neighbors("genre/poetry", "^has_genre")) & set(kg.neighbors("publisher/lamplight_press",
                                                                                      "^published_by")))
    examples = [
        QAExample("which [poetry] books did [Lamplight Press] publish", ["genre/poetry", "publisher/lamplight_press"], conj),
        QAExample("what was the first book by [Ilse Pellinore]", [WRITER], books[:1]),
        QAExample("what books did [Ilse Pellinore] write", [WRITER], books),
        QAExample("how many books did [Ilse Pellinore] write", [WRITER], [str(len(books))]),
        QAExample("did [Ilse Pellinore] write [X]", [WRITER, books[0]], ["yes"]),
        QAExample("books by [Marit Lindgrave] from 1977 to 1990", [RANGED], sorted(
            b for b, y in years_of(kg, kg.neighbors(RANGED, "^written_by")).items() if 1977 <= y <= 1990)),
    ]
    label_examples(kg, examples, cache_dir=None)
    report = label_plans(kg, examples)
    assert report.ranked == len(examples)
    labels = [e.extra["plan"] for e in examples]
    assert [p["shape"] for p in labels[:5]] == ["conjunction", "order", "chain", "count", "yes_no"]
    assert labels[1]["constraint"] == {"relation": "published_in", "op": "argmin"}
    assert labels[3]["paths"] == [["^written_by"]] and labels[4]["ask"] == books[0]
    assert labels[5]["shape"] == "two_conditions" and len(examples[5].answers) == 2
    for e in examples:  # every positive explains the answers, no negative does
        cands = e.extra["plan_candidates"]
        assert cands["negative"] and all(set(execute(kg, QueryPlan.from_dict(p)).answers) == set(e.answers)
                                         for p in cands["positive"])
        assert not any(set(execute(kg, QueryPlan.from_dict(p)).answers) == set(e.answers) for p in cands["negative"])
    assert examples[3].relation_path == ["^written_by"]  # the count's chain trains the path predictor


def test_builtin_questions_of_every_shape_are_answered_by_their_plans(kg):
    from collections import Counter

    from rra.data.builtin import NEW_SHAPE_SIZES, PLAN_SPLIT_SIZES

    test = builtin_questions("test")
    shapes = Counter(q.extra.get("shape", "chain") for q in test)
    assert shapes["chain"] == 200 and all(shapes[s] == PLAN_SPLIT_SIZES["test"] for s in ("conjunction", "order"))
    assert all(shapes[s] == NEW_SHAPE_SIZES["test"] for s in ("three_anchors", "two_conditions", "anchors_condition",
                                                               "intermediate", "count", "yes_no"))
    for q in test:
        if "plan" in q.extra:
            assert execute(kg, QueryPlan.from_dict(q.extra["plan"])).answers == sorted(q.answers) or \
                q.extra["shape"] in ("count", "yes_no") and execute(kg, QueryPlan.from_dict(q.extra["plan"])).answers == q.answers
            assert q.question.count("[") == len(q.topic_entities)
    yes_no = Counter(q.answers[0] for q in test if q.extra.get("shape") == "yes_no")
    assert set(yes_no) == {"yes", "no"} and abs(yes_no["yes"] - yes_no["no"]) <= 4  # drawn alternately, then split
    train_plans = {str(q.extra["plan"]) for q in builtin_questions("train") if "plan" in q.extra}
    assert not train_plans & {str(q.extra["plan"]) for q in test if "plan" in q.extra}


def test_metrics_report_each_shape_and_the_plan_chosen():
    from rra.eval.metrics import compute_metrics

    def pred(shape, hit, kind=None, gold="a"):
        extra = {"gold_shape": shape, **({"plan_kind": kind} if kind else {})}
        return {"answers": [gold if hit else "z"], "gold_answers": [gold], "extra": extra}

    m = compute_metrics([pred("chain", True), pred("chain", False), pred("order", True)])
    assert m["by_shape"]["chain"] == {"n": 2, "hits@1": 50.0, "f1": 50.0} and m["by_shape"]["order"]["hits@1"] == 100
    assert "by_shape" not in compute_metrics([pred("chain", True)])  # one shape: nothing extra
    m = compute_metrics([pred("count", True, "count", gold="3"), pred("count", False, "chain", gold="3"),
                         pred("yes_no", True, "yes_no", gold="yes")])
    assert m["by_shape"]["count"]["hits@1"] == 50 and m["by_shape"]["count"]["predicted"] == {"count": 1, "chain": 1}
    assert m["by_plan_kind"]["yes_no"] == {"n": 1, "hits@1": 100.0, "f1": 100.0}


def test_the_plan_ranker_trains_only_on_data_beyond_chains():
    import torch

    from rra.models.encoder import TINY_CONFIG
    from rra.models.retriever import Retriever

    rels = ["published_in", "written_by", "^published_in", "^written_by"]
    chain = Retriever(rels, max_hops=2, encoder_config=TINY_CONFIG, pretrained=False)
    assert chain.ranker is None and chain.rank_plans(["who wrote [E]"], [["[E] written by"]]) is None
    model = Retriever(rels, max_hops=2, encoder_config=TINY_CONFIG, pretrained=False, plan_ranker=True)
    rank = {"positive": ["how many: [E] written by (reverse)"], "negative": ["[E] written by (reverse)"],
            "parts": {"how many: [E] written by (reverse)": ["how many, the number of"]}, "weight": 3}
    batch = {"question": ["who wrote [X]", "how many books did [E] write", "first book by [X]"],
             "path": [["written_by"], None, ["^written_by"]], "ranking": [None, rank, None],
             "candidates": [[["written_by", "published_in"]], None, [["^written_by", "^published_in"]]],
             "texts": {}}
    out = model.model_step(batch)
    assert torch.isfinite(out["loss"]) and out["plan_correct"].shape == (1,) and len(out["paths"]) == 2
    out["loss"].backward()
    assert model.ranker.log_scale.grad is not None and model.ranker.part_weight.grad is not None  # the ranker learns
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.encoder.parameters())
    logits = model.rank_plans(["how many books did [E] write"], [rank["positive"] + rank["negative"]],
                              [[["how many, the number of"], []]])
    assert len(logits[0]) == 2 and all(isinstance(x, float) for x in logits[0])


def test_plan_texts_read_alike_for_every_question_of_a_form(kg):
    from rra.plans.text import plan_words, ranker_text

    a = ranker_text("which books by Ilse Pellinore came out between 1990 and 2000", ["Ilse Pellinore"])
    b = ranker_text("which books by Marit Lindgrave came out between 1971 and 1985", ["Marit Lindgrave"])
    assert a[0] == b[0] == "which books by [E] came out between [N1] and [N2]"
    plan = lambda who, v, w: QueryPlan([who], [["^written_by"]], [Constraint("published_in", ">=", v),  # noqa: E731
                                                                   Constraint("published_in", "<=", w)])
    assert plan_words(plan(WRITER, 1990, 2000), slots=a[1]) == plan_words(plan("person/x", 1971, 1985), slots=b[1])
    assert "[N1]" in plan_words(plan(WRITER, 1990, 2000), slots=a[1])


def test_plan_supervision_is_cached_like_path_supervision(kg, tmp_path, monkeypatch):
    import rra.data.plan_supervision as ps
    from rra.data.supervision import label_examples

    def questions():
        dev = builtin_questions("dev")
        qs = [q for q in dev if "shape" not in q.extra][:20] + [q for q in dev if q.extra.get("shape") in ("count", "yes_no")]
        label_examples(kg, qs, cache_dir=None)
        return qs

    first = questions()
    report = ps.label_plans(kg, first, cache_dir=tmp_path)
    assert report.ranked == 40 and len(list(tmp_path.glob("plans-*.json.gz"))) == 1

    def fail(*args, **kwargs):
        raise AssertionError("derived again instead of read from the cache")

    monkeypatch.setattr(ps, "derive_candidates", fail)
    again = questions()
    assert ps.label_plans(kg, again, cache_dir=tmp_path).to_dict() == report.to_dict()
    assert [q.extra["plan"] for q in again] == [q.extra["plan"] for q in first]


def test_the_ranker_sees_which_named_entities_and_literals_a_plan_leaves_unused():
    from rra.models.plan_ranker import coverage_features, unused

    question = "papers by [E] and [E] at [E] after [N1]"
    assert unused(question, "[E] author (reverse) and [E] author (reverse)") == (1, 1)
    assert unused(question, "[E] author (reverse) and [E] author (reverse) and [E] presented at (reverse) "
                            "where publication year is more than, after [N1]") == (0, 0)
    assert coverage_features([question, "how many papers did [E] write"], ["how many: [E] author"]).tolist() == \
        [[[2.0, 1.0]], [[0.0, 0.0]]]


def test_modifiers_are_matched_word_by_word_against_the_question():
    """A plan's modifier ("published in less than, before [N1]") is scored by each of its words'
    best match among the question's words, so "before" and "after" tell two plans apart that a
    whole plan's pooled vector barely does."""
    import torch

    from rra.models.plan_ranker import PlanRanker, token_match
    from rra.plans.text import plan_parts

    unit = torch.eye(4)
    q = torch.stack([unit[0], unit[1], torch.zeros(4)])[None]  # question words: a, b, padding
    q_mask = torch.tensor([[True, True, False]])
    parts = torch.stack([torch.stack([unit[0], unit[1]]), torch.stack([unit[0], unit[2]]),
                         torch.stack([unit[2], unit[3]])])  # "a b", "a c", "c d"
    p_mask = torch.ones(3, 2, dtype=torch.bool)
    matches = token_match(q, q_mask, parts, p_mask)
    assert matches.tolist() == [[1.0, 0.5, 0.0]]
    ranker = PlanRanker(4)
    uses = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])  # plan 0: "a b", plan 1: "c d", plan 2: none
    logits = ranker.part_logits(matches, uses)
    assert logits[0, 0] > logits[0, 2] > logits[0, 1]  # a matching modifier helps, a mismatching one costs
    before = QueryPlan([WRITER], [["^written_by"]], Constraint("published_in", "<", 1990))
    attribute, operator = plan_parts(before, slots={"1990": "[N1]"})
    assert attribute == "published in" and operator.startswith("less than, before, ") and operator.endswith(" [N1]")
    first = QueryPlan([WRITER], [["^written_by"]], Constraint("published_in", "argmin"))
    assert plan_parts(first)[0] == "published in" and "the earliest" in plan_parts(first)[1].split(", ")
    assert plan_parts(QueryPlan([WRITER], [["^written_by"]], aggregate="count")) == ["how many, the number of"]
    # a count reads as its chain in the pooled vector: only its "how many" modifier tells them apart
    from rra.plans.text import plan_words, pooled_plan_text

    count, chain = QueryPlan([WRITER], [["^written_by"]], aggregate="count"), QueryPlan([WRITER], [["^written_by"]])
    assert plan_words(count) != plan_words(chain)  # the plan's key
    assert pooled_plan_text(plan_words(count)) == pooled_plan_text(plan_words(chain)) == plan_words(chain)


def test_each_condition_reads_the_words_around_its_own_literal():
    """"before [N1] with at least [N2] citations": the `<` on [N2] may not borrow the "before"
    of [N1]. A question token reads with the slots within one token of its nearest (bit masks), a
    question with one slot is read whole; a condition's operator words and slot match only the
    tokens of their slot, its attribute's name the whole question."""
    import torch

    from rra.models.encoder import tiny_encoder
    from rra.models.plan_ranker import part_marks, slot_regions, token_match
    from rra.plans.plan import Constraint, QueryPlan
    from rra.plans.text import plan_parts

    tok = tiny_encoder().tokenizer

    def marks(text, how):
        enc = tok([text], return_offsets_mapping=True)
        words = tok.convert_ids_to_tokens(enc["input_ids"][0])
        return dict(zip(words, how(text, enc["offset_mapping"][0])))

    one, two, both = 1 << 1, 1 << 2, (1 << 1) | (1 << 2)
    r = marks("papers published before [N1] with at least [N2] citations", slot_regions)
    assert (r["before"], r["with"], r["at"], r["least"], r["citations"], r["n"]) == (one, one, both, two, two, two)
    assert r["[CLS]"] == r["[SEP]"] == 0
    r = marks("papers with [N1] or more citations published before [N2]", slot_regions)
    assert (r["more"], r["citations"], r["published"], r["before"]) == (one, both, two, two)
    assert set(marks("papers by [E] after [N1]", slot_regions).values()) == {0}  # one literal: the whole question
    # on the parts plan_parts writes: the operator of a condition on [N2] reads near [N2]; its
    # attribute's name and an order (no slot) read the whole question
    plan = QueryPlan(["a"], [["author"]], [Constraint("citations", ">=", 7), Constraint("year", "argmin")])
    attribute, operator, _, order = plan_parts(plan, slots={"7": "[N2]"})
    slot = lambda text: {w: k for w, (k, _) in marks(text, part_marks).items()}  # noqa: E731
    assert set(slot(attribute).values()) == set(slot(order).values()) == {0}
    p = slot(operator)
    assert (p["at"], p["least"], p["since"], p["n"], p["[CLS]"], p["[SEP]"]) == (2, 2, 2, 2, 0, 0)
    unit = torch.eye(4)
    # question: "before" (slot 1), "least" (slot 2), "citations" (both), "year" (slot 1)
    q = torch.stack([unit[0], unit[1], unit[2], unit[3]])[None]
    q_mask = torch.ones(1, 4, dtype=torch.bool)
    q_regions = torch.tensor([[one, two, both, one]])
    parts = torch.stack([torch.stack([unit[3], unit[0]]), torch.stack([unit[3], unit[1]])])  # "year before", "year least"
    p_mask = torch.ones(2, 2, dtype=torch.bool)
    assert token_match(q, q_mask, parts, p_mask).tolist() == [[1.0, 1.0]]  # the whole question: no difference
    on_two = torch.tensor([[[0, 1], [2, 1]], [[0, 1], [2, 1]]])  # the attribute's name reads everything, the operator slot 2 only
    assert token_match(q, q_mask, parts, p_mask, q_regions, on_two).tolist() == [[0.5, 1.0]]
    # a slot the question lacks reads the whole question
    on_three = torch.tensor([[[0, 1], [3, 1]], [[0, 1], [3, 1]]])
    assert token_match(q, q_mask, parts, p_mask, q_regions, on_three).tolist() == [[1.0, 1.0]]


def test_a_yes_no_asks_only_chains_whose_results_are_like_the_entity():
    """"is Uni1 in France": the `country` chain answers it ("no"); the `^affiliation` chain ends at
    people and would answer "no" to any country, so it is no candidate."""
    from rra.graph import NetworkXGraph, Triple

    kg = NetworkXGraph([Triple("Uni1", "country", "Japan"), Triple("Uni2", "country", "France"),
                        Triple("Ana", "affiliation", "Uni1"), Triple("Ben", "affiliation", "Uni2")])
    chains = [Chain("Uni1", ("country",), 0.6), Chain("Uni1", ("^affiliation",), 0.4)]
    asks = [c for c in enumerate_plans(kg, chains, [], ["Uni1", "France"]) if c.plan.aggregate == "ask"]
    assert [(c.plan.paths, c.answers) for c in asks] == [([["country"]], ["no"])]
    asks = [c for c in enumerate_plans(kg, chains, [], ["Uni1", "Japan"]) if c.plan.aggregate == "ask"]
    assert [(c.plan.paths, c.answers) for c in asks] == [([["country"]], ["yes"])]


def test_a_chain_question_trains_against_its_path_walked_one_step_on(kg):
    """"what books did X write": the beam's likeliest confusion is the right path walked on past
    the answer (the books' cities, their years), so such paths are among the ranker's candidates."""
    import random

    from rra.data.plan_supervision import GraphIndex, training_chains
    from rra.data.supervision import SupervisionConfig

    books = sorted(kg.neighbors(WRITER, "^written_by"))
    chains = training_chains(GraphIndex(kg), QAExample("what books did [Ilse Pellinore] write", [WRITER], books),
                             [WRITER], SupervisionConfig(), random.Random(0), others=0)
    paths = [c.path for c in chains]
    assert paths[0] == ("^written_by",)
    on = [p for p in paths if len(p) == 2 and p[0] == "^written_by"]
    assert len(on) == 2 and all(c.score == 0.1 for c in chains if c.path in on)


def test_a_yes_no_asks_no_chain_whose_results_share_no_class_with_the_entity():
    """"is Conf1 held in France": a country is at the far end of `^rdf:type` too (it has a class),
    but the chain `rdf:type` / `^rdf:type` ends at conferences, which share no class with a country.
    `hostCity` / `inCountry` ends at countries and is asked."""
    from rra.graph import NetworkXGraph, Triple

    facts = [Triple("Conf1", "hostCity", "Lyon"), Triple("Lyon", "inCountry", "Spain"),
             Triple("Conf2", "hostCity", "Nice"), Triple("Nice", "inCountry", "France")]
    kg = NetworkXGraph(facts + [Triple(e, "rdf:type", c) for e, c in (
        ("Conf1", "Conference"), ("Conf2", "Conference"), ("Spain", "Country"), ("France", "Country"),
        ("Lyon", "City"), ("Nice", "City"))])
    chains = [Chain("Conf1", ("hostCity", "inCountry"), 0.6), Chain("Conf1", ("rdf:type", "^rdf:type"), 0.4)]
    asks = [c for c in enumerate_plans(kg, chains, [], ["Conf1", "France"]) if c.plan.aggregate == "ask"]
    assert [(c.plan.paths, c.answers) for c in asks] == [([["hostCity", "inCountry"]], ["no"])]
    untyped = NetworkXGraph(facts + [Triple("France", "rdf:type", "Country")])
    asks = [c for c in enumerate_plans(untyped, chains[:1], [], ["Conf1", "France"]) if c.plan.aggregate == "ask"]
    assert [c.answers for c in asks] == [["no"]]  # results without classes: the range test alone


def test_a_no_is_explained_by_the_chains_that_could_hold_the_entity_not_by_any_chain():
    """"is Uni2 Ana's employer" -> no. Every chain from Ana answers "no" about Uni2, but only those
    ending at institutions ask it: `affiliation` and `almaMater` are positives, `birthPlace` (a city)
    and `^advisor` (people) are not; for a "yes", `almaMater` is a negative."""
    from rra.data.plan_supervision import label_plans
    from rra.graph import NetworkXGraph, Triple

    kg = NetworkXGraph([Triple("Ana", "affiliation", "Uni1"), Triple("Ana", "almaMater", "Uni3"),
                        Triple("Ana", "birthPlace", "Oslo"), Triple("Ben", "advisor", "Ana"),
                        Triple("Ben", "affiliation", "Uni2"), Triple("Cy", "almaMater", "Uni2"),
                        Triple("Dan", "almaMater", "Uni1"),
                        Triple("Uni1", "locatedIn", "Oslo"), Triple("Uni2", "locatedIn", "Rome"),
                        *(Triple(e, "rdf:type", c) for e, c in (("Ana", "Person"), ("Ben", "Person"), ("Cy", "Person"), ("Dan", "Person"),
                                                                 ("Uni1", "Institution"), ("Uni2", "Institution"),
                                                                 ("Uni3", "Institution"), ("Oslo", "City"),
                                                                 ("Rome", "City")))])
    no = QAExample("is Uni2 Ana's employer", ["Ana", "Uni2"], ["no"])
    yes = QAExample("is Uni1 Ana's employer", ["Ana", "Uni1"], ["yes"])
    label_plans(kg, [no, yes])
    positives = {(p["anchors"][0], tuple(map(tuple, p["paths"]))) for p in no.extra["plan_candidates"]["positive"]}
    assert {("Ana", (("affiliation",),)), ("Ana", (("almaMater",),))} <= positives
    assert not any(paths[0][-1] in ("birthPlace", "^advisor", "rdf:type") for _, paths in positives)
    assert all(execute(kg, QueryPlan.from_dict(p)).answers == ["no"] for p in no.extra["plan_candidates"]["positive"])
    negatives = [p["paths"] for p in yes.extra["plan_candidates"]["negative"] if p.get("aggregate") == "ask"]
    assert [["almaMater"]] in negatives or [["^almaMater"]] in negatives
    assert no.extra["plan"]["paths"] == [["affiliation"]] == yes.extra["plan"]["paths"]  # one label for the wording


def test_no_count_of_a_chain_that_ends_in_quantities():
    """"what is the citation count of P": the chain ends in a typed number, asked for its value; a
    count of it (1) is no candidate. Chains ending in entities, or in strings, keep their count."""
    from rra.graph import NetworkXGraph, Triple
    from rra.graph.rdf import XSD, literal_id

    kg = NetworkXGraph([Triple("P", "citationCount", literal_id("12", XSD + "integer")),
                        Triple("P", "author", "Ana"), Triple("P", "author", "Ben"),
                        Triple("P", "keyword", literal_id("graphs", None, "en"))])
    chains = [Chain("P", ("citationCount",), 0.5), Chain("P", ("author",), 0.3), Chain("P", ("keyword",), 0.2)]
    counts = {c.plan.paths[0][0]: c.answers for c in enumerate_plans(kg, chains, [], ["P"]) if c.plan.aggregate == "count"}
    assert counts == {"author": ["2"], "keyword": ["1"]}


def test_an_operator_is_read_by_its_best_matching_phrasing():
    """"an h-index above [N1]": `>` lists "above" among its phrasings; the part scores by its best
    alternative's mean, so the other phrasings, the commas and the slot's tokens dilute nothing."""
    import torch

    from rra.models.encoder import tiny_encoder
    from rra.models.plan_ranker import part_marks, token_match
    from rra.plans.text import plan_parts

    tok = tiny_encoder().tokenizer
    _, operator = plan_parts(QueryPlan(["i"], [["^staff"]], Constraint("h_index", ">", 4)), slots={"4": "[N1]"})
    enc = tok([operator], return_offsets_mapping=True)
    words = tok.convert_ids_to_tokens(enc["input_ids"][0])
    got = list(zip(words, part_marks(operator, enc["offset_mapping"][0])))
    assert got[1:5] == [("more", (1, 1)), ("than", (1, 1)), (",", (1, 0)), ("after", (1, 2))]
    assert dict(got)["above"] == (1, 4) and dict(got)["n"] == (1, 0) and got[0] == ("[CLS]", (0, 0))
    assert {alt for _, (_, alt) in got} == set(range(len(operator.split(", ")) + 1))

    unit = torch.eye(4)
    q = torch.stack([unit[0], unit[1]])[None]  # question words: "above", [N1]
    q_mask = torch.ones(1, 2, dtype=torch.bool)
    # part tokens: "more" "than" (alternative 1), "above" (2), the slot (0)
    part = torch.stack([unit[2], unit[3], unit[0], unit[1]])[None]
    p_mask = torch.ones(1, 4, dtype=torch.bool)
    marks = torch.tensor([[[1, 1], [1, 1], [1, 2], [1, 0]]])
    assert token_match(q, q_mask, part, p_mask, None, marks).tolist() == [[1.0]]
    assert token_match(q, q_mask, part, p_mask).tolist() == [[0.5]]  # one mean over every token
    unmarked = torch.zeros(1, 4, 2, dtype=torch.long)  # a tokenizer without offsets: one alternative
    assert token_match(q, q_mask, part, p_mask, None, unmarked).tolist() == [[0.5]]


def _institutions_kg():
    from rra.graph import NetworkXGraph, Triple
    from rra.graph.rdf import XSD, literal_id

    facts = [Triple("Acme", "headquarters", "Oslo"), Triple("Uni1", "locatedIn", "Oslo"),
             Triple("Uni2", "locatedIn", "Oslo"), Triple("Acme", "founded", literal_id("1990", XSD + "gYear")),
             Triple("P1", "year", literal_id("1990", XSD + "gYear")), Triple("P2", "year", literal_id("1990", XSD + "gYear"))]
    types = [Triple(e, "rdf:type", c) for e, c in (("Acme", "Company"), ("Oslo", "City"), ("Uni1", "University"),
                                                     ("Uni2", "University"), ("P1", "ScholarlyArticle"),
                                                     ("P2", "ScholarlyArticle"))]
    return NetworkXGraph(facts + types, labels={"Oslo": "Oslo", "City": "City"})


def test_each_candidate_says_what_its_results_are():
    """"in which city is Acme based": `headquarters` ends at a city, walking on (`^locatedIn`) at
    universities, which the ranker could not tell apart by their relations' words alone. A class's
    label names it where the graph has one, else its id in words; typed values by their kind; a
    modifier or a yes/no has its base plan's kind; a graph without classes says nothing."""
    from rra.graph import NetworkXGraph, Triple

    kg = _institutions_kg()
    chains = [Chain("Acme", ("headquarters",), 0.5), Chain("Acme", ("headquarters", "^locatedIn"), 0.3),
              Chain("Acme", ("founded",), 0.1), Chain("Acme", ("founded", "^year"), 0.1)]
    found = enumerate_plans(kg, chains, [], ["Acme", "Oslo"])
    kinds = {(tuple(c.plan.paths[0]), c.plan.aggregate): c.kind for c in found}
    assert kinds[(("headquarters",), None)] == "city"
    assert kinds[(("headquarters", "^locatedIn"), None)] == "university"
    assert kinds[(("founded",), None)] == "year"
    assert kinds[(("founded", "^year"), None)] == "scholarly article"
    assert kinds[(("headquarters", "^locatedIn"), "count")] == "university"
    assert kinds[(("headquarters",), "ask")] == "city"
    bare = NetworkXGraph([Triple("Acme", "headquarters", "Oslo"), Triple("Uni1", "locatedIn", "Oslo")])
    assert {c.kind for c in enumerate_plans(bare, chains[:2], [], ["Acme"])} == {None}


def test_the_ranker_reads_what_a_plan_returns_where_it_was_trained_to():
    """The kind is in the plan's text (what the pooled vector reads); supervision keeps it with each candidate, the data module writes it into the ranker's
    items, and a checkpoint trained before (no `plan_reads_kinds`) reads plans as it did."""
    from rra.data.plan_supervision import label_plans
    from rra.plans.text import plan_parts, plan_words

    plan = QueryPlan(["Acme"], [["headquarters"]])
    assert plan_words(plan, kind="city") == "[E] headquarters giving city"
    assert plan_parts(plan) == []  # read in the pooled text, not matched word by word
    assert plan_words(QueryPlan(["Acme"], [["headquarters"]], aggregate="count"), kind="city").endswith("giving city")
    kg = _institutions_kg()
    ex = QAExample("in which city is Acme based", ["Acme"], ["Oslo"])
    other = QAExample("how many universities are in the city where Acme is based", ["Acme"], ["2"])
    label_plans(kg, [ex, other])
    cands = ex.extra["plan_candidates"]
    assert {p["kind"] for p in cands["positive"]} == {"city"}
    assert any(p.get("kind") == "university" for p in cands["negative"])


def test_a_date_against_a_year_compares_by_its_year():
    """"papers published after 1999" keeps no paper of 1999-07-02, "until 1999" keeps it, "in
    1999" is the whole year (as rra.graph.literals.compare reads a date against a bare year); a
    date written as a date compares by the day. Before, a date was its fractional year against
    1999.0: "after 1999" kept 1999-07-02 and "in 1999" only 1 January."""
    from rra.graph import NetworkXGraph, Triple
    from rra.graph.rdf import XSD, literal_id

    dates = {"P1": "1999-07-02", "P2": "2000-03-01", "P3": "1998-12-31"}
    kg = NetworkXGraph([Triple("Ana", "wrote", p) for p in dates] +
                       [Triple(p, "published", literal_id(d, XSD + "date")) for p, d in dates.items()])

    def kept(op, value):
        return set(execute(kg, QueryPlan(["Ana"], [["wrote"]], [Constraint("published", op, value)])).answers)

    assert kept(">", 1999) == {"P2"} and kept(">=", 1999) == {"P1", "P2"}
    assert kept("<", 1999) == {"P3"} and kept("<=", 1999) == {"P1", "P3"} and kept("=", 1999) == {"P1"}
    assert kept(">", "1999-07-01") == {"P1", "P2"} and kept("<", "1999-07-02") == {"P3"}


def test_the_supervision_index_reads_neighbours_as_the_graph_does():
    """GraphIndex (the KG read once for plan supervision) answers neighbors_batch as the graph does,
    sorted, from tuples it keeps for the next question (read-only: a caller cannot change them)."""
    from rra.data.plan_supervision import GraphIndex

    kg = load_builtin_graph()
    index = GraphIndex(kg)
    books = sorted(kg.neighbors_batch(["genre/literary_fiction"], "^has_genre")["genre/literary_fiction"])[:5]
    for relation in ("written_by", "^written_by", "has_genre", "^has_genre", "set_in"):
        entities = books + ["genre/literary_fiction", "city/sarrabel", "no/such_entity"]
        want = {e: sorted(v) for e, v in kg.neighbors_batch(entities, relation).items() if v}
        for _ in range(2):  # the second read comes from what the first kept
            got = index.neighbors_batch(entities, relation)
            assert {e: list(v) for e, v in got.items()} == want, relation
            assert all(isinstance(v, tuple) for v in got.values())


def test_apply_condition_keeps_what_compare_keeps_for_every_operator_and_literal():
    """apply_condition (a test built once per literal, what deriving plans runs millions of times)
    keeps exactly the entities `compare` keeps: dates against a bare year by their year, numbers as
    they are, with several values per entity."""
    import itertools

    from rra.plans.execution import compare
    from rra.plans.plan import COMPARISONS

    values = {"d1": [literal_value("1999-07-02")], "d2": [literal_value("2000-01-01"), literal_value("1998-12-31")],
              "n1": [1999.0], "n2": [1999.5, 12.0], "n3": [-3.0], "none": []}
    for op, lit in itertools.product(COMPARISONS, [1999, 1999.0, 1999.5, 12, -3, literal_value("1999-07-02")]):
        want = {e for e, v in values.items() if any(compare(x, op, lit) for x in v)}
        assert apply_condition(values, op, lit) == want, (op, lit)
    assert apply_condition(values, ">", 1999) == {"d2", "n2"}  # 1999-07-02 is in 1999, not after it
    assert literal_value("1999-07-02") is literal_value(" 1999-07-02 ")  # parsed once per text (cached)


def test_operators_are_left_to_the_word_match_not_the_pooled_vector():
    """With `pooled_operators=False` (model.pooled_operators, an option) plans that differ only
    in a condition's operator or an order's direction pool to one vector, so only their modifiers
    (matched word by word) tell them apart; a checkpoint without the setting reads them as before."""
    from rra.models.encoder import TINY_CONFIG
    from rra.models.retriever import Retriever
    from rra.plans.text import plan_words, pooled_plan_text

    texts = [plan_words(QueryPlan(["a"], [["affiliation"]], [Constraint("hIndex", op, 5)]), slots={"5": "[N1]"})
             for op in (">", "<=")] + \
            [plan_words(QueryPlan(["a"], [["affiliation"]], [Constraint("hIndex", op)])) for op in ("argmax", "argmin")]
    assert len({pooled_plan_text(t, operators=False) for t in texts[:2]}) == 1
    assert len({pooled_plan_text(t, operators=False) for t in texts[2:]}) == 1
    assert len({pooled_plan_text(t) for t in texts}) == 4
    new = Retriever(["affiliation"], encoder_config=TINY_CONFIG, pretrained=False, plan_ranker=True, pooled_operators=False)
    old = Retriever(["affiliation"], encoder_config=TINY_CONFIG, pretrained=False, plan_ranker=True)
    q = ["people at [E] whose h index exceeds [N1]"]
    same = new.rank_plans(q, [texts[:2]])[0]
    assert same[0] == pytest.approx(same[1])
    differ = old.rank_plans(q, [texts[:2]])[0]
    assert differ[0] != pytest.approx(differ[1])


def test_an_operator_written_beside_its_literal_is_read_exactly():
    """"publish up to [N1]": the token match alone read it as `>=` (at least, since, ...); the
    phrasing written right beside the literal ("up to", "[N1] or earlier") adds a learnt logit per
    word (phrase_hits), a phrasing at a mark ([E], another literal) counts for none, and a
    checkpoint from before the setting has no such weight and scores as it did."""
    import torch

    from rra.models.encoder import TINY_CONFIG
    from rra.models.plan_ranker import phrase_hits
    from rra.models.retriever import Retriever
    from rra.plans.text import plan_parts, plan_words

    def part(op, slot="[N1]"):
        return plan_parts(QueryPlan(["a"], [["^author"]], [Constraint("year", op, 5)]), slots={"5": slot})[1]

    hits = lambda q: {op: phrase_hits(q, part(op)) for op in (">", ">=", "<", "<=", "=")}  # noqa: E731
    assert hits("what did [E] publish up to [N1]?") == {">": 0, ">=": 0, "<": 0, "<=": 2, "=": 0}
    assert hits("[E]'s papers from [N1] or earlier")["<="] == 2
    assert hits("papers by [E] in [N1] or later") == {">": 0, ">=": 2, "<": 0, "<=": 0, "=": 1}
    assert hits("published in journals after [N1]") == {">": 1, ">=": 0, "<": 0, "<=": 0, "=": pytest.approx(1 / 3)}
    assert hits("[N1] citations or more")[">="] == 1  # two words, one between
    assert hits("in [E] after [N1]")["="] == 0  # the mark stands between
    assert phrase_hits("before [N1] with at least [N2] citations", part(">=")) == 0  # [N2]'s, not [N1]'s
    assert phrase_hits("before [N1] with at least [N2] citations", part(">=", "[N2]")) == 2
    assert phrase_hits("what did [E] publish up to [N1]?", "publication year") == 0  # no slot: not an operator

    texts = [plan_words(QueryPlan(["a"], [["^author"]], [Constraint("year", op, 5)]), slots={"5": "[N1]"})
             for op in ("<=", ">=")]
    parts = [[plan_parts(QueryPlan(["a"], [["^author"]], [Constraint("year", op, 5)]), slots={"5": "[N1]"})
              for op in ("<=", ">=")]]
    torch.manual_seed(0)
    new = Retriever(["author"], encoder_config=TINY_CONFIG, pretrained=False, plan_ranker=True, operator_phrases=True)
    q = ["what did [E] publish up to [N1]?"]
    with_phrases = new.rank_plans(q, [texts], parts, use_cache=False)[0]
    weight = new.ranker.phrase_weight.item()
    new.ranker.phrase_weight = None
    without = new.rank_plans(q, [texts], parts, use_cache=False)[0]
    assert with_phrases[0] - without[0] == pytest.approx(2 * weight, abs=1e-4)  # "up to": two words
    assert with_phrases[1] == pytest.approx(without[1], abs=1e-4)
    old = Retriever(["author"], encoder_config=TINY_CONFIG, pretrained=False, plan_ranker=True)
    assert old.ranker.phrase_weight is None and not any("phrase" in k for k in old.state_dict())


def test_answers_given_by_label_are_explained_by_the_plans_reaching_their_nodes(kg):
    """A question file naming its answers by label ("The Drowned Orchard", as a spreadsheet would)
    gets the plans that reach those entities as positives, as one giving the ids does: before, no
    plan's ids equalled the names, and a set of such questions trained no ranker at all."""
    from rra.data.plan_supervision import label_plans
    from rra.data.supervision import label_examples

    books = kg.neighbors(WRITER, "^written_by")
    by_name = QAExample("what books did [Ilse Pellinore] write", [WRITER], [kg.label(b) for b in books])
    count = QAExample("how many books did [Ilse Pellinore] write", [WRITER], [str(len(books))])
    label_examples(kg, [by_name, count], cache_dir=None)
    report = label_plans(kg, [by_name, count])
    assert report.exact == 2 and by_name.extra["plan"]["paths"] == [["^written_by"]]
    assert by_name.extra["plan"]["shape"] == "chain" and count.extra["plan"]["shape"] == "count"
    positives = by_name.extra["plan_candidates"]["positive"]
    assert all(set(execute(kg, QueryPlan.from_dict(p)).answers) == set(books) for p in positives)


def test_a_chain_that_only_walks_back_to_its_anchor_is_no_candidate(kg):
    """"who leads X's council" answered with X: `r, r (reverse)` of a writer reaches the writer
    alone, which says nothing about what was asked; a round trip reaching others stays."""
    assert {a for b in kg.neighbors(WRITER, "^written_by") for a in kg.neighbors(b, "written_by")} == {WRITER}
    found = enumerate_plans(kg, [Chain(WRITER, ("^written_by",), 1.0), Chain(WRITER, ("^written_by", "written_by"), 0.5),
                                 Chain("genre/poetry", ("^has_genre", "has_genre"), 0.5)])
    paths = {tuple(map(tuple, c.plan.paths)) for c in found}
    assert (("^written_by",),) in paths and (("^written_by", "written_by"),) not in paths
    assert (("^has_genre", "has_genre"),) in paths  # poetry books' other genres
    # unless the data asks such questions (PlanLimits.round_trips, from the training set)
    found = enumerate_plans(kg, [Chain(WRITER, ("^written_by", "written_by"), 0.5)], limits=PlanLimits(round_trips=True))
    assert [c.answers for c in found if c.plan.shape == "chain"] == [[WRITER]]


def test_what_a_question_asks_for_is_read_against_each_plans_kind():
    """`answer_types`: a learnt attention over the question's tokens against the plan's kind adds a
    logit to plans whose kind is known and none to the others; the attention learns where
    candidates differ in kind; and training without kinds (a KG without classes) leaves the answer
    type's parameters without gradients, so the rest trains exactly as it did."""
    import torch

    from rra.models.encoder import TINY_CONFIG
    from rra.models.retriever import Retriever

    torch.manual_seed(0)
    model = Retriever(["ground", "location"], encoder_config=TINY_CONFIG, pretrained=False, plan_ranker=True,
                      answer_types=True)
    q = ["[E]'s team's home ground is in what town"]
    texts = ["[E] team then ground giving stadium", "[E] team then ground then location giving city", "[E] team"]
    kinds = [["stadium", "city", None]]
    with_types = model.rank_plans(q, [texts], kinds=kinds, use_cache=False)[0]
    without = model.rank_plans(q, [texts], use_cache=False)[0]
    assert with_types[2] == pytest.approx(without[2], abs=1e-5)  # no kind, no answer-type logit
    assert with_types[0] != pytest.approx(without[0], abs=1e-4) and with_types[1] != pytest.approx(without[1], abs=1e-4)

    rank = {"positive": [texts[1]], "negative": [texts[0]], "weight": 1, "kinds": {texts[0]: "stadium", texts[1]: "city"}}
    batch = {"question": ["where is [E]", q[0]], "path": [["location"], None], "ranking": [None, rank],
             "candidates": [[["location", "ground"]], None], "texts": {}}
    model.train()
    out = model.model_step(batch)
    out["loss"].backward()
    assert model.ranker.type_query.grad is not None and model.ranker.type_query.grad.abs().sum() > 0
    assert model.ranker.log_type_weight.grad is not None

    model.zero_grad(set_to_none=True)
    plain = {**batch, "ranking": [None, {k: v for k, v in rank.items() if k != "kinds"}]}
    model.model_step(plain)["loss"].backward()
    assert model.ranker.type_query.grad is None and model.ranker.log_type_weight.grad is None
    old = Retriever(["ground"], encoder_config=TINY_CONFIG, pretrained=False, plan_ranker=True)
    assert old.ranker.type_query is None and not any("type" in k for k in old.ranker.state_dict())
    assert old.rank_plans(q, [texts], kinds=kinds, use_cache=False)[0] == \
        pytest.approx(old.rank_plans(q, [texts], use_cache=False)[0])


def test_the_kind_a_question_asks_for_is_the_noun_after_its_question_word():
    from rra.plans.text import asked_kind

    assert asked_kind("which university did [E]'s writer attend?") == "university"
    assert asked_kind("[E]'s team's home ground is in what town") == "town"
    assert asked_kind("What is the release date of [E]") == "release date"  # up to the preposition
    assert asked_kind("what record label released [E]") == "record label"
    assert asked_kind("what kind of music does [E] play") == "music"
    assert asked_kind("which films directed by [E] won an award") == "films"  # a participle starts the rest
    # an imperative names it too
    assert asked_kind("Name a group from [E]") == "group"
    assert asked_kind("list the books written by [E]") == "books"
    assert asked_kind("Give me all record labels of [E]") == "record labels"
    assert asked_kind("name a son or daughter of [E]") == "son"
    # no kind named: a question word alone, a partitive, a pronoun, another language
    for question in ("who issued [E]", "where was [E] born", "which of the films is longest",
                     "how many papers did [E] write", "Welche Stadt ist die Hauptstadt von [E]",
                     "Name someone born in [E]", "tell me about [E]", "name [E]'s wife"):
        assert asked_kind(question) is None, question


class _Cosines:
    """A model whose kind_cosines are given: cos[(asked, kind)]."""

    def __init__(self, cos):
        self.cos = cos

    def kind_cosines(self, asked, kinds, reader="trained"):
        return [[self.cos[(a, k)] if a and k else None for k in row] for a, row in zip(asked, kinds)]


def test_a_plan_giving_another_kind_than_asked_loses_by_how_far_its_kind_reads():
    from rra.pipeline.plans import kind_logits

    model = _Cosines({("university", "university"): 1.0, ("university", "city"): 0.4})
    questions = ["which university did [E]'s writer attend?"]
    # the ranker's logits put the city first; the kind asked for turns them
    out = kind_logits(model, questions, [["city", "university", None]], [[2.0, 1.5, 0.0]], weight=2.0)
    assert out[0][1] == 1.5 and out[0][0] == pytest.approx(2.0 - 2.0 * 0.6)
    assert out[0][2] == pytest.approx(0.0 - 2.0 * 0.3)  # unknown kind: as the candidates' average
    assert max(range(3), key=lambda j: out[0][j]) == 1
    # a question naming no kind, or candidates all of one kind: the logits stay
    assert kind_logits(model, ["who wrote [E]"], [["city", "university"]], [[2.0, 1.5]], 2.0) == [[2.0, 1.5]]
    assert kind_logits(model, questions, [["university", "university"]], [[2.0, 1.5]], 2.0) == [[2.0, 1.5]]



def test_a_class_the_graph_gives_no_label_is_no_kind_to_weigh():
    """readable_kind: a class id without a label ("q101859") reads as noise against any asked word, so
    the kind reading treats it as unknown; words and value kinds stay."""
    from rra.pipeline.plans import answer_kind
    from rra.plans.candidates import Candidate
    from rra.plans.plan import QueryPlan
    from rra.plans.text import readable_kind

    assert [readable_kind(k) for k in ("q101859", "0abc12", "c0", None, "")] == [None] * 5
    assert [readable_kind(k) for k in ("city", "year", "sports team", "class 17")] == ["city", "year", "sports team",
                                                                                      "class 17"]
    chain = QueryPlan(["a"], [["r"]])
    assert answer_kind(Candidate(chain, frozenset({"x"}), ["x"], kind="q101859")) is None
    assert answer_kind(Candidate(chain, frozenset({"x"}), ["x"], kind="city")) == "city"
    count = QueryPlan(["a"], [["r"]], aggregate="count")
    assert answer_kind(Candidate(count, frozenset({"x"}), ["1"], kind="q101859")) == "number"


def test_the_kind_an_entity_id_names_by_its_path():
    from rra.plans.text import id_kind

    assert id_kind(["book/the_narrow_tide", "book/orchard"]) == "book"
    assert id_kind(["http://data.example.org/resource/film/38"]) == "film"
    assert id_kind(["http://example.org/kg/sports_team/Dún_Carrig_SC"]) == "sports team"
    # a segment that only says where ids live, an id without a path, a title with a slash: no kind
    assert id_kind(["http://dbpedia.org/resource/Berlin", "http://www.wikidata.org/entity/Q42"]) is None
    assert id_kind(["m.0abc12", "Kismet"]) is None
    assert id_kind(["Face/Off"]) is None
    # literals are skipped; a kind needs more than half of the ids
    assert id_kind(['"1990"^^xsd:gYear', "city/oslo"]) == "city"
    assert id_kind(['"1990"^^xsd:gYear']) is None
    assert id_kind(["book/a", "city/b", "town/c"]) is None
    assert id_kind(["book/a", "city/b", "city/c"]) == "city"

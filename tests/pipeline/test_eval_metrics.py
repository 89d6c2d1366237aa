import pytest

from rra.eval.metrics import answer_f1, compute_metrics, hit_at_1, percentile
from rra.graph import Triple
from rra.records import Prediction


def pred(qid, answers, gold, reply="", mode=None, answer_set=None, triples=(), latency=1.0, status="ok",
         **extra):
    p = Prediction(qid, "q", answers, status=status, reply=reply, gold_answers=gold,
                   triples=list(triples), latency_s=latency)
    if mode:
        p.hits_mode = mode
    if answer_set is not None:
        p.answer_set = answer_set
    p.extra.update(extra)
    return p


def test_hits_top_answer_vs_reply_contains_gold():
    assert hit_at_1(pred("1", ["alien "], ["Alien"]).to_dict())
    assert not hit_at_1(pred("2", ["Heat", "Alien"], ["Alien"]).to_dict())
    # free-form: a gold answer anywhere in the reply, case-insensitive
    assert hit_at_1(pred("3", ["x"], ["Alien"], reply="It is ALIEN, I think", mode="reply").to_dict())
    assert not hit_at_1(pred("4", ["Alien"], ["Alien"], reply="no idea", mode="reply").to_dict())
    assert not hit_at_1(pred("5", [], ["Alien"]).to_dict())


def test_answer_f1_by_hand():
    # predicted {A, B, C}, gold {A, B}: P = 2/3, R = 1, F1 = 0.8
    assert answer_f1(pred("1", ["A"], ["A", "B"], answer_set=["A", "B", "C"]).to_dict()) == pytest.approx(0.8)
    # without answer_set the top answer is the set: P = 1, R = 1/2, F1 = 2/3
    assert answer_f1(pred("2", ["A", "C"], ["A", "B"]).to_dict()) == pytest.approx(2 / 3)
    assert answer_f1(pred("3", [], ["A"]).to_dict()) == 0.0


def test_compute_metrics_on_hand_made_predictions():
    preds = [
        pred("1", ["A"], ["A"], triples=[Triple("t", "r", "A")], latency=1.0, pred_hop=1, gold_hop=1,
             pred_path=["r"], gold_path=["r"]),
        pred("2", ["B"], ["A"], triples=[Triple("t", "r", "B")], latency=2.0, pred_hop=2, gold_hop=1,
             pred_path=["r", "s"], gold_path=["r"]),
        pred("3", [], ["A"], latency=3.0, status="unknown_entity", gold_hop=2),
        pred("4", ["x"], ["C"], reply="the answer is c", mode="reply", triples=[Triple("C", "r", "t")],
             latency=4.0),
    ]
    for p, calls in zip(preds, [0, 1, 2, 3]):
        p.llm_calls, p.llm_prompt_tokens = calls, 10 * calls
    m = compute_metrics(preds, wall_s=8.0)
    assert m["n"] == 4
    assert m["hits@1"] == pytest.approx(50.0)  # 1 and 4
    assert m["answer_coverage"] == pytest.approx(50.0)  # 1 and 4
    assert m["hop_acc"] == pytest.approx(100 / 3) and m["hop_acc_n"] == 3
    assert m["path_acc"] == pytest.approx(50.0) and m["path_acc_n"] == 2
    assert m["llm_calls_per_q"] == pytest.approx(1.5) and m["llm_prompt_tokens_per_q"] == pytest.approx(15)
    assert m["latency_p50_s"] == 2.0 and m["latency_p95_s"] == 4.0
    assert m["questions_per_s"] == pytest.approx(0.5)
    assert m["status"] == {"ok": 3, "unknown_entity": 1}
    assert m["hits_mode"] == {"top": 3, "reply": 1}
    # dicts from a predictions file give the same numbers
    assert compute_metrics([p.to_dict() for p in preds], wall_s=8.0) == m


def test_percentile_nearest_rank():
    assert percentile([], 50) == 0.0
    assert percentile([5, 1, 3, 2, 4], 50) == 3
    assert percentile(list(range(1, 101)), 95) == 95


def test_gold_labels_count_for_kgs_whose_ids_are_not_names():
    p = pred("1", ["x"], ["person/ann_smith", "person/bo"], reply="It was Ann Smith.", mode="reply")
    p.gold_labels = ["Ann Smith", "Bo"]
    assert hit_at_1(p.to_dict())
    top = pred("2", ["Ann Smith"], ["person/ann_smith", "person/bo"], answer_set=["person/ann_smith", "Bo", "zz"])
    top.gold_labels = ["Ann Smith", "Bo"]
    d = top.to_dict()
    assert hit_at_1(d)
    # 2 of 3 predicted strings name gold answers, both gold answers found: P = 2/3, R = 1
    assert answer_f1(d) == pytest.approx(0.8)


def test_strict_hits_credit_the_entity_a_reply_commits_to_not_one_named_elsewhere():
    from rra.eval.metrics import hit_at_1_strict

    def pred(reply, answers):
        return Prediction("q", "who directed [Alien]", answers, reply=reply, gold_answers=["Ridley Scott"],
                          topic_entities=["Alien"], hits_mode="reply").to_dict()

    assert hit_at_1_strict(pred("The director of Alien is Ridley Scott.", ["Alien", "Ridley Scott"]))
    assert hit_at_1_strict(pred("Answer: Ridley Scott", ["Ridley Scott"]))
    # an echo of the prompt: its final answer is its first line, which names nothing gold
    echo = "[echo] model=echo\nUser: facts: (Alien, directed_by, Ridley Scott)\nQuestion: who directed Alien\nAnswer:"
    assert not hit_at_1_strict(pred(echo, ["Alien", "Ridley Scott"]))
    assert not hit_at_1_strict(pred("Answer: James Cameron (not Ridley Scott)", ["James Cameron", "Ridley Scott"]))


def test_strict_hits_keep_a_gold_name_that_holds_and_or_a_comma_whole():
    """Found with the oracle LLM: "Quill and Anchor" was cut into "Quill", "Anchor" and missed."""
    from rra.eval.metrics import hit_at_1_strict

    def pred(reply, gold):
        return Prediction("q", "who published [X]", ["publisher/qa"], reply=reply, gold_answers=["publisher/qa"],
                          gold_labels=[gold], hits_mode="reply").to_dict()

    assert hit_at_1_strict(pred("Quill and Anchor", "Quill and Anchor"))
    assert hit_at_1_strict(pred("Answer: Quill and Anchor | Harrow and Vane", "Quill and Anchor"))
    assert hit_at_1_strict(pred("Crosby, Stills and Nash", "Crosby, Stills and Nash"))
    assert not hit_at_1_strict(pred("Quill", "Quill and Anchor"))
    assert not hit_at_1_strict(pred("Harrow and Vane and Quill and Anchor", "Quill and Anchor"))


def test_gold_answers_count_whether_given_as_ids_or_as_names():
    """A dataset may give answers as KG ids (Wikidata-style IRIs) or as their names; the evaluation
    loop looks both up in the KG, so the same prediction scores the same either way."""
    from rra.eval.metrics import hit_at_1, hit_at_1_strict
    from rra.eval.run import name_gold_answers, with_gold
    from rra.graph import NetworkXGraph, Triple
    from rra.records import Prediction, QAExample

    q, city, other = "http://ex.org/Q1", "http://ex.org/Q507", "http://ex.org/Q508"
    kg = NetworkXGraph([Triple(q, "born_in", city), Triple(q, "lives_in", other)],
                       labels={q: "Ann Reed", city: "Port Ellery", other: "Calder"})
    given = {"id": [city], "name": ["Port Ellery"], "other case": ["port ELLERY"], "not in the KG": ["Atlantis"]}
    exs = [QAExample("where was [Ann Reed] born", [q], answers, qid=k) for k, answers in given.items()]
    name_gold_answers(exs, kg)
    assert (exs[0].answer_labels, exs[0].answer_ids, exs[0].extra) == (["Port Ellery"], [[city]], {})
    assert exs[1].answer_ids == [[city]] and exs[2].answer_ids == [[city]]
    assert exs[3].answer_ids == [[]]

    def scored_as(ex, answers, reply="", mode="top"):
        p = Prediction(ex.qid, ex.question, answers, reply=reply, hits_mode=mode, topic_entities=[q])
        return hit_at_1(with_gold(p, ex).to_dict()), hit_at_1_strict(p.to_dict())

    for ex in exs[:3]:
        assert scored_as(ex, [city]) == (True, True)  # the graph scorer's id answer
        assert scored_as(ex, [other]) == (False, False)
        assert scored_as(ex, [city], reply="Answer: Port Ellery", mode="reply") == (True, True)
    assert scored_as(exs[3], [city]) == (False, False)

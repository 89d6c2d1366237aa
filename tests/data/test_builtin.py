from collections import Counter

from rra.data.builtin import PLAN_SPLIT_SIZES, SPLIT_SIZES, builtin_kb_path, builtin_questions, load_builtin_graph
from rra.data.plan_questions import SHAPES
from rra.data.supervision import label_examples


def test_builtin_kg_shape():
    kg = load_builtin_graph()
    stats = kg.stats()
    assert 400 <= stats.triples <= 800 and 8 <= len(stats.relations) <= 12
    assert all(kg.label(e) != e for e in kg.g.nodes)  # every entity has a human label
    assert builtin_kb_path().exists()
    # multi-answer structure: several books per writer and per genre
    assert max(len(kg.neighbors(e, "^written_by")) for e in kg.g.nodes if e.startswith("person/")) >= 3


def test_builtin_questions_splits():
    everything = {s: builtin_questions(s) for s in SPLIT_SIZES}
    splits = {s: [q for q in v if "plan" not in q.extra] for s, v in everything.items()}  # the chains
    assert {s: len(v) for s, v in splits.items()} == SPLIT_SIZES
    for s, qs in everything.items():  # and each shape beyond a chain (tests/test_plans.py checks them)
        shapes = Counter(q.extra["shape"] for q in qs if "plan" in q.extra)
        assert set(shapes) == set(SHAPES) and shapes["conjunction"] == PLAN_SPLIT_SIZES[s]
    for qs in splits.values():
        assert set(Counter(q.hops for q in qs)) == {1, 2, 3}
        assert all(q.question.count("[") == 1 and 1 <= len(q.answers) <= 10 for q in qs)
    keys = {s: {(q.topic_entities[0], tuple(q.relation_path)) for q in v} for s, v in splits.items()}
    assert not (keys["train"] & keys["test"]) and not (keys["train"] & keys["dev"]) and not (keys["dev"] & keys["test"])
    again = builtin_questions("dev")
    assert [q.to_dict() for q in again] == [q.to_dict() for q in everything["dev"]]
    again[0].answers.append("edited")  # callers get their own copies
    assert "edited" not in builtin_questions("dev")[0].answers


def test_supervision_recovers_builtin_paths():
    kg = load_builtin_graph()
    qs = [q for q in builtin_questions("test") if "plan" not in q.extra]  # chains (plans: tests/test_plans.py)
    rep = label_examples(kg, qs, cache_dir=None)
    assert rep.coverage == 1.0 and rep.exact == rep.n  # the generating path always scores F1 = 1
    assert rep.gold_best_f1 == rep.n

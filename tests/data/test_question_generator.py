import json

import pytest

from rra.data.qa_files import load_qa_file
from rra.data.question_generator import Templates, generate_questions, main
from rra.graph import NetworkXGraph, Triple
from rra.records import AnswerSemantics, DataFormatError
from rra.text.relations import relation_words

TEMPLATES = {
    "directed_by": {"question": ["who directed {e}", "who is the director of {e}"],
                    "phrase": ["the director of {e}"]},
    "^directed_by": {"question": ["what films did {e} direct"], "phrase": ["the films {e} directed"]},
}


@pytest.fixture
def templates(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps(TEMPLATES))
    return Templates.load(p)


def test_deterministic_and_seed_dependent(tiny_kg, templates):
    a = generate_questions(tiny_kg, n=12, templates=templates, seed=3)
    b = generate_questions(tiny_kg, n=12, templates=templates, seed=3)
    c = generate_questions(tiny_kg, n=12, templates=templates, seed=4)
    assert [x.to_dict() for x in a] == [x.to_dict() for x in b]
    assert [x.to_dict() for x in a] != [x.to_dict() for x in c]


@pytest.mark.parametrize("semantics", [AnswerSemantics(), AnswerSemantics(False, False), AnswerSemantics(True, False)])
def test_answers_match_the_walks_the_semantics_keep(tiny_kg, templates, semantics):
    qs = generate_questions(tiny_kg, n=20, templates=templates, seed=0, max_answers=3, semantics=semantics)
    assert {q.hops for q in qs} == {1, 2, 3}
    for q in qs:
        topic = q.topic_entities[0]
        walked = tiny_kg.follow_path(topic, q.relation_path)
        expect = {p.end for p in walked if semantics.keeps(p.entities, topic)}
        assert set(q.answers) == expect and 1 <= len(q.answers) <= 3
        assert f"[{tiny_kg.label(topic)}]" in q.question
        assert len(q.relation_path) == q.hops and q.gold_path == q.relation_path
    assert len({(q.topic_entities[0], tuple(q.relation_path)) for q in qs}) == len(qs)


def test_templates_nest_and_fall_back(templates):
    import random

    rng = random.Random(0)
    text = templates.question(["directed_by", "^directed_by"], "[Alien]", rng)
    assert text == "what films did the director of [Alien] direct"
    generic = templates.question(["release_year"], "[Alien]", rng)
    assert "release year" in generic and "[Alien]" in generic
    assert templates.question(["^has_rating"], "[Alien]", rng) in ("what has rating [Alien]",
                                                                    "which entities have rating [Alien]")
    assert templates.question(["part_of"], "[Alien]", rng) == "what is the part of [Alien]"
    assert relation_words("http://example.org/birthPlace") == "birth place"
    assert relation_words("^has_imdb_rating") == "has imdb rating"


@pytest.mark.parametrize("bad", [{"r": {"question": ["no slot"]}}, {"r": {"question": ["{e} and {x}"]}},
                                 {"r": {"phrase": ["{e} of {the e}"]}}, {"r": {"phrase_plural": ["{e} {a|b|c}"]}},
                                 {"r": {"answer": ["{e}"]}}, ["not a mapping"]])
def test_bad_templates_name_the_file_and_relation(tmp_path, bad):
    p = tmp_path / "t.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(DataFormatError, match="t.json"):
        Templates.load(p)


def test_small_kg_runs_out_and_warns(capsys):
    kg = NetworkXGraph([Triple("a", "r", "b")])
    qs = generate_questions(kg, n=10, seed=0, semantics=AnswerSemantics(False, False))
    assert [(q.topic_entities, q.relation_path) for q in qs] in (
        [(["a"], ["r"]), (["b"], ["^r"])], [(["b"], ["^r"]), (["a"], ["r"])])
    assert "only yielded 2 of 10" in capsys.readouterr().err
    # the general rule also asks "what is r of the thing r'd by [a]": a itself
    general = generate_questions(kg, n=10, seed=0)
    assert len(general) == 6 and {tuple(q.answers) for q in general} == {("a",), ("b",)}
    assert "only yielded 6 of 10" in capsys.readouterr().err


def test_relation_filter_and_labels():
    kg = NetworkXGraph([Triple("m1", "directed_by", "d1"), Triple("m1", "release_year", "y1")],
                       labels={"m1": "Movie One", "d1": "Dee", "y1": "1999"})
    qs = generate_questions(kg, n=5, hops=(1,), relations=["directed_by"], seed=1)
    assert {tuple(q.relation_path) for q in qs} <= {("directed_by",), ("^directed_by",)}
    assert any(q.answer_labels == ["Dee"] and "[Movie One]" in q.question for q in qs)


def test_cli_writes_questions(tmp_path, capsys):
    kb = tmp_path / "kb.txt"
    kb.write_text("m1|directed_by|d1\nm2|directed_by|d1\nm1|release_year|y1\nm2|release_year|y2\n")
    out = tmp_path / "qs.jsonl"
    assert main([str(kb), "--out", str(out), "--n", "6", "--seed", "2"]) == 0
    qs = load_qa_file(out)
    assert 1 <= len(qs) <= 6 and all(q.answers and q.relation_path for q in qs)
    assert "wrote" in capsys.readouterr().out


def test_cli_answer_rule_flags(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("m1|directed_by|d1\nm2|directed_by|d1\n")
    general, strict = tmp_path / "general.jsonl", tmp_path / "strict.jsonl"
    assert main([str(kb), "--out", str(general), "--n", "20", "--hops", "2"]) == 0
    assert main([str(kb), "--out", str(strict), "--n", "20", "--hops", "2", "--topic-never-answer",
                 "--no-revisit-topic"]) == 0
    assert any(q.topic_entities[0] in q.answers for q in load_qa_file(general))
    assert not any(q.topic_entities[0] in q.answers for q in load_qa_file(strict))

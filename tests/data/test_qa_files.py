import json

import pytest

from rra.data.qa_files import load_qa_file, save_qa_file
from rra.data.records import DataFormatError, QAExample


def examples():
    return [
        QAExample("who directed [Alien]", ["Alien"], ["Ridley Scott"], ["directed_by"], qid="q0", hops=1),
        QAExample("films of the director of [Alien]", ["Alien"], ["Gladiator", "Prometheus"],
                  ["directed_by", "^directed_by"], qid="q1", hops=2, extra={"note": "x"}),
    ]


@pytest.mark.parametrize("suffix", ["jsonl", "tsv"])
def test_round_trip(tmp_path, suffix):
    path = save_qa_file(examples(), tmp_path / f"qs.{suffix}")
    back = load_qa_file(path)
    for a, b in zip(examples(), back):
        assert (a.question, a.topic_entities, a.answers, a.relation_path, a.qid, a.hops) == \
               (b.question, b.topic_entities, b.answers, b.relation_path, b.qid, b.hops)
    assert back[1].source == f"{path}:{3 if suffix == 'tsv' else 2}"
    if suffix == "jsonl":
        assert back[1].extra == {"note": "x"}


def test_jsonl_accepts_pipe_strings_and_brackets(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text(json.dumps({"question": "who directed [Alien]", "answers": "A|B", "relation_path": "^r1|r2"}) + "\n\n")
    (ex,) = load_qa_file(p)
    assert ex.topic_entities == ["Alien"] and ex.answers == ["A", "B"] and ex.relation_path == ["^r1", "r2"]
    assert ex.qid == "q-0"


def test_missing_topic_is_an_error_unless_allowed(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text(json.dumps({"question": "q one [X]", "answers": ["a"]}) + "\n"
                 + json.dumps({"question": "who directed alien", "answers": ["a"]}) + "\n")
    with pytest.raises(DataFormatError, match=r"q.jsonl:2: question has no topic entity"):
        load_qa_file(p)
    exs = load_qa_file(p, require_topic=False)
    assert exs[1].topic_entities == [] and exs[0].topic_entities == ["X"]
    with pytest.raises(DataFormatError, match="q.jsonl:1"):
        load_qa_file(p, topic_from_brackets=False)


@pytest.mark.parametrize(
    "content, problem",
    [("not json\n", "q.jsonl:1: invalid JSON"), ('[1, 2]\n', "expected a JSON object"),
     ('{"question": "", "answers": ["a"], "topic_entities": ["t"]}\n', "empty 'question'"),
     ('{"question": "q [t]"}\n', "q.jsonl:1: question has no answers"),
     ('{"question": "q [t]", "answers": [1]}\n', "list of strings"),
     ('{"question": "q [t]", "answers": ["a"], "hops": "two"}\n', "hops must be a positive integer"),
     ('{"question": "q [t]", "answers": ["a"], "hops": 2.7}\n', "q.jsonl:1: hops must be a positive integer: '2.7'"),
     ('{"question": "q [t]", "answers": ["a"], "qid": [1]}\n', "qid must be a string or an integer"),
     ('{"question": "q [t]", "answers": ["a"], "qid": 7}\n{"question": "r [t]", "answers": ["b"], "qid": "7"}\n',
      "q.jsonl:2: qid already used on line 1"),
     ('{"question": "q [t]", "answers": ["' + "x" * 5000 + '"], "hops": "many"}\n', "positive integer: 'many'$")],
)
def test_jsonl_errors(tmp_path, content, problem):
    p = tmp_path / "q.jsonl"
    p.write_text(content)
    with pytest.raises(DataFormatError, match=problem):
        load_qa_file(p)


def test_tsv_errors_and_unanswered(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("question\tanswers\n")
    with pytest.raises(DataFormatError, match=r"q.tsv:1: TSV header .*missing \['topic_entities'\]"):
        load_qa_file(p)
    p.write_text("question\ttopic_entities\tanswers\nwho [A]\tA\tB\nshort row\n")
    with pytest.raises(DataFormatError, match=r"q.tsv:3: expected 3 tab-separated cells"):
        load_qa_file(p)
    p.write_text("question\ttopic_entities\tanswers\nwho [A]\tA\t\n")
    assert load_qa_file(p, require_answers=False)[0].answers == []
    with pytest.raises(ValueError, match="format"):
        load_qa_file(tmp_path / "q.csv")


def test_tsv_refuses_values_it_cannot_hold(tmp_path):
    ex = QAExample("q [a|b]", ["a|b"], ["x"])
    with pytest.raises(ValueError, match="jsonl"):
        save_qa_file([ex], tmp_path / "q.tsv")
    assert load_qa_file(save_qa_file([ex], tmp_path / "q.jsonl"))[0].topic_entities == ["a|b"]


def test_non_utf8_question_file_names_the_line(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_bytes(b'{"question": "q [t]", "answers": ["a"]}\n{"question": "caf\xe9 [t]", "answers": ["a"]}\n')
    with pytest.raises(DataFormatError, match=r"q.jsonl:2: not valid UTF-8"):
        load_qa_file(p)

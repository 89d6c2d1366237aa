import json

import pytest

from rra.data.qa_files import load_qa_file, save_qa_file
from rra.records import DataFormatError, QAExample


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
     ('{"question": "q [t]", "answers": [null]}\n', "list of strings"),
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
        load_qa_file(tmp_path / "q.xml")


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


def test_json_array_and_csv_read_like_jsonl(tmp_path):
    """A .json array (keys answer / topic_entity / id accepted) and a spreadsheet's .csv (quoted
    cells holding commas) give the same questions as the JSONL file."""
    import json

    rows = [{"question": "who wrote [Ann, Queen]", "topic_entities": ["Ann, Queen"], "answers": ["B", "C"], "qid": "q1"},
            {"question": "where is [D]", "topic_entities": ["D"], "answers": ["E"], "qid": "q2", "hops": 1}]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    want = [(e.question, e.topic_entities, e.answers, e.qid, e.hops) for e in load_qa_file(tmp_path / "q.jsonl")]
    (tmp_path / "q.json").write_text(json.dumps([
        {"question": rows[0]["question"], "topic_entity": "Ann, Queen", "answer": ["B", "C"], "id": "q1"},
        {**rows[1]}], indent=2))
    (tmp_path / "q.csv").write_text('question,topic_entities,answers,qid,hops\n'
                                    '"who wrote [Ann, Queen]","Ann, Queen",B|C,q1,\n'
                                    'where is [D],D,E,q2,1\n')
    # as spreadsheets also save it: a byte-order mark, Windows line ends, capitalised column names,
    # and semicolons between cells where the locale writes a decimal comma
    (tmp_path / "excel.csv").write_bytes('\ufeffQuestion;Topic_Entities;Answers;QID;Hops\r\n'
                                         '"who wrote [Ann, Queen]";Ann, Queen;B|C;q1;\r\n'
                                         'where is [D];D;E;q2;1\r\n'.encode("utf-8"))
    for name in ("q.json", "q.csv", "excel.csv"):
        got = [(e.question, e.topic_entities, e.answers, e.qid, e.hops) for e in load_qa_file(tmp_path / name)]
        assert got == want, name
    (tmp_path / "short.csv").write_text('question;topic_entities;answers\nwho wrote [A];A\n')
    with pytest.raises(DataFormatError, match=r"short.csv:2: expected 3 semicolon-separated cells, got 2"):
        load_qa_file(tmp_path / "short.csv")
    (tmp_path / "bad.json").write_text('[{"question": "a", "topic_entities": ["A"], "answers": ["B"]},\n 7]')
    with pytest.raises(DataFormatError, match=r"bad.json:item 2: expected a JSON object"):
        load_qa_file(tmp_path / "bad.json")
    (tmp_path / "broken.json").write_text('[{"question": "a",\n "answers": ]')
    with pytest.raises(DataFormatError, match=r"broken.json:2: invalid JSON"):
        load_qa_file(tmp_path / "broken.json")
    (tmp_path / "dup.json").write_text(json.dumps([rows[1], rows[1]]))
    with pytest.raises(DataFormatError, match=r"dup.json:item 2: qid already used on item 1"):
        load_qa_file(tmp_path / "dup.json")


def test_json_numbers_and_booleans_are_read_as_answers_are_scored(tmp_path):
    """A JSON answer written as a number (1985, 3, 1.83) reads as its text, true / false as yes / no
    (how count and yes/no answers are scored); a lone answer need not be in a list; an object
    inside answers is still an error naming the line."""
    p = tmp_path / "q.jsonl"
    p.write_text('{"question": "when was [Ann] born", "answer": 1985, "id": 7, "hops": "1"}\n'
                 '{"question": "is [Ann] tall", "answers": [true], "id": 8}\n'
                 '{"question": "how tall is [Ann]", "answers": [1.83, "1.84"], "id": 9}\n')
    got = [(q.qid, q.topic_entities, q.answers, q.hops) for q in load_qa_file(p)]
    assert got == [("7", ["Ann"], ["1985"], 1), ("8", ["Ann"], ["yes"], None), ("9", ["Ann"], ["1.83", "1.84"], None)]
    p.write_text('{"question": "who is [Ann]", "answers": [{"name": "Bob"}]}\n')
    with pytest.raises(DataFormatError, match=r"q.jsonl:1: answers must be a list of strings"):
        load_qa_file(p)


def test_compressed_question_files_read_as_the_plain_ones(tmp_path):
    """Question files come compressed as KG dumps do (questions.jsonl.gz, .csv.bz2, .json.xz): each
    reads as the plain file, its format from the name before the compression's suffix, a bad row
    named by its line; a cut-off or mislabelled file is an error that names it."""
    import bz2
    import gzip
    import lzma

    from rra.graph.loaders import CompressedFileError

    plain = save_qa_file(examples(), tmp_path / "qs.jsonl")
    want = [(e.question, e.topic_entities, e.answers, e.relation_path, e.qid) for e in load_qa_file(plain)]
    csv_text = ("question,topic_entities,answers,relation_path,qid\n"
                "who directed [Alien],Alien,Ridley Scott,directed_by,q0\n"
                "films of the director of [Alien],Alien,Gladiator|Prometheus,directed_by|^directed_by,q1\n")
    as_json = json.dumps([json.loads(line) for line in plain.read_text().splitlines()])
    files = {"qs.jsonl.gz": gzip.compress(plain.read_bytes()), "qs.csv.bz2": bz2.compress(csv_text.encode()),
             "qs.json.xz": lzma.compress(as_json.encode())}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        got = [(e.question, e.topic_entities, e.answers, e.relation_path, e.qid) for e in load_qa_file(tmp_path / name)]
        assert got == want, name
    (tmp_path / "bad.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes() + b"{not json\n"))
    with pytest.raises(DataFormatError, match=r"bad.jsonl.gz:3: invalid JSON"):
        load_qa_file(tmp_path / "bad.jsonl.gz")
    (tmp_path / "cut.jsonl.gz").write_bytes(files["qs.jsonl.gz"][:-12])
    (tmp_path / "plain.jsonl.gz").write_bytes(plain.read_bytes())
    for name in ("cut.jsonl.gz", "plain.jsonl.gz"):
        with pytest.raises(CompressedFileError, match=name):
            load_qa_file(tmp_path / name)
    with pytest.raises(ValueError, match="optionally compressed"):
        load_qa_file(tmp_path / "qs.txt.gz")
    # a missing file is missing, not a failed decompression, whichever reader opens it
    from rra.data.jsonl import lines
    from rra.graph.loaders import read_file_bytes
    for read in (lambda p: list(lines(p)), read_file_bytes):
        with pytest.raises(FileNotFoundError):
            read(tmp_path / "gone.jsonl.gz")

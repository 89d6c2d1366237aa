"""Every text input read as UTF-8 with an optional byte-order mark (spreadsheets and Windows editors
write one), and questions that are not valid Unicode refused at load with file:line."""
import json

import pytest

from rra.data.qa_files import load_qa_file
from rra.records import DataFormatError
from rra.graph import read_labels, read_triples

BOM = "\ufeff"


@pytest.mark.parametrize("name,text", [
    ("kb.txt", "Alien|directed_by|Ridley Scott\nHeat|directed_by|Michael Mann\n"),
    ("kb.txt", "head|relation|tail\nAlien|directed_by|Ridley Scott\nHeat|directed_by|Michael Mann\n"),
    ("kb.tsv", "Alien\tdirected_by\tRidley Scott\nHeat\tdirected_by\tMichael Mann\n"),
    ("kb.nt", "<http://rra.local/entity/Alien> <http://rra.local/relation/directed_by> <http://rra.local/entity/Ridley%20Scott> .\n"
              "<http://rra.local/entity/Heat> <http://rra.local/relation/directed_by> <http://rra.local/entity/Michael%20Mann> .\n"),
    ("kb.ttl", "<http://rra.local/entity/Alien> <http://rra.local/relation/directed_by> <http://rra.local/entity/Ridley%20Scott> .\n"
               "<http://rra.local/entity/Heat> <http://rra.local/relation/directed_by> <http://rra.local/entity/Michael%20Mann> .\n"),
])
def test_a_bom_does_not_reach_the_first_triple(tmp_path, name, text):
    plain, marked = tmp_path / "plain" / name, tmp_path / "bom" / name
    for p, t in ((plain, text), (marked, BOM + text)):
        p.parent.mkdir()
        p.write_text(t, encoding="utf-8")
    want, _, report = read_triples(plain)
    got, _, bom_report = read_triples(marked)
    assert got == want and got[0].head == "Alien" and len(got) == 2
    assert bom_report.skipped == 0 and bom_report.header == report.header


def test_a_bom_does_not_reach_the_first_label(tmp_path):
    path = tmp_path / "labels.tsv"
    path.write_text(BOM + "Alien\tAlien (1979)\nHeat\tHeat (1995)\n", encoding="utf-8")
    labels, _ = read_labels(path)
    assert labels == {"Alien": "Alien (1979)", "Heat": "Heat (1995)"}


@pytest.mark.parametrize("name,text", [
    ("q.jsonl", json.dumps({"question": "who directed [Alien]", "answers": ["Ridley Scott"]}) + "\n"),
    ("q.json", json.dumps([{"question": "who directed [Alien]", "answers": ["Ridley Scott"]}])),
    ("q.tsv", "question\ttopic_entities\tanswers\nwho directed [Alien]\tAlien\tRidley Scott\n"),
    ("q.csv", "question,topic_entities,answers\nwho directed [Alien],Alien,Ridley Scott\n"),
])
def test_a_bom_before_the_questions_or_their_header(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(BOM + text, encoding="utf-8")
    (ex,) = load_qa_file(path)
    assert ex.question == "who directed [Alien]" and ex.topic_entities == ["Alien"] and ex.answers == ["Ridley Scott"]


def test_a_lone_surrogate_is_refused_at_load_with_file_and_line(tmp_path):
    path = tmp_path / "q.jsonl"
    good = json.dumps({"question": "who directed [Alien] \ud83d\ude00", "answers": ["Ridley Scott"]})  # a pair: fine
    cut = '{"question": "who loves [Heat] \\ud83d", "answers": ["Michael Mann"]}'  # half a pair
    path.write_text(good + "\n" + cut + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"q\.jsonl:2: question holds an unpaired UTF-16 surrogate \(\\ud83d at character 18"):
        load_qa_file(path)
    path.write_text(good + "\n", encoding="utf-8")
    assert load_qa_file(path)[0].question.endswith("\U0001F600")

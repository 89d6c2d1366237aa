"""A question file's paths and plans checked when loaded (issue 37 item 10): the format's own
contradictions are refused row by row, a relation the KG lacks is refused against the KG (file:line),
a doubtful path or plan is kept, named and counted in the run."""
import json
import logging
import re

import pytest

from rra.data.dataset import Dataset
from rra.data.qa_files import load_qa_file, load_questions
from rra.graph.networkx_graph import NetworkXGraph
from rra.records import DataFormatError, Triple

FACTS = [("book/orchard", "written_by", "person/ilse"), ("book/orchard", "set_in", "place/vessmoor"),
         ("book/orchard", "published_in", "1994"), ("book/tide", "written_by", "person/ilse"),
         ("book/tide", "set_in", "place/harrow"), ("book/tide", "published_in", "1988"),
         ("book/heron", "written_by", "person/omar"), ("book/heron", "set_in", "place/vessmoor")]
KG = NetworkXGraph([Triple(*t) for t in FACTS], {"book/orchard": "The Glass Orchard"})
BASE = {"question": "which books did [Ilse] set in [Vessmoor]", "topic_entities": ["person/ilse", "place/vessmoor"],
        "answers": ["book/orchard"]}


def write(tmp_path, *rows) -> str:
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps({**BASE, **r}) + "\n" for r in rows))
    return str(path)


@pytest.mark.parametrize("row, message", [
    ({"relation_paths": []}, r"relation_paths is empty"),
    ({"relation_paths": [["^written_by"], ["^set_in"]], "relation_path": ["^set_in", "x"]},
     r"relation_path \['\^set_in', 'x'\] is none of relation_paths"),
    ({"relation_path": ["^written_by"], "hops": 2}, r"hops 2 contradicts relation_path \['\^written_by'\] \(1 hops\)"),
    ({"relation_paths": [["^written_by"], ["^set_in"]], "hops": 3}, r"hops 3 contradicts relation_paths"),
    ({"relation_paths": [["^written_by", ""]]}, r"relation_paths must be a list of relation paths"),
])
def test_the_formats_own_contradictions_are_refused_on_their_line(tmp_path, row, message):
    path = write(tmp_path, {}, row)
    with pytest.raises(DataFormatError, match=rf"q.jsonl:2: {message}"):
        load_qa_file(path)


@pytest.mark.parametrize("row, key, relation", [
    ({"relation_path": ["^writen_by"]}, "relation_path", "^writen_by"),
    ({"relation_paths": [["^written_by"], ["^located_in"]]}, "relation_paths", "^located_in"),
    ({"constraint": {"relation": "publication_year", "op": ">", "value": 1990}}, "constraint.relation",
     "publication_year"),
])
def test_a_relation_the_kg_lacks_is_refused_by_file_and_line(tmp_path, row, key, relation):
    path = write(tmp_path, {"relation_paths": [["^written_by"], ["^set_in"]]}, row, row)
    assert len(load_qa_file(path)) == 3  # well-formed: only the KG can tell
    with pytest.raises(DataFormatError, match=rf"2 question\(s\) name relations the KG does not have: .*q.jsonl:2: "
                                              rf"{key} names relation '{re.escape(relation)}'.*q.jsonl:3"):
        load_questions(path, kg=KG)


def test_doubtful_paths_and_plans_are_kept_named_and_counted(tmp_path, caplog):
    path = write(tmp_path,
                 {"relation_paths": [["^written_by"], ["^set_in"]]},                 # right
                 {"relation_paths": [["^written_by"]]},                              # one anchor unused
                 {"relation_paths": [["^written_by"], ["^set_in"]], "answers": ["book/heron"]},  # plan misses
                 {"topic_entities": ["person/ilse"], "relation_path": ["^written_by"], "answers": ["The Glass Orchard"]},
                 {"topic_entities": ["person/omar"], "relation_path": ["^written_by"], "answers": ["book/tide"]})
    with caplog.at_level(logging.WARNING):
        examples = load_questions(path, kg=KG)
    warnings = [e.extra.get("plan_warnings") for e in examples]
    assert warnings[0] is None and warnings[3] is None  # an answer given by its label is met by that label
    assert warnings[1] == ["relation_paths gives 1 path(s) for 2 topic entities: place/vessmoor not used"]
    assert warnings[2] == ["the given plan reaches 1 entities on the KG, none of the answers"]
    assert warnings[4] == ["relation_path ['^written_by'] reaches 1 entities from person/omar on the KG, none of the answers"]
    assert "q.jsonl:2: relation_paths gives 1 path(s)" in caplog.text and "3 question(s) have doubtful" in caplog.text


def test_both_entry_points_check_through_the_dataset(tmp_path):
    """train.py's datamodule and infer.py read a split through Dataset.questions(split, kg)."""
    path = write(tmp_path, {"relation_path": ["^writen_by"], "topic_entities": ["person/ilse"]})
    dataset = Dataset(train=lambda kg=None: load_questions(path, kg=kg))
    with pytest.raises(DataFormatError, match=r"q.jsonl:1: relation_path names relation '\^writen_by'"):
        dataset.questions("train", KG)


def test_infer_counts_the_doubtful_questions_in_its_metrics(cfg_infer, tmp_path):
    from rra.eval.run import run_split

    kb = tmp_path / "kb.tsv"
    kb.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in FACTS))
    path = write(tmp_path, {"relation_paths": [["^written_by"], ["^set_in"]]}, {"relation_paths": [["^written_by"]]})
    cfg = cfg_infer(["data=files", f"data.kb_path={kb}", f"data.test_file={path}", "method=kgqp", "llm=none",
                     "show_summary=false"])
    metrics = run_split(cfg, tmp_path / "run")
    assert metrics["n"] == 2 and metrics["plan_warnings"] == 1

"""Real per-question benchmark rows, and malformed ones (issue 37 items 3 and 4): every row is checked
when its file is read, naming file:line; an NSM file without names folds only what behaves like a
compound value, and says how many it folded."""
import copy
import json

import pytest

from bench.kgs.webqsp_rows import NSM_ROW, NSM_TRIPLES, PADME, PERF, PORTMAN, ROG_ROWS, SIBLING_CVT, nsm_folder, write_jsonl
from rra.data.qa_files import load_qa_file
from rra.data.subgraph_formats import load_nsm, load_rog, load_subgraph_questions
from rra.graph.subgraphs import QuestionGraphs
from rra.records import DataFormatError


# -- item 3: NSM without a names file ---------------------------------------------------------
def test_nsm_without_names_folds_only_what_behaves_like_a_cvt(tmp_path):
    kg = QuestionGraphs()
    [ex] = load_nsm(str(nsm_folder(tmp_path)), kg=kg)
    with kg.scope(ex) as g:
        triples = list(g.all_triples())
        # 17 triples, two CVTs (a performance, a sibling relationship) folded: 13 facts remain
        assert len(triples) == 13
        assert not g.has_entity(PERF) and not g.has_entity(SIBLING_CVT)
        # the answer keeps its neighbours, the film and its director stay entities
        assert {t.relation.rsplit(".", 1)[1] for t in triples if t.head == PADME} >= {
            "character_created_by", "gender", "places_lived"}
        assert g.neighbors(PORTMAN, "film.actor.film > film.performance.character") == [PADME]
        # a type edge is never half of a folded relation
        assert not any("type.object.type" in t.relation and " > " in t.relation for t in triples)
    assert kg.fold_report() == {"cvts_folded": 2, "unnamed_kept": 8}


def test_a_look_alike_with_an_entitys_type_stays():
    """A place reached by two people (born there) and inside a region looks like a CVT in one
    question; that the dataset's topics and answers have `location.location` properties says it is
    an entity."""
    from rra.graph.cvt import cvt_like

    triples = [("m.1", "location.location.people_born_here", "Ann"), ("m.1", "location.location.containedby", "Region"),
               ("Ann", "people.person.place_of_birth", "m.1")]
    assert cvt_like(triples, {"m.1"}) == {"m.1"}
    assert cvt_like(triples, {"m.1"}, entity_domains={"location.location", "people.person"}) == set()


def test_nsm_with_names_folds_the_unnamed_ids(tmp_path):
    kg = QuestionGraphs()
    [ex] = load_nsm(str(nsm_folder(tmp_path, names=True)), kg=kg)
    with kg.scope(ex) as g:
        assert g.label(PORTMAN) == "Natalie Portman" and len(list(g.all_triples())) == 13
    assert kg.fold_report()["cvts_folded"] == 2


# -- item 4: rows checked when the file is read -------------------------------------------------
DROP = object()


def edited(base: dict, **change) -> dict:
    """A copy of `base` with `change` applied (a value of DROP removes the key)."""
    row = copy.deepcopy(base)
    for key, value in change.items():
        if value is DROP:
            row.pop(key)
        else:
            row[key] = value
    return row


def rog(**change) -> dict:
    return edited(ROG_ROWS[1], **change)


@pytest.mark.parametrize("row, message", [
    (rog(graph=DROP), r"graph must be a list .*the row has none"),
    (rog(graph=None), r"graph must be a list .*the row has none"),
    (rog(graph={"a": 1}), r"graph must be a list"),
    (rog(graph=[["A", "r", "B"], ["A", "r"]]), r"graph triple 2 is not \[head, relation, tail\]"),
    (rog(graph=[["A", "r", ""]]), r"graph triple 1 is not"),
    (rog(a_entity={"Padmé Amidala": 1}), r"a_entity must be a list of strings"),
    (rog(a_entity=[["a", "b"]]), r"a_entity must be a list of strings; it holds a list"),
    (rog(q_entity=[{"name": "Natalie Portman"}]), r"q_entity must be a list of strings; it holds a dict"),
    (rog(answer=[True]), r"answer must be a list of strings; it holds a bool"),
    (rog(id={"x": 1}), r"id must be a string or an integer"),
    (rog(question=None), r"missing or empty 'question'"),
])
def test_a_malformed_rog_row_is_refused_when_read(tmp_path, row, message):
    path = write_jsonl(tmp_path / "test.jsonl", [ROG_ROWS[0], ROG_ROWS[2], row])
    with pytest.raises(DataFormatError, match=rf"test.jsonl:3: {message}"):
        load_rog(str(path), kg=QuestionGraphs())


def nsm(**change) -> dict:
    return edited(NSM_ROW, **change)


@pytest.mark.parametrize("row, message", [
    (nsm(subgraph=DROP), r"subgraph must be \{entities, tuples\} \(the row has none"),
    (nsm(subgraph=None), r"subgraph must be \{entities, tuples\} \(the row has none"),
    (nsm(subgraph={"tuples": {"a": 1}}), r"subgraph must be \{entities, tuples\}"),
    (nsm(subgraph={"tuples": NSM_TRIPLES[:3] + [["m.1", "r"]]}), r"subgraph tuple 4 is not \[head, relation, tail\]"),
    (nsm(answers={"kb_id": "m.1"}), r"answers must be a list of \{kb_id, text\}"),
    (nsm(answers=[{"kb_id": ["m.1"], "text": "x"}]), r"each answer must be \{kb_id, text\}"),
    (nsm(entities="m.09l3p"), r"entities must be a list"),
])
def test_a_malformed_nsm_row_is_refused_when_read(tmp_path, row, message):
    path = nsm_folder(tmp_path, [NSM_ROW, row])
    with pytest.raises(DataFormatError, match=rf"test.jsonl:2: {message}"):
        load_nsm(str(path), kg=QuestionGraphs())


def test_real_rows_read_and_an_empty_graph_is_counted(tmp_path, caplog):
    path = write_jsonl(tmp_path / "test.jsonl", ROG_ROWS + [rog(id="WebQTrn-9", graph=[])])
    kg = QuestionGraphs()
    examples = load_rog(str(path), kg=kg)
    assert [e.qid for e in examples] == ["WebQTrn-0", "WebQTrn-1", "WebQTrn-2", "WebQTrn-9"]
    assert examples[1].question == "what character did [natalie portman] play in star wars"
    assert "1 of 4 questions come with an empty graph" in caplog.text
    with kg.scope(examples[0]) as g:  # the sibling CVT folded, its two named ends joined
        assert g.neighbors("Justin Bieber", "people.person.sibling_s > people.sibling_relationship.sibling") == [
            "Jaxon Bieber"]


def test_parquet_graph_column_checked_when_read(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    def write(rows):
        path = tmp_path / "test.parquet"
        pq.write_table(pa.Table.from_pylist(rows), path)
        return path

    kg = QuestionGraphs()
    assert len(load_rog(str(write(ROG_ROWS)), kg=kg)) == 3
    with pytest.raises(DataFormatError, match=r"test.parquet:row 2: graph triple is not \[head, relation, tail\]"):
        load_rog(str(write([ROG_ROWS[0], rog(graph=[["A", "r", "B"], ["A", "r"]])])), kg=kg)
    with pytest.raises(DataFormatError, match=r"test.parquet:row 3: graph is null"):
        load_rog(str(write(ROG_ROWS[:2] + [rog(graph=None)])), kg=kg)
    with pytest.raises(DataFormatError, match=r"test.parquet:row 1: graph triple has an empty or null name"):
        load_rog(str(write([rog(graph=[["A", "", "B"]])])), kg=kg)


def test_the_sample_is_never_mixed_with_real_files(tmp_path):
    """Any file named by the dataset: the splits without one read nothing (item 1)."""
    path = write_jsonl(tmp_path / "test.jsonl", ROG_ROWS)
    kg = QuestionGraphs()
    files = [None, None, str(path)]
    assert load_subgraph_questions(None, kg=kg, sample="train", files=files) is None
    assert len(load_subgraph_questions(str(path), kg=kg, sample="test", files=files)) == 3


# -- one JSON reader for every question format (issue 36) ---------------------------------------
@pytest.mark.parametrize("text, message", [
    (b'{"question": "a \\ud83d b", "q_entity": ["A"], "graph": []}\n', r":1: question holds an unpaired UTF-16 surrogate"),
    (b'\xff{"question": "q"}\n', r":1: not valid UTF-8"),
    (b'[1, 2]\n', r":1: expected a JSON object"),
    (b'[' * 100_000 + b'\n', r":1: invalid JSON \(nested too deeply\)"),
])
def test_both_readers_name_the_same_faults_the_same_way(tmp_path, text, message):
    rows, plain = tmp_path / "rog.jsonl", tmp_path / "plain.jsonl"
    rows.write_bytes(text)
    plain.write_bytes(text.replace(b'"q_entity"', b'"topic_entities"'))
    with pytest.raises(DataFormatError, match=message):
        load_rog(str(rows), kg=QuestionGraphs())
    with pytest.raises(DataFormatError, match=message):
        load_qa_file(plain)


def test_a_bom_before_a_rog_row_is_read(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(ROG_ROWS[2]).encode() + b"\n")
    assert load_rog(str(path), kg=QuestionGraphs())[0].qid == "WebQTrn-2"

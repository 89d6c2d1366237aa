"""The RRA authors' KG-to-text corpus reader (rra.data.kg2text) on small files written here; the real
corpus (../shared/data/rra_kg2text) only in the tests that skip without it."""
import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from rra.data.kg2text import (
    KG2TextDataModule,
    RelationVocabulary,
    held_out_sample,
    load_kg2text_file,
    load_part,
    parse_triples,
)
from rra.records import DataFormatError

REPO = Path(__file__).resolve().parents[2]
METAQA = RelationVocabulary(["directed_by", "written_by", "starred_actors", "release_year"])
FREEBASE = RelationVocabulary(pattern=r"[a-z][a-z0-9_]*(\.[A-Za-z0-9_]+)+")


def record(graph: str, text: str = "Some text.") -> dict:
    return {"instruction": "Your task is to transform a knowledge graph to a sentence or multiple sentences. "
                           f"The knowledge graph is: {graph}. The sentence is:", "input": "", "output": text}


def write(path: Path, records: list) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_names_with_commas_and_parentheses_stay_whole():
    graph = ("(High, Wide, and Handsome, starred_actors, Dorothy Lamour) "
             "(Hamlet (1996 film), directed_by, Kenneth Branagh) (Fifteen (rack) (Reissue), written_by, X, Jr.)")
    assert parse_triples(graph, METAQA) == [
        ("High, Wide, and Handsome", "starred_actors", "Dorothy Lamour"),
        ("Hamlet (1996 film)", "directed_by", "Kenneth Branagh"),
        ("Fifteen (rack) (Reissue)", "written_by", "X, Jr."),
    ]


def test_a_word_between_commas_is_a_relation_only_if_the_vocabulary_says_so():
    # "Maybe" sits between ", " like a relation but is not one
    assert parse_triples("(Yes, Maybe, No, directed_by, Ann)", METAQA) == [("Yes, Maybe, No", "directed_by", "Ann")]
    assert parse_triples("(CVT1, location.symbol.Kind_of_symbol, State flower)", FREEBASE)[0][1] == \
        "location.symbol.Kind_of_symbol"


def test_cvt_pairs_are_flagged_and_empty_values_dropped_and_counted(tmp_path):
    path = write(tmp_path / "wqsp.json", [
        record("(California, government.jurisdiction.officials, CVT1) (CVT1, government.position.holder, John)"),
        record("(Kauai, location.location.containedby, Hawaii) (Kauai, geography.island.body_of_water, )"),
    ])
    cvt, plain = load_kg2text_file(path, FREEBASE, "wqsp")
    assert cvt.cvt and not plain.cvt
    assert plain.triples == [("Kauai", "location.location.containedby", "Hawaii")]
    assert plain.extra == {"empty_triples": 1}
    assert cvt.source == f"{path}[0]" and cvt.category == "wqsp"


@pytest.mark.parametrize("bad, problem", [
    (record("(Alien, filmed_in, Ridley Scott)"), "no relation of the vocabulary"),
    ({"instruction": "Describe: (Alien, directed_by, Ridley Scott)", "output": "x"}, "does not hold"),
    (record("(Alien, directed_by, Ridley Scott)", text=""), "non-empty 'output'"),
    ("not a record", "string 'instruction'"),
])
def test_a_bad_record_is_an_error_naming_file_index_and_value(tmp_path, bad, problem):
    path = write(tmp_path / "c.json", [record("(Alien, directed_by, Ridley Scott)"), bad])
    with pytest.raises(DataFormatError, match=problem) as e:
        load_kg2text_file(path, METAQA)
    assert f"{path}[1]" in str(e.value)


def test_malformed_json_names_the_file_and_line(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('[\n{"instruction": }\n]')
    with pytest.raises(DataFormatError, match=rf"{path}:2"):
        load_kg2text_file(path, METAQA)


def test_held_out_inputs_never_reach_training_even_when_repeated(tmp_path):
    films = [f"(Film {i}, directed_by, Director {i % 3})" for i in range(30)]
    # every input twice (two texts), as WebQSP repeats inputs across its files
    path = write(tmp_path / "c.json", [record(g, f"Text {k}.") for g in films for k in range(2)])
    part = load_part(tmp_path, "metaqa", ["c.json"], relations=["directed_by"], heldout=5, seed=0)
    held = {tuple(e.triples) for e in part.heldout}
    assert len(held) == 5 and len(part.train) == 50
    assert not held & {tuple(e.triples) for e in part.train}
    assert all(e.texts == ["Text 0.", "Text 1."] for e in part.heldout)  # both texts as references
    again = load_part(tmp_path, "metaqa", ["c.json"], relations=["directed_by"], heldout=5, seed=0)
    assert [e.triples for e in again.heldout] == [e.triples for e in part.heldout]  # seeded
    assert len(held_out_sample(part, 2, offset=4)) == 1


def test_datamodule_uses_the_chosen_parts(tmp_path):
    write(tmp_path / "m.json", [record(f"(Film {i}, directed_by, D{i})") for i in range(20)])
    write(tmp_path / "w.json", [record(f"(City {i}, location.location.containedby, CVT{i})") for i in range(20)])
    sources = {"metaqa": {"files": ["m.json"], "relations": ["directed_by"], "heldout": 6},
               "wqsp": {"files": ["w.json"], "relation_pattern": r"[a-z_]+(\.[a-z_]+)+", "heldout": 6}}
    dm = KG2TextDataModule(str(tmp_path), parts=["metaqa"], sources=sources, val_size=2, test_size=4)
    dm.setup()
    assert (len(dm.train_set), len(dm.val_set), len(dm.test_set)) == (14, 2, 4)
    assert dm.train_set[0]["source"].startswith("<S> Film")
    both = KG2TextDataModule(str(tmp_path), parts=["metaqa", "wqsp"], sources=sources, val_size=2, test_size=4)
    both.setup()
    assert len(both.train_set) == 28 and both.summary["wqsp"]["heldout_cvt"] == 6
    with pytest.raises(ValueError, match="unknown part"):
        KG2TextDataModule(str(tmp_path), parts=["webqsp"], sources=sources)


def test_the_real_corpus_parses_whole(shared_data):
    """Every record of the three files parses with the config's vocabularies; the CVT counts are
    those of ../shared/data/README.md (2,684 + 287)."""
    root = shared_data / "rra_kg2text"
    if not root.is_dir():
        pytest.skip("rra_kg2text not in ../shared/data")
    cfg = OmegaConf.load(REPO / "conf" / "data" / "rra_kg2text.yaml").sources
    counts = {}
    for part in ("metaqa", "wqsp"):
        vocab = RelationVocabulary(list(cfg[part].relations), cfg[part].relation_pattern)
        entries = [e for f in cfg[part].files for e in load_kg2text_file(root / f, vocab, part)]
        counts[part] = (len(entries), sum(e.cvt for e in entries))
        # a wrong split would leave `) (` followed by a relation inside a name
        assert not [t for e in entries for t in e.triples if ") (" in t[2] and ", " in t[2].split(") (")[-1]]
    assert counts == {"metaqa": (1386, 0), "wqsp": (12543, 2971)}


def test_a_selected_part_with_nothing_held_out_is_repeated_into_training(tmp_path):
    # the answer-sensitive part: rewrites kept because the reader answered from them, by absolute path
    write(tmp_path / "m.json", [record(f"(Film {i}, directed_by, D{i})") for i in range(20)])
    (tmp_path / "out").mkdir()
    sel = write(tmp_path / "out" / "sel.json", [record(f"(Film {i}, written_by, W{i})", "Kept.") for i in range(3)])
    sources = {"metaqa": {"files": ["m.json"], "relations": ["directed_by"], "heldout": 6},
               "answer_sensitive": {"files": [str(sel)], "relations": ["written_by"], "heldout": 0, "repeat": 4}}
    dm = KG2TextDataModule(str(tmp_path), parts=["metaqa", "answer_sensitive"], sources=sources,
                           val_size=2, test_size=4)
    dm.setup()
    assert len(dm.train_set) == 14 + 3 * 4
    assert sum(p["target"] == "Kept." for p in dm.train_set) == 12
    assert (len(dm.val_set), len(dm.test_set)) == (2, 4)  # only the corpus part is scored


def test_the_shipped_config_names_the_answer_sensitive_part():
    cfg = OmegaConf.to_container(OmegaConf.load(REPO / "conf" / "data" / "rra_kg2text.yaml"), resolve=False)
    src = cfg["sources"]["answer_sensitive"]
    assert src["heldout"] == 0 and src["repeat"] >= 1
    assert src["files"] == ["${paths.root_dir}/checkpoints/rewriter_answer_sensitive/selected.json"]
    assert src["relations"] == "${data.sources.metaqa.relations}" and "answer_sensitive" not in cfg["parts"]

from pathlib import Path

import pytest

from rra.data.webnlg import (WebNLGDataModule, WebNLGFormatError, fixed_sample, kg_silver_pairs, load_webnlg,
                             load_webnlg_file)
from rra.graph.networkx_graph import NetworkXGraph
from rra.records import Triple
from rra.text.facts import clean_entity, clean_relation, linearise


def test_loader_reads_entries_triples_texts(webnlg_root: Path, webnlg_entries):
    ENTRIES = webnlg_entries
    entries = load_webnlg(webnlg_root, "test")
    assert [e.triples for e in entries] == [[tuple(t) for t in triples] for _, triples, _ in ENTRIES]
    assert [e.texts for e in entries] == [texts for _, _, texts in ENTRIES]
    assert [e.category for e in entries] == [c for c, _, _ in ENTRIES]
    assert entries[0].eid == "Id1" and "testdata_with_lex.xml" in entries[0].source
    # train/dev: every {n}triples folder, sorted
    assert len(load_webnlg(webnlg_root, "train")) == len(ENTRIES)


def test_linearise_cleans_entities_and_splits_camel_case():
    assert clean_entity("Abilene,_Texas") == "Abilene, Texas"
    assert clean_entity('"18L/36R"') == "18L/36R"
    assert clean_entity('"Madrid, Spain"@en') == "Madrid, Spain"
    assert clean_relation("cityServed") == "city served"
    assert clean_relation("directed_by") == "directed by"
    assert clean_relation("^directed_by") == "inverse of directed by"
    text = linearise([("Heat_(1995_film)", "releaseYear", '"1995"'), ("Heat", "starring", "Al_Pacino")])
    assert text == "<S> Heat (1995 film) <P> release year <O> 1995 <S> Heat <P> starring <O> Al Pacino"


def test_malformed_xml_names_file_and_line(tmp_path: Path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<benchmark>\n<entries>\n<entry eid='Id1'>\n</entries>\n</benchmark>\n")
    with pytest.raises(WebNLGFormatError, match=r"bad\.xml:4:\d+: malformed XML"):
        load_webnlg_file(bad)


def test_bad_triple_and_wrong_root_are_clear_errors(tmp_path: Path):
    f = tmp_path / "two_parts.xml"
    f.write_text("<benchmark><entries><entry eid='Id7'><modifiedtripleset>"
                 "<mtriple>Alien | directedBy</mtriple></modifiedtripleset></entry></entries></benchmark>")
    with pytest.raises(WebNLGFormatError, match=r"two_parts\.xml \(entry eid='Id7'\).*'Alien \| directedBy'"):
        load_webnlg_file(f)
    g = tmp_path / "other.xml"
    g.write_text("<html><body/></html>")
    with pytest.raises(WebNLGFormatError, match=r"other\.xml: not a WebNLG file"):
        load_webnlg_file(g)


def test_missing_split_and_unknown_split(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="no WebNLG dev files"):
        load_webnlg(tmp_path, "dev")
    with pytest.raises(ValueError, match="unknown WebNLG split"):
        load_webnlg(tmp_path, "validation")


def test_fixed_sample_is_seeded_and_ordered():
    items = list(range(100))
    a, b = fixed_sample(items, 10, seed=3), fixed_sample(items, 10, seed=3)
    assert a == b == sorted(a) and len(a) == 10
    assert fixed_sample(items, None) == items


def test_kg_silver_pairs_group_triples_around_an_entity():
    kg = NetworkXGraph([
        Triple("Alien", "directed_by", "Ridley Scott"), Triple("Alien", "release_year", "1979"),
        Triple("Alien", "starred_actors", "Sigourney Weaver"), Triple("Heat", "directed_by", "Michael Mann"),
    ])
    pairs = kg_silver_pairs(kg, n=6, seed=1)
    assert len(pairs) == 6 and pairs == kg_silver_pairs(kg, n=6, seed=1)
    for p in pairs:
        assert 1 <= len(p.triples) <= 3 and len({s for s, _, _ in p.triples}) == 1
        assert p.texts and all(o in p.texts[0] for _, _, o in p.triples)


def test_datamodule_batches_sources_targets_refs(webnlg_root: Path, webnlg_entries):
    ENTRIES = webnlg_entries
    dm = WebNLGDataModule(str(webnlg_root), batch_size=2, val_size=None, test_size=2)
    dm.setup()
    assert len(dm.train_set) == sum(len(t) for _, _, t in ENTRIES)  # one per reference text
    assert len(dm.test_set) == 2
    batch = next(iter(dm.val_dataloader()))
    assert batch["source"][0].startswith("<S> Alien (film) <P> directed by")
    assert batch["target"][0] == "Alien was directed by Ridley Scott." and len(batch["refs"][0]) == 2


@pytest.mark.shared_data
def test_real_webnlg_counts(shared_data: Path):
    root = shared_data / "webnlg"
    counts = {s: len(load_webnlg(root, s)) for s in ("train", "dev", "test")}
    assert counts == {"train": 6940, "dev": 872, "test": 1862}  # the official 2017 figures

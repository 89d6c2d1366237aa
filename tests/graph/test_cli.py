"""rra-kg stats | convert | load, called through main([...])."""
from __future__ import annotations

import json

from graph_small_kg import LABELS, TRIPLES
from rra.graph import NetworkXGraph, load_graph, read_triples
from rra.graph.cli import main


def kb_file(tmp_path, extra: str = ""):
    path = tmp_path / "kb.txt"
    path.write_text("".join(f"{t.head}|{t.relation}|{t.tail}\n" for t in TRIPLES if "\n" not in t.head) + extra,
                    encoding="utf-8")
    return path


def expected():
    return NetworkXGraph([t for t in TRIPLES if "\n" not in t.head])


def test_stats(tmp_path, capsys):
    assert main(["stats", str(kb_file(tmp_path)), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stats"]["triples"] == expected().stats().triples
    assert out["stats"]["entities"] == expected().stats().entities
    assert main(["stats", str(kb_file(tmp_path))]) == 0
    assert "directed_by" in capsys.readouterr().out


def test_bad_line_is_an_error_unless_skipped(tmp_path, capsys):
    kb = kb_file(tmp_path, "just one field\n")
    assert main(["stats", str(kb)]) == 2
    err = capsys.readouterr().err
    bad_line = len(kb.read_text(encoding="utf-8").splitlines())  # the last line
    assert f"{kb}:{bad_line}:" in err
    assert "'just one field'" in err
    assert main(["stats", str(kb), "--on-error", "skip", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["load"]["skipped"] == 1


def test_convert_round_trip(tmp_path, capsys):
    labels = tmp_path / "labels.tsv"
    labels.write_text("".join(f"{k}\t{v}\n" for k, v in LABELS.items() if "\n" not in k + v), encoding="utf-8")
    out = tmp_path / "kb.nt"
    assert main(["convert", str(kb_file(tmp_path)), str(out), "--labels", str(labels)]) == 0
    triples, got_labels, _ = read_triples(out)
    assert sorted(triples) == sorted(expected().all_triples())
    assert got_labels["Ridley Scott"] == LABELS["Ridley Scott"]
    assert "wrote" in capsys.readouterr().out


def test_load_into_store(tmp_path, capsys):
    store = tmp_path / "store"
    assert main(["load", str(kb_file(tmp_path)), "--store", str(store)]) == 0
    assert "loaded" in capsys.readouterr().out
    kg = load_graph(backend="oxigraph", store_path=store)
    assert kg.stats() == expected().stats()


def test_missing_file(tmp_path, capsys):
    assert main(["stats", str(tmp_path / "nope.txt")]) == 2
    assert "not found" in capsys.readouterr().err

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


def test_convert_keeps_the_names_besides_the_label(tmp_path, capsys):
    """A label in another language (or another naming predicate's value) is still found after
    `rra-kg convert` (and so after `load --virtuoso`, which writes the same file) as it is by load_graph."""
    from rra.graph.rdf import OTHER_NAME

    label = "<http://www.w3.org/2000/01/rdf-schema#label>"
    kb = tmp_path / "kb.nt"
    kb.write_text(f'<http://x/b> {label} "The Neverending Story"@en .\n'
                  f'<http://x/b> {label} "Die unendliche Geschichte"@de .\n'
                  '<http://x/b> <http://x/author> <http://x/m> .\n'
                  f'<http://x/m> {label} "Michael Ende"@en .\n', encoding="utf-8")
    out = tmp_path / "out.nt"
    assert main(["convert", str(kb), str(out)]) == 0
    assert f'<{OTHER_NAME}> "Die unendliche Geschichte"' in out.read_text(encoding="utf-8")
    for backend in ("networkx", "oxigraph"):
        for path in (kb, out):
            kg = load_graph(path, backend=backend, entity_base="http://x/", relation_base="http://x/")
            assert kg.label("b") == "The Neverending Story", (backend, path)
            assert kg.find_entities("die unendliche geschichte", "casefold") == ["b"], (backend, path)
            assert kg.relation_types() == ["author"], (backend, path)

"""Loaders, N-Triples export, the RDF mapping, and load_graph."""
from __future__ import annotations

import random

import pyoxigraph as ox
import pytest

from graph_small_kg import LABELS, TRIPLES
from rra.graph import (
    KGFormatError,
    NetworkXGraph,
    OxigraphGraph,
    RdfMapping,
    Triple,
    load_graph,
    read_labels,
    read_triples,
    write_ntriples,
)
from rra.graph.loaders import CompressedFileError, detect_format
from rra.graph.rdf import iri_ref, literal, unescape_literal


def write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


def test_pipe_and_tsv(tmp_path):
    pipe = write(tmp_path / "kb.txt", "Alien|directed_by|Ridley Scott\n\n Alien | release_year | 1979\r\n")
    tsv = write(tmp_path / "kb.tsv", "Alien\tdirected_by\tRidley Scott\nAlien\trelease_year\t1979\n")
    # a spreadsheet's CSV: a header, Windows line ends
    csv = write(tmp_path / "kb.csv", "head,relation,tail\r\nAlien,directed_by,Ridley Scott\r\nAlien,release_year,1979\r\n")
    for path in (pipe, tsv, csv):
        triples, labels, report = read_triples(path)
        assert triples == [Triple("Alien", "directed_by", "Ridley Scott"), Triple("Alien", "release_year", "1979")]
        assert labels == {} and report.triples == 2 and report.skipped == 0
    assert read_triples(pipe)[2].lines == 3
    with_labels = write(tmp_path / "labelled.txt", "Q1|rdfs:label|Douglas Adams\nQ1|wrote|Q2\n")
    triples, labels, report = read_triples(with_labels)
    assert triples == [Triple("Q1", "wrote", "Q2")] and labels == {"Q1": "Douglas Adams"}
    # a quoted CSV cell holds a comma; a literal cell's quotes are doubled, as CSV writes them
    quoted = write(tmp_path / "quoted.csv", '"Smith, John",born_in,Bergen\nAnn,born,"""1985""^^xsd:gYear"\n')
    assert read_triples(quoted)[0] == [Triple("Smith, John", "born_in", "Bergen"), Triple("Ann", "born", '"1985"^^xsd:gYear')]


@pytest.mark.parametrize(
    "name, text, line, value",
    [
        ("kb.txt", "a|r|b\na|r\n", 2, "a|r"),
        ("kb.txt", "a|r|b\nc|d|e\na|r|b|c\n", 3, "a|r|b|c"),
        ("kb.txt", "a||b\n", 1, "a||b"),
        ("kb.txt", "a|^r|b\n", 1, "^r"),
        ("kb.tsv", "a\tr\tb\na r b\n", 2, "a r b"),
        ("kb.csv", "a,r,b\n\"a,r\",b\n", 2, '"a,r",b'),
        ("kb.nt", "<http://x/a> <http://x/r> <http://x/b> .\n<http://x/a> <http://x/r> .\n", 2,
         "<http://x/a> <http://x/r> ."),
        ("kb.nt", '<http://x/a> <http://x/r> "unterminated .\n', 1, '<http://x/a> <http://x/r> "unterminated .'),
    ],
)
def test_malformed_line_names_file_line_and_value(tmp_path, name, text, line, value):
    path = write(tmp_path / name, text)
    with pytest.raises(KGFormatError) as err:
        read_triples(path)
    assert err.value.line == line and err.value.value == value and err.value.path == str(path)
    assert f"{path}:{line}:" in str(err.value) and repr(value) in str(err.value)


def test_skip_mode_counts_and_keeps_the_rest(tmp_path):
    lines = ["a|r|b", "broken", "c|r|d", "x|y", "e|r|f", "|r|g", "1|2|3|4", "h|^r|i", "j|r|k"]
    path = write(tmp_path / "kb.txt", "\n".join(lines) + "\n")
    triples, _, report = read_triples(path, on_error="skip")
    assert [t.head for t in triples] == ["a", "c", "e", "j"]
    assert report.lines == len(lines) and report.triples == 4 and report.skipped == 5
    assert len(report.reasons) == 5 and report.reasons[0].startswith("line 2:") and "'broken'" in report.reasons[0]
    assert "5 skipped" in str(report)
    with pytest.raises(ValueError):
        read_triples(path, on_error="ignore")


def test_format_detection(tmp_path):
    assert detect_format("kb.txt") == "pipe" and detect_format("x.NT") == "nt" and detect_format("x.tsv") == "tsv"
    assert detect_format("weird.dat", "tsv") == "tsv"
    with pytest.raises(ValueError, match="extension"):
        detect_format("kb.dat")
    assert detect_format("kg.csv") == "csv" and detect_format("kg.csv.gz") == "csv"
    with pytest.raises(ValueError, match="unknown KG format"):
        detect_format("kb.txt", "xlsx")


def test_ntriples_round_trip(tmp_path):
    nt = tmp_path / "kg.nt"
    n = write_ntriples(nt, TRIPLES, LABELS)
    entities = {x for t in TRIPLES for x in (t.head, t.tail)}
    assert n == len(TRIPLES) + len(entities)  # one label per entity, none for the ghost label
    # A real RDF parser accepts every line: IRIs and literals are escaped properly.
    assert len(list(ox.parse(path=str(nt), format=ox.RdfFormat.N_TRIPLES))) == n
    triples, labels, report = read_triples(nt)
    assert triples == TRIPLES
    assert labels == {x: LABELS.get(x, x) for x in entities}
    assert report.labels == len(entities)
    assert NetworkXGraph(triples, labels).stats() == NetworkXGraph(TRIPLES, LABELS).stats()


def test_foreign_ntriples(tmp_path):
    """IRIs outside the bases, prefixes, literal objects, blank nodes, language tags, comments."""
    nt = write(tmp_path / "dbp.nt", "\n".join([
        "# a comment",
        '<http://dbpedia.org/resource/Aarhus_Airport> <http://dbpedia.org/ontology/cityServed> "Aarhus, Denmark"@en .',
        "<http://dbpedia.org/resource/Aarhus_Airport> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> _:b1 .",
        '<http://dbpedia.org/resource/Aarhus_Airport> <http://www.w3.org/2000/01/rdf-schema#label> "Aarhus Airport"@en .',
        '<http://rra.local/entity/Z\\u00FCrich> <http://rra.local/relation/in> <http://rra.local/entity/CH> . # trailing',
        '<http://x/a> <http://x/n> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .',
    ]) + "\n")
    triples, labels, _ = read_triples(nt)
    assert triples == [
        # literal objects are literal nodes: the value with its language tag or datatype
        Triple("http://dbpedia.org/resource/Aarhus_Airport", "http://dbpedia.org/ontology/cityServed",
               '"Aarhus, Denmark"@en'),
        Triple("http://dbpedia.org/resource/Aarhus_Airport", "rdf:type", "_:b1"),
        Triple("Zürich", "in", "CH"),
        Triple("http://x/a", "http://x/n", '"5"^^xsd:integer'),
    ]
    assert labels == {"http://dbpedia.org/resource/Aarhus_Airport": "Aarhus Airport"}
    # Written back, the foreign IRIs come out as they came in.
    out = tmp_path / "back.nt"
    write_ntriples(out, triples, labels)
    assert "<http://dbpedia.org/resource/Aarhus_Airport> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type>" in out.read_text()
    # and the literals as literals: nothing became an entity IRI
    assert '<http://x/a> <http://x/n> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .' in out.read_text()
    assert read_triples(out)[0] == triples


def random_name(rng: random.Random) -> str:
    """1-8 code points from all of Unicode (ASCII and the BMP favoured), no surrogates."""
    chars = []
    while len(chars) < rng.randint(1, 8):
        r = rng.random()
        c = rng.randint(0, 0x7F) if r < 0.4 else rng.randint(0x80, 0xFFFF) if r < 0.7 else rng.randint(0x10000, 0x10FFFF)
        if not 0xD800 <= c <= 0xDFFF:
            chars.append(chr(c))
    return "".join(chars)


def test_mapping_round_trips_random_names(tmp_path):
    rng = random.Random(0)
    m = RdfMapping()
    special = ['a b', '"<>{}|^`\\', "%41", "#?[]", "\n\r\t\x00", "\x85\u2028", "\ufffe\U0010FFFF", "http://x/a"]
    names = special + [random_name(rng) for _ in range(3000)]
    for name in names:
        assert m.entity_id(m.entity_iri(name)) == name
        if not name.startswith("^"):
            assert m.relation_id(m.relation_iri(name)) == name
        assert unescape_literal(literal(name)[1:-1]) == name
    # Written as N-Triples, a strict RDF parser accepts every line and we read back the same.
    names = [n.lstrip("^") or "r" for n in names]
    triples = [Triple(names[i], names[i + 1], names[i + 2]) for i in range(0, len(names) - 2, 3)]
    nt = tmp_path / "random.nt"
    lines = write_ntriples(nt, triples)
    assert len(list(ox.parse(path=str(nt), format=ox.RdfFormat.N_TRIPLES))) == lines
    assert read_triples(nt)[0] == triples
    with pytest.raises(ValueError, match="surrogate"):
        literal("x\ud800")


def test_iri_ref_refuses_unsafe_iris():
    for bad in ["http://x/a b", "http://x/>", "http://x/a>} DROP ALL", 'http://x/"', "http://x/{"]:
        with pytest.raises(ValueError, match="not a valid IRI"):
            iri_ref(bad)
    with pytest.raises(ValueError):
        RdfMapping(entity_base="http://x/ bad/")


def test_labels_file(tmp_path):
    path = write(tmp_path / "labels.tsv", "Alien\tAlien (1979 film)\nbad line\n")
    with pytest.raises(KGFormatError, match=r"labels.tsv:2"):
        read_labels(path)
    labels, report = read_labels(path, on_error="skip")
    assert labels == {"Alien": "Alien (1979 film)"} and report.skipped == 1
    csv = write(tmp_path / "labels.csv", 'id,label\r\nQ1,"Adams, Douglas"\nQ2,Oslo\nQ3\n')
    with pytest.raises(KGFormatError, match=r"labels.csv:4: expected id,label"):
        read_labels(csv)
    assert read_labels(csv, on_error="skip")[0] == {"Q1": "Adams, Douglas", "Q2": "Oslo"}


@pytest.mark.parametrize("backend", ["networkx", "oxigraph"])
def test_load_graph(tmp_path, backend):
    kb = write(tmp_path / "kb.txt", "Alien|directed_by|Ridley Scott\noops\nBlade Runner|directed_by|Ridley Scott\n")
    labels = write(tmp_path / "labels.tsv", "Ridley Scott\tSir Ridley Scott\n")
    with pytest.raises(KGFormatError, match=r"kb.txt:2"):
        load_graph(kb, backend)
    kg = load_graph(kb, backend, labels_path=labels, on_error="skip")
    assert kg.load_report.skipped == 1 and kg.load_report.triples == 2
    assert kg.neighbors("Ridley Scott", "^directed_by") == ["Alien", "Blade Runner"]
    assert kg.find_entities("Sir Ridley Scott") == ["Ridley Scott"]
    with pytest.raises(FileNotFoundError):
        load_graph(tmp_path / "missing.txt", backend)


def test_oxigraph_on_disk_and_reopen(tmp_path):
    store = tmp_path / "store"
    kg = OxigraphGraph.from_triples(TRIPLES[:3], path=store)
    kg.add_triples(TRIPLES[3:], LABELS)  # later additions: one label per entity, still
    kg.set_labels({"Alien": "Alien (film)"})
    expected = NetworkXGraph(TRIPLES, {**LABELS, "Alien": "Alien (film)"})
    assert kg.stats() == expected.stats()
    entities = [x for x in expected.g.nodes]
    assert kg.labels(entities) == expected.labels(entities)
    assert kg.triple_count() == len(TRIPLES) + len(entities)
    kg.flush()
    del kg
    reopened = load_graph(backend="oxigraph", store_path=store)
    assert reopened.relation_types() == expected.relation_types()
    assert reopened.label("Amélie") == LABELS["Amélie"]


def test_a_store_holding_the_kg_file_is_opened_not_loaded_again(tmp_path, monkeypatch, caplog):
    """`load_graph(path, backend="oxigraph", store_path=DIR)` a second time with the same file and
    settings opens the store (a large KG is ready at once); a changed file replaces the graph's
    triples (a fact removed from the file is gone from the store); another named graph of the same
    store is left alone; a store rra has no record of keeps what it holds, the file added to it."""
    import logging
    import os

    import rra.graph.loaders as loaders

    kb, store = tmp_path / "kb.txt", tmp_path / "store"
    kb.write_text("Alien|directed_by|Ridley Scott\nAlien|release_year|1979\nHeat|directed_by|Michael Mann\n")
    first = load_graph(kb, "oxigraph", store_path=store)
    assert first.load_report.triples == 3 and first.neighbors("Alien", "release_year") == ["1979"]
    first.store.flush()
    del first
    reads, real_read = [], loaders.read_kg
    monkeypatch.setattr(loaders, "read_kg", lambda *a, **k: reads.append(a) or real_read(*a, **k))
    with caplog.at_level(logging.INFO, logger="rra.graph.loaders"):
        again = load_graph(kb, "oxigraph", store_path=store)
    assert reads == [] and "opened, not loaded again" in caplog.text
    assert again.load_report.triples == 3 and again.neighbors("Heat", "directed_by") == ["Michael Mann"]
    del again
    monkeypatch.undo()
    # another setting writes another store content: loaded again
    relabelled = load_graph(kb, "oxigraph", store_path=store, entity_base="http://example.org/")
    assert relabelled.mapping.entity_iri("Alien") == "http://example.org/Alien"
    assert relabelled.triple_count() == 3 + 5  # three facts, five labels: nothing left of the first load
    del relabelled
    # the file changes: the removed fact is gone, not left behind in the store
    kb.write_text("Alien|directed_by|Ridley Scott\nHeat|directed_by|Michael Mann\n")
    os.utime(kb, ns=(1, 1))
    changed = load_graph(kb, "oxigraph", store_path=store)
    assert changed.neighbors("Alien", "release_year") == [] and changed.load_report.triples == 2
    # a named graph beside it: loading one leaves the other
    other = tmp_path / "other.txt"
    other.write_text("Up|directed_by|Pete Docter\n")
    del changed
    beside = load_graph(other, "oxigraph", store_path=store, graph_iri="http://rra.test/other")
    assert beside.relation_types() == ["directed_by"] and beside.has_entity("Up") and not beside.has_entity("Alien")
    del beside
    assert load_graph(kb, "oxigraph", store_path=store).neighbors("Alien", "directed_by") == ["Ridley Scott"]
    # a store filled without a record: the file is added to what it holds, and said
    bare = OxigraphGraph.from_triples([Triple("Jaws", "directed_by", "Steven Spielberg")], path=tmp_path / "bare")
    bare.flush()
    del bare
    with caplog.at_level(logging.WARNING, logger="rra.graph.loaders"):
        mixed = load_graph(kb, "oxigraph", store_path=tmp_path / "bare")
    assert mixed.has_entity("Jaws") and mixed.has_entity("Alien") and "did not load from a file" in caplog.text


def test_language_tagged_labels_in_a_foreign_store():
    """A store with "..."@en / "..."@de labels: exact lookups find English ones, or label_language's
    where it is set; the other modes scan every label anyway."""
    store = ox.Store()
    store.load(input=(
        '<http://x/Q1> <http://x/p> <http://x/Q2> .\n'
        '<http://x/Q1> <http://www.w3.org/2000/01/rdf-schema#label> "Douglas Adams"@en .\n'
        '<http://x/Q2> <http://www.w3.org/2000/01/rdf-schema#label> "Anhalter"@de .\n'
    ), format=ox.RdfFormat.N_TRIPLES)
    plain = OxigraphGraph(store, entity_base="http://x/", relation_base="http://x/")
    tagged = OxigraphGraph(store, mapping=RdfMapping("http://x/", "http://x/", label_language="de"))
    assert plain.find_entities("Douglas Adams") == ["Q1"] and plain.find_entities("Anhalter") == []
    assert plain.find_entities_batch(["Douglas Adams", "Anhalter"]) == {"Douglas Adams": ["Q1"], "Anhalter": []}
    assert tagged.find_entities("Anhalter") == ["Q2"] and tagged.find_entities("Douglas Adams") == []
    for kg in (plain, tagged):
        assert kg.find_entities("douglas adams", mode="casefold") == ["Q1"]
        assert kg.label("Q1") == "Douglas Adams" and kg.neighbors("Q1", "p") == ["Q2"]
    with pytest.raises(ValueError, match="language tag"):
        RdfMapping(label_language='en" } DROP ALL')


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_bytes(b"a|r|b\nc|r|\xff\xfe\ne|r|f\n")
    with pytest.raises(KGFormatError, match=r"kb.txt:2: not valid UTF-8"):
        read_triples(path)
    triples, _, report = read_triples(path, on_error="skip")
    assert [t.head for t in triples] == ["a", "e"] and report.skipped == 1 and report.lines == 3


def test_networkx_fast_build_equals_add_edges_from():
    import networkx as nx

    kg = NetworkXGraph(TRIPLES + TRIPLES[:3])  # duplicates too
    kg.add_triples([Triple("Alien", "directed_by", "Someone Else")])
    ref = nx.MultiDiGraph()
    ref.add_edges_from((t.head, t.tail, t.relation) for t in TRIPLES + [Triple("Alien", "directed_by", "Someone Else")])
    assert nx.utils.graphs_equal(kg.g, ref)
    assert sorted(kg.g.edges(keys=True)) == sorted(ref.edges(keys=True))
    assert kg.g.number_of_edges() == len(TRIPLES) + 1


# -- headers, empty files, duplicates, long lines -------------------------------------------
def test_a_header_line_is_reported_not_read_as_a_triple(tmp_path):
    from rra.graph.loaders import read_triples

    f = tmp_path / "kb.tsv"
    f.write_text("head\trelation\ttail\nAlien\tdirected_by\tRidley Scott\n", encoding="utf-8")
    triples, _, report = read_triples(f)
    assert [t.as_tuple() for t in triples] == [("Alien", "directed_by", "Ridley Scott")]
    assert report.header == "head\trelation\ttail" and "header" in str(report)
    g = tmp_path / "kb.txt"
    g.write_text("Subject|Predicate|Object\nhead|relation|Ridley Scott\n", encoding="utf-8")
    triples, _, report = read_triples(g)  # only line 1 can be a header
    assert [t.as_tuple() for t in triples] == [("head", "relation", "Ridley Scott")]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_an_empty_kg_file_is_a_named_error(tmp_path, text):
    from rra.graph.loaders import EmptyKGError, load_graph

    f = tmp_path / "kb.nt"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(EmptyKGError, match="kb.nt: no triples"):
        load_graph(f)


def test_duplicates_are_counted_and_long_values_cut(tmp_path):
    from rra.graph.loaders import KGFormatError, read_triples

    f = tmp_path / "kb.txt"
    f.write_text("a|r|b\na|r|b\na|r|c\n", encoding="utf-8")
    assert read_triples(f)[2].duplicates == 1
    f.write_text("a|r|b\n" + "x" * 1_000_000 + "\n", encoding="utf-8")
    with pytest.raises(KGFormatError) as err:
        read_triples(f)
    assert "kb.txt:2" in str(err.value) and len(str(err.value)) < 400 and "1000000 characters" in str(err.value)


TURTLE = """@prefix ex: <http://ex.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:Q1 ex:author ex:Q2 ;
      rdfs:label "Der Weg"@de, "The Road"@en .
ex:Q2 ex:born "1952"^^<http://www.w3.org/2001/XMLSchema#gYear> ;
      rdfs:label "Ann Reed"@en, "Ann Reed (author)" .
"""


def test_turtle_and_other_rdf_syntaxes_read_like_ntriples(tmp_path):
    """Turtle / N-Quads / TriG / RDF/XML files load through pyoxigraph into the same triples and
    labels as the N-Triples file of the same graph."""
    ttl = write(tmp_path / "kg.ttl", TURTLE)
    triples, labels, report = read_triples(ttl)
    assert report.format == "turtle" and report.triples == 2
    nt = write(tmp_path / "kg.nt", "".join(f"{q.subject} {q.predicate} {q.object} .\n"
                                          for q in ox.parse(TURTLE.encode(), format=ox.RdfFormat.TURTLE)))
    assert (triples, labels) == read_triples(nt)[:2]
    mapping = RdfMapping(entity_base="http://ex.org/", relation_base="http://ex.org/")
    kg = load_graph(ttl, entity_base=mapping.entity_base, relation_base=mapping.relation_base)
    assert kg.neighbors("Q1", "author") == ["Q2"] and kg.neighbors("Q2", "born") == ['"1952"^^xsd:gYear']
    assert kg.label('"1952"^^xsd:gYear') == "1952"  # a value reads as itself
    # an untagged label first, then English, then any other language (the first of the best)
    assert kg.label("Q1") == "The Road" and kg.label("Q2") == "Ann Reed (author)"
    assert load_graph(ttl, label_language="de", entity_base="http://ex.org/").label("Q1") == "Der Weg"
    xml = write(tmp_path / "kg.rdf", ox.serialize(ox.parse(TURTLE.encode(), format=ox.RdfFormat.TURTLE),
                                                    format=ox.RdfFormat.RDF_XML).decode())
    assert sorted(read_triples(xml)[0]) == sorted(triples)
    assert detect_format("x.nq") == "nquads" and detect_format("x.trig") == "trig"


def test_a_turtle_syntax_error_names_file_and_line(tmp_path):
    bad = write(tmp_path / "bad.ttl", "@prefix ex: <http://ex.org/> .\nex:a ex:b ex:c .\nex:a ex:b .\n")
    with pytest.raises(KGFormatError) as e:
        read_triples(bad)
    assert "bad.ttl" in str(e.value) and "line 3" in str(e.value)


def test_every_backend_picks_the_same_label_among_languages():
    """A store holding an entity's labels in several languages (loaded by another tool) names it
    as the file loader would: the preferred language, else untagged, else English."""
    nt = ('<http://rra.local/entity/x> <http://rra.local/relation/r> <http://rra.local/entity/y> .\n'
          '<http://rra.local/entity/x> <http://www.w3.org/2000/01/rdf-schema#label> "Zeta"@de .\n'
          '<http://rra.local/entity/x> <http://www.w3.org/2000/01/rdf-schema#label> "Alpha"@fr .\n'
          '<http://rra.local/entity/x> <http://www.w3.org/2000/01/rdf-schema#label> "Omega"@en .\n'
          '<http://rra.local/entity/y> <http://www.w3.org/2000/01/rdf-schema#label> "Beta"@de .\n')
    store = ox.Store()
    store.load(nt.encode(), format=ox.RdfFormat.N_TRIPLES)
    assert OxigraphGraph(store).labels(["x", "y"]) == {"x": "Omega", "y": "Beta"}
    assert OxigraphGraph(store, mapping=RdfMapping(label_language="de")).labels(["x"]) == {"x": "Zeta"}
    from rra.graph.loaders import _parse_ntriples_lines

    triples, labels = [], {}
    _parse_ntriples_lines(nt.splitlines(), RdfMapping(), triples, labels, lambda *a: None)
    assert labels == {"x": "Omega", "y": "Beta"}


def test_compressed_dumps_read_as_the_plain_files(tmp_path):
    """Dumps come compressed (Wikidata's .nt.bz2 / .nt.gz, DBpedia's .ttl.bz2): each reads as the
    plain file, the format from the name before the compression's suffix, on every backend; a bad
    line is named by its line in the decompressed text; a cut-off or mislabelled file is an error
    that names it."""
    import bz2
    import gzip
    import lzma

    nt = tmp_path / "kg.nt"
    write_ntriples(nt, TRIPLES, LABELS)
    plain = read_triples(nt)[:2]
    for suffix, compress in ((".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)):
        packed = tmp_path / f"kg.nt{suffix}"
        packed.write_bytes(compress(nt.read_bytes()))
        assert detect_format(packed) == "nt"
        assert read_triples(packed)[:2] == plain, suffix
    ttl = tmp_path / "kg.ttl.gz"
    ttl.write_bytes(gzip.compress(TURTLE.encode()))
    assert read_triples(ttl)[:2] == read_triples(write(tmp_path / "kg.ttl", TURTLE))[:2]
    kb = tmp_path / "kb.txt.gz"
    kb.write_bytes(gzip.compress(b"Alien|directed_by|Ridley Scott\noops\n"))
    labels = tmp_path / "labels.tsv.bz2"
    labels.write_bytes(bz2.compress("Ridley Scott\tSir Ridley Scott\n".encode()))
    with pytest.raises(KGFormatError, match=r"kb.txt.gz:2"):
        read_triples(kb)
    for backend in ("networkx", "oxigraph"):
        kg = load_graph(kb, backend, labels_path=labels, on_error="skip")
        assert kg.find_entities("Sir Ridley Scott") == ["Ridley Scott"] and kg.load_report.skipped == 1
    cut = tmp_path / "cut.nt.gz"
    cut.write_bytes(gzip.compress(nt.read_bytes())[:-20])
    not_packed = write(tmp_path / "plain.nt.gz", nt.read_text(encoding="utf-8"))
    for bad in (cut, not_packed):
        with pytest.raises(CompressedFileError, match=bad.name):
            load_graph(bad)


def test_semicolon_csv_kgs_and_labels_read_as_comma_ones(tmp_path):
    """Spreadsheets in locales that write a decimal comma save CSV with semicolons: a KG or labels
    file written so reads as the comma file would (a header, a quoted cell, a value holding a
    comma), on every backend; a comma file whose values hold semicolons stays a comma file."""
    comma = write(tmp_path / "kg.csv", 'head,relation,tail\nAlien,directed_by,Ridley Scott\n'
                                        '"Scott, Ridley",born_in,South Shields\nAlien,rating,"7,5"\n')
    semi = write(tmp_path / "kg_semi.csv", 'head;relation;tail\r\nAlien;directed_by;Ridley Scott\r\n'
                                           'Scott, Ridley;born_in;South Shields\r\nAlien;rating;7,5\r\n')
    want = read_triples(comma)[0]
    triples, _, report = read_triples(semi)
    assert triples == want and report.header == "head;relation;tail" and "semicolon" in report.format
    with_semis = write(tmp_path / "notes.csv", "Alien,note,a; b\nAlien,note,c\n")
    assert read_triples(with_semis)[0][0].tail == "a; b"  # only some lines hold one: commas
    labels = write(tmp_path / "labels.csv", "id;label\nRidley Scott;Scott, Sir Ridley\n")
    for backend in ("networkx", "oxigraph"):
        kg = load_graph(semi, backend, labels_path=labels)
        assert kg.find_entities("Scott, Sir Ridley") == ["Ridley Scott"]
        assert kg.neighbors("Alien", "directed_by") == ["Ridley Scott"]
    bad = write(tmp_path / "bad.csv", "Alien;directed_by;Ridley Scott\nAlien;directed_by\n")
    with pytest.raises(KGFormatError, match=r"bad.csv:2: expected head;relation;tail, got 2 fields"):
        read_triples(bad)

"""Read a KG from disk (``head|relation|tail``, TSV, N-Triples, or any RDF syntax pyoxigraph
reads: Turtle, N-Quads, TriG, RDF/XML), write N-Triples, build a backend. A file compressed as
dumps are published (``latest-truthy.nt.bz2``, ``kg.ttl.gz``, ``.xz``) is read as it is: the format
comes from the name before the compression's suffix.

A malformed line is an error naming the file, the line number and the offending value; with
``on_error="skip"`` it is skipped instead and counted in the `LoadReport`, so one bad line in
a large dump does not cost the whole load.
"""
from __future__ import annotations

import bz2
import contextlib
import csv
import dataclasses
import gzip
import logging
import lzma
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Literal

from rra.graph.base import INVERSE_PREFIX, paused_gc
from rra.graph.rdf import (RDF_LANG_STRING, RdfMapping, canonical_literal, display, is_literal, label_rank, literal_id,
                           split_literal, unescape_literal)
from rra.graph.xsd import XSD
from rra.records import Triple

Format = Literal["pipe", "tsv", "csv", "nt", "turtle", "nquads", "trig", "rdfxml"]
# RDF syntaxes other than N-Triples: parsed by pyoxigraph, then read like N-Triples (the triples
# of every named graph; labels from the label predicate, as in .nt files).
RDF_SYNTAXES = {"turtle": "TURTLE", "nquads": "N_QUADS", "trig": "TRIG", "rdfxml": "RDF_XML"}
FORMATS = ("pipe", "tsv", "csv", "nt", *RDF_SYNTAXES)
DELIMITED = {"pipe": "|", "tsv": "\t", "csv": ","}  # head<sep>relation<sep>tail, one triple a line
OnError = Literal["raise", "skip"]

# Extension -> format. MetaQA's kb.txt is `head|relation|tail`, hence .txt -> pipe.
EXTENSIONS: dict[str, Format] = {".txt": "pipe", ".kb": "pipe", ".psv": "pipe", ".tsv": "tsv", ".csv": "csv", ".nt": "nt",
                                  ".ttl": "turtle", ".nq": "nquads", ".trig": "trig", ".rdf": "rdfxml",
                                  ".owl": "rdfxml"}
MAX_REASONS = 5
MAX_VALUE_CHARS = 200  # a 1 MB line is quoted by its start, not whole
# A first line made of these words is a column header, not a triple.
HEADER_WORDS = {"head", "relation", "tail", "subject", "predicate", "object", "source", "target",
                "h", "r", "t", "s", "p", "o", "rel", "edge", "from", "to", "property", "value"}

log = logging.getLogger(__name__)


class KGFormatError(ValueError):
    """A line of a KG file that cannot be read."""

    def __init__(self, path: str | Path, line: int, problem: str, value: str):
        self.path, self.line, self.problem, self.value = str(path), line, problem, value
        super().__init__(f"{path}:{line}: {problem}: {shorten(value)}")


class EmptyKGError(ValueError):
    """A KG file that holds no triple at all (empty, only comments, or every line skipped)."""


class CompressedFileError(ValueError):
    """A .gz / .bz2 / .xz file that cannot be decompressed (truncated, or not compressed at all)."""


# suffix -> opener: published dumps come compressed (Wikidata .nt.bz2 / .nt.gz, DBpedia .ttl.bz2)
COMPRESSIONS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def format_suffix(path: str | Path) -> str:
    """The suffix that names a file's format: `.nt` for `kg.nt` and for `kg.nt.gz`."""
    p = Path(path)
    return (p.with_suffix("") if p.suffix.lower() in COMPRESSIONS else p).suffix.lower()


@contextlib.contextmanager
def open_bytes(path: str | Path) -> Iterator[BinaryIO]:
    """`path` open for reading bytes, decompressed where its name ends in .gz, .bz2 or .xz; a
    compressed file that cannot be decompressed (cut short, or not compressed at all) is a
    CompressedFileError naming it. KG, labels and question files (rra.data.jsonl) all read so. A file
    that is missing or cannot be opened raises as itself: it is opened before decompression starts."""
    opener = COMPRESSIONS.get(Path(path).suffix.lower())
    with open(path, "rb") as raw:
        if opener is None:
            yield raw
            return
        try:
            with opener(raw, "rb") as f:
                yield f
        except (OSError, EOFError, lzma.LZMAError) as e:  # BadGzipFile is an OSError; a cut-off file an EOFError
            raise CompressedFileError(
                f"{path}: cannot decompress it as its name says ({Path(path).suffix}): {type(e).__name__}: {e}. "
                f"A download cut short, or a plain file named {Path(path).suffix}?") from None


def read_file_bytes(path: str | Path) -> bytes:
    """A KG, labels or question file's bytes, decompressed where its name says (`open_bytes`)."""
    with open_bytes(path) as f:
        return f.read()


def shorten(value: str, limit: int = MAX_VALUE_CHARS) -> str:
    """repr() of a value, cut to `limit` characters with the full length said."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(value)} characters)"


@dataclass
class LoadReport:
    path: str
    format: str
    lines: int = 0  # lines read, blank and comment lines included
    triples: int = 0
    labels: int = 0
    skipped: int = 0
    duplicates: int = 0  # triples that occur more than once (kept once by every backend)
    header: str | None = None  # a first line of column names, not read as a triple
    reasons: list[str] = field(default_factory=list)  # the first MAX_REASONS skip reasons
    # typed values their datatype does not allow ("abc"^^xsd:integer): kept as text (rra/graph/xsd.py)
    ill_typed: int = 0
    ill_typed_first: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = (f"{self.path} ({self.format}): {self.lines} lines, {self.triples} triples, "
                f"{self.labels} labels, {self.skipped} skipped, {self.duplicates} duplicate triples")
        if self.header is not None:
            text += f"\n  line 1 is a header, not a triple: {self.header!r}"
        text += "".join(f"\n  skipped {r}" for r in self.reasons)
        if self.ill_typed:
            text += (f"\n  {self.ill_typed} value(s) not of their datatype, kept as text: "
                     + "; ".join(self.ill_typed_first))
        return text


def detect_format(path: str | Path, format: str | None = None) -> Format:
    names = "pipe (head|relation|tail), " + ", ".join(FORMATS[1:])
    if format is not None:
        if format not in FORMATS:
            raise ValueError(f"unknown KG format {format!r}; expected one of {names}")
        return format  # type: ignore[return-value]
    suffix = format_suffix(path)
    if suffix not in EXTENSIONS:
        raise ValueError(
            f"cannot tell the format of {path} from its extension {suffix!r}; pass format= one of {names} "
            f"(a .gz, .bz2 or .xz file is named by the extension before it: kg.nt.gz)"
        )
    return EXTENSIONS[suffix]


# -- N-Triples --------------------------------------------------------------------------
_IRI_BODY = r"(?:[^<>\"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*"
_IRI = rf"<({_IRI_BODY})>"
_BNODE = r"(_:[A-Za-z0-9_][A-Za-z0-9_.\-]*)"
_LIT = r'"((?:[^"\\\n\r]|\\.)*)"(?:@([A-Za-z]+(?:-[A-Za-z0-9]+)*)|\^\^<(' + _IRI_BODY + r")>)?"
_NT_LINE = re.compile(
    rf"^[ \t]*(?:{_IRI}|{_BNODE})[ \t]*{_IRI}[ \t]*(?:{_IRI}|{_BNODE}|{_LIT})[ \t]*\.[ \t]*(?:#.*)?$"
)


def _nt_iri(raw: str) -> str:
    return unescape_literal(raw) if "\\" in raw else raw  # IRIs may hold \uXXXX escapes


def _parse_nt(line: str, mapping: RdfMapping) -> tuple[str, str, str, bool, str | None, str | None]:
    """(subject id, predicate IRI, object id or literal text, object is a literal, its language
    tag, its datatype IRI) or ValueError."""
    m = _NT_LINE.match(line)
    if m is None:
        raise ValueError("not an N-Triples statement <s> <p> <o|\"literal\"> .")
    s_iri, s_bnode, p_iri, o_iri, o_bnode, o_lit, o_lang, o_type = m.groups()
    subject = mapping.entity_id(_nt_iri(s_iri)) if s_iri is not None else s_bnode
    if o_iri is not None:
        return subject, _nt_iri(p_iri), mapping.entity_id(_nt_iri(o_iri)), False, None, None
    if o_bnode is not None:
        return subject, _nt_iri(p_iri), o_bnode, False, None, None
    return subject, _nt_iri(p_iri), unescape_literal(o_lit), True, o_lang, o_type and _nt_iri(o_type)


def _rdf_statements(path: str | Path, fmt: str) -> list[str]:
    """The file's triples as N-Triples statements, parsed by pyoxigraph (every named graph's
    triples; the graph names are dropped). A syntax error is a KGFormatError at its line."""
    import pyoxigraph as ox

    data = read_file_bytes(path)
    if data.startswith(BOM):  # a byte-order mark (Windows editors) is not part of the syntax
        data = data[len(BOM):]
    try:
        return [f"{q.subject} {q.predicate} {q.object} ."
                for q in ox.parse(data, format=getattr(ox.RdfFormat, RDF_SYNTAXES[fmt]))]
    except SyntaxError as e:
        m = re.search(r"line (\d+)", str(e))
        line = int(m.group(1)) if m else 0
        lines = data.decode("utf-8", errors="replace").split("\n")
        value = lines[line - 1] if 0 < line <= len(lines) else ""
        raise KGFormatError(path, line, f"not valid {fmt} ({e})", value) from None


def _on_bad_line(path: str | Path, on_error: str, report: LoadReport):
    """What to do with a bad line: raise (naming file, line, value), or count it and go on."""
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")

    def bad(lineno: int, problem: str, value: str) -> None:
        if on_error == "raise":
            raise KGFormatError(path, lineno, problem, value)
        report.skipped += 1
        if len(report.reasons) < MAX_REASONS:
            report.reasons.append(f"line {lineno}: {problem}: {shorten(value)}")

    return bad


def read_triples(
    path: str | Path,
    format: str | None = None,
    on_error: OnError = "raise",
    mapping: RdfMapping | None = None,
    allow_empty: bool = False,
    names: dict[str, list[str]] | None = None,
) -> tuple[list[Triple], dict[str, str], LoadReport]:
    """Triples, labels (from label-predicate triples) and a report. A file with no triple is an
    `EmptyKGError` unless `allow_empty` (a labels-only .nt file). `names`, where given, receives
    every name of each entity that has more than one (each language's label, each naming
    predicate's), the label among them."""
    fmt = detect_format(path, format)
    mapping = mapping or RdfMapping()
    report = LoadReport(str(path), fmt)
    triples: list[Triple] = []
    labels: dict[str, str] = {}

    bad = _on_bad_line(path, on_error, report)
    ill_typed = _ill_typed_notes(report)
    with paused_gc():
        # other RDF syntaxes come back as N-Triples statements, numbered instead of lines
        lines = _rdf_statements(path, fmt) if fmt in RDF_SYNTAXES else _read_lines(path, bad)
        report.lines = len(lines)
        if fmt not in DELIMITED:
            _parse_ntriples_lines(lines, mapping, triples, labels, bad, ill_typed, names)
        else:
            sep = DELIMITED[fmt] if fmt != "csv" else csv_separator(lines)
            if sep != DELIMITED[fmt]:
                report.format = "csv (semicolon-separated)"
                log.info("%s: cells separated by semicolons, not commas (a spreadsheet's CSV in a locale "
                         "that writes a decimal comma)", path)
            if lines and is_header(lines[0], sep):
                report.header = lines[0]
                log.info("%s: line 1 is a column header, not a triple: %r", path, lines[0])
                lines = [""] + lines[1:]  # keep line numbers
            _parse_delimited_lines(lines, sep, triples, bad, ill_typed)
    if fmt in DELIMITED:  # `Q1|rdfs:label|Douglas Adams` is a label, as it would be in N-Triples
        label_relations = {r for r in {t.relation for t in triples} if mapping.relation_iri(r) in mapping.label_predicates}
        if label_relations:
            for t in triples:
                if t.relation in label_relations:
                    prev = labels.setdefault(t.head, t.tail)
                    if names is not None and prev is not t.tail:  # a second name: keep them all
                        names.setdefault(t.head, [prev]).append(t.tail)
            triples = [t for t in triples if t.relation not in label_relations]
    if report.ill_typed:
        log.warning("%s: %d typed value(s) are not values of their datatype and are read as text (they match no "
                    "numeric or date condition): %s", path, report.ill_typed, "; ".join(report.ill_typed_first))
    report.triples = len(triples)
    report.duplicates = len(triples) - len(set(triples))
    report.labels = len(labels)
    if not triples and not allow_empty:
        why = f"{report.lines} lines, {report.skipped} skipped" + "".join(f"; {r}" for r in report.reasons[:2])
        raise EmptyKGError(f"{path}: no triples in this KG file ({fmt} format; {why})")
    return triples, labels, report


def csv_separator(lines: list[str], cells: int = 3, sample: int = 50) -> str:
    """"," or ";" for a .csv KG (`cells` 3) or labels file (2): spreadsheets in locales that write a
    decimal comma save CSV with semicolons ("Q1;population;1,5"). Semicolons where more of the
    first `sample` non-blank lines read as `cells` cells with them than with commas, so a comma
    file whose values hold semicolons stays a comma file, and a malformed line of a semicolon file
    is named as such."""
    seen = [line for line in lines[:sample * 4] if line.strip() and not line.lstrip().startswith("#")][:sample]

    def fits(line: str, sep: str) -> bool:
        return len(line.split(sep) if '"' not in line else next(csv.reader([line], delimiter=sep), [])) == cells

    return ";" if sum(fits(line, ";") for line in seen) > sum(fits(line, ",") for line in seen) else ","


def is_header(line: str, sep: str) -> bool:
    """`head|relation|tail`, `subject\tpredicate\tobject`, ...: three column names."""
    parts = [p.strip().lower().lstrip("#").strip() for p in line.split(sep)]
    return len(parts) == 3 and all(p in HEADER_WORDS for p in parts)


BOM = b"\xef\xbb\xbf"


def _read_lines(path: str | Path, bad) -> list[str]:
    """The file's lines (without line ends), read as UTF-8 with an optional byte-order mark. A line that is not UTF-8 is reported by `bad`
    with its number, and read as '' (so it is skipped) when `bad` does not raise."""
    data = read_file_bytes(path)
    if data.startswith(BOM):  # UTF-8 with a byte-order mark (spreadsheets, Windows editors): not text
        data = data[len(BOM):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    raw = text.split("\n") if text is not None else data.split(b"\n")
    if raw and not raw[-1]:
        raw.pop()  # the final newline does not start a line
    lines = []
    for lineno, line in enumerate(raw, 1):
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as e:
                bad(lineno, f"not valid UTF-8 ({e.reason} at byte {e.start})", line.decode("utf-8", "replace"))
                line = ""
        lines.append(line[:-1] if line.endswith("\r") else line)
    return lines


def _ill_typed_notes(report: LoadReport):
    """A callback noting a typed value that is not of its datatype (line, as written)."""
    def note(lineno: int, written: str) -> None:
        report.ill_typed += 1
        if len(report.ill_typed_first) < MAX_REASONS:
            report.ill_typed_first.append(f"line {lineno}: {shorten(written)}")
    return note


def _typed(datatype: str | None) -> bool:
    """Is this a datatype whose values rra reads (and so can find ill-typed)?"""
    return bool(datatype) and datatype.startswith(XSD) and datatype not in (XSD + "string", RDF_LANG_STRING)


def _parse_delimited_lines(lines: list[str], sep: str, triples: list[Triple], bad, ill_typed=None) -> None:
    for lineno, line in enumerate(lines, 1):
        # Spaces around a field are layout, not part of the id ("a | r | b" == "a|r|b"). A CSV cell
        # may be quoted to hold a comma ("Smith, John"); a literal cell's own quotes are doubled there
        cells = line.split(sep) if sep not in ",;" or '"' not in line else next(csv.reader([line], delimiter=sep), [])
        parts = [p.strip() for p in cells]
        # fast path first: MetaQA's 134k lines must load in well under 5 s
        if (len(parts) == 3 and parts[0] and parts[1] and parts[2] and parts[1][0] != INVERSE_PREFIX
                and parts[0][0] != '"' and parts[2][0] != '"'):
            triples.append(Triple(parts[0], parts[1], parts[2]))
        elif not line.strip():
            continue
        elif len(parts) == 3 and all(parts) and parts[1][0] != INVERSE_PREFIX and '"' in parts[0][:1] + parts[2][:1]:
            # a cell in literal syntax ("1985"^^xsd:gYear) is a literal node; a subject cannot be one
            if is_literal(parts[0]):
                bad(lineno, "a literal cannot be the head of a triple", parts[0])
            else:
                node = canonical_literal(parts[2])
                if node is not None and ill_typed is not None and node.endswith('"') and _typed(split_literal(parts[2])[1]):
                    ill_typed(lineno, parts[2])
                triples.append(Triple(parts[0], parts[1], node or parts[2]))
        elif len(parts) != 3:
            bad(lineno, f"expected head{sep}relation{sep}tail, got {len(parts)} fields", line)
        elif not all(parts):
            bad(lineno, "empty head, relation or tail", line)
        else:
            bad(lineno, f"relation may not start with {INVERSE_PREFIX!r} (reserved for inverses)", parts[1])


def _parse_ntriples_lines(lines, mapping: RdfMapping, triples: list[Triple], labels: dict[str, str], bad,
                          ill_typed=None, names: dict[str, list[str]] | None = None) -> None:
    rank: dict[str, tuple[int, int]] = {}  # of each entity's label so far: (language, predicate)
    naming = {p: k for k, p in enumerate(mapping.label_predicates)}  # the label predicate 0, name predicates after
    for lineno, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            head, pred, tail, object_literal, lang, datatype = _parse_nt(line, mapping)
        except ValueError as e:
            bad(lineno, str(e), line)
            continue
        k = naming.get(pred)
        if k is not None and (object_literal or k == 0):
            if object_literal:
                # several labels (a dump in many languages): the preferred language's, else the
                # untagged one, else English; then rdfs:label before a name predicate's (schema:name);
                # the first of those wins, as in a label file
                r = (label_rank(lang, mapping.label_language), k)
                prev = labels.get(head)
                if r < rank.get(head, (99, 99)):
                    labels[head], rank[head] = tail, r
                if names is not None and prev is not None:  # a second name: keep them all (most have one)
                    names.setdefault(head, [prev]).append(tail)
            else:
                bad(lineno, "label is not a literal", line)
            continue
        relation = mapping.relation_id(pred)
        if relation.startswith(INVERSE_PREFIX):
            bad(lineno, f"relation may not start with {INVERSE_PREFIX!r} (reserved for inverses)", relation)
            continue
        # a literal object is a literal node ("1985"^^xsd:gYear), never the entity spelt 1985
        if object_literal:
            node = literal_id(tail, datatype, lang)
            if ill_typed is not None and node.endswith('"') and _typed(datatype):  # kept as its text
                ill_typed(lineno, f'"{tail}"^^<{datatype}>')
            triples.append(Triple(head, relation, node))
        else:
            triples.append(Triple(head, relation, tail))


def read_labels(
    path: str | Path, on_error: OnError = "raise", mapping: RdfMapping | None = None
) -> tuple[dict[str, str], LoadReport]:
    """Labels from `id<TAB>label` lines (`id,label` in a .csv file, a cell quoted to hold a comma;
    a first line `id,label` is a header), or from label-predicate triples of an .nt file."""
    fmt = EXTENSIONS.get(format_suffix(path))
    if fmt == "nt" or fmt in RDF_SYNTAXES:
        _, labels, report = read_triples(path, fmt, on_error, mapping, allow_empty=True)
        return labels, report
    comma = fmt == "csv"
    report = LoadReport(str(path), "labels-csv" if comma else "labels-tsv")
    bad = _on_bad_line(path, on_error, report)
    labels: dict[str, str] = {}
    lines = _read_lines(path, bad)
    report.lines = len(lines)
    sep = csv_separator(lines, cells=2) if comma else "\t"
    if sep == ";":
        report.format = "labels-csv (semicolon-separated)"
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = next(csv.reader([line], delimiter=sep), []) if comma else line.split("\t")
        if comma and lineno == 1 and [p.strip().lower() for p in parts] in (["id", "label"], ["entity", "label"]):
            continue
        if len(parts) != 2 or not parts[0].strip():
            bad(lineno, f"expected id{sep}label" if comma else "expected id<TAB>label", line)
            continue
        labels.setdefault(parts[0].strip(), parts[1])
    report.labels = len(labels)
    return labels, report


def read_kg(path: str | Path, format: str | None = None, on_error: OnError = "raise",
            mapping: RdfMapping | None = None, labels_path: str | Path | None = None,
            other_names: dict[str, list[str]] | None = None,
            ) -> tuple[list[Triple], dict[str, str], LoadReport]:
    """A KG file's triples and labels, with a labels file's (`labels_path`) over the file's own, and
    names for the relations the KG names elsewhere (`name_relations`): what every backend loads.
    `other_names`, where given, receives each entity's names other than its label (its labels in
    other languages, other naming predicates' values): what it is found by besides its label."""
    mapping = mapping or RdfMapping()
    names: dict[str, list[str]] | None = {} if other_names is not None else None
    triples, labels, report = read_triples(path, format, on_error, mapping, names=names)
    if labels_path is not None:
        more, label_report = read_labels(labels_path, on_error, mapping)
        if names is not None:  # the file's own label, where the labels file gives another, is another name
            for e in more.keys() & labels.keys():
                names.setdefault(e, [labels[e]])
        labels.update(more)
        report.labels = len(labels)
        report.skipped += label_report.skipped
        report.reasons += [f"{labels_path} {r}" for r in label_report.reasons][: MAX_REASONS - len(report.reasons)]
    name_relations(triples, labels, mapping)
    for e, found in (names or {}).items():
        others = [n for n in dict.fromkeys(found) if n != labels.get(e)]
        if others:
            other_names[e] = others
    # a triple pointing at one of the KG's own predicates describes the predicate (Wikidata's
    # wd:P19 wikibase:directClaim wdt:P19): schema, not a fact, so no walk or link starts from it
    predicates = {mapping.entity_id(mapping.relation_iri(r)) for r in {t.relation for t in triples}}
    facts = [t for t in triples if t.tail not in predicates]
    if len(facts) < len(triples):
        log.info("%s: %d triple(s) about the KG's own predicates read as schema, not facts", path,
                 len(triples) - len(facts))
        triples = facts
        report.triples = len(triples)
    return triples, labels, report


def name_relations(triples: list[Triple], labels: dict[str, str], mapping: RdfMapping) -> int:
    """Label each relation that has no label of its own with the label of the entity describing its
    predicate (`mapping.property_namespaces`: Wikidata's `wdt:P19` reads "place of birth", the label
    of `wd:P19`), in `labels`; returns how many were named. Without it a Wikidata KG's relations
    read as "p19" to the encoder."""
    named = 0
    for relation in sorted({t.relation for t in triples}):
        if labels.get(relation):
            continue
        entity = mapping.property_entity_iri(relation)
        name = labels.get(mapping.entity_id(entity)) if entity else None
        if name:
            labels[relation] = name
            named += 1
    return named


def alias_names(triples: Iterable[Triple], mapping: RdfMapping) -> dict[str, list[str]]:
    """Entity -> its other names: the text values of its alias predicates (`mapping.alias_predicates`:
    skos:altLabel "JFK"@en), what the in-memory backends find it by besides its label."""
    wanted = set(mapping.alias_predicates)
    if not wanted:
        return {}
    aliases: dict[str, list[str]] = {}
    alias_relations: dict[str, bool] = {}
    for t in triples:
        is_alias = alias_relations.get(t.relation)
        if is_alias is None:
            is_alias = alias_relations[t.relation] = (not t.relation.startswith("^")
                                                      and mapping.relation_iri(t.relation) in wanted)
        if is_alias and is_literal(t.tail):
            name = display(t.tail).strip()
            if name and name not in aliases.setdefault(t.head, []):
                aliases[t.head].append(name)
    return aliases


# -- one entry point (a Hydra `_target_`) ------------------------------------------------
def load_graph(
    path: str | Path | None = None,
    backend: Literal["networkx", "oxigraph"] = "networkx",
    format: str | None = None,
    labels_path: str | Path | None = None,
    on_error: OnError = "raise",
    store_path: str | Path | None = None,
    entity_base: str | None = None,
    relation_base: str | None = None,
    label_predicate: str | None = None,
    graph_iri: str | list[str] | None = None,
    label_language: str | None = None,
    property_namespaces: dict[str, str] | None = None,
    alias_predicates: list[str] | None = None,
    name_predicates: list[str] | None = None,
):
    """Read a KG file into a backend; `kg.load_report` says what was read and skipped.
    `graph_iri` (Oxigraph): the named graph the KG is loaded into and read from.
    `property_namespaces`: where predicates are named (rra.graph.rdf.RdfMapping; None: Wikidata's).
    `alias_predicates`: whose values are other names an entity is found by (None: ALIAS_PREDICATES).
    `name_predicates`: whose values name an entity that has no label (None: NAME_PREDICATES, schema:name, ...).

    backend="oxigraph" keeps the store in memory, or on disk at `store_path`; with `store_path`
    and no `path` it opens a store loaded earlier (e.g. by ``rra-kg load``)."""
    from rra.graph.networkx_graph import NetworkXGraph
    from rra.graph.oxigraph_graph import OxigraphGraph

    given = {"entity_base": entity_base, "relation_base": relation_base, "label_predicate": label_predicate,
             "label_language": label_language, "property_namespaces": property_namespaces,
             "alias_predicates": alias_predicates, "name_predicates": name_predicates}
    mapping = RdfMapping(**{k: v for k, v in given.items() if v is not None})
    if backend not in ("networkx", "oxigraph"):
        raise ValueError(f"unknown graph backend {backend!r}; expected networkx or oxigraph "
                         "(for a SPARQL endpoint use rra.graph.SparqlGraph)")
    if path is None:
        if backend == "oxigraph" and store_path is not None:
            return OxigraphGraph(path=store_path, mapping=mapping, graph_iri=graph_iri)
        raise ValueError("load_graph needs a KG file (path=...), or backend=oxigraph with store_path")
    if not Path(path).exists():
        raise FileNotFoundError(f"KG file not found: {path}")
    if backend == "oxigraph" and store_path is not None:  # opened as it is when it holds this file already
        return _load_store(path, store_path, mapping, graph_iri, format, on_error, labels_path)
    other_names: dict[str, list[str]] = {}  # "Die unendliche Geschichte"@de where the label is English
    triples, labels, report = read_kg(path, format, on_error, mapping, labels_path, other_names)
    with paused_gc():
        if backend == "networkx":
            kg = NetworkXGraph(triples, labels)
            kg.set_aliases(alias_names(triples, mapping))  # a store finds them by query (rra.graph.queries)
            kg.set_aliases(other_names)
        else:
            kg = OxigraphGraph.from_triples(triples, labels, other_names=other_names, mapping=mapping,
                                            graph_iri=graph_iri)
    return _reported(kg, report, path)


def _reported(kg, report: LoadReport, path):
    kg.load_report = report
    if report.skipped:  # on_error=skip: said once, loudly, with where (run reports repeat it)
        log.warning("%s: skipped %d bad line(s) (on_error=skip): %s", path, report.skipped,
                    "; ".join(report.reasons[:5]) + (" ..." if report.skipped > 5 else ""))
    return kg


def _load_store(path, store_path, mapping: RdfMapping, graph_iri, format, on_error, labels_path):
    """The KG file in the on-disk Oxigraph store at `store_path` (rra.graph.store_record): opened as
    it is where the store's record says it holds this file, unchanged, loaded with these settings;
    else read, and loaded into the graph in place of what an earlier load put there."""
    from rra.graph import store_record
    from rra.graph.oxigraph_graph import OxigraphGraph

    settings = {"format": format, "on_error": on_error, "mapping": dataclasses.asdict(mapping), "graph_iri": graph_iri}
    what, key = store_record.source(path, labels_path, settings), store_record.graph_key(graph_iri)
    kg = OxigraphGraph(path=store_path, mapping=mapping, graph_iri=graph_iri)
    known = store_record.recorded(store_path, key)
    if known is not None and known["source"] == what and kg.holds_triples():
        log.info("%s holds %s as loaded before (unchanged since): opened, not loaded again", store_path, path)
        return _reported(kg, LoadReport(**known["report"]), path)
    other_names: dict[str, list[str]] = {}
    triples, labels, report = read_kg(path, format, on_error, mapping, labels_path, other_names)
    if kg.holds_triples():
        if known is not None:  # what an earlier load put there: replaced, so a removed fact goes too
            log.info("%s: %s (or its settings) changed since it was loaded: loading it again", store_path, path)
            store_record.forget(store_path, key)
            kg.clear_target()
        else:
            log.warning("%s holds triples rra did not load from a file; %s is added to them", store_path, path)
    with paused_gc():
        kg.add_triples(triples, labels, other_names)
    kg.flush()
    store_record.write(store_path, key, what, report)
    return _reported(kg, report, path)

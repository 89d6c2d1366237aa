"""How KG ids become RDF terms, shared by N-Triples export and both SPARQL backends.

An entity id becomes ``<entity_base>`` + its percent-encoded id, a relation ``<relation_base>`` +
its percent-encoded name. Labels hang off a configurable label predicate (``rdfs:label``).
Ids that already are absolute IRIs (``http://...``, ``urn:...``) are used as they are, so a
foreign store's IRIs outside the bases survive the round trip as ids.

Every value that goes into an N-Triples line or a SPARQL query passes through `iri_ref` or
`literal` here: user text is never formatted raw into a query.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable
from urllib.parse import unquote

from rra.graph.xsd import XSD, canonical
from rra.records import Triple

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
# Predicates whose values are other names of an entity ("JFK" for John F. Kennedy): Wikidata's and
# SKOS's altLabel, Freebase's common.topic.alias, schema.org's alternateName. Their triples stay facts;
# `find_entities` (and so linking) also matches an entity by them.
ALIAS_PREDICATES = ("http://www.w3.org/2004/02/skos/core#altLabel", "http://rdf.freebase.com/ns/common.topic.alias",
                    "http://schema.org/alternateName")
# Predicates that name their subject in KGs that do not use rdfs:label for it: SKOS's prefLabel,
# schema.org's name, FOAF's name, Freebase's type.object.name, Dublin Core's title (a paper's, a
# book's). Read as labels, after the label predicate, on every backend; their triples are not facts.
NAME_PREDICATES = ("http://www.w3.org/2004/02/skos/core#prefLabel", "http://schema.org/name", "https://schema.org/name",
                   "http://xmlns.com/foaf/0.1/name", "http://rdf.freebase.com/ns/type.object.name",
                   "http://purl.org/dc/terms/title", "http://purl.org/dc/elements/1.1/title")
# Where a store rra loads keeps an entity's names other than its label (its labels in other languages,
# the values of other naming predicates): found by `find_entities` as the file's own names are on the
# in-memory backends (as aliases), never shown. Always the last of `RdfMapping.label_predicates`.
OTHER_NAME = "http://rra.local/otherName"
DEFAULT_ENTITY_BASE = "http://rra.local/entity/"
DEFAULT_RELATION_BASE = "http://rra.local/relation/"

# Characters an IRI may not hold in N-Triples / SPARQL IRIREF (controls, space, <>"{}|^`\) or in
# an IRI path ([ and ]), plus '%' (so decoding is exact), '#' and '?' (so an id never turns into a fragment or query),
# plus non-ASCII code points outside RFC 3987's ucschar ranges (e.g. C1 controls, surrogates,
# non-characters). Everything else, including most unicode, stays readable.
_NOT_UCSCHAR = "".join(f"{chr(p * 0x10000 + 0xFFFE)}-{chr(p * 0x10000 + 0xFFFF)}" for p in range(1, 14))
_IRI_UNSAFE = re.compile(
    "[\x00-\x20<>\"{}|^`\\\\%#?\\[\\]\x7f-\x9f"
    "\ud800-\udfff\ue000-\uf8ff\ufdd0-\ufdef\ufff0-\uffff"
    + _NOT_UCSCHAR + "\U000E0000-\U000E0FFF\U000EFFFE-\U0010FFFF]"
)
# What IRIREF forbids outright; `iri_ref` refuses these, so nothing can close the brackets.
_IRI_FORBIDDEN = re.compile("[\x00-\x20<>\"{}|^`\\\\]")
_ABSOLUTE_IRI = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|urn:)[^\x00-\x20<>\"{}|^`\\\[\]]+$")

# N-Triples / SPARQL string escapes. Other control characters and Unicode line separators become
# \uXXXX so that a literal is always one line, whatever tool splits it.
_LITERAL_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_LITERAL_UNSAFE = re.compile('["\\\\\x00-\x1f\x7f-\x9f\u2028\u2029]')
_SURROGATE = re.compile("[\ud800-\udfff]")


def _percent(match: re.Match) -> str:
    return "".join(f"%{b:02X}" for b in match.group().encode("utf-8", "surrogatepass"))


# ASCII is by far the common case: one str.translate pass (C speed) instead of a regex callback.
_ASCII_PERCENT = {c: f"%{c:02X}" for c in range(128) if _IRI_UNSAFE.match(chr(c))}


def encode_iri_part(text: str) -> str:
    """Percent-encode what may not (or should not) appear raw in an IRI."""
    if text.isascii():
        return text.translate(_ASCII_PERCENT)
    return _IRI_UNSAFE.sub(_percent, text)


def decode_iri_part(text: str) -> str:
    return unquote(text, errors="surrogatepass") if "%" in text else text


def iri_ref(iri: str) -> str:
    """`<iri>` for N-Triples and SPARQL. Refuses an IRI that could break out of the brackets,
    so a caller that forgot to encode gets an error, never an injection."""
    if _IRI_FORBIDDEN.search(iri):
        raise ValueError(f"not a valid IRI (unsafe characters): {iri!r}")
    return f"<{iri}>"


def _escape_char(match: re.Match) -> str:
    ch = match.group()
    if ch in _LITERAL_ESCAPES:
        return _LITERAL_ESCAPES[ch]
    return f"\\u{ord(ch):04X}"


def literal(text: str) -> str:
    """A quoted, escaped plain string literal for N-Triples and SPARQL."""
    if _SURROGATE.search(text):
        raise ValueError(f"not valid Unicode (lone surrogate), so not an RDF literal: {text!r}")
    return '"' + _LITERAL_UNSAFE.sub(_escape_char, text) + '"'


_UNESCAPE = re.compile(r'\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))', re.S)
_SIMPLE_UNESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def unescape_literal(body: str) -> str:
    """Inverse of the escapes in `literal` (and the rest of N-Triples' ECHAR / UCHAR)."""
    if "\\" not in body:
        return body

    def repl(m: re.Match) -> str:
        if m.group(1) or m.group(2):
            return chr(int(m.group(1) or m.group(2), 16))
        if m.group(3) in _SIMPLE_UNESCAPES:
            return _SIMPLE_UNESCAPES[m.group(3)]
        raise ValueError(f"invalid escape \\{m.group(3)} in literal")

    return _UNESCAPE.sub(repl, body)


# -- literal nodes -------------------------------------------------------------------
# A literal node's id is its N-Triples form with XSD datatypes abbreviated (rra/graph/literals.py says
# why): "1985"^^xsd:gYear, "Ann"@en, "Ann". Entities are IRIs in a store; literals stay literals.
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"

# "body" then ^^xsd:name, ^^<iri>, @lang or nothing; the body is escaped as in N-Triples
_LITERAL_ID = re.compile(r'^"((?:[^"\\]|\\.)*)"(?:\^\^(?:xsd:([A-Za-z]+)|<([^<>"{}|^`\\\x00-\x20]+)>)'
                         r'|@([A-Za-z]+(?:-[A-Za-z0-9]+)*))?$', re.S)

def is_literal(node: str) -> bool:
    """Is this node id a literal value (not an entity)?"""
    return node[:1] == '"' and _LITERAL_ID.match(node) is not None


def split_literal(node: str) -> tuple[str, str | None, str | None]:
    """(lexical form, datatype IRI or None, language tag or None) of a literal id."""
    m = _LITERAL_ID.match(node)
    if m is None:
        raise ValueError(f"not a literal id: {node!r}")
    body, xsd_name, iri, lang = m.groups()
    return unescape_literal(body), (XSD + xsd_name if xsd_name else iri), lang


def literal_id(lexical: str, datatype: str | None = None, lang: str | None = None) -> str:
    """The node id of a literal, in the one spelling of its value that every backend gets
    (rra/graph/xsd.py: `"+5"^^xsd:integer` -> `"5"^^xsd:integer`); an ill-typed value
    (`"abc"^^xsd:integer`) is kept as its text, a plain literal. xsd:string and rdf:langString are
    implied (plain / tagged)."""
    if lang:
        return f"{literal(lexical)}@{lang.lower()}"
    if not datatype or datatype in (XSD + "string", RDF_LANG_STRING):
        return literal(lexical)
    if datatype.startswith(XSD):
        value = canonical(lexical, datatype)
        if value is None:
            return literal(lexical)
        lexical, datatype = value
    body = literal(lexical)
    if datatype.startswith(XSD) and re.fullmatch(r"[A-Za-z]+", datatype[len(XSD):]):
        return f"{body}^^xsd:{datatype[len(XSD):]}"
    return f"{body}^^<{datatype}>"


def literal_term(node: str) -> str:
    """The N-Triples / SPARQL term of a literal id (datatype IRI written out)."""
    lexical, datatype, lang = split_literal(node)
    if lang:
        return f"{literal(lexical)}@{lang}"
    return literal(lexical) + (f"^^{iri_ref(datatype)}" if datatype else "")


def canonical_literal(cell: str) -> str | None:
    """A TSV / pipe cell or an answer written as a literal (`"1985"^^xsd:gYear`, `"+5"^^<...#integer>`),
    as its node id (canonical spelling, xsd: abbreviated); None for an ordinary entity cell."""
    if not is_literal(cell):
        return None
    return literal_id(*split_literal(cell))


def display(node: str) -> str:
    """What a person reads for a node that has no label: a literal's lexical form, else the id."""
    return split_literal(node)[0] if is_literal(node) else node



# Where a KG keeps a predicate's name on another IRI: predicate namespace -> the namespace of the
# entity that describes it. Wikidata's statements use `wdt:P19` (and p:, ps:, pq: in the full RDF),
# while the name "place of birth" is the rdfs:label of the property entity `wd:P19`. Inert for a KG
# whose predicates are in none of these namespaces; `property_namespaces` of the graph config adds others.
WIKIDATA_PROPERTY_NAMESPACES = {
    f"http://www.wikidata.org/prop/{kind}": "http://www.wikidata.org/entity/"
    for kind in ("direct/", "direct-normalized/", "statement/", "statement/value/", "qualifier/",
                 "qualifier/value/", "reference/", "")
}

COMMON_PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
}
_CURIE = re.compile(r"^([A-Za-z][A-Za-z0-9_.-]*):([^\x00-\x20<>\"{}|^`\\/][^\x00-\x20<>\"{}|^`\\]*)$")


_LANG = re.compile(r"^[A-Za-z]+(?:-[A-Za-z0-9]+)*$")


def expand_curie(name: str, prefixes: dict[str, str]) -> str:
    """`rdfs:label` -> full IRI when the prefix is known; anything else unchanged."""
    m = _CURIE.match(name)
    if m and m.group(1) in prefixes:
        return prefixes[m.group(1)] + m.group(2)
    return name


# Prefixes a configured predicate may also be written with (`graph.name_predicates=[foaf:name]`);
# unlike `prefixes`, they never abbreviate a relation id, so no KG's relation ids change with them.
PREDICATE_PREFIXES = {"schema": "http://schema.org/", "foaf": "http://xmlns.com/foaf/0.1/",
                      "dcterms": "http://purl.org/dc/terms/", "dc": "http://purl.org/dc/elements/1.1/",
                      "wd": "http://www.wikidata.org/entity/", "wdt": "http://www.wikidata.org/prop/direct/",
                      "fb": "http://rdf.freebase.com/ns/", "dbo": "http://dbpedia.org/ontology/"}
_LOCAL = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_SHOWN_PREFIXES = {**COMMON_PREFIXES, **PREDICATE_PREFIXES}  # what `compact` prints as CURIEs


def compact(node: str) -> str:
    """How evidence prints a node or relation id: an IRI in a well-known namespace as its CURIE
    (`http://dbpedia.org/ontology/birthPlace` -> `dbo:birthPlace`, `^` kept for a reversed
    relation), anything else as it is. For reading only; ids stay full everywhere else."""
    mark, iri = ("^", node[1:]) if node.startswith("^") else ("", node)
    if iri.startswith("http"):
        for prefix, ns in _SHOWN_PREFIXES.items():
            if iri.startswith(ns) and _LOCAL.fullmatch(iri[len(ns):]):
                return f"{mark}{prefix}:{iri[len(ns):]}"
    return node


def compact_joined(text: str) -> str:
    """`compact` inside a string that joins several ids (an evidence path `r1/r2`, whose IRIs hold
    slashes themselves, so it cannot be split back)."""
    for prefix, ns in _SHOWN_PREFIXES.items():
        text = re.sub(re.escape(ns) + r"(?=[A-Za-z_])", prefix + ":", text)
    return text


_URI_SCHEMES = frozenset({"urn", "tag", "mailto", "did", "info", "data", "file"})  # IRIs without "//"


def predicate_iri(value: str, prefixes: dict[str, str], what: str) -> str:
    """A configured predicate as a full IRI (a CURIE of `prefixes` or PREDICATE_PREFIXES expanded).
    A CURIE whose prefix neither knows is an error: as an IRI it would name no predicate of the KG,
    and the setting would silently do nothing."""
    iri = expand_curie(str(value), {**PREDICATE_PREFIXES, **prefixes})
    m = _CURIE.match(iri)
    if m and m.group(1).lower() not in _URI_SCHEMES:
        raise ValueError(f"{what}: unknown prefix {m.group(1)!r} in {value!r}; write the full IRI "
                         f"(http://...) or use one of the prefixes {sorted({**PREDICATE_PREFIXES, **prefixes})}")
    iri_ref(iri)  # a bad IRI is a configuration error, reported now
    return iri


def label_rank(lang: str | None, preferred: str | None = None) -> int:
    """How well a label in language `lang` names its entity, lower is better: the `preferred`
    language (`label_language`), then untagged, then English, then any other. Every backend picks
    an entity's label by it, so a KG with labels in many languages reads the same everywhere."""
    lang = (lang or "").lower()
    if preferred and lang and (lang == preferred.lower() or lang.startswith(preferred.lower() + "-")):
        return 0
    if not lang:
        return 1
    return 2 if lang == "en" or lang.startswith("en-") else 3


@dataclass(frozen=True)
class RdfMapping:
    """Ids <-> IRIs. The same mapping must be used to write a store and to query it.

    `prefixes` abbreviate relations outside `relation_base` (``rdf:type`` instead of the full
    IRI) and may be used in the bases and the label predicate; entities never use prefixes,
    since names like ``Alien: Resurrection`` would look like CURIEs."""

    entity_base: str = DEFAULT_ENTITY_BASE
    relation_base: str = DEFAULT_RELATION_BASE
    label_predicate: str = RDFS_LABEL
    prefixes: dict = field(default_factory=lambda: dict(COMMON_PREFIXES), hash=False)
    # Exact label lookups use the store's index on plain string labels, plus labels in this
    # language (English where it is None: Wikidata's "..."@en labels are found without a scan).
    label_language: str | None = None
    # predicate namespace -> namespace of the entity whose label names it (WIKIDATA_PROPERTY_NAMESPACES)
    property_namespaces: dict = field(default_factory=lambda: dict(WIKIDATA_PROPERTY_NAMESPACES), hash=False)
    # predicates whose values also name an entity for `find_entities` (ALIAS_PREDICATES; () for none)
    alias_predicates: tuple = ALIAS_PREDICATES
    # predicates that name an entity where the label predicate does not (NAME_PREDICATES; () for none)
    name_predicates: tuple = NAME_PREDICATES
    # the label predicate, then the name predicates: what names an entity, in order of preference (set below)
    label_predicates: tuple = field(default=(), init=False, compare=False, repr=False)

    def __post_init__(self):
        if self.label_language is not None and not _LANG.match(self.label_language):
            raise ValueError(f"not a language tag: {self.label_language!r}")
        for name in ("entity_base", "relation_base"):
            value = expand_curie(getattr(self, name), self.prefixes)
            iri_ref(value)  # a bad base is a configuration error, reported now
            object.__setattr__(self, name, value)
        object.__setattr__(self, "label_predicate", predicate_iri(self.label_predicate, self.prefixes, "label_predicate"))
        namespaces = {}
        for ns, entity_ns in dict(self.property_namespaces or {}).items():
            ns, entity_ns = expand_curie(str(ns), self.prefixes), expand_curie(str(entity_ns), self.prefixes)
            iri_ref(ns), iri_ref(entity_ns)  # e.g. a namespace with a space: said now, not in a query
            namespaces[ns] = entity_ns
        object.__setattr__(self, "property_namespaces", namespaces)
        for name in ("alias_predicates", "name_predicates"):
            given = getattr(self, name)
            if isinstance(given, str):
                raise ValueError(f"{name} must be a list of predicate IRIs, got the string {given!r}")
            predicates = tuple(dict.fromkeys(predicate_iri(a, self.prefixes, name) for a in given or ()))
            object.__setattr__(self, name, predicates)
        # an entity's name: the label predicate's, else the first name predicate's that it has
        object.__setattr__(self, "label_predicates",
                           tuple(dict.fromkeys([self.label_predicate, *self.name_predicates, OTHER_NAME])))

    def property_entity_iri(self, relation: str) -> str | None:
        """The IRI of the entity that describes a relation's predicate (`wdt:P19` -> `wd:P19`), by
        the longest matching `property_namespaces` entry; None where none matches."""
        iri = self.relation_iri(relation)
        for ns in sorted(self.property_namespaces, key=len, reverse=True):
            if iri.startswith(ns) and len(iri) > len(ns) and "/" not in iri[len(ns):]:
                return self.property_namespaces[ns] + iri[len(ns):]
        return None

    def entity_iri(self, entity: str) -> str:
        return _to_iri(self.entity_base, entity)

    def relation_iri(self, relation: str) -> str:
        if relation.startswith("^"):
            raise ValueError(f"relation {relation!r}: pass the forward relation, not its inverse")
        m = _CURIE.match(relation)
        if m and m.group(1) in self.prefixes:
            return self.prefixes[m.group(1)] + m.group(2)
        return _to_iri(self.relation_base, relation)

    def entity_id(self, iri: str) -> str:
        return _to_id(self.entity_base, iri, self.entity_iri)

    def node_term(self, node: str) -> str:
        """The RDF term of a node in N-Triples / SPARQL: a literal stays a literal, an entity is an IRI."""
        return literal_term(node) if is_literal(node) else iri_ref(self.entity_iri(node))

    def node_key(self, node: str) -> str:
        """What a result term of this node carries as its value key (see `term_key`)."""
        return node if is_literal(node) else self.entity_iri(node)

    def relation_id(self, iri: str) -> str:
        name = _to_id(self.relation_base, iri, self.relation_iri)
        if name != iri:
            return name
        # Longest matching namespace first, and only when it maps back to the same IRI.
        for prefix, ns in sorted(self.prefixes.items(), key=lambda kv: -len(kv[1])):
            if iri.startswith(ns) and len(iri) > len(ns):
                curie = f"{prefix}:{iri[len(ns):]}"
                if _CURIE.match(curie) and self.relation_iri(curie) == iri:
                    return curie
        return iri


def _to_iri(base: str, name: str) -> str:
    if _ABSOLUTE_IRI.match(name) and not name.startswith(base):
        return name
    return base + encode_iri_part(name)


def _to_id(base: str, iri: str, back) -> str:
    if iri.startswith(base):
        name = decode_iri_part(iri[len(base):])
        # A foreign IRI that is not in our canonical encoding keeps its full IRI as id, so
        # that id -> IRI gives back exactly the IRI the store holds.
        try:
            if back(name) == iri:
                return name
        except ValueError:  # e.g. a relation IRI that would decode to "^r"
            pass
    return iri


def graph_iris(graph_iri) -> list[str]:
    """`graph_iri` as a list: None -> [] (the store's default graph), one IRI, or several (their
    union is read). IRIs are checked here so a typo fails at start-up, not inside a query."""
    if graph_iri is None:
        return []
    iris = [graph_iri] if isinstance(graph_iri, str) else [str(g) for g in graph_iri]
    for g in iris:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"{}|^`\\]+", g):
            raise ValueError(f"graph_iri {g!r} is not an absolute IRI (e.g. http://example.org/kg)")
    return iris


# -- writing ----------------------------------------------------------------------------
def ntriples_lines(
    triples: Iterable[Triple],
    labels: dict[str, str] | None = None,
    mapping: RdfMapping | None = None,
    label_all: bool = True,
    chunk_size: int = 65536,
    other_names: dict[str, list[str]] | None = None,
) -> Iterable[str]:
    """N-Triples text in chunks of whole lines. With `label_all` every entity gets a label
    triple (its label, or its id), which is what lets a SPARQL store find entities by name;
    `other_names` (rra.graph.loaders.read_kg's) are written as OTHER_NAME triples."""
    mapping = mapping or RdfMapping()
    labels = labels or {}
    ent: dict[str, str] = {}  # id -> <iri>, built once per entity (each occurs in many triples)
    rel: dict[str, str] = {}
    triples = list(triples)
    for start in range(0, len(triples), chunk_size):
        chunk = triples[start:start + chunk_size]
        for x in {x for t in chunk for x in (t.head, t.tail)}.difference(ent):
            ent[x] = mapping.node_term(x)  # a literal node is written as the literal it is
        for r in {t.relation for t in chunk}.difference(rel):
            rel[r] = iri_ref(mapping.relation_iri(r))
        yield "".join([f"{ent[t.head]} {rel[t.relation]} {ent[t.tail]} .\n" for t in chunk])
    label_pred = iri_ref(mapping.label_predicate)
    # Labels only for entities that occur in a triple: the other backends ignore the rest too.
    yield "".join([
        f"{iri} {label_pred} {literal(labels.get(x, x))} .\n"
        for x, iri in ent.items() if (label_all or x in labels) and not is_literal(x)
    ] + [  # a property's own name (rdfs:label on its IRI): what an encoder reads of an opaque relation
        f"{iri} {label_pred} {literal(labels[r])} .\n" for r, iri in rel.items() if r in labels and r not in ent
    ])
    if other_names:  # what an entity is found by besides its label (other languages, other naming predicates)
        other = iri_ref(OTHER_NAME)
        yield "".join(f"{ent[x]} {other} {literal(n)} .\n" for x, names in other_names.items()
                      if x in ent and not is_literal(x) for n in names)


def write_ntriples(
    out: str | Path | IO[str],
    triples: Iterable[Triple],
    labels: dict[str, str] | None = None,
    mapping: RdfMapping | None = None,
    label_all: bool = True,
    other_names: dict[str, list[str]] | None = None,
) -> int:
    """Write N-Triples (to a path or an open text file); returns the number of lines."""
    if isinstance(out, (str, Path)):
        with open(out, "w", encoding="utf-8", newline="\n") as f:
            return write_ntriples(f, triples, labels, mapping, label_all, other_names)
    lines = 0
    for text in ntriples_lines(triples, labels, mapping, label_all, other_names=other_names):
        out.write(text)
        lines += text.count("\n")  # escaped literals and encoded IRIs never hold a raw newline
    return lines


def ntriples_text(triples: Iterable[Triple], labels=None, mapping=None, label_all=True, other_names=None) -> str:
    return "".join(ntriples_lines(triples, labels, mapping, label_all, other_names=other_names))

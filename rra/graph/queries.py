"""The SPARQL text of every `KnowledgeGraph` operation, shared by the embedded Oxigraph backend
and the HTTP endpoint backend (they differ only in how a query is executed).

Every IRI goes through `iri_ref` and every user text through `literal` (rdf.py), so no value can
close a bracket or a string and change the query. Queries are read-only SELECTs.
"""
from __future__ import annotations

from typing import Sequence

from rra.graph.rdf import RdfMapping, iri_ref, literal


def values(var: str, m: RdfMapping, nodes: Sequence[str]) -> str:
    """VALUES over nodes: entities as IRIs, literal nodes ("1985"^^xsd:gYear) as the literals they are."""
    return f"VALUES ?{var} {{ {' '.join(m.node_term(x) for x in nodes)} }}"


def _not_label(var: str, m: RdfMapping) -> str:
    """Not a triple that names its subject (the label predicate, a name predicate such as schema:name,
    or OTHER_NAME: `m.label_predicates`, never fewer than two)."""
    return f"FILTER(?{var} NOT IN ({', '.join(iri_ref(p) for p in m.label_predicates)}))"


def _naming(m: RdfMapping, subject: str) -> str:
    """?l ?lp: a name of `subject` and the predicate giving it (one of `m.label_predicates`: the
    backend prefers the label predicate's, rra.graph.rdf.RdfMapping)."""
    return f"VALUES ?lp {{ {' '.join(iri_ref(p) for p in m.label_predicates)} }} {subject} ?lp ?l"


# An entity is anything in a non-label triple; label triples alone do not make one (as in NetworkX).
def has_entity(m: RdfMapping, entity: str) -> str:
    e = m.node_term(entity)
    # label triples on both sides: a plain literal equal to some label is not a node for that alone
    return (f"SELECT ?p WHERE {{ {{ {e} ?p ?o {_not_label('p', m)} }} UNION {{ ?s ?p {e} {_not_label('p', m)} }} }} "
            "LIMIT 1")


def labels(m: RdfMapping, entities: Sequence[str]) -> str:
    """?e ?l ?lang ?lp for the entities that exist; ?l unbound when an entity has no label."""
    return (
        f"SELECT ?e ?l (LANG(?l) AS ?lang) ?lp WHERE {{ {values('e', m, entities)} "
        f"FILTER EXISTS {{ {{ ?e ?p ?o {_not_label('p', m)} }} UNION {{ ?s ?p2 ?e {_not_label('p2', m)} }} }} "
        f"OPTIONAL {{ {_naming(m, '?e')} FILTER(isLiteral(?l)) }} }}"
    )


def _named(m: RdfMapping) -> str:
    """?e ?l: an entity and a name it is found by, its label or an alias (`m.alias_predicates`); a
    UNION of plain triple patterns, which every store answers from its index (a property path of
    alternatives may not be)."""
    preds = list(dict.fromkeys([*m.label_predicates, *m.alias_predicates]))  # OTHER_NAME among them: two or more
    return "{ " + " } UNION { ".join(f"?e {iri_ref(p)} ?l" for p in preds) + " }"


def find_entities(m: RdfMapping, text: str, mode: str) -> str:
    """Candidates ?e ?l; the backend re-checks them with Python's casefold and sorts them, so the
    result is the same as NetworkX's. Exact: plain string labels and those in `label_language`
    (English where none is set: Wikidata's "Douglas Adams"@en is found by an index lookup).
    casefold / substring: SPARQL's LCASE pre-filters (it maps 'É' to 'é' as casefold does; it does
    not fold 'ß' to 'ss', so those rare labels are missed) and scans every label."""
    named = _named(m)  # by a label or an alias
    if mode == "exact":  # an indexed lookup, not a scan over every label
        forms = [literal(text), f"{literal(text)}@{m.label_language or 'en'}"]
        return f"SELECT ?e ?l WHERE {{ VALUES ?l {{ {' '.join(forms)} }} {named} }}"
    if mode == "casefold":
        cond = f"LCASE(STR(?l)) = {literal(text.lower())}"
    elif mode == "substring":
        cond = f"CONTAINS(LCASE(STR(?l)), {literal(text.lower())})"
    else:
        raise ValueError(f"unknown match mode {mode!r}; expected exact, casefold or substring")
    return f"SELECT ?e ?l WHERE {{ {named} FILTER({cond}) }}"


def names(m: RdfMapping) -> str:
    """?e ?l ?lang ?lp: every name of every subject, ?lp the naming predicate (`m.label_predicates`:
    the label, name predicates, OTHER_NAME) or unbound for an alias (`m.alias_predicates`). The
    backend keeps the nodes' (`nodes`) and ranks each one's names as `labels` does: the best is its
    label, the rest its other names (a store served as written holds an entity's other-language
    labels under the label predicate)."""
    patterns = " UNION ".join([f"{{ {_naming(m, '?e')} }}", *(f"{{ ?e {iri_ref(p)} ?l }}" for p in m.alias_predicates)])
    return f"SELECT ?e ?l (LANG(?l) AS ?lang) ?lp WHERE {{ {patterns} FILTER(isLiteral(?l)) }}"


def nodes(m: RdfMapping) -> str:
    """?e: every node, the subjects and non-literal objects of facts (not of naming triples). With
    `names`, two scans the store answers faster than one query joining them (a filter per name)."""
    return (f"SELECT DISTINCT ?e WHERE {{ {{ ?e ?p ?o }} UNION {{ ?s ?p ?e FILTER(!isLiteral(?e)) }} "
            f"{_not_label('p', m)} }}")


def relations(m: RdfMapping, entity: str) -> str:
    """?out (relations leaving the entity) or ?in (relations arriving), one bound per row."""
    return _both_ways(m, entity, "DISTINCT ?out ?in", "out", "in")


def relations_batch(m: RdfMapping, entities: Sequence[str]) -> str:
    """?e with ?out (a relation leaving e) or ?in (one arriving), one bound per row."""
    return (f"SELECT DISTINCT ?e ?out ?in WHERE {{ {values('e', m, entities)} "
            f"{{ ?e ?out ?o {_not_label('out', m)} }} UNION {{ ?s ?in ?e {_not_label('in', m)} }} }}")


def labels_of_iris(m: RdfMapping, iris: Sequence[str]) -> str:
    """?r ?l ?lang ?lp: the names of these IRIs (label and name predicates), whether or not they are
    in a triple (a property's rdfs:label on its predicate IRI, or on the entity that describes it)."""
    refs = " ".join(iri_ref(i) for i in iris)
    return (f"SELECT ?r ?l (LANG(?l) AS ?lang) ?lp WHERE {{ VALUES ?r {{ {refs} }} {_naming(m, '?r')} "
            "FILTER(isLiteral(?l)) }")


def relation_ends(m: RdfMapping, relations: Sequence[tuple[str, bool]], limit: int) -> str:
    """?k ?n: the `limit` smallest distinct far ends of each (relation, inverse) pair, ?k its index
    (ordered, so every store names a relation's kind from the same nodes as NetworkX does)."""
    branches = []
    for k, (relation, inverse) in enumerate(relations):
        r = iri_ref(m.relation_iri(relation))
        pattern = f"?n {r} ?o" if inverse else f"?s {r} ?n"
        branches.append(f"{{ {{ SELECT DISTINCT ?n WHERE {{ {pattern} }} ORDER BY ?n LIMIT {int(limit)} }} BIND({k} AS ?k) }}")
    return f"SELECT ?k ?n WHERE {{ {' UNION '.join(branches)} }}"


def neighbors(m: RdfMapping, entities: Sequence[str], relation: str, inverse: bool) -> str:
    """?e ?n: n reached from e over relation (walked backwards when `inverse`)."""
    r = iri_ref(m.relation_iri(relation))
    pattern = f"?n {r} ?e" if inverse else f"?e {r} ?n"
    return f"SELECT DISTINCT ?e ?n WHERE {{ {values('e', m, entities)} {pattern} }}"


def neighbors_union(m: RdfMapping, requests: Sequence[tuple[Sequence[str], str, bool]]) -> str:
    """?k ?e ?n: `neighbors` of several (entities, relation, inverse) requests in one query, a UNION
    branch each, ?k = the request's index."""
    branches = []
    for k, (entities, relation, inverse) in enumerate(requests):
        r = iri_ref(m.relation_iri(relation))
        pattern = f"?n {r} ?e" if inverse else f"?e {r} ?n"
        branches.append(f"{{ {values('e', m, entities)} {pattern} BIND({k} AS ?k) }}")
    return f"SELECT DISTINCT ?k ?e ?n WHERE {{ {' UNION '.join(branches)} }}"


def triples(m: RdfMapping, entity: str) -> str:
    """?p with ?o (outgoing: entity p o) or with ?s (incoming: s p entity)."""
    return _both_ways(m, entity, "?p ?o ?s", "p", "p")


def _both_ways(m: RdfMapping, entity: str, select: str, out_rel: str, in_rel: str) -> str:
    """Edges leaving the entity (`?out_rel ?o`, label relations left out) UNION edges arriving (`?s ?in_rel`)."""
    e = m.node_term(entity)
    return (f"SELECT {select} WHERE {{ {{ {e} ?{out_rel} ?o {_not_label(out_rel, m)} }} "
            f"UNION {{ ?s ?{in_rel} {e} {_not_label(in_rel, m)} }} }}")


def entity_count(m: RdfMapping) -> str:
    return (
        f"SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE {{ {{ ?x ?p ?o {_not_label('p', m)} }} "
        f"UNION {{ ?s ?p ?x {_not_label('p', m)} }} }}"
    )


def relation_counts(m: RdfMapping) -> str:
    return f"SELECT ?p (COUNT(*) AS ?c) WHERE {{ ?s ?p ?o {_not_label('p', m)} }} GROUP BY ?p"


def all_triples(m: RdfMapping) -> str:
    return f"SELECT ?s ?p ?o WHERE {{ ?s ?p ?o {_not_label('p', m)} }}"


def triple_count(m: RdfMapping) -> str:
    """All triples, labels included: what an injection test checks stays unchanged."""
    return "SELECT (COUNT(*) AS ?c) WHERE { ?s ?p ?o }"


def _join(m: RdfMapping, start: str, relations: Sequence[str]) -> list[str]:
    """The triple patterns of a relation path from `start` (an IRI or a variable) to ?x1 .. ?xn;
    `^r` walks r backwards."""
    steps, prev = [], start
    for i, relation in enumerate(relations, 1):
        inverse = relation.startswith("^")
        r = iri_ref(m.relation_iri(relation[1:] if inverse else relation))
        steps.append(f"?x{i} {r} {prev} ." if inverse else f"{prev} {r} ?x{i} .")
        prev = f"?x{i}"
    return steps


def _limit(rows: int | None) -> str:
    """A LIMIT clause: a walk through a hub must not bring millions of rows back (rra.graph.base,
    per-question work bounds)."""
    return f" LIMIT {int(rows)}" if rows is not None else ""


def path_batch(m: RdfMapping, entities: Sequence[str], relations: Sequence[str], rows: int | None = None) -> str:
    """?x0 .. ?xn: every instantiation of a relation path from each of `entities` (?x0), in one
    query: the path is a join, the start entities a VALUES block (at most `rows` rows)."""
    steps = [values("x0", m, entities)] + _join(m, "?x0", relations)
    variables = " ".join(f"?x{i}" for i in range(len(relations) + 1))
    return f"SELECT DISTINCT {variables} WHERE {{ {' '.join(steps)} }}{_limit(rows)}"


def path(m: RdfMapping, entity: str, relations: Sequence[str], rows: int | None = None) -> str:
    """?x1 .. ?xn: every instantiation of a relation path from `entity` in one query
    (`^r` walks r backwards), so an n-hop path costs one round trip, not n (at most `rows` rows)."""
    steps = _join(m, m.node_term(entity), relations)
    variables = " ".join(f"?x{i}" for i in range(1, len(relations) + 1))
    return f"SELECT DISTINCT {variables} WHERE {{ {' '.join(steps)} }}{_limit(rows)}"


def paths_union(m: RdfMapping, requests: Sequence[tuple[Sequence[str], Sequence[str]]], rows: int | None = None) -> str:
    """?k ?x0 .. ?xn: several (start entities, relation path) requests in one query, a UNION
    branch each (VALUES over its starts, the path as a join), ?k = the request's index; the
    variables past a shorter path stay unbound."""
    branches, longest = [], 0
    for k, (entities, relations) in enumerate(requests):
        steps = [values("x0", m, entities)] + _join(m, "?x0", relations)
        longest = max(longest, len(relations))
        branches.append(f"{{ {' '.join(steps)} BIND({k} AS ?k) }}")
    variables = " ".join(["?k"] + [f"?x{i}" for i in range(longest + 1)])
    return f"SELECT DISTINCT {variables} WHERE {{ {' UNION '.join(branches)} }}{_limit(rows)}"


def named(m: RdfMapping) -> str:
    """?e ?l: every name (label or alias, any language) of every subject: one scan, for a store that
    answers case-insensitive lookups from memory (SparqlBackedGraph.names_in_memory)."""
    return f"SELECT ?e ?l WHERE {{ {_named(m)} }}"


def find_entities_batch(m: RdfMapping, texts: Sequence[str], mode: str) -> str:
    """Candidates ?e ?l for many texts in one query (exact: an indexed VALUES lookup of the labels;
    casefold: one scan of the labels joined on their lower-case form ?lc, the same prefilter as
    `find_entities`); the backend re-checks and ranks them per text as `find_entities` does."""
    named = _named(m)  # by a label or an alias
    if mode == "exact":
        forms = [literal(t) for t in texts] + [f"{literal(t)}@{m.label_language or 'en'}" for t in texts]
        return f"SELECT ?e ?l WHERE {{ VALUES ?l {{ {' '.join(forms)} }} {named} }}"
    if mode == "casefold":
        lowered = " ".join(literal(t) for t in dict.fromkeys(t.lower() for t in texts))
        return (f"SELECT ?e ?l ?lc WHERE {{ {named} BIND(LCASE(STR(?l)) AS ?lc) "
                f"VALUES ?lc {{ {lowered} }} }}")
    raise ValueError(f"no batched lookup for match mode {mode!r}; expected exact or casefold")

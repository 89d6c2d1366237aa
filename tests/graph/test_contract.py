"""One contract, three backends: every test here runs unchanged on NetworkX, embedded Oxigraph
and Oxigraph over HTTP (the `kg` fixture), and the answers must also equal the NetworkX
reference built from the same triples."""
from __future__ import annotations

import pytest

from rra.graph import KnowledgeGraph, NetworkXGraph, OxigraphGraph, RdfMapping, Triple, UnknownEntityError
from rra.graph.base import sample

from graph_small_kg import BACKSLASH, BRACKETS, INJECTION, LABELS, TRIPLES

ENTITIES = sorted({x for t in TRIPLES for x in (t.head, t.tail)})
PAYLOADS = [
    INJECTION,
    BRACKETS,
    BACKSLASH,
    '"',
    "\\",
    "}",
    "> } ; DROP ALL ; #",
    '" } ; DROP ALL ; #',
    "\") } DROP ALL { (\"",
    "'; DELETE WHERE { ?s ?p ?o } ; '",
    "a\nb",
    "\\u0022 } ; DROP ALL ; #",
    "x\u0000y",
    "%3E",
    "\U0001F3AC",  # an emoji (outside the BMP)
    "\ud800",  # a lone surrogate: not valid Unicode, so no RDF literal can hold it
]


def store_size(kg) -> int:
    if isinstance(kg, NetworkXGraph):
        return kg.g.number_of_edges() + len(kg._labels)
    if hasattr(kg, "scope_key") or hasattr(kg, "_facts"):  # DictGraph, or a per-question graph of them
        g = kg.current() if hasattr(kg, "scope_key") else kg
        return len(g._facts) + len(g._labels)
    return kg.triple_count()


def test_is_a_knowledge_graph(kg):
    assert isinstance(kg, KnowledgeGraph)


def test_has_entity(kg):
    for x in ENTITIES:
        assert kg.has_entity(x), x
    assert not kg.has_entity("Nobody")
    assert not kg.has_entity("not in any triple")  # labelled, but in no triple


def test_labels(kg):
    assert kg.label("Ridley Scott") == "Sir Ridley Scott"
    assert kg.label("Alien") == "Alien"  # no label: the id
    assert kg.label(BRACKETS) == LABELS[BRACKETS]
    assert kg.labels(["Amélie", "Nobody", "not in any triple", "1979"]) == {
        "Amélie": LABELS["Amélie"], "1979": "1979"}
    with pytest.raises(UnknownEntityError):
        kg.label("Nobody")


def test_find_entities_modes(kg):
    assert kg.find_entities("Alien") == ["Alien"]
    assert kg.find_entities("alien") == ["alien"]
    assert kg.find_entities("ALIEN", mode="casefold") == ["Alien", "alien"]  # (len, label, id)
    assert kg.find_entities("alien", mode="substring") == ["Alien", "alien", "Alien: Resurrection"]
    assert kg.find_entities("alien", mode="substring", limit=2) == ["Alien", "alien"]
    assert kg.find_entities("Ridley Scott") == []  # its label is "Sir Ridley Scott"
    assert kg.find_entities("sir ridley SCOTT", mode="casefold") == ["Ridley Scott"]
    assert kg.find_entities("AMÉLIE POULAIN", mode="substring") == ["Amélie"]
    assert kg.find_entities("東京", mode="substring") == ["東京物語"]
    assert kg.find_entities("Ghost", mode="casefold") == []
    with pytest.raises(ValueError):
        kg.find_entities("x", mode="regex")


@pytest.mark.parametrize("mode", ["exact", "casefold", "substring"])
def test_find_entities_matches_reference(kg, reference, mode):
    words = ["a", "S", "ford", '"', "\\", "%", "#", "1", "Harrison \"Indiana\" Ford", "é"]
    for text in words + [LABELS.get(x, x) for x in ENTITIES]:
        for limit in (1, 3, 100):
            assert kg.find_entities(text, mode, limit) == reference.find_entities(text, mode, limit), text


def test_relations(kg):
    assert kg.relations("Ridley Scott") == ["^directed_by", "^influenced", "influenced"]
    assert kg.relations("Alien", direction="out") == ["directed_by", "has_tags", "release_year", "starred_actors"]
    assert kg.relations("Alien", direction="in") == []
    assert kg.relations("Harrison Ford", direction="in") == ["^starred_actors"]
    with pytest.raises(UnknownEntityError):
        kg.relations("Nobody")


def test_relations_batch(kg):
    """A path's frontier in one call: what the relation scorer chooses from."""
    got = kg.relations_batch(["Ridley Scott", "Alien", "Nobody"])
    assert got == {"Ridley Scott": kg.relations("Ridley Scott"), "Alien": kg.relations("Alien"), "Nobody": []}
    assert kg.relations_batch(["Alien"], direction="out") == {"Alien": kg.relations("Alien", direction="out")}
    assert kg.relations_batch([]) == {}


def test_neighbors(kg):
    assert kg.neighbors("Ridley Scott", "^directed_by") == ["Alien", "Blade Runner", INJECTION]
    assert kg.neighbors("Alien", "directed_by") == ["Ridley Scott"]
    assert kg.neighbors("Alien", "^directed_by") == []
    assert kg.neighbors("Nobody", "directed_by") == []
    assert kg.neighbors("Ridley Scott", "influenced") == ["Ridley Scott"]


def test_neighbors_batch_chunks(kg):
    movies = ["Alien", "Blade Runner", "Star Wars", INJECTION, BACKSLASH, "Nobody"]
    got = kg.neighbors_batch(movies, "directed_by")
    assert got == {m: kg.neighbors(m, "directed_by") for m in movies}
    assert got["Star Wars"] == ["George Lucas"] and got["Nobody"] == []


def test_neighbors_by_relation_is_neighbors_batch_for_each_relation(kg, reference):
    """Several relations in one call (one UNION query on SPARQL stores, split past the batch
    size), each answered as `neighbors_batch` answers it; hostile ids stay data."""
    wanted = {"directed_by": ["Alien", INJECTION, BACKSLASH, "Nobody"], "^directed_by": ["Ridley Scott", "George Lucas"],
              "^starred_actors": ENTITIES, "influenced": ["Ridley Scott"], "no such relation": ["Alien"],
              INJECTION: ["Alien"], "in_language": []}
    got = kg.neighbors_by_relation(wanted)
    assert list(got) == list(wanted)
    for r, entities in wanted.items():
        assert got[r] == reference.neighbors_batch(entities, r), r
    assert got["^directed_by"]["Ridley Scott"] == ["Alien", "Blade Runner", INJECTION]
    assert kg.neighbors_by_relation({}) == {}


def test_follow_path(kg, reference):
    paths = kg.follow_path("Alien", ["directed_by", "^directed_by"])
    assert [p.end for p in paths] == ["Alien", "Blade Runner", INJECTION]
    assert paths[1].triples == [Triple("Alien", "directed_by", "Ridley Scott"),
                                Triple("Blade Runner", "directed_by", "Ridley Scott")]
    assert kg.follow_path("Alien", ["directed_by", "^directed_by"], limit=2) == paths[:2]
    assert kg.follow_path("Alien", ["in_language"]) == []
    assert kg.follow_path("Alien", []) == []
    two_hop = ["starred_actors", "^starred_actors"]
    assert kg.follow_path("Blade Runner", two_hop) == reference.follow_path("Blade Runner", two_hop)
    three_hop = ["starred_actors", "^starred_actors", "directed_by"]
    for x in ("Blade Runner", "Star Wars", BACKSLASH):
        for limit in (None, 1, 2):
            assert kg.follow_path(x, three_hop, limit) == reference.follow_path(x, three_hop, limit)


def test_follow_path_batch_is_follow_path_for_each_start(kg, reference):
    starts = ["Blade Runner", "Star Wars", BACKSLASH, INJECTION, "Alien", "Nobody at all", "Alien"]
    for path in (["directed_by", "^directed_by"], ["starred_actors", "^starred_actors", "directed_by"], []):
        for limit in (None, 1):
            got = kg.follow_path_batch(starts, path, limit)
            assert list(got) == list(dict.fromkeys(starts))
            assert got["Nobody at all"] == []
            for x in ("Blade Runner", "Star Wars", BACKSLASH, INJECTION, "Alien"):
                assert got[x] == reference.follow_path(x, path, limit), (x, path, limit)


def test_follow_paths_batch_is_follow_path_batch_for_each_request(kg, reference):
    requests = [(["Alien", "Blade Runner", "Nobody at all"], ["directed_by", "^directed_by"]),
                (["Star Wars", BACKSLASH, "Alien"], ["starred_actors", "^starred_actors", "directed_by"]),
                (["Ridley Scott", INJECTION], ["influenced"]), ([], ["directed_by"]), (["Alien"], []),
                (["Harrison Ford", "Alien", "Star Wars", "Blade Runner", "Alien"], ["^starred_actors"])]
    for limit in (None, 1, 2):
        got = kg.follow_paths_batch(requests, limit)
        assert len(got) == len(requests)
        for (starts, path), res in zip(requests, got):
            assert list(res) == list(dict.fromkeys(starts))
            for x in res:
                want = [] if x == "Nobody at all" or not path else reference.follow_path(x, path, limit)
                assert res[x] == want, (x, path, limit)


def test_triples_sorted_and_sampled(kg):
    around = kg.triples("Ridley Scott")
    assert around == sorted({t for t in TRIPLES if "Ridley Scott" in (t.head, t.tail)})
    assert kg.triples("Ridley Scott", direction="out") == [Triple("Ridley Scott", "influenced", "Ridley Scott")]
    for seed in (0, 1, 7):
        assert kg.triples("Ridley Scott", limit=2, seed=seed) == sample(around, 2, seed)
    with pytest.raises(UnknownEntityError):
        kg.triples("Nobody")


def test_the_search_leaves_out_the_same_candidates_on_every_backend(kg, reference):
    """The scorer's transition floor (rra.models.frontier.Transitions) reads far ends and the relations
    they hold through the protocol, so every backend leaves out the same candidates after each relation
    (per-question graphs give no far ends: none). A high floor over samples of 3, so this small KG has some."""
    from rra.models.frontier import Transitions, both_directions

    rels = both_directions(reference.relation_types())
    want = {r: Transitions(reference, floor=0.6, sample=3).rare(r, rels) for r in rels}
    got = {r: Transitions(kg, floor=0.6, sample=3).rare(r, rels) for r in rels}
    if hasattr(kg, "scope_key"):
        assert not any(got.values())
        return
    assert any(want.values()) and got == want


def test_stats_and_relation_types(kg):
    stats = kg.stats()
    assert stats.triples == len(set(TRIPLES))
    assert stats.entities == len(ENTITIES)
    assert stats.relations == {r: sum(t.relation == r for t in TRIPLES) for r in {t.relation for t in TRIPLES}}
    assert kg.relation_types() == sorted({t.relation for t in TRIPLES})


def test_relation_ends_are_the_same_on_every_backend(kg, reference):
    """The smallest far ends of every relation, both ways (adversarial relation names included: the
    SPARQL backends put each in a query), as NetworkX gives them; per-question graphs give none."""
    asked = reference.relation_types() + ["^" + r for r in reference.relation_types()] + ["missing"]
    got = kg.relation_ends(asked, limit=2)
    if hasattr(kg, "scope_key"):  # one question's graph must not name a relation for every question
        assert got == {r: [] for r in asked}
        return
    for r in asked:
        far = sorted({t.head if r.startswith("^") else t.tail for t in TRIPLES if t.relation == r.lstrip("^")})
        assert got[r] == far[:2] == reference.relation_ends([r], limit=2)[r], r


def test_all_triples_lists_every_fact_once(kg, reference):
    """The whole KG, label triples excluded, the same set on every backend (adversarial names included)."""
    got = list(kg.all_triples())
    assert len(got) == len(set(got)) == len(set(TRIPLES))
    assert set(got) == set(TRIPLES) == set(reference.all_triples())


def test_all_names_lists_every_node_once_as_the_reference(kg, reference):
    """What the fuzzy name index reads: every node (labelled or not, adversarial names included),
    its label first; a store answers from its naming triples and the nodes no triple names."""
    from rra.graph.rdf import is_literal

    names = kg.all_names()
    assert names == reference.all_names()
    assert set(names) == {x for t in TRIPLES for x in (t.head, t.tail) if not is_literal(x)}
    assert {e: ns[0] for e, ns in names.items()} == kg.labels(names)


def test_every_entity_matches_reference(kg, reference):
    """The whole protocol, entity by entity, against NetworkX."""
    for x in ENTITIES:
        assert kg.label(x) == reference.label(x)
        for d in ("out", "in", "both"):
            assert kg.relations(x, d) == reference.relations(x, d)
            assert kg.triples(x, direction=d) == reference.triples(x, direction=d)
        assert kg.triples(x, limit=1, seed=3) == reference.triples(x, limit=1, seed=3)
        for r in kg.relations(x):
            assert kg.neighbors(x, r) == reference.neighbors(x, r)
            for r2 in reference.relation_types():
                for rel2 in (r2, "^" + r2):
                    assert kg.follow_path(x, [r, rel2]) == reference.follow_path(x, [r, rel2])
    assert kg.labels(ENTITIES + ["Nobody"]) == reference.labels(ENTITIES + ["Nobody"])
    assert kg.stats() == reference.stats()


def test_injection_cannot_change_the_query(kg, reference):
    before = store_size(kg)
    for text in PAYLOADS:
        for mode in ("exact", "casefold", "substring"):
            assert kg.find_entities(text, mode) == reference.find_entities(text, mode), text
        known = text in ENTITIES
        assert kg.has_entity(text) == known
        assert kg.neighbors(text, "directed_by") == reference.neighbors(text, "directed_by")
        assert kg.neighbors_batch([text, "Alien"], "directed_by") == {
            text: reference.neighbors(text, "directed_by"), "Alien": ["Ridley Scott"]}
        assert kg.labels([text]) == ({text: LABELS.get(text, text)} if known else {})
        path = ["directed_by", "^directed_by"]
        assert kg.follow_path(text, path) == reference.follow_path(text, path)
        if not known:
            assert kg.neighbors(text, "directed_by") == []
            with pytest.raises(UnknownEntityError):
                kg.triples(text)
            with pytest.raises(UnknownEntityError):
                kg.relations(text)
    # The adversarial names in the KG are found exactly, as data, not as query text.
    assert kg.find_entities(INJECTION) == [INJECTION]
    assert kg.find_entities(LABELS[BRACKETS]) == [BRACKETS]
    assert kg.find_entities(BACKSLASH) == [BACKSLASH]
    assert kg.find_entities("DROP ALL", mode="substring") == [BRACKETS, INJECTION]
    assert kg.neighbors(INJECTION, "directed_by") == ["Ridley Scott"]
    assert kg.triples(BACKSLASH) == [Triple(BACKSLASH, "starred_actors", "Harrison Ford")]
    # A relation name is data too.
    assert kg.neighbors("Alien", "directed_by> ?x } ; DROP ALL ; #") == []
    assert store_size(kg) == before


def test_adversarial_relation_names():
    """A relation whose name is an attack is stored and walked like any other."""
    weird = '> } ; DROP ALL ; # "r"'
    kg = OxigraphGraph.from_triples([Triple("a", weird, "b")])
    assert kg.relations("a") == [weird]
    assert kg.neighbors("b", "^" + weird) == ["a"]
    assert kg.relation_ends([weird, "^" + weird]) == {weird: ["b"], "^" + weird: ["a"]}  # inside a sub-select
    assert kg.triple_count() == 3  # the triple + 2 labels


def test_custom_mapping_gives_the_same_answers(reference):
    """Other bases and another label predicate (as a CURIE) change the IRIs, not the answers."""
    mapping = RdfMapping("urn:kg:e:", "http://example.org/rel#", "skos:prefLabel")
    kg = OxigraphGraph.from_triples(TRIPLES, LABELS, mapping=mapping)
    assert mapping.label_predicate == "http://www.w3.org/2004/02/skos/core#prefLabel"
    for x in ENTITIES:
        assert kg.label(x) == reference.label(x)
        assert kg.triples(x) == reference.triples(x)
        assert kg.find_entities(LABELS.get(x, x)) == reference.find_entities(LABELS.get(x, x))
    assert kg.stats() == reference.stats()
    assert kg.follow_path("Alien", ["directed_by", "^directed_by"]) == reference.follow_path(
        "Alien", ["directed_by", "^directed_by"])


@pytest.mark.parametrize("mode", ["exact", "casefold", "substring"])
def test_find_entities_batch_is_find_entities_for_each_text(kg, reference, mode):
    texts = ["Alien", "alien", "ALIEN", "Sir Ridley Scott", "sir ridley SCOTT", "AMÉLIE POULAIN", "東京", "Ghost",
             '"', "\\", "%", "Nobody", "\ud800", "Alien"] + [LABELS.get(x, x) for x in ENTITIES] + PAYLOADS
    for limit in (1, 2, 10):
        got = kg.find_entities_batch(texts, mode, limit)
        assert list(got) == list(dict.fromkeys(texts))
        for t in got:
            assert got[t] == reference.find_entities(t, mode, limit), (t, mode, limit)


def test_a_backend_that_lacks_a_query_cannot_be_made():
    """The contract is an abstract base class: a backend missing a query fails when it is built,
    naming the query, instead of answering None at run time."""
    from rra.graph.base import KnowledgeGraph

    class Partial(NetworkXGraph):
        pass

    Partial([Triple("a", "r", "b")])  # a complete backend (inherited) is fine

    class NoStats(KnowledgeGraph):
        def has_entity(self, entity):
            return False

    with pytest.raises(TypeError, match="abstract method.*stats"):
        NoStats()


# -- literal values (issue 28): typed literals are values, never merged with a look-alike entity --
YEAR_1985, YEAR_1992 = '"1985"^^xsd:gYear', '"1992"^^xsd:gYear'
PROBE_FACTS = {  # (node, relation) -> what every backend must answer
    ("Ann", "birth_year"): [YEAR_1985],
    ("Bob", "birth_year"): [YEAR_1992],
    ("Cid", "born_on"): ['"1990-05-17"^^xsd:date'],
    ("Ann", "height"): ['"1.83"^^xsd:decimal'],
    ("Bob", "shirt_number"): ['"7"^^xsd:integer'],
    ("Ann", "nickname"): ['"Annie"@en'],
    ("Ann", "motto"): ['"1985"'],
    ("Ann", "favourite_film"): ["1985"],
    ("1985", "^favourite_film"): ["Ann", "Bob"],
    (YEAR_1985, "^birth_year"): ["Ann"],  # walking back from a value
    ("1985", "^birth_year"): [],  # the film is not the year
    ('"1985"', "^favourite_film"): [],  # nor the plain string
}


def test_literals_are_values_apart_from_entities(literal_kg):
    from rra.graph.literals import is_literal

    for (node, relation), want in PROBE_FACTS.items():
        assert literal_kg.neighbors(node, relation) == want, (node, relation)
    assert literal_kg.neighbors_batch(["Ann", "Bob", "1985"], "birth_year") == {
        "Ann": [YEAR_1985], "Bob": [YEAR_1992], "1985": []}
    assert literal_kg.relations("1985") == ["^favourite_film", "directed_by"]
    assert literal_kg.relations(YEAR_1985) == ["^birth_year"]
    assert literal_kg.has_entity(YEAR_1985) and literal_kg.has_entity("1985")
    assert not literal_kg.has_entity('"1985"^^xsd:integer')
    assert literal_kg.labels(["1985", YEAR_1985, '"Annie"@en', "Ann"]) == {
        "1985": "1985", YEAR_1985: "1985", '"Annie"@en': "Annie", "Ann": "Ann"}
    assert literal_kg.find_entities("1985") == ["1985"]  # a value is not found by name
    assert [is_literal(x) for x in ("1985", YEAR_1985, '"1985"', "Ann")] == [False, True, True, False]
    walk = literal_kg.follow_path("Cid", ["^directed_by", "^favourite_film", "birth_year"])
    assert [p.end for p in walk] == [YEAR_1985, YEAR_1992]
    assert literal_kg.follow_path_batch([YEAR_1992, "1985"], ["^birth_year", "favourite_film"]) == {
        YEAR_1992: literal_kg.follow_path(YEAR_1992, ["^birth_year", "favourite_film"]), "1985": []}
    triples = set(literal_kg.all_triples())
    assert Triple("Ann", "birth_year", YEAR_1985) in triples and len(triples) == 10
    assert literal_kg.stats().entities == 11  # Ann Bob Cid 1985 and 7 distinct values
    assert sorted(literal_kg.all_names()) == ["1985", "Ann", "Bob", "Cid"]  # values are not names


def test_literal_probe_gives_the_same_answers_on_every_backend(literal_kg, literal_probe_files):
    """The whole protocol, node by node, against NetworkX reading the same .nt file."""
    from rra.graph import load_graph

    reference = load_graph(literal_probe_files["nt"])
    nodes = sorted({x for t in reference.all_triples() for x in (t.head, t.tail)})
    for x in nodes:
        assert literal_kg.label(x) == reference.label(x)
        for d in ("out", "in", "both"):
            assert literal_kg.relations(x, d) == reference.relations(x, d), (x, d)
            assert literal_kg.triples(x, direction=d) == reference.triples(x, direction=d), (x, d)
        for r in reference.relations(x):
            assert literal_kg.neighbors(x, r) == reference.neighbors(x, r)
    assert literal_kg.stats() == reference.stats()
    assert sorted(literal_kg.all_triples()) == sorted(reference.all_triples())


def test_relation_ends_read_values_as_every_backend_names_them(literal_kg):
    assert literal_kg.relation_ends(["birth_year", "^birth_year"], limit=1) == {
        "birth_year": [YEAR_1985], "^birth_year": ["Ann"]}


def test_literal_values_compare_as_numbers_and_dates(literal_kg):
    """What a constraint ("born after 1988", "the tallest") reads: values, not strings."""
    import datetime as dt

    from rra.graph.literals import compare, order_key, parse_literal

    born = {x: literal_kg.neighbors(x, "birth_year")[0] for x in ("Ann", "Bob")}
    assert {x: parse_literal(v) for x, v in born.items()} == {"Ann": 1985, "Bob": 1992}
    assert [x for x, v in born.items() if compare(v, ">", "1988")] == ["Bob"]
    assert parse_literal(literal_kg.neighbors("Cid", "born_on")[0]) == dt.date(1990, 5, 17)
    assert compare(literal_kg.neighbors("Cid", "born_on")[0], "<", 1991)  # a date against a year
    assert parse_literal(literal_kg.neighbors("Ann", "height")[0]) == 1.83
    assert parse_literal(literal_kg.neighbors("Bob", "shirt_number")[0]) == 7
    assert max(born, key=lambda x: order_key(born[x])) == "Bob"


# -- one value, one id (issue 35): non-canonical spellings, the same ids and answers everywhere ------
def test_values_get_one_canonical_id_on_every_backend(noncanonical_kg):
    from graph_small_kg import NONCANONICAL_IDS

    for (entity, relation), want in NONCANONICAL_IDS.items():
        assert noncanonical_kg.neighbors(entity, relation) == [want], (entity, relation)
    # "+5"^^xsd:integer and "5"^^xsd:byte are one value, so one node, reached back from both
    assert noncanonical_kg.neighbors('"5"^^xsd:integer', "^count") == ["a", "g"]
    for (entity, relation), value in NONCANONICAL_IDS.items():
        if value != '"abc"':  # see test_ill_typed_values_stay_text
            assert entity in noncanonical_kg.neighbors(value, "^" + relation), value
    assert noncanonical_kg.stats().entities == 9 + 7  # Set, a-h and seven distinct values


def test_ill_typed_values_stay_text_and_never_pass_a_comparison(noncanonical_kg):
    """"abc"^^xsd:integer is not a number: Virtuoso's loader would make it 0, which passes "< 1960"."""
    from rra.plans.execution import execute
    from rra.plans.plan import Constraint, QueryPlan

    def answers(relation, op, value):
        return execute(noncanonical_kg, QueryPlan(["Set"], [["has"]], Constraint(relation, op, value))).answers

    assert answers("count", "<", 1960) == ["a", "b", "g"]
    assert answers("count", "<=", 5) == ["a", "g"]
    assert answers("mass", ">", 1000) == ["e"] and answers("ratio", "=", 1.5) == ["c"]
    assert answers("born", "<", 1951) == ["h"]
    assert execute(noncanonical_kg, QueryPlan(["Set"], [["has"]], Constraint("count", "argmin"))).answers == ["a", "g"]


def test_the_ill_typed_value_is_read_back_as_text(noncanonical_kg, request):
    if "sparql" in request.node.name:  # loaded by `oxigraph load` as written: the store keeps the datatype
        pytest.skip("a store loaded without rra holds the ill-typed term as written; rra reads it as text")
    assert noncanonical_kg.neighbors('"abc"', "^count") == ["f"]


def test_embedded_store_reads_names_once_for_case_insensitive_lookups():
    """A store in this process answers case-insensitive lookups from a map of every name read in
    one scan (Oxigraph's VALUES join on LCASE(?l) costs names x texts: bench_fuzzy_scale); the map
    follows what is loaded after it, and matches as NetworkX does: 'STRASSE' finds 'Straße', which
    SPARQL's LCASE does not fold."""
    triples = [Triple("a", "r", "b"), Triple("c", "r", "b")]
    labels = {"a": "Straße", "b": "Ölstadt", "c": "strasse"}
    kg, ref = OxigraphGraph.from_triples(triples, labels), NetworkXGraph(triples, labels)
    before = kg.requests
    for text in ["STRASSE", "ölSTADT", "nothing", "Straße"]:
        assert kg.find_entities(text, "casefold") == ref.find_entities(text, "casefold"), text
    assert kg.find_entities("STRASSE", "casefold") == ["a", "c"]  # by (label length, label, id)
    assert kg.find_entities_batch(["STRASSE", "ÖLSTADT", "x"], "casefold") == {
        "STRASSE": ["a", "c"], "ÖLSTADT": ["b"], "x": []}
    assert kg.requests - before == 1  # one scan answered all of them
    kg.add_triples([Triple("d", "r", "b")], {"d": "Neue Straße"})
    assert kg.find_entities("neue STRASSE", "casefold") == ["d"]
    kg.set_labels({"d": "Alte Straße"})
    assert kg.find_entities("neue strasse", "casefold") == []
    assert kg.find_entities_batch(["ALTE STRASSE"], "casefold") == {"ALTE STRASSE": ["d"]}


@pytest.mark.parametrize("backend", ["networkx", "dict"])
def test_in_memory_relation_types_are_kept_until_the_graph_changes(backend, monkeypatch):
    """An in-memory graph reads its relation types in one pass over its facts and keeps them (a
    training's setup asks three times; at 1e6 triples each pass was 2 s); a fact added after brings
    its relation in."""
    from rra.graph.dict_graph import DictGraph

    kg = NetworkXGraph(TRIPLES) if backend == "networkx" else DictGraph(TRIPLES)
    passes = []
    every = type(kg).all_triples
    monkeypatch.setattr(type(kg), "all_triples", lambda self: passes.append(1) or every(self))
    assert kg.relation_types() == kg.relation_types() == sorted({t.relation for t in TRIPLES})
    assert len(passes) == 1
    kg.relation_types().append("changed by a caller")
    kg.add_triples([Triple("Alien", "zz_new_relation", "Ridley Scott")])
    assert kg.relation_types() == sorted({t.relation for t in TRIPLES} | {"zz_new_relation"}) and len(passes) == 2

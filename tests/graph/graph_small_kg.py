"""The small adversarial KG every graph test uses (movie facts plus names built to break queries),
and a helper for loopback servers."""
import socket

from rra.graph import Triple

INJECTION = 'Evil "} ; DROP ALL ; #'
BRACKETS = "<http://x> } UNION { ?s ?p ?o"
BACKSLASH = "back\\slash\nnew line\t\\u0022"

RAW_TRIPLES = [
    ("Alien", "directed_by", "Ridley Scott"),
    ("Blade Runner", "directed_by", "Ridley Scott"),
    ("Blade Runner", "starred_actors", "Harrison Ford"),
    ("Alien", "starred_actors", "Sigourney Weaver"),
    ("Alien", "release_year", "1979"),
    ("Alien", "has_tags", "alien"),
    ("Star Wars", "starred_actors", "Harrison Ford"),
    ("Star Wars", "directed_by", "George Lucas"),
    ("Star Wars", "release_year", "1977"),
    ("Alien: Resurrection", "starred_actors", "Sigourney Weaver"),
    ("Amélie", "in_language", "French"),
    ("東京物語", "in_language", "Japanese"),
    (INJECTION, "directed_by", "Ridley Scott"),
    (BACKSLASH, "starred_actors", "Harrison Ford"),
    (BRACKETS, "has_tags", "alien"),
    ("Ridley Scott", "influenced", "Ridley Scott"),  # a self-loop
    ("100% Wolf", "has_tags", "50% off #1?"),
]
TRIPLES = [Triple(*t) for t in RAW_TRIPLES]
LABELS = {
    "Ridley Scott": "Sir Ridley Scott",
    "Amélie": "Le Fabuleux Destin d'Amélie Poulain",
    "Harrison Ford": 'Harrison "Indiana" Ford',
    BRACKETS: 'Q" } ; DROP ALL ; # \\',
    "not in any triple": "Ghost",  # a label alone does not make an entity
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Literal values next to an entity of the same spelling (issue 28): the entity `1985` (a film) and
# the year "1985"^^xsd:gYear must stay two nodes on every backend, and the values must compare as
# numbers and dates. Written as a store holds it: typed / tagged / plain literals, IRIs for entities.
_E, _R, _X = "http://rra.local/entity/", "http://rra.local/relation/", "http://www.w3.org/2001/XMLSchema#"
LITERAL_PROBE_NT = "".join(f"{line} .\n" for line in [
    f'<{_E}Ann> <{_R}birth_year> "1985"^^<{_X}gYear>',
    f'<{_E}Bob> <{_R}birth_year> "1992"^^<{_X}gYear>',
    f'<{_E}Cid> <{_R}born_on> "1990-05-17"^^<{_X}date>',
    f'<{_E}Ann> <{_R}height> "1.83"^^<{_X}decimal>',
    f'<{_E}Bob> <{_R}shirt_number> "7"^^<{_X}integer>',
    f'<{_E}Ann> <{_R}nickname> "Annie"@en',
    f'<{_E}Ann> <{_R}motto> "1985"',  # a plain string that reads like the entity id
    f'<{_E}Ann> <{_R}favourite_film> <{_E}1985>',  # the entity spelt 1985
    f'<{_E}1985> <{_R}directed_by> <{_E}Cid>',
    f'<{_E}Bob> <{_R}favourite_film> <{_E}1985>',
    f'<{_E}1985> <http://www.w3.org/2000/01/rdf-schema#label> "1985"',
])
# The same facts as a TSV file: literal cells in N-Triples syntax (xsd: abbreviated), bare cells entities.
LITERAL_PROBE_TSV = "".join(f"{h}\t{r}\t{t}\n" for h, r, t in [
    ("Ann", "birth_year", '"1985"^^xsd:gYear'), ("Bob", "birth_year", '"1992"^^xsd:gYear'),
    ("Cid", "born_on", '"1990-05-17"^^xsd:date'), ("Ann", "height", '"1.83"^^xsd:decimal'),
    ("Bob", "shirt_number", '"7"^^xsd:integer'), ("Ann", "nickname", '"Annie"@en'), ("Ann", "motto", '"1985"'),
    ("Ann", "favourite_film", "1985"), ("1985", "directed_by", "Cid"), ("Bob", "favourite_film", "1985"),
])


# Values written in non-canonical forms (issue 35): every backend must give each value one node id,
# the canonical one (rra/graph/xsd.py), and an ill-typed value must stay text.
NONCANONICAL_NT = "".join(f"{line} .\n" for line in [
    *(f"<{_E}Set> <{_R}has> <{_E}{x}>" for x in "abcdefgh"),
    f'<{_E}a> <{_R}count> "+5"^^<{_X}integer>',
    f'<{_E}b> <{_R}count> "0123"^^<{_X}integer>',
    f'<{_E}c> <{_R}ratio> "1.50"^^<{_X}decimal>',
    f'<{_E}d> <{_R}flag> "1"^^<{_X}boolean>',
    f'<{_E}e> <{_R}mass> "1.9e3"^^<{_X}double>',
    f'<{_E}f> <{_R}count> "abc"^^<{_X}integer>',  # ill-typed: Virtuoso would read it as 0
    f'<{_E}g> <{_R}count> "5"^^<{_X}byte>',  # the same value as a's
    f'<{_E}h> <{_R}born> "1950-01-01T10:00:00.000+00:00"^^<{_X}dateTime>',
])
NONCANONICAL_IDS = {  # (entity, relation) -> the one id of its value on every backend
    ("a", "count"): '"5"^^xsd:integer', ("b", "count"): '"123"^^xsd:integer', ("c", "ratio"): '"1.5"^^xsd:decimal',
    ("d", "flag"): '"true"^^xsd:boolean', ("e", "mass"): '"1.9E3"^^xsd:double', ("f", "count"): '"abc"',
    ("g", "count"): '"5"^^xsd:integer', ("h", "born"): '"1950-01-01T10:00:00Z"^^xsd:dateTime',
}

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

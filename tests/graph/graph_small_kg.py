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

"""A hand-made movie KG small enough to trace every step of a baseline by hand."""
import pytest

from rra.graph.base import Triple
from rra.graph.networkx_graph import NetworkXGraph
from rra.records import QAExample

FACTS = [
    ("Alien", "directed_by", "Ridley Scott"),
    ("Alien", "starred_actors", "Sigourney Weaver"),
    ("Alien", "release_year", "1979"),
    ("Alien", "has_genre", "Horror"),
    ("Alien", "rdf:type", "Movie"),
    ("Aliens", "directed_by", "James Cameron"),
    ("Aliens", "starred_actors", "Sigourney Weaver"),
    ("Aliens", "release_year", "1986"),
    ("Titanic", "directed_by", "James Cameron"),
    ("Titanic", "starred_actors", "Kate Winslet"),
    ("Blade Runner", "directed_by", "Ridley Scott"),
    ("Blade Runner", "starred_actors", "Harrison Ford"),
    ("Blade Runner", "release_year", "1982"),
]


@pytest.fixture
def kg():
    return NetworkXGraph([Triple(*f) for f in FACTS])


@pytest.fixture
def weaver_question():
    return QAExample(
        question="who directed the movies starred by [Sigourney Weaver]",
        topic_entities=["Sigourney Weaver"],
        answers=["Ridley Scott", "James Cameron"],
        qid="q1",
    )


@pytest.fixture(scope="session")
def tiny_encoder():
    from rra.embed import tiny_random_encoder

    return tiny_random_encoder(seed=0)

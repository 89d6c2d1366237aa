"""A tiny hand-made movie KG for the data tests (MetaQA-like schema, names chosen to force ties)."""
import pytest

from rra.graph import NetworkXGraph, Triple

TINY_KG = [
    ("m1", "directed_by", "d1"),
    ("m2", "directed_by", "d1"),
    ("m3", "directed_by", "d2"),
    ("m1", "written_by", "d1"),  # d1 wrote and directed m1: a tie for "who directed m1"
    ("m1", "starred_actors", "a1"),
    ("m2", "starred_actors", "a1"),
    ("m3", "starred_actors", "a2"),
    ("m1", "release_year", "y2000"),
    ("m2", "release_year", "y2001"),
    ("m3", "release_year", "y2000"),
    ("m4", "release_year", "y2002"),  # m4 is reachable from nothing above except via its year
]


@pytest.fixture
def tiny_kg() -> NetworkXGraph:
    return NetworkXGraph(Triple(*t) for t in TINY_KG)

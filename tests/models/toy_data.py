"""A tiny movie KG with templated 1-3 hop questions and gold paths, for the retriever's tests.

Importable as `toy_data` from the tests (pytest puts this folder on sys.path) and from a
subprocess with PYTHONPATH=tests/models, so Hydra configs can point at it by `_target_`.
"""
from __future__ import annotations

import random

from rra.graph.base import Triple
from rra.graph.networkx_graph import NetworkXGraph
from rra.records import QAExample

# template, start type, relation path
TEMPLATES = [
    ("who directed [{}]", "movie", ["directed_by"]),
    ("what movies did [{}] direct", "director", ["^directed_by"]),
    ("when was [{}] released", "movie", ["release_year"]),
    ("who acted in [{}]", "movie", ["starred_actors"]),
    ("who acted in the movies directed by [{}]", "director", ["^directed_by", "starred_actors"]),
    ("which directors worked with [{}]", "actor", ["^starred_actors", "directed_by"]),
    ("what genres are the films directed by [{}]", "director", ["^directed_by", "has_genre"]),
    ("who directed movies sharing actors with [{}]", "movie", ["starred_actors", "^starred_actors", "directed_by"]),
]


def toy_triples(n_movies: int = 12) -> list[Triple]:
    triples = []
    for m in range(n_movies):
        movie = f"Movie {m}"
        triples.append(Triple(movie, "directed_by", f"Director {m % 4}"))
        triples.append(Triple(movie, "release_year", str(1990 + m % 5)))
        triples.append(Triple(movie, "has_genre", ["Drama", "Comedy", "Horror"][m % 3]))
        for a in (m % 6, (m + 1) % 6):
            triples.append(Triple(movie, "starred_actors", f"Actor {a}"))
    return triples


def toy_kg() -> NetworkXGraph:
    return NetworkXGraph(toy_triples())


def toy_questions(n: int = 40, seed: int = 0, templates: int | None = None) -> list[QAExample]:
    """`n` questions over the toy KG (gold relation_path set), cycling through the templates."""
    rng = random.Random(seed)
    starts = {
        "movie": [f"Movie {m}" for m in range(12)],
        "director": [f"Director {d}" for d in range(4)],
        "actor": [f"Actor {a}" for a in range(6)],
    }
    chosen = TEMPLATES[:templates] if templates else TEMPLATES
    kg = toy_kg()
    out = []
    for i in range(n):
        text, kind, path = chosen[i % len(chosen)]
        entity = rng.choice(starts[kind])
        answers = sorted({p.end for p in kg.follow_path(entity, path)} - {entity})
        out.append(QAExample(text.format(entity), [entity], answers, list(path), qid=f"toy{i}", hops=len(path)))
    return out

"""Questions written from walks over the graph, for the relation scorer's training.

A KG's own questions ask few of its paths, and few of them three relations long, so the scorer
learns when to stop from the relation it has walked, not from what the question still names.
Walks give it other compositions of relations, each asked plainly by its relations' names ("what
is the birth place of the director of [E]?"): a question that names one more relation than has
been walked goes on; one that names none stops. They are training items like the dataset's (path,
anchor, in-frontier negatives), never validation ones. An option (`datamodule.walk_questions`),
off by default: docs/retriever.md has what it gained on one KG and cost on three.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from rra.graph.base import TYPE_RELATIONS, KnowledgeGraph, base_relation, is_inverse

FRONTIER_SAMPLE = 64  # entities of a walk's frontier whose relations are read to choose the next step
LEADS = ("what is {x}?", "{x}?", "which is {x}?", "name {x}.", "tell me {x}.")


def phrase_path(path: Sequence[str], name_of: Callable[[str], str], mask: str, rng: random.Random) -> str:
    """The question a walk asks: each relation wraps what it starts from, forward as "the {name}
    of X", backwards as "what has X as {name}"; an all-forward path is sometimes possessive
    ("[E]'s director's birth place")."""
    names = [name_of(r) for r in path]
    if not any(map(is_inverse, path)) and rng.random() < 0.3:
        x = mask + "".join(f"'s {n}" for n in names)
    else:
        x = mask
        for r, n in zip(path, names):
            x = f"what has {x} as {n}" if is_inverse(r) else f"the {n} of {x}"
    return rng.choice(LEADS).format(x=x)


def walk_questions(kg: KnowledgeGraph, anchors: Sequence[str], name_of: Callable[[str], str], count: int,
                   max_hops: int, rng: random.Random, mask: str = "[E]", attempts: int = 4,
                   lengths: Sequence[int] | None = None) -> list[dict]:
    """`count` items {question, path, anchor}: from an anchor drawn from `anchors`, a walk of 1 to
    `max_hops` relations (lengths drawn evenly, or from `lengths` as often as they occur there) that
    ends on something other than the anchor, each step a relation drawn evenly from those at the
    walk's frontier. Straight back over the relation just walked is a step too (`directed_by,
    ^directed_by` asks for the films of [E]'s director); a class membership is not
    (`TYPE_RELATIONS`: "the type of [E]" is asked of classes, which the KG's own questions teach
    where they ask it). A walk that cannot go on at its length is drawn again, up to `attempts`
    times per item."""
    anchors = [a for a in dict.fromkeys(anchors) if kg.has_entity(a)]
    if not anchors or count <= 0:
        return []
    out = []
    for _ in range(count * attempts):
        if len(out) >= count:
            break
        anchor = rng.choice(anchors)
        hops = rng.choice(lengths) if lengths else rng.randint(1, max_hops)
        frontier, path = [anchor], []
        while len(path) < hops and frontier:
            seen = frontier if len(frontier) <= FRONTIER_SAMPLE else rng.sample(frontier, FRONTIER_SAMPLE)
            rels = sorted({r for rs in kg.relations_batch(seen).values() for r in rs
                           if base_relation(r) not in TYPE_RELATIONS})
            if not rels:
                break
            r = rng.choice(rels)
            path.append(r)
            frontier = sorted({n for ns in kg.neighbors_batch(seen, r).values() for n in ns} - {anchor})
        if len(path) == hops and frontier:
            out.append({"question": phrase_path(path, name_of, mask, rng), "path": path, "anchor": anchor})
    return out

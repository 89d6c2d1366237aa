"""Which KG nodes a gold answer names, however the dataset wrote it.

A dataset may give an answer as a KG id (`person/ann`, `"2017"^^xsd:gYear`), as a name ("Ann
Smith"), or, for a value, as text: "2017", "2017.0", or the N-Triples form
`"2017"^^<http://www.w3.org/2001/XMLSchema#gYear>`. Training supervision (rra.data.supervision) and
scoring (rra.eval.run.name_gold_answers) both ask `resolve_answers`, so an answer that supervises a
path is also the one its prediction is scored against. The lookups, in order, each batched over all
answers: the node as written; a literal written in another spelling (canonical form, rra/graph/xsd.py);
an entity's exact, then case-insensitive label; a value of the same number or date in any datatype
(`value_forms`).
"""
from __future__ import annotations

from typing import Iterable

from rra.graph.literals import canonical_literal, value_forms


def resolve_answers(kg, answers: Iterable[str], limit: int = 10) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(labels of the answers that are KG nodes as written, node ids of each other answer that
    names some; [] or absent when the KG does not hold it). Raises the graph's errors."""
    answers = list(dict.fromkeys(answers))
    labels = kg.labels(answers) if answers else {}  # only the nodes the KG holds come back
    rest = [a for a in answers if a not in labels]
    ids: dict[str, list[str]] = {}
    spelt = {a: c for a in rest if (c := canonical_literal(a.strip())) is not None and c != a}
    if spelt:
        held = kg.labels(sorted(set(spelt.values())))
        ids.update({a: [c] for a, c in spelt.items() if c in held})
    names = [a for a in rest if a not in ids and a not in spelt]
    if names:
        ids.update({a: hits for a, hits in kg.find_entities_batch(names, "exact", limit).items() if hits})
        missing = [a for a in names if a not in ids]
        if missing:
            ids.update({a: hits for a, hits in kg.find_entities_batch(missing, "casefold", limit).items() if hits})
    values = {a: value_forms(a) for a in rest if a not in ids and a.strip()}
    if values:
        held = kg.labels(sorted({f for forms in values.values() for f in forms}))
        for a, forms in values.items():
            found = [f for f in forms if f in held]
            if found:
                ids[a] = found
    return labels, ids

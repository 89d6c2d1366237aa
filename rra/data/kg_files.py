"""Reading the `head|relation|tail` KB files that the data modules ship or point at.

The graph layer owns KG loading (rra/graph/loaders.py). This module only wraps it so the data
modules have one call to make; until that loader exists it reads the file with a few lines of
its own, with the same error contract (bad line -> error naming file:line and the value).
"""
from __future__ import annotations

from pathlib import Path

from rra.data.records import DataFormatError
from rra.graph import NetworkXGraph, Triple


def read_pipe_triples(path: str | Path) -> list[Triple]:
    """`head|relation|tail` lines (MetaQA's kb.txt format); blank lines are skipped."""
    path = Path(path)
    triples: list[Triple] = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            parts = line.split("|")
            if len(parts) != 3 or not all(p.strip() for p in parts):
                raise DataFormatError(f"{path}:{lineno}", "expected head|relation|tail", line)
            triples.append(Triple(parts[0].strip(), parts[1].strip(), parts[2].strip()))
    return triples


def read_labels(path: str | Path) -> dict[str, str]:
    """`entity_id<TAB>label` lines."""
    path = Path(path)
    labels: dict[str, str] = {}
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0] or not parts[1]:
                raise DataFormatError(f"{path}:{lineno}", "expected entity_id<TAB>label", line)
            labels[parts[0]] = parts[1]
    return labels


def load_pipe_graph(path: str | Path, labels_path: str | Path | None = None) -> NetworkXGraph:
    """A `head|relation|tail` KB (plus optional labels file) as an in-memory NetworkXGraph."""
    kg = NetworkXGraph(read_pipe_triples(path))
    if labels_path is not None:
        kg.set_labels(read_labels(labels_path))
    return kg

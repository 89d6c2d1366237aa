"""What filled an on-disk Oxigraph store, so a second run with the same KG file opens it instead of
loading it again.

`load_graph(path, backend="oxigraph", store_path=DIR)` records, per graph it loads into, the KG
file's path, size and modification time (and the labels file's), the settings that decide what is
written (format, entity / relation bases, label / name / alias predicates, ...) and what it read
(the load report), in DIR/rra-source.json. The next run with the same file and settings opens the
store as it is: a million-triple KG is ready in 0.05 s instead of 24 s of loading (bench_scale). A changed file (or
setting) replaces that graph's triples, so a fact removed from the file does not linger in the store.
A store filled otherwise (`rra-kg load` before this record existed, by hand) has no record: the file
is added to what it holds, as before.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

RECORD = "rra-source.json"
# Bumped when what rra writes into a store changes (the other-name triples of 2026-12-01, say), so
# a store written before reloads instead of lacking them.
WRITER = 1


def _stamp(path: str | Path) -> dict:
    st = Path(path).stat()
    return {"path": str(Path(path).resolve()), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


def source(path, labels_path, settings: dict) -> dict:
    """What a load from `path` writes: the files as they are now and the settings."""
    return {"writer": WRITER, "kb": _stamp(path), "labels": _stamp(labels_path) if labels_path else None,
            "settings": json.loads(json.dumps(settings, sort_keys=True, default=str))}


def graph_key(graph_iri) -> str:
    return json.dumps(graph_iri if isinstance(graph_iri, (str, type(None))) else list(graph_iri))


def _read(store_path) -> dict:
    try:
        return json.loads((Path(store_path) / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet, or unreadable: as if none (the file is then loaded)
        return {}


def recorded(store_path, key: str) -> dict | None:
    """The record of the graph `key` in the store at `store_path` ({"source", "report"}), if any."""
    return _read(store_path).get(key)


def _save(store_path, records: dict) -> None:
    target = Path(store_path) / RECORD
    tmp = target.with_name(RECORD + ".tmp")
    tmp.write_text(json.dumps(records, indent=1), encoding="utf-8")
    os.replace(tmp, target)  # whole or not at all: a killed run leaves the old record


def write(store_path, key: str, what: dict, report) -> None:
    """Record that graph `key` now holds `what` (a `source`), read as `report` says."""
    _save(store_path, {**_read(store_path), key: {"source": what, "report": dataclasses.asdict(report)}})


def forget(store_path, key: str) -> None:
    """Drop graph `key`'s record before its triples change: a load killed halfway then matches nothing."""
    records = _read(store_path)
    if records.pop(key, None) is not None:
        _save(store_path, records)

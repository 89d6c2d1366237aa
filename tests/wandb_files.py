"""Read what W&B wrote for an offline run (`wandb/offline-run-*/run-*.wandb`), without W&B's
servers: the file is a LevelDB-style log of protobuf `Record`s (32 KiB blocks, 7-byte record
headers: crc32, length, type FULL/FIRST/MIDDLE/LAST), after a 7-byte ':W&B' file header."""
from __future__ import annotations

import json
import struct
from pathlib import Path

BLOCK = 32768


def records(path: str | Path):
    from wandb.proto import wandb_internal_pb2 as pb

    data = Path(path).read_bytes()
    assert data[:4] == b":W&B", f"{path}: not a W&B run file"
    pos, pending = 7, b""
    while pos + 7 <= len(data):
        left = BLOCK - pos % BLOCK
        if left < 7:  # block trailer
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if length == 0 and kind == 0:  # zero padding to the end of the block
            pos += left
            continue
        pending += data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # FULL or LAST: a whole record
            record = pb.Record()
            record.ParseFromString(pending)
            pending = b""
            yield record


def offline_run(folder: str | Path) -> dict:
    """What one offline run holds: {"dir", "group", "name", "history": {key: value}, "config":
    {key: value}, "artifacts": [(name, type)]}, nested keys joined by '/'."""
    runs = sorted(Path(folder).rglob("offline-run-*/run-*.wandb"))
    assert len(runs) == 1, f"expected one offline W&B run under {folder}, found {runs}"
    out = {"dir": runs[0].parent, "group": None, "name": None, "history": {}, "config": {}, "artifacts": []}
    for r in records(runs[0]):
        kind = r.WhichOneof("record_type")
        if kind == "run":
            out["group"], out["name"] = r.run.run_group, r.run.display_name
        elif kind == "history":
            out["history"].update({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.history.item})
        elif kind == "config":
            out["config"].update({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.config.update})
        elif kind == "artifact":
            out["artifacts"].append((r.artifact.name, r.artifact.type))
    return out

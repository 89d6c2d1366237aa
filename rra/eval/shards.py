"""One split answered in shards, by any scheduler: `python infer.py shard=i num_shards=n`.

Shard i of n answers the i-th contiguous slice of the split (after `limit`), in its own directory
`<output dir>/shard-i-of-n/`, which is a run directory like any other (run.json, .lock,
predictions.jsonl, metrics.json, summary.md). Beside them it writes `shard.json`, the manifest:
which shard it is, the qids it owns, and how many questions the whole split has with a digest of
their qids in order. `rra.eval.merge` reads the manifests to prove that the shards together hold
every question of the split exactly once before it computes the metrics of the whole run; Ray
(`rra.eval.ray_infer`) writes the same directories.

A shard whose every question is answered (no transient failure left) is complete: running it
again only reads its metrics back, so a scheduler may resubmit every shard and only the
unfinished ones do any work.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from rra.eval import integrity, report

MANIFEST = "shard.json"
SHARD_DIR = re.compile(r"^shard-(\d+)-of-(\d+)$")


class ShardError(ValueError):
    """Shards that do not add up to one run: missing, duplicated, unfinished or of another setup."""


@dataclass(frozen=True)
class ShardSpec:
    index: int
    count: int

    def __post_init__(self):
        for name, v in (("shard", self.index), ("num_shards", self.count)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ShardError(f"{name} must be an integer, got {v!r}")
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ShardError(f"shard={self.index} num_shards={self.count}: need num_shards >= 1 and "
                             f"0 <= shard < num_shards")

    @classmethod
    def from_config(cls, cfg) -> "ShardSpec | None":
        """`shard` / `num_shards` of an infer config; None when the run is not sharded."""
        index, count = cfg.get("shard"), cfg.get("num_shards")
        if index is None and count is None:
            return None
        if index is None or count is None:
            raise ShardError(f"give both shard=i and num_shards=n (got shard={index}, num_shards={count})")
        return cls(index, count)

    @property
    def dirname(self) -> str:
        return f"shard-{self.index}-of-{self.count}"

    def bounds(self, total: int) -> tuple[int, int]:
        """[start, end) of this shard among `total` questions: contiguous, sizes differ by at most one."""
        return self.index * total // self.count, (self.index + 1) * total // self.count

    def select(self, examples: list) -> list:
        start, end = self.bounds(len(examples))
        return examples[start:end]


def qids_digest(qids) -> str:
    """sha256 of the qids in order: the identity of a split (a changed order means other slices)."""
    h = hashlib.sha256()
    for q in qids:
        h.update(str(q).encode("utf-8", "backslashreplace") + b"\n")
    return h.hexdigest()


def manifest(spec: ShardSpec, split: str, all_qids: list[str], limit: int | None = None) -> dict:
    start, end = spec.bounds(len(all_qids))
    return {"shard": spec.index, "num_shards": spec.count, "split": split, "limit": limit, "split_n": len(all_qids),
            "split_digest": qids_digest(all_qids), "qids": list(all_qids[start:end])}


def read_manifest(shard_dir: Path) -> dict | None:
    try:
        data = json.loads((Path(shard_dir) / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise ShardError(f"{Path(shard_dir) / MANIFEST}: unreadable shard manifest ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("qids"), list):
        raise ShardError(f"{Path(shard_dir) / MANIFEST}: not a shard manifest (no qids list)")
    return data


def write_manifest(shard_dir: Path, record: dict, resume: bool = True) -> None:
    """Write the manifest, or, resuming, check that the one there describes the same slice of the
    same split: a shard resumed over another question list would mix two runs' answers."""
    old = read_manifest(shard_dir) if resume else None
    if old is not None:
        keys = ("shard", "num_shards", "split", "limit", "split_n", "split_digest")
        diff = [f"{k}: {old.get(k)!r} -> {record[k]!r}" for k in keys if old.get(k) != record[k]]
        if diff:
            raise integrity.ResumeMismatchError(
                f"{shard_dir} is a shard of another question list or slicing ({'; '.join(diff)}); "
                "use a new output dir, the same limit and num_shards, or resume=false")
        if old.get("qids") == record["qids"]:
            return
    path = Path(shard_dir) / MANIFEST
    tmp = path.with_name(f".{MANIFEST}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def missing(shard_dir: Path, record: dict | None = None, retried: bool = True) -> list[str]:
    """qids of the shard's manifest without an answer, in manifest order; `retried`: a transient
    failure (which a resume asks again) counts as no answer. ["(no manifest)"] without a manifest."""
    record = record if record is not None else read_manifest(shard_dir)
    if record is None:
        return ["(no manifest)"]
    latest = {d.get("qid"): d.get("status")
              for d in integrity.latest_per_qid(report.read_predictions(Path(shard_dir) / report.PREDICTIONS))}
    redo = integrity.TRANSIENT if retried else frozenset()
    return [q for q in record["qids"] if q not in latest or latest[q] in redo]


def is_complete(shard_dir: Path, limit: int | None = None) -> bool:
    """Every question answered and the shard's metrics written: nothing left to run. `limit`: the
    run's; a shard made under another limit holds another slice (the data and split are checked by
    the run's fingerprint, run.json)."""
    record = read_manifest(shard_dir)
    return (record is not None and record.get("limit") == limit and (Path(shard_dir) / report.METRICS).is_file()
            and not missing(shard_dir, record))


def shard_dirs(run_dir: Path) -> list[Path]:
    """The `shard-i-of-n` directories directly under `run_dir`, by shard index."""
    found = []
    for p in Path(run_dir).iterdir() if Path(run_dir).is_dir() else ():
        m = SHARD_DIR.match(p.name)
        if m and p.is_dir():
            found.append((int(m.group(2)), int(m.group(1)), p))
    return [p for _, _, p in sorted(found)]


def take(spec: ShardSpec, split: str, examples: list, shard_dir: Path, limit: int | None = None,
         resume: bool = True) -> list:
    """This shard's slice of `examples` (the whole split after `limit`, in order), its manifest
    written (or, resuming, checked)."""
    write_manifest(shard_dir, manifest(spec, split, [ex.qid for ex in examples], limit), resume)
    return spec.select(examples)

"""What keeps a run directory honest: a fingerprint of what produced it, a lock while a run writes
to it, and which earlier answers a resumed run may keep.

- `run.json` records the fingerprint (method and its settings, LLM, retriever checkpoint with a
  content hash, graph, data, split, the answer rule); resuming into a directory made by a
  different setup stops with the keys that differ, instead of mixing two methods' answers.
- `RunLock`: one run at a time per output directory (an OS file lock, released on exit or crash).
- Questions that ended in a transient failure (`llm_error`, `graph_error`) are answered again on
  resume; metrics always count each qid once (its latest answer).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

RUN_FILE = "run.json"
LOCK_FILE = ".lock"
TRANSIENT = frozenset({"llm_error", "graph_error"})
FINGERPRINT_VERSION = 1


class ResumeMismatchError(RuntimeError):
    """The output directory holds answers produced by a different setup."""


class RunLockedError(RuntimeError):
    """Another run is writing to the same output directory."""


def file_hash(path: str | Path, head_bytes: int = 1 << 20) -> str:
    """sha1 of a file's size and first MB: cheap for a 90 MB checkpoint, and any retraining
    changes it (new weights are spread over the whole file)."""
    p = Path(path)
    h = hashlib.sha1(str(p.stat().st_size).encode())
    with p.open("rb") as f:
        h.update(f.read(head_bytes))
    return h.hexdigest()[:16]


def _node(cfg: DictConfig, key: str):
    node = OmegaConf.select(cfg, key, default=None)
    if isinstance(node, DictConfig):
        try:
            return OmegaConf.to_container(node, resolve=True)
        except Exception:  # an interpolation that needs Hydra's runtime (e.g. output_dir)
            return OmegaConf.to_container(node, resolve=False)
    return node


def fingerprint(cfg: DictConfig) -> dict:
    """The settings that change answers. `limit`, batch sizes, concurrency and output paths do
    not: a resumed run may answer more questions, or the same ones faster."""
    method = _node(cfg, "method") or {}
    fp = {
        "version": FINGERPRINT_VERSION,
        "method": method,
        "llm": _node(cfg, "llm"),
        "graph": _node(cfg, "graph"),
        "data": {k: v for k, v in (_node(cfg, "data") or {}).items() if k not in ("num_workers", "batch_size",
                                                                                   "eval_batch_size")},
        "split": cfg.get("split"),
        "seed": cfg.get("seed"),
    }
    if isinstance(method, dict) and method.get("_target_", "").endswith("build_rra"):
        ckpt = OmegaConf.select(cfg, "retriever.ckpt", default=None)
        fp["retriever"] = _node(cfg, "retriever")
        fp["rewriter"], fp["answer"] = _node(cfg, "rewriter"), _node(cfg, "answer")
        if ckpt and Path(ckpt).is_file():
            fp["retriever_ckpt_hash"] = file_hash(ckpt)
    return json.loads(json.dumps(fp, default=str))  # plain, comparable values


def differences(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Dotted keys whose values differ, e.g. ['method._target_: rra.pipeline.build_rra -> rra.baselines.ToG']."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b, name = old.get(key), new.get(key), f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            out += differences(a, b, name + ".")
        elif a != b:
            out.append(f"{name}: {short(a)} -> {short(b)}")
    return out


def short(v, n: int = 80) -> str:
    text = json.dumps(v, default=str)
    return text if len(text) <= n else text[:n] + "..."


def check_resume(out: Path, fp: dict, resuming: bool) -> None:
    """Write run.json, or, when resuming into a directory with answers, refuse a different setup."""
    path = out / RUN_FILE
    has_answers = (out / "predictions.jsonl").exists() and (out / "predictions.jsonl").stat().st_size > 0
    if resuming and path.exists() and has_answers:
        old = json.loads(path.read_text(encoding="utf-8"))
        diff = differences(old, fp)
        if diff:
            shown = "; ".join(diff[:8]) + (f"; ... ({len(diff) - 8} more)" if len(diff) > 8 else "")
            raise ResumeMismatchError(
                f"{out} holds answers of a different setup, so resuming would mix them: {shown}. "
                "Use a new output dir (hydra.run.dir=...) or resume=false to start over.")
    elif resuming and has_answers and not path.exists():
        raise ResumeMismatchError(
            f"{out} holds answers but no {RUN_FILE}, so what produced them is unknown; "
            "use a new output dir or resume=false to start over.")
    path.write_text(json.dumps(fp, indent=1) + "\n", encoding="utf-8")


class RunLock:
    """An exclusive lock on an output directory for the duration of a run."""

    def __init__(self, out: Path):
        self.path = Path(out) / LOCK_FILE
        self._f = None

    def __enter__(self) -> "RunLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = self.path.open("a+")
        try:
            fcntl.flock(self._f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._f.seek(0)
            holder = self._f.read().strip() or "?"
            self._f.close()
            raise RunLockedError(f"another run (pid {holder}) is writing to {self.path.parent}; "
                                 "wait for it or use another output dir") from None
        self._f.seek(0)
        self._f.truncate()
        self._f.write(str(os.getpid()))
        self._f.flush()
        return self

    def __exit__(self, *exc) -> None:
        fcntl.flock(self._f, fcntl.LOCK_UN)
        self._f.close()


def latest_per_qid(predictions: list[dict]) -> list[dict]:
    """One prediction per qid, the latest written (a retried question replaces its failure),
    in first-seen order."""
    latest: dict[str, dict] = {}
    for d in predictions:
        latest[str(d.get("qid", ""))] = d
    return list(latest.values())

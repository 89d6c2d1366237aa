"""What keeps a run directory honest: a fingerprint of what produced it, a lock while a run writes
to it, and which earlier answers a resumed run may keep.

- `run.json` records the fingerprint (method and its settings, LLM, graph, data, split, the answer
  rule) and the content of every input file or directory the config names (KG, labels, relation
  names, question files, the retriever checkpoint or exported model directory, an LLM's weights):
  a streamed sha256 per file (the digests are kept in run.json and in ~/.cache/rra/digests.json, so
  a new output dir does not re-read a big KG). When a file is read again is `integrity.digest`:
  `stamp` when its size or mtime changed; `sample` (the default) also when a hash of 16 blocks spread
  over it changed (about 1 MB read per file: an edit in place with size and mtime restored is seen,
  unless it falls between the blocks); `content` always (every byte, every run). Resuming into a
  directory made by a different setup, or from inputs whose content changed, stops with what
  differs, instead of mixing two setups' answers, before anything in the directory is rewritten.
- `RunLock`: one run at a time per output directory (an OS file lock, released on exit or crash);
  the run that takes it removes the temporary files a killed run left (`.predictions.jsonl.*.tmp`).
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
FINGERPRINT_VERSION = 2
CONTENT_NODES = ("data", "graph", "retriever", "rewriter", "answer", "llm", "method")
SKIP_KEYS = ("cache", "store_path", "log_dir", "output_dir")  # config keys never fingerprinted by content
MAX_DIR_FILES = 5000  # a directory with more files than this is described by names, sizes and mtimes


class ResumeMismatchError(RuntimeError):
    """The output directory holds answers produced by a different setup."""


class RunLockedError(RuntimeError):
    """Another run is writing to the same output directory."""


def file_hash(path: str | Path) -> str:
    """sha256 of a file's whole content, streamed (a 5 GB KG never sits in memory)."""
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


DIGEST_MODES = ("stamp", "sample", "content")
SAMPLE_BLOCKS, SAMPLE_BLOCK = 16, 1 << 16


def _stamp(p: Path) -> list:
    st = p.stat()
    return [st.st_size, st.st_mtime_ns]


def sample_hash(path: Path) -> str:
    """sha256 of SAMPLE_BLOCKS blocks of 64 KiB spread evenly over the file (first and last
    included), with its size: a cheap look at the content (about 1 MB read whatever the size)."""
    size = path.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with path.open("rb") as f:
        step = max(1, (size - SAMPLE_BLOCK) // (SAMPLE_BLOCKS - 1)) if size > SAMPLE_BLOCK else 1
        for k in range(SAMPLE_BLOCKS if size > SAMPLE_BLOCK else 1):
            f.seek(min(k * step, max(0, size - SAMPLE_BLOCK)))
            h.update(f.read(SAMPLE_BLOCK))
    return h.hexdigest()


def content_digest(path: str | Path, known: dict | None = None, mode: str = "sample") -> tuple[str, dict]:
    """(digest of a file or a directory's files, {absolute file: [size, mtime_ns, sha256, sample]}).
    `known` (the same map from an earlier run.json) saves re-reading files that look unchanged:
    same size and mtime (`mode="stamp"`), and the same sample hash (`"sample"`); `"content"`
    re-reads every file. A directory (an exported model, a dataset root) hashes each regular file
    under it (hidden ones and __pycache__ skipped) with its relative path."""
    if mode not in DIGEST_MODES:
        raise ValueError(f"integrity.digest must be one of {', '.join(DIGEST_MODES)}, not {mode!r}")
    p, known, seen = Path(path).resolve(), known or {}, {}

    def one(f: Path) -> str:
        stamp = _stamp(f)
        old = known.get(str(f))
        sample = sample_hash(f) if mode == "sample" else None
        same = bool(old) and old[:2] == stamp and mode != "content" and (
            mode == "stamp" or (len(old) > 3 and old[3] == sample))
        sha = old[2] if same else file_hash(f)
        seen[str(f)] = stamp + [sha, sample if sample is not None else (old[3] if same and len(old) > 3 else None)]
        return sha

    if p.is_file():
        return one(p), seen
    files = sorted(f for f in p.rglob("*") if f.is_file()
                   and not any(part.startswith(".") or part == "__pycache__" for part in f.relative_to(p).parts))
    h = hashlib.sha256()
    if len(files) > MAX_DIR_FILES:  # not a model or a dataset: too big to read, describe it instead
        for f in files:
            h.update(f"{f.relative_to(p)}\0{_stamp(f)}\n".encode())
        return "listing:" + h.hexdigest(), seen
    for f in files:
        h.update(f"{f.relative_to(p)}\0{one(f)}\n".encode())
    return h.hexdigest(), seen


def _input_paths(node, prefix: str) -> dict[str, str]:
    """Dotted config key -> value for every string leaf that names an existing file or directory."""
    out = {}
    if isinstance(node, dict):
        for k, v in node.items():
            if any(word in str(k) for word in SKIP_KEYS):
                continue  # a cache or a store the run itself writes: its bytes change, its meaning does not
            out.update(_input_paths(v, f"{prefix}.{k}"))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.update(_input_paths(v, f"{prefix}[{i}]"))
    elif isinstance(node, str) and "://" not in node and 0 < len(node) < 4096:
        try:
            p = Path(node)
            # a file, or a directory that is not the working directory or above it (a model, a dataset root)
            if p.is_file() or (p.is_dir() and "/" in node and p.resolve() not in [Path.cwd(), *Path.cwd().parents]):
                out[prefix] = node
        except OSError:
            pass
    return out


def digest_cache_path() -> Path:
    """Digests of files already read, by absolute path with size and mtime, shared by every run
    dir of this user: a 5 GB KG is read once, not once per output dir ($RRA_CACHE_DIR)."""
    base = os.environ.get("RRA_CACHE_DIR") or Path.home() / ".cache" / "rra"
    return Path(base) / "digests.json"


def _load_digest_cache() -> dict:
    try:
        data = json.loads(digest_cache_path().read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_digest_cache(cache: dict, keep: int = 20_000) -> None:
    """Best effort (a read-only home must not stop a run); written whole with os.replace."""
    path = digest_cache_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(dict(list(cache.items())[-keep:])), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def contents(fp: dict, known: dict | None = None, mode: str = "sample") -> tuple[dict, dict]:
    """({config key: {"path", "sha256"}}, digest cache) for every input the fingerprint names."""
    shared = _load_digest_cache()
    found, cache, known = {}, {}, {**shared, **(known or {})}
    for key in CONTENT_NODES:
        for name, path in _input_paths(fp.get(key), key).items():
            digest, seen = content_digest(path, known, mode)
            found[name] = {"path": str(Path(path).resolve()), "sha256": digest}
            cache.update(seen)
            known.update(seen)  # a file named twice (data.root and data.kb_path) is read once
    if any(shared.get(f) != v for f, v in cache.items()):
        shared.update(cache)
        _save_digest_cache(shared)
    return found, cache


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
        fp["retriever"] = _node(cfg, "retriever")
        fp["rewriter"], fp["answer"] = _node(cfg, "rewriter"), _node(cfg, "answer")
    return json.loads(json.dumps(fp, default=str))  # plain, comparable values


def differences(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Dotted keys whose values differ, e.g. ['method._target_: rra.pipeline.method.build_rra -> rra.baselines.ToG']."""
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


def check_resume(out: Path, fp: dict, resuming: bool, digest: str = "sample") -> None:
    """Write run.json (the fingerprint plus the content digests of its inputs), or, when resuming
    into a directory with answers, refuse a different setup or changed inputs, naming them
    (`digest`: when an input is read again, see the module doc)."""
    path = out / RUN_FILE
    has_answers = (out / "predictions.jsonl").exists() and (out / "predictions.jsonl").stat().st_size > 0
    old = None
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = None
    known = (old or {}).get("digest_cache") if isinstance(old, dict) else None
    inputs, cache = contents(fp, known if isinstance(known, dict) else None, digest)
    if resuming and has_answers and old is not None:
        diff = differences({k: v for k, v in old.items() if k not in ("inputs", "digest_cache")}, fp)
        changed = changed_inputs(old.get("inputs") or {}, inputs)
        if diff or changed:
            listed = changed + diff
            shown = "; ".join(listed[:8]) + (f"; ... ({len(listed) - 8} more)" if len(listed) > 8 else "")
            raise ResumeMismatchError(
                f"{out} holds answers of a different setup, so resuming would mix them: {shown}. "
                "Use a new output dir (hydra.run.dir=...) or resume=false to start over.")
    elif resuming and has_answers:
        raise ResumeMismatchError(
            f"{out} holds answers but no readable {RUN_FILE}, so what produced them is unknown; "
            "use a new output dir or resume=false to start over.")
    record = {**fp, "inputs": inputs, "digest_cache": cache}
    tmp = path.with_name(f".{RUN_FILE}.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def changed_inputs(old: dict, new: dict) -> list[str]:
    """'changed: data.kb_path (/data/kb.txt): content differs from the run's' and the like."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if a is None:
            out.append(f"{key}: new input {b['path']}")
        elif b is None:
            out.append(f"{key}: input {a['path']} no longer given or no longer exists")
        elif a.get("path") != b.get("path"):
            out.append(f"{key}: {a.get('path')} -> {b.get('path')} (different content)")
        else:
            out.append(f"{key} ({b['path']}): content changed since the answers were written")
    return out


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
        sweep_temporary(self.path.parent)
        return self

    def __exit__(self, *exc) -> None:
        fcntl.flock(self._f, fcntl.LOCK_UN)
        self._f.close()


TEMPORARY = (".predictions.jsonl.*.tmp", f".{RUN_FILE}.tmp")  # what a killed run can leave half-written


def sweep_temporary(out: Path) -> list[Path]:
    """Remove the temporary files a killed run left in `out` (called by the run holding the lock,
    so no other run is writing them). Returns what was removed."""
    gone = []
    for pattern in TEMPORARY:
        for f in Path(out).glob(pattern):
            try:
                f.unlink()
                gone.append(f)
            except OSError:
                pass
    return gone


def latest_per_qid(predictions: list[dict]) -> list[dict]:
    """One prediction per qid, the latest written (a retried question replaces its failure),
    in first-seen order."""
    latest: dict[str, dict] = {}
    for d in predictions:
        latest[str(d.get("qid", ""))] = d
    return list(latest.values())

"""The shards of a run, merged into the run: its predictions, metrics.json and summary.md.

    python -m rra.eval.merge logs/infer/runs/big          # the directory holding shard-i-of-n/
    python -m rra.eval.merge a/shard-0-of-2 b/shard-1-of-2 --out merged   # shards from several machines

Before it computes anything it proves that the shards are one run (rra.eval.shards): the same
setup in every run.json (method, LLM, graph, data, split and the content of every input file; the
paths may differ from machine to machine), the same question list, every shard index 0..n-1 once,
the manifests together holding each question of the split exactly once, every question answered,
and no shard still running (each shard's lock is taken while it reads). Any of these failing stops
it with what is wrong and the shard to re-run. The merged predictions.jsonl holds each question's
latest answer in split order, so the directory reads like a single-process run (and a plain
`python infer.py hydra.run.dir=...` resumed there finds every question answered).
"""
from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from pathlib import Path

from rra.eval import integrity, misses, report, shards
from rra.eval.metrics import compute_metrics
from rra.eval.shards import ShardError

SETUP_KEYS = ("inputs", "digest_cache")  # run.json keys that are not the fingerprint


def read_run_record(shard_dir: Path) -> dict:
    try:
        return json.loads((shard_dir / integrity.RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ShardError(f"{shard_dir}: no readable {integrity.RUN_FILE} ({err}); the shard never started "
                         "or its directory is not a run directory") from None


def check_same_setup(dirs: list[Path], records: list[dict]) -> None:
    """Every shard's fingerprint and input contents equal the first shard's (input paths may differ)."""
    first = records[0]
    base = {k: v for k, v in first.items() if k not in SETUP_KEYS}
    digests = {k: v.get("sha256") for k, v in (first.get("inputs") or {}).items()}
    for d, rec in zip(dirs[1:], records[1:]):
        diff = integrity.differences(base, {k: v for k, v in rec.items() if k not in SETUP_KEYS})
        other = {k: v.get("sha256") for k, v in (rec.get("inputs") or {}).items()}
        diff += [f"{k}: input content differs" for k in sorted(set(digests) | set(other))
                 if digests.get(k) != other.get(k)]
        if diff:
            raise ShardError(f"{d} was produced by another setup than {dirs[0]}: {'; '.join(diff[:6])}")


def check_partition(dirs: list[Path], manifests: list[dict]) -> None:
    """The manifests are shards 0..n-1 of one question list, each once, together every question once."""
    first = manifests[0]
    for d, m in zip(dirs, manifests):
        for key in ("num_shards", "split", "split_n", "split_digest"):
            if m.get(key) != first.get(key):
                raise ShardError(f"{d} is a shard of another question list or slicing than {dirs[0]} "
                                 f"({key}: {m.get(key)!r} vs {first.get(key)!r})")
    n = first["num_shards"]
    by_index: dict[int, list[Path]] = {}
    for d, m in zip(dirs, manifests):
        by_index.setdefault(m["shard"], []).append(d)
    twice = {i: ds for i, ds in by_index.items() if len(ds) > 1}
    if twice:
        i, ds = next(iter(twice.items()))
        raise ShardError(f"shard {i} of {n} is given twice ({', '.join(map(str, ds))}); give each shard once")
    absent = [i for i in range(n) if i not in by_index]
    if absent:
        raise ShardError(f"shards {absent} of {n} are missing; run them (python infer.py ... shard=i num_shards={n}) "
                         "with the same hydra.run.dir, then merge again")
    ordered = [m for m in sorted(manifests, key=lambda m: m["shard"])]
    qids = [q for m in ordered for q in m["qids"]]
    if len(qids) != first["split_n"] or shards.qids_digest(qids) != first["split_digest"]:
        raise ShardError(f"the shards' question lists do not add up to the split ({len(qids)} qids vs "
                         f"{first['split_n']}): a manifest was edited or comes from another run")


def shard_predictions(shard_dir: Path, manifest: dict) -> list[dict]:
    """The shard's latest answer to each of its questions, in manifest order; refuses a shard with
    a question unanswered or with answers to questions it does not own."""
    owned = set(manifest["qids"])
    written = report.read_predictions(shard_dir / report.PREDICTIONS)
    latest = {d.get("qid"): d for d in integrity.latest_per_qid(written)}
    foreign = [q for q in latest if q not in owned]
    if foreign:
        raise ShardError(f"{shard_dir / report.PREDICTIONS} holds answers to questions that are not this "
                         f"shard's ({len(foreign)}, e.g. {foreign[0]!r}): merging would count them twice")
    todo = [q for q in manifest["qids"] if q not in latest]
    if todo:
        raise ShardError(f"{shard_dir}: {len(todo)} of {len(owned)} questions are not answered yet "
                         f"(e.g. {', '.join(map(repr, todo[:3]))}); re-run shard {manifest['shard']} "
                         f"(num_shards={manifest['num_shards']}, same hydra.run.dir): it resumes where it stopped")
    return [latest[q] for q in manifest["qids"]]


def summed_usage(dirs: list[Path]) -> dict | None:
    """The shards' LLM usage added up (from their metrics.json), or None when none recorded one."""
    total: dict = {}
    for d in dirs:
        try:
            usage = json.loads((d / report.METRICS).read_text(encoding="utf-8")).get("llm_usage") or {}
        except (OSError, ValueError):
            continue
        for k, v in usage.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                total[k] = total.get(k, 0) + v
    return total or None


def merge(dirs: list[Path], out: Path, wall_s: float | None = None, locked: bool = False,
          method: str | None = None) -> dict:
    """Merge the shard directories `dirs` into `out`; returns the whole run's metrics. `wall_s`:
    the run's wall time, when one process saw it all (Ray); else questions/s is per worker.
    `locked`: the caller already holds the locks of `out` and the shards."""
    dirs = [Path(d) for d in dirs]
    if not dirs:
        raise ShardError(f"no shard directories (shard-i-of-n/) to merge in {out}")
    same = [d for i, d in enumerate(dirs) if d.resolve() in {e.resolve() for e in dirs[:i]}]
    if same:
        raise ShardError(f"{same[0]} is given twice; give each shard once")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        if not locked:  # a shard still writing answers would be merged half-done
            for d in [out, *dirs]:
                stack.enter_context(integrity.RunLock(d))
        manifests = []
        for d in dirs:
            m = shards.read_manifest(d)
            if m is None:
                raise ShardError(f"{d}: no {shards.MANIFEST}; the shard never loaded its questions")
            manifests.append(m)
        records = [read_run_record(d) for d in dirs]
        check_same_setup(dirs, records)
        check_partition(dirs, manifests)
        order = sorted(range(len(dirs)), key=lambda i: manifests[i]["shard"])
        preds = [p for i in order for p in shard_predictions(dirs[i], manifests[i])]
        return write_merged(out, [dirs[i] for i in order], records[0], manifests[0], preds, wall_s, method)


def write_merged(out: Path, dirs: list[Path], record: dict, manifest: dict, preds: list[dict],
                 wall_s: float | None, method: str | None) -> dict:
    from rra.eval.run import run_warnings  # the same warnings a single-process run gives

    metrics = compute_metrics(preds, wall_s=wall_s)
    method = method or _shard_method(dirs) or str((record.get("method") or {}).get("_target_", "?"))
    metrics.update(split=manifest["split"], method=method, num_shards=manifest["num_shards"],
                   wall_s=round(wall_s, 3) if wall_s else None)
    usage = summed_usage(dirs)
    if usage:
        metrics["llm_usage"] = usage
    warnings = run_warnings(metrics, None)
    metrics.update(warnings=warnings, run_failed=bool(warnings))
    report.replace_lines(out / report.PREDICTIONS, [report.json_line(p) for p in preds])
    report.write_json(out / report.METRICS, metrics)
    run_record = {k: v for k, v in record.items() if k != "digest_cache"}
    (out / integrity.RUN_FILE).write_text(json.dumps(run_record, indent=1) + "\n", encoding="utf-8")
    llm = record.get("llm") or {}
    setup = {"method": method, "split": manifest["split"],
             "graph": str((record.get("graph") or {}).get("_target_", "?")),
             "llm": f"{llm.get('_target_', 'none')} ({llm.get('model', '')})" if llm else "none",
             "shards": f"{manifest['num_shards']} ({', '.join(str(d) for d in dirs[:4])}"
                       f"{', ...' if len(dirs) > 4 else ''})",
             "output": str(out)}
    text = report.summary_markdown(metrics, f"rra infer: {method} on {manifest['split']} ({len(dirs)} shards merged)",
                                   setup, [d for d in preds if d.get("status") != "ok"], warnings,
                                   [d for d in preds if d.get("status") == "ok"], misses.miss_groups(preds))
    report.write_text(out / report.SUMMARY, text)
    return metrics


def _shard_method(dirs: list[Path]) -> str | None:
    for d in dirs:
        try:
            return json.loads((d / report.METRICS).read_text(encoding="utf-8")).get("method")
        except (OSError, ValueError):
            continue
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rra.eval.merge", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", type=Path, help="a run directory holding shard-i-of-n/, or shard directories")
    ap.add_argument("--out", type=Path, help="where the merged run goes (default: the run directory given)")
    args = ap.parse_args(argv)
    if len(args.paths) == 1 and shards.shard_dirs(args.paths[0]):
        dirs, out = shards.shard_dirs(args.paths[0]), args.out or args.paths[0]
    else:
        dirs, out = args.paths, args.out
        if out is None:
            ap.error("shard directories given one by one need --out DIR")
    try:
        metrics = merge(dirs, out)
    except (ShardError, integrity.RunLockedError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(report.terminal_text((Path(out) / report.SUMMARY).read_text(encoding="utf-8")))
    return 1 if metrics.get("run_failed") else 0


if __name__ == "__main__":
    sys.exit(main())

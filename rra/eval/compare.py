"""Side-by-side comparison of QA runs: one markdown table, one JSON, one PNG.

    python infer.py -m method=rra,tog,structgpt,kgqp,vector,llm_only data=metaqa limit=300 ...
    python -m rra.eval.compare <multirun dir> [more dirs ...] --out <dir> [--baseline LABEL]

Every folder under the given paths that holds a `metrics.json` (written by infer.py through
`rra.eval.metrics`) is one run. Its label is the method name plus the overrides that differ
between the runs (read from Hydra's `.hydra/overrides.yaml`, e.g. `tog llm=none`). The plot puts
Hits@1 against LLM calls per question (left) and against median latency per question (right).
With `--baseline`, every other run is also compared with that one question by question
(rra.eval.paired: questions won and lost, a 95% interval for the difference, the sign test).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rra.cli import run_command
from rra.eval.paired import describe, paired_difference, read_run

COLUMNS = [  # (metrics.json key, column title, format)
    ("n", "n", "{:.0f}"),
    ("hits@1", "Hits@1", "{:.1f}"),
    ("hits@1_strict", "Hits@1 first answer", "{:.1f}"),
    ("f1", "F1", "{:.1f}"),
    ("answer_coverage", "coverage", "{:.1f}"),
    ("llm_calls_per_q", "LLM calls/q", "{:.2f}"),
    ("llm_answered", "LLM answered %", "{:.0f}"),
    ("llm_prompt_tokens_per_q", "prompt tok/q", "{:.0f}"),
    ("llm_completion_tokens_per_q", "compl. tok/q", "{:.0f}"),
    ("latency_p50_s", "latency p50 (s)", "{:.3f}"),
    ("latency_p95_s", "latency p95 (s)", "{:.3f}"),
]


def _overrides(run: Path) -> list[str]:
    path = run / ".hydra" / "overrides.yaml"
    if not path.exists():
        return []
    items = []
    for line in path.read_text().splitlines():  # a YAML list of strings: "- key=value"
        line = line.strip()
        if line.startswith("- "):
            items.append(line[2:].strip().strip("'\""))
    return items


def skipped_jobs(paths: list[str | Path]) -> list[dict]:
    """Job folders of a multirun (they hold `.hydra/`) without a metrics.json: the job failed
    or has not finished. Returned so the comparison says which runs are missing, and why."""
    out = []
    for root in map(Path, paths):
        for hydra_dir in sorted(root.rglob(".hydra")) if root.exists() else []:
            job = hydra_dir.parent
            if not (job / "metrics.json").exists():
                log = next(iter(sorted(job.glob("*.log"))), None)
                last = log.read_text(errors="replace").strip().splitlines()[-1:] if log else []
                out.append({"dir": str(job), "overrides": _overrides(job),
                            "why": (last[0][:200] if last else "no metrics.json: the job failed or is still running")})
    return out


def collect(paths: list[str | Path]) -> list[dict]:
    """One record per run folder: {"label", "dir", "overrides", "metrics"}."""
    runs = []
    for root in map(Path, paths):
        if not root.exists():
            raise FileNotFoundError(f"{root}: no such run or multirun folder")
        files = [root / "metrics.json"] if (root / "metrics.json").exists() else sorted(root.rglob("metrics.json"))
        for f in files:
            try:
                metrics = json.loads(f.read_text())
            except ValueError as e:
                raise ValueError(f"{f}: not valid JSON ({e})") from e
            runs.append({"dir": str(f.parent), "overrides": _overrides(f.parent), "metrics": metrics})
    if not runs:
        raise FileNotFoundError(f"no metrics.json under {', '.join(map(str, paths))}")
    # label: the method plus whatever else differs between runs (llm=..., method.mode=..., data.hop=...)
    varying = set()
    all_sets = [set(r["overrides"]) for r in runs]
    for s in all_sets:
        varying |= s - set.intersection(*all_sets)
    for r in runs:
        m = r["metrics"]
        method = m.get("method") or next((o.split("=", 1)[1] for o in r["overrides"] if o.startswith("method=")), None)
        extras = [o for o in r["overrides"] if o in varying and not o.startswith("method=")]
        r["label"] = " ".join([method or Path(r["dir"]).name, *extras]) if method or extras else Path(r["dir"]).name
        if m.get("label"):
            r["label"] = m["label"]
        if m.get("llm_oracle"):  # a ceiling: never to be read as a model's figure
            r["label"] += " [oracle LLM]"
    return runs


def _fmt(value, pattern: str) -> str:
    if value is None:
        return "–"
    try:
        return pattern.format(value)
    except (ValueError, TypeError):
        return str(value)


def markdown_table(runs: list[dict], title: str = "Comparison", skipped: list[dict] = ()) -> str:
    head = ["run", *(c[1] for c in COLUMNS), "not ok", "Hits@1 mode"]
    lines = [f"## {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in runs:
        m = r["metrics"]
        status = m.get("status") or {}
        bad = {k: v for k, v in status.items() if k != "ok"}
        label = r["label"] + (" **(failed run)**" if m.get("run_failed") else "")
        cells = [label, *(_fmt(m.get(k), f) for k, _, f in COLUMNS),
                 ", ".join(f"{k} {v}" for k, v in bad.items()) or "0",
                 "/".join(sorted((m.get("hits_mode") or {}).keys())) or "top"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Hits@1 mode: `top` = the first ranked answer is a gold answer; `reply` = a gold answer "
              "occurs in the LLM's reply (how free-form LLM answers are scored, see rra/eval/metrics.py). "
              "Hits@1 first answer credits only the first answer read from the reply."]
    failed = [r for r in runs if r["metrics"].get("run_failed")]
    if failed:
        lines += ["", "Failed runs: the method could not do its job, so their figures are a fall-back's "
                  "(a sweep got NaN for them):", ""]
        lines += [f"- {r['label']}: {' '.join(r['metrics'].get('warnings') or [])}" for r in failed]
    lines += shape_table(runs)
    if any(r["metrics"].get("llm_oracle") for r in runs):
        lines += ["", "`[oracle LLM]`: every LLM reply of that run came from the gold labels (`llm=oracle`, "
                  "rra/llm/oracle.py): the method's ceiling with a perfect LLM, not a model's result."]
    if skipped:
        lines += ["", f"Not in the table ({len(skipped)} job(s) without results):", ""]
        lines += [f"- `{' '.join(s['overrides']) or s['dir']}`: {s['why']}" for s in skipped]
    return "\n".join(lines) + "\n"


def shape_table(runs: list[dict]) -> list[str]:
    """Hits@1 / F1 per question shape (chain / conjunction / comparison / order), for the runs whose
    metrics have them (rra.eval.metrics.by_shape); nothing when none has."""
    shapes = list(dict.fromkeys(s for r in runs for s in (r["metrics"].get("by_shape") or {})))
    if not shapes:
        return []
    head = ["run", *(f"{s} Hits@1 / F1 (n)" for s in shapes)]
    lines = ["", "Per question shape:", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in runs:
        got = r["metrics"].get("by_shape") or {}
        cells = [f"{got[s]['hits@1']:.1f} / {got[s]['f1']:.1f} ({got[s]['n']})" if s in got else "–" for s in shapes]
        lines.append("| " + " | ".join([r["label"], *cells]) + " |")
    return lines


def plot(runs: list[dict], path: str | Path, title: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, key, xlabel in ((axes[0], "llm_calls_per_q", "LLM calls per question"),
                            (axes[1], "latency_p50_s", "median latency per question (s)")):
        for r in runs:
            x, y = r["metrics"].get(key), r["metrics"].get("hits@1")
            if x is None or y is None:
                continue
            ax.scatter([x], [y], s=40)
            ax.annotate(r["label"], (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("Hits@1 (%)")
        ax.grid(alpha=0.3)
    if any((r["metrics"].get("latency_p50_s") or 0) > 0 for r in runs):
        axes[1].set_xscale("log")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def paired_against(runs: list[dict], baseline: str) -> tuple[dict, list[dict]]:
    """Every run against the one labelled `baseline` (its whole label, or a part of it that only one
    run's label holds), question by question from their predictions.jsonl."""
    chosen = [r for r in runs if r["label"] == baseline] or [r for r in runs if baseline in r["label"]]
    if len(chosen) != 1:
        found = "no run" if not chosen else f"{len(chosen)} runs ({', '.join(r['label'] for r in chosen)})"
        raise ValueError(f"--baseline {baseline!r} names {found}; the runs are: {', '.join(r['label'] for r in runs)}")
    base = chosen[0]
    ref = read_run(base["dir"])
    pairs = [{"label": r["label"], **paired_difference(ref, read_run(r["dir"]), names=(base["label"], r["label"]))}
             for r in runs if r is not base]
    return base, pairs


def paired_lines(base: dict, pairs: list[dict]) -> list[str]:
    lines = ["", f"Question by question against {base['label']} (rra.eval.paired; the interval covers which "
             "questions were asked, not another training's seed):", ""]
    return lines + [f"- {describe(p, base['label'], p['label'])}" for p in pairs]


def compare(paths: list[str | Path], out: str | Path, title: str = "Comparison", baseline: str | None = None) -> dict:
    runs = collect(paths)
    skipped = skipped_jobs(paths)
    paired = paired_against(runs, baseline) if baseline else None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = markdown_table(runs, title, skipped)
    record = {"runs": runs, "skipped": skipped}
    if paired:
        table += "\n".join(paired_lines(*paired)) + "\n"
        record["paired"] = {"baseline": paired[0]["label"], "runs": paired[1]}
    (out / "compare.md").write_text(table)
    (out / "compare.json").write_text(json.dumps(record, indent=2))
    plot(runs, out / "compare.png", title)
    if skipped:
        print(f"compare: {len(skipped)} job(s) skipped (no metrics.json), listed in compare.md", file=sys.stderr)
    return {**record, "markdown": table, "png": str(out / "compare.png")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", help="multirun folder(s) or run folder(s) holding metrics.json")
    ap.add_argument("--out", required=True, help="folder for compare.md, compare.json, compare.png")
    ap.add_argument("--title", default="Comparison")
    ap.add_argument("--baseline", help="a run's label (or a part only its label holds): every other run is compared "
                                       "with it question by question")
    args = ap.parse_args(argv)

    def command() -> None:
        print(compare(args.paths, args.out, args.title, args.baseline)["markdown"])
        print(f"wrote {args.out}/compare.md, compare.json, compare.png")

    return run_command("compare", command, (FileNotFoundError, ValueError))


if __name__ == "__main__":
    raise SystemExit(main())

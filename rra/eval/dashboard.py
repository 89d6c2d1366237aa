"""What an infer run shows on a dashboard besides its scalars: a predictions table for error
analysis, the misses grouped by wording (rra.eval.misses), and the metrics broken down by hop,
question type and gold-path relation, as tables and bar charts; the run's summary.md beside them.

Tables are plain (columns, rows) so every logger gets the same thing: W&B (`wandb.Table`,
`wandb.plot.bar`, the summary as an artifact and an HTML panel) and the CSV logger (CSV + JSON
files and PNG charts in its log folder). Figures come from `rra.eval.metrics`, defined there once.

Breakdowns are generic over a field: `BREAKDOWNS` maps a name to a function giving the group(s) a
prediction dict belongs to (a question with path [a, b] counts under relation a and b). Another
grouping (a question's shape, ...) is one more entry; `infer.py dashboard.breakdowns=[hop,shape]`
picks which are shown, and a name that is not in `BREAKDOWNS` reads `extra[name]` of the prediction
(what the evaluation loop copies from the question, see `rra.eval.run.with_gold`).
"""
from __future__ import annotations

import csv
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from rra.eval import misses
from rra.eval.metrics import compute_metrics, hit_at_1, hit_at_1_strict, scored

log = logging.getLogger(__name__)

PREDICTION_COLUMNS = ["qid", "question", "topic", "gold_answers", "predicted", "pred_path", "gold_path",
                      "status", "hit", "hit_strict", "hop", "question_type", "latency_s", "llm_calls", "errors"]
GROUP_METRICS = ["n", "hits@1", "hits@1_strict", "f1", "path_acc", "llm_calls_per_q"]


def question_type(p: dict) -> list[str]:
    """The dataset's own type (MetaQA's qtype, a generator's shape) else the gold relation chain."""
    extra = p.get("extra") or {}
    kind = extra.get("qtype") or extra.get("question_type")
    if kind:
        return [str(kind)]
    path = scored(p, "gold_path")
    return [" > ".join(path)] if path else ["(unknown)"]


BREAKDOWNS: dict[str, Callable[[dict], list[str]]] = {
    "hop": lambda p: [str(scored(p, "gold_hop")) if scored(p, "gold_hop") is not None else "(unknown)"],
    "question_type": question_type,
    "relation": lambda p: list(dict.fromkeys(scored(p, "gold_path") or [])) or ["(unknown)"],
    # chain / conjunction / comparison / order (rra.eval.run.gold_shape)
    "shape": lambda p: [str((p.get("extra") or {}).get("gold_shape") or (p.get("extra") or {}).get("shape") or "(unknown)")],
}


def groups_of(p: dict, field: str) -> list[str]:
    if field in BREAKDOWNS:
        return BREAKDOWNS[field](p)
    value = (p.get("extra") or {}).get(field)
    return [str(v) for v in value] if isinstance(value, list) else [str(value if value is not None else "(unknown)")]


@dataclass
class Table:
    name: str
    columns: list[str]
    rows: list[list]
    chart: tuple[str, str] | None = None  # (label column, value column) for a bar chart

    def records(self) -> list[dict]:
        return [dict(zip(self.columns, r)) for r in self.rows]


def breakdown(preds: Sequence[dict], field: str) -> Table:
    """Metrics per group of `field`, groups sorted by name (hops in order), one row each."""
    members: dict[str, list[dict]] = {}
    for p in preds:
        for g in groups_of(p, field):
            members.setdefault(g, []).append(p)
    rows = []
    for g in sorted(members, key=lambda s: (not s.isdigit(), int(s) if s.isdigit() else 0, s)):
        m = compute_metrics(members[g])
        rows.append([g] + [_round(m.get(k)) for k in GROUP_METRICS])
    return Table(f"by_{field}", [field] + GROUP_METRICS, rows, chart=(field, "hits@1"))


def _round(v):
    return round(v, 3) if isinstance(v, float) else v


def _predicted(p: dict) -> str:
    """Ranked answers with their scores where the method gives them (graph scorer candidates)."""
    cands = (p.get("extra") or {}).get("candidates")
    if cands:
        return "; ".join(f"{c.get('label', c.get('entity'))} ({c.get('score', 0):.3f})" for c in cands[:5])
    labels = (p.get("extra") or {}).get("answer_labels") or p.get("answers") or []
    return "; ".join(map(str, labels[:5]))


def predictions_table(preds: Sequence[dict], max_rows: int = 2000) -> Table:
    """One row per question, misses and failures first (then by qid order), at most `max_rows`."""
    def failed(p: dict) -> bool:
        return p.get("status") != "ok" or (bool(p.get("gold_answers")) and not hit_at_1(p))

    ordered = [p for p in preds if failed(p)] + [p for p in preds if not failed(p)]
    rows = []
    for p in ordered[: max(0, int(max_rows))]:
        gold = p.get("gold_labels") or p.get("gold_answers") or []
        labelled = bool(p.get("gold_answers"))
        rows.append([
            p.get("qid"), p.get("question"), ", ".join(p.get("topic_entities") or []), "; ".join(map(str, gold)),
            _predicted(p), " > ".join(scored(p, "pred_path") or []), " > ".join(scored(p, "gold_path") or []),
            p.get("status", "ok"), hit_at_1(p) if labelled else None, hit_at_1_strict(p) if labelled else None,
            scored(p, "gold_hop"), question_type(p)[0], round(float(p.get("latency_s") or 0.0), 4),
            int(p.get("llm_calls") or 0), "; ".join(p.get("errors") or [])[:300],
        ])
    return Table("predictions", PREDICTION_COLUMNS, rows)


def misses_table(preds: Sequence[dict], max_rows: int = 2000) -> Table:
    """The misses grouped by the question's wording and what answered it (rra.eval.misses), largest first."""
    groups = misses.miss_groups(preds)[: max(0, int(max_rows))]
    return Table("misses_by_wording", misses.COLUMNS, misses.rows(groups))


def build_tables(preds: Sequence[dict], fields: Iterable[str] = ("hop", "question_type", "relation"),
                 max_rows: int = 2000) -> list[Table]:
    return [predictions_table(preds, max_rows), misses_table(preds, max_rows)] + [breakdown(preds, f) for f in fields]


# --- loggers ---------------------------------------------------------------------------------
def log_tables(logger, tables: list[Table], summary_path: str | Path | None = None, suffix: str = "") -> None:
    """Hand the tables to one Lightning logger: W&B or CSV (others are left alone). `suffix`
    goes into the CSV file names (a table logged every epoch); W&B keeps each logged version."""
    kind = type(logger).__name__
    if kind == "WandbLogger":
        log_to_wandb(logger.experiment, tables, summary_path)
    elif kind == "CSVLogger":
        write_files(Path(logger.log_dir), tables, summary_path, suffix)


def log_to_wandb(run, tables: list[Table], summary_path: str | Path | None = None) -> None:
    import wandb

    payload = {}
    for t in tables:
        table = wandb.Table(columns=t.columns, data=t.rows)
        payload[t.name] = table
        if t.chart:
            label, value = t.chart
            payload[f"{t.name}_chart"] = wandb.plot.bar(table, label, value, title=f"Hits@1 by {label}")
    if summary_path and Path(summary_path).exists():
        text = Path(summary_path).read_text(encoding="utf-8")
        payload["summary"] = wandb.Html(markdown_html(text))
        artifact = wandb.Artifact(f"summary-{run.id}", type="report", description="the run's summary.md")
        artifact.add_file(str(summary_path), name="summary.md")
        run.log_artifact(artifact)
    run.log(payload)


def write_files(folder: Path, tables: list[Table], summary_path: str | Path | None = None, suffix: str = "") -> None:
    """Each table as CSV and JSON, each chart as PNG, in the CSV logger's folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for t in tables:
        stem = f"{t.name}{suffix}"
        with (folder / f"{stem}.csv").open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(t.columns)
            w.writerows(t.rows)
        (folder / f"{stem}.json").write_text(json.dumps(t.records(), indent=1, ensure_ascii=False, default=str) + "\n",
                                             encoding="utf-8")
        if t.chart:
            bar_png(t, folder / f"{stem}.png")
    if summary_path and Path(summary_path).exists():
        (folder / "summary.md").write_text(Path(summary_path).read_text(encoding="utf-8"), encoding="utf-8")


def bar_png(t: Table, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    label, value = t.chart
    i, j = t.columns.index(label), t.columns.index(value)
    rows = [r for r in t.rows if r[j] is not None][:40]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.45 * len(rows) + 2), 3.6))
    ax.bar([str(r[i]) for r in rows], [r[j] for r in rows])
    ax.set_ylabel(f"{value} (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{value} by {label}")
    ax.tick_params(axis="x", rotation=60 if len(rows) > 4 else 0, labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def markdown_html(text: str) -> str:
    """summary.md as HTML for a W&B panel (the `markdown` package when installed, else <pre>)."""
    try:
        import markdown

        return markdown.markdown(text, extensions=["tables"])
    except ImportError:
        import html

        return f"<pre>{html.escape(text)}</pre>"


def record_checkpoint_artifact(run, ckpt: str | Path | None) -> str | None:
    """Infer side of the lineage: the artifact a checkpoint was published as (its `.wandb.json`),
    declared as this run's input when online; its name goes into the run's config either way."""
    side = Path(f"{ckpt}.wandb.json") if ckpt else None
    if side is None or not side.is_file():
        return None
    name = json.loads(side.read_text(encoding="utf-8")).get("artifact")
    if not name:
        return None
    run.config.update({"retriever_artifact": name}, allow_val_change=True)
    if not getattr(run, "offline", False) and getattr(getattr(run, "settings", None), "mode", "") not in ("offline", "disabled"):
        try:
            run.use_artifact(name)
        except Exception as err:  # no server / no such artifact: the config still names it
            log.warning("use_artifact %s: %s", name, err)
    return name

"""Run outputs: predictions JSONL (streamed, resumable), metrics JSON, markdown summary.

`PredictionWriter` appends one JSON line per question and flushes at once, so a crash or a kill
loses at most the question in flight; reopening the same file skips the qids already written.
The file is only ever appended to, or replaced whole (a temporary file + `os.replace`): a
truncated last line from a kill is dropped that way, and `resume=false` starts over that way, so
a kill at any moment leaves every answer written before it.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Iterable, Sequence

from rra.records import Prediction

PREDICTIONS = "predictions.jsonl"
METRICS = "metrics.json"
SUMMARY = "summary.md"


def read_predictions(path: str | Path) -> list[dict]:
    """All complete lines of a predictions file (a torn last line is skipped)."""
    path = Path(path)
    if not path.exists():
        return []
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut by a kill; that question is answered again
    return out


class PredictionWriter:
    """`redo`: statuses whose questions are answered again on resume (transient failures); their
    old lines stay, and readers keep each qid's latest line."""

    def __init__(self, path: str | Path, resume: bool = True, redo: frozenset = frozenset()):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept = read_predictions(self.path) if resume else []
        if not resume or not _whole_lines(self.path, len(kept)):
            # a torn tail (or starting over): the complete lines replace the file in one step
            replace_lines(self.path, [json_line(d) for d in kept])
        latest = {d.get("qid", ""): d.get("status") for d in kept}
        self.done: set[str] = {q for q, status in latest.items() if status not in redo}
        self.previous = kept
        self._f = self.path.open("a", encoding="utf-8")

    def write(self, pred: Prediction | dict) -> None:
        d = pred.to_dict() if isinstance(pred, Prediction) else pred
        self._f.write(json_line(d))
        self._f.flush()
        self.done.add(d.get("qid", ""))

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> "PredictionWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def json_line(d: dict) -> str:
    """One JSON line; text that is not valid Unicode (a lone surrogate from a cut emoji) is written
    as a \\u escape instead of failing the write, and reads back as it was."""
    line = json.dumps(d, ensure_ascii=False, default=str)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(d, ensure_ascii=True, default=str)
    return line + "\n"


def _whole_lines(path: Path, parsed: int) -> bool:
    """Whether the file (if any) is exactly `parsed` complete JSON lines plus blank ones: then
    appending to it is safe."""
    if not path.exists() or path.stat().st_size == 0:
        return True
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) != b"\n":
            return False
        f.seek(0)
        return sum(1 for line in f if line.strip()) == parsed


def replace_lines(path: Path, lines: list[str]) -> None:
    """Write `lines` to a temporary file beside `path`, flush it to disk, and put it in place with
    `os.replace` (atomic on POSIX): readers and a kill see the old file or the new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            f.writelines(lines)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:  # interrupted (Ctrl-C, a full disk): no half copy left behind (a kill -9: the next run sweeps it)
        if tmp.exists():
            tmp.unlink()


def write_text(path: str | Path, text: str) -> None:
    """A report file (summary.md) that nothing in its text can make fail: invalid Unicode is escaped."""
    Path(path).write_text(text, encoding="utf-8", errors="backslashreplace")


def write_json(path: str | Path, data: dict) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
    write_text(path, text)


def fmt(v) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.2f}" if abs(v) >= 0.01 or v == 0 else f"{v:.4f}"
    return str(v)


METRIC_ROWS = [
    ("hits@1", "Hits@1 (%)"), ("hits@1_strict", "Hits@1, first answer only (%)"), ("f1", "answer F1 (%)"),
    ("hit", "Hit: a gold answer among the answers (%)"), ("em", "exact match of the answer set (%)"),
    ("subgraph_ceiling", "subgraph ceiling: a gold answer in the question's subgraph (%)"), ("answer_coverage", "answer coverage of triples (%)"),
    ("hop_acc", "hop accuracy (%)"), ("path_acc", "path accuracy (%)"),
    ("llm_calls_per_q", "LLM calls / question"), ("llm_answered", "answered by the LLM (% of questions that asked it)"), ("llm_prompt_tokens_per_q", "prompt tokens / question"),
    ("llm_completion_tokens_per_q", "completion tokens / question"),
    ("graph_requests_per_question", "graph requests / question"),
    ("latency_p50_s", "latency p50 (s)"), ("latency_p95_s", "latency p95 (s)"),
    ("questions_per_s", "questions / s"),
]


def md(text) -> str:
    """User text (questions, errors) inside one markdown line or table cell: no line breaks, no
    heading/list/table syntax, no code spans that swallow the rest of the line."""
    text = " ".join(str(text).split()).encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates
    for ch in "\\`*_[]<>|#":
        text = text.replace(ch, "\\" + ch)
    return text


def summary_markdown(metrics: dict, title: str = "rra run", setup: dict | None = None,
                     failures: Iterable[dict] = (), warnings: Iterable[str] = (),
                     examples: Iterable[dict] = (), miss_groups: Sequence = (), shown_misses: int = 10) -> str:
    """The run's summary.md. `miss_groups`: rra.eval.misses.MissGroup, largest first; the first
    `shown_misses` are tabled (the command that lists them all is named with the run's output)."""
    lines = [f"# {title}", ""]
    for w in warnings:
        lines += [f"> **Warning:** {md(w)}", ""]
    if metrics.get("run_failed"):
        lines += ["> **This run failed as a measurement of its method** (see the warnings): a sweep receives "
                  "NaN as its optimised metric, not the Hits@1 below.", ""]
    for k, v in (setup or {}).items():
        lines.append(f"- **{k}**: {md(v)}")
    if metrics.get("kg_skipped_lines"):
        first = metrics.get("kg_skipped_first") or []
        lines += ["", f"- **KG lines skipped** (graph.on_error=skip): {metrics['kg_skipped_lines']}"]
        lines += [f"  - {md(r)}" for r in first]
        if metrics["kg_skipped_lines"] > len(first):
            lines.append(f"  - ... {metrics['kg_skipped_lines'] - len(first)} more")
    lines += ["", f"Questions: {metrics.get('n', 0)}", "", "| metric | value |", "|---|---|"]
    for key, name in METRIC_ROWS:
        if key in metrics and not (key == "subgraph_ceiling" and metrics[key] is None):
            lines.append(f"| {name} | {fmt(metrics[key])} |")
    shapes = metrics.get("by_shape")
    if shapes:
        lines += ["", "| question shape | n | Hits@1 (%) | F1 (%) | plans chosen |", "|---|---|---|---|---|"]
        lines += [f"| {s} | {d['n']} | {fmt(d['hits@1'])} | {fmt(d['f1'])} | "
                  f"{', '.join(f'{k} {n}' for k, n in (d.get('predicted') or {}).items())} |" for s, d in shapes.items()]
    modes = metrics.get("hits_mode", {})
    if modes.get("reply"):
        lines += ["", f"Hits@1 of {modes['reply']} free-form LLM replies counts a gold answer appearing "
                  "anywhere in the reply (case-insensitive), as the RRA paper scores it; the others "
                  "count the top-ranked answer only."]
    lines += ["", "| status | questions |", "|---|---|"]
    lines += [f"| {s} | {c} |" for s, c in metrics.get("status", {}).items()]
    groups = list(miss_groups)
    if groups:
        where = (setup or {}).get("output")
        lines += ["", f"Misses by wording: {sum(g.misses for g in groups)} misses in {len(groups)} groups of the question's "
                  f"wording (topics as [E], numbers as [N]) and what answered it; the largest "
                  f"{min(len(groups), shown_misses)} (all: `python -m rra.eval.misses {where or 'OUTPUT_DIR'}`):", "",
                  "| wording | answered with | missed | of | gold path |", "|---|---|---|---|---|"]
        lines += [f"| {md(g.wording)} | {md(g.chosen)} | {g.misses} | {g.asked} | {md(g.gold or '')} |"
                  for g in groups[:shown_misses]]
    shown = list(examples)[:3]
    if shown:
        lines += ["", "Example answers (ranked, with scores and evidence paths):", ""]
        for d in shown:
            lines.append(f"- {md(d.get('question'))}")
            cands = (d.get("extra") or {}).get("candidates")
            if cands:
                kept = set(d.get("answers") or [])
                for c in cands[:3]:
                    cut = "" if c["entity"] in kept else " (below cut-off)"
                    lines.append(f"  - {md(c['label'])} — {c['score']:.3f} via {md(' -> '.join(c['path']))}{cut}")
            else:
                labels = d.get("answer_labels") or d.get("answers") or []
                lines.append(f"  - {md(', '.join(map(str, labels[:3])) or '(none)')}")
    fails = list(failures)[:5]
    if fails:
        lines += ["", "Examples of failed questions:", ""]
        for d in fails:
            err = "; ".join(d.get("errors", []))[:200]
            lines.append(f"- {md(d.get('qid'))} {md(d.get('status'))}: {md(d.get('question'))} — {md(err)}")
    return "\n".join(lines) + "\n"


def terminal_text(markdown: str) -> str:
    """A summary written by `summary_markdown`, for a person in a terminal: escapes removed, bold
    marks dropped, headings underlined, tables as aligned columns (summary.md stays markdown)."""
    out: list[str] = []
    table: list[list[str]] = []

    def flush() -> None:
        if table:
            widths = [max(len(row[i]) for row in table if i < len(row)) for i in range(len(table[0]))]
            out.extend("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table)
            table.clear()

    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = [plain(c.strip()) for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if not all(set(c) <= set("-: ") for c in cells):  # the |---|---| rule
                table.append(cells)
            continue
        flush()
        if line.startswith("# "):
            title = plain(line[2:])
            out += [title, "=" * len(title)]
        elif line.startswith("> "):
            out.append(plain(line[2:]))
        else:
            out.append(plain(line))
    flush()
    return "\n".join(out) + "\n"


def plain(text: str) -> str:
    """Markdown inline text as plain text: `**bold**` -> bold, `\\_` -> _."""
    return re.sub(r"\\(.)", r"\1", text.replace("**", ""))

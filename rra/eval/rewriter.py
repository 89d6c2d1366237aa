"""BLEU / chrF of a rewriter on WebNLG-style entries (sacrebleu, multi-reference), written as
JSON (figures + per-example outputs) and a markdown table, and logged to a Lightning logger.

Scores are sacrebleu's corpus BLEU (13a tokenisation, case-sensitive) and chrF (char 6-gram, beta 2)
against all reference texts of each entry; entries with fewer references than the most have the
missing ones as None, which sacrebleu skips.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Sequence

from rra.data.webnlg import WebNLGEntry
from rra.models.rewriter import text_scores  # noqa: F401 (re-exported: the metric the model logs)
from rra.text.facts import linearise


def evaluate_rewriter(
    generate: Callable[[list[str]], list[str]],
    entries: Sequence[WebNLGEntry],
    batch_size: int = 8,
    progress: bool = True,
) -> dict:
    """Generate text for each entry's linearised triples and score it; per-example outputs kept."""
    from tqdm import tqdm

    sources = [linearise(e.triples) for e in entries]
    # batches of similar length waste less compute on padding; outputs go back to entry order
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    hyps: list[str] = [""] * len(sources)
    start = time.perf_counter()
    bar = tqdm(range(0, len(order), batch_size), desc="rewriter eval", disable=not progress)
    for i in bar:
        idx = order[i:i + batch_size]
        for j, text in zip(idx, generate([sources[j] for j in idx])):
            hyps[j] = text
    seconds = time.perf_counter() - start
    scores = text_scores(hyps, [e.texts for e in entries])
    scores.update(seconds=seconds, seconds_per_example=seconds / max(1, len(entries)))
    examples = [
        {"eid": e.eid, "category": e.category, "size": len(e.triples), "source": s, "output": h,
         "references": e.texts}
        for e, s, h in zip(entries, sources, hyps)
    ]
    return {"scores": scores, "examples": examples}


def markdown_table(rows: dict[str, dict]) -> str:
    """rows: name -> scores dict (bleu, chrf, n, seconds_per_example)."""
    lines = ["| rewriter | BLEU | chrF | examples | s / example |", "|---|---|---|---|---|"]
    for name, s in rows.items():
        lines.append(f"| {name} | {s['bleu']:.2f} | {s['chrf']:.2f} | {s['n']} | "
                     f"{s.get('seconds_per_example', float('nan')):.3f} |")
    return "\n".join(lines) + "\n"


def write_report(result: dict, out_dir: str | Path, name: str = "rewriter_eval", logger=None) -> Path:
    """`<out_dir>/<name>.json` (everything) + `<name>.md` (the table); scores to `logger` if given."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    (out / f"{name}.md").write_text(markdown_table({name: result["scores"]}))
    if logger is not None:
        logger.log_metrics({f"{name}/{k}": v for k, v in result["scores"].items()
                            if isinstance(v, (int, float))})
    return out / f"{name}.json"

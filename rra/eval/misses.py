"""Where a run goes wrong, grouped: its misses by how the question was worded and what the method
answered with.

    python -m rra.eval.misses outputs/infer/RUN [--top 20] [--json]

A trained retriever fails a wording, not a question: every "who issued [E]" read as `artist`, or
every "in which country was the director of [E] born" walked as `director, nationality`. A list of
misses one question at a time (the dashboard's predictions table) hides that; grouped by the
question with its topic mentions and numbers masked, and by the path or plan chosen, the largest
groups say which wordings the training data did not teach and what the model read them as, which is
what a user adds training questions (or relation names) for. infer.py writes the largest groups
into summary.md and gives the whole table to the dashboards (`misses_by_wording`).
"""
from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Iterable, Sequence

from rra.cli import run_command
from rra.eval.metrics import hit_at_1, scored
from rra.text.relations import local_name

MASK = "[E]"
NUMBER = re.compile(r"(?<![\w\[])[-+]?\d+(?:[.,:/-]\d+)*(?![\w\]])")  # 2015, 3.5, 1999-05-02: conditions' values


@dataclass
class MissGroup:
    wording: str  # the question with its topic mentions as [E] and numbers as [N], lower case
    chosen: str  # the path or plan the method answered with
    misses: int  # questions of this wording answered wrong with `chosen`
    asked: int  # questions of this wording in the run, right or wrong
    gold: str | None  # the gold path most of these misses give, where the data gives one
    example: str  # one of the questions, as written
    qids: list[str] = field(default_factory=list)


def wording(p: dict) -> str:
    """The question as a form: each topic mention linking found (or each bracketed span) masked,
    numbers as [N], case, spaces and end punctuation folded."""
    text = str(p.get("question") or "")
    mentions = ((p.get("extra") or {}).get("linking") or {}).get("mentions") or []
    text = re.sub(r"\[[^\]]+\]", MASK, text)
    for m in sorted({str(m) for m in mentions if m}, key=len, reverse=True):  # "New York City" before "New York"
        text = re.sub(re.escape(m), MASK, text, flags=re.IGNORECASE)
    text = NUMBER.sub("[N]", text)
    text = " ".join(text.lower().split()).rstrip("?.! ")
    return text.replace(MASK.lower(), MASK).replace("[n]", "[N]")


def short(relation: str) -> str:
    """An IRI's local name (`^http://dbpedia.org/ontology/artist` -> `^artist`); a name as it is."""
    inverse = relation.startswith("^")
    name = relation[1:] if inverse else relation
    name = local_name(name) or name
    return ("^" if inverse else "") + name


def _path(path: Sequence[str] | None) -> str:
    return " > ".join(short(str(r)) for r in path or ())


def chosen(p: dict) -> str:
    """What answered the question: its plan (kind, branches, the attributes and operators of its
    conditions; values vary by question, so they are left out) or its path; else its status."""
    if p.get("status", "ok") != "ok":
        return f"(failed: {p.get('status')})"
    extra = p.get("extra") or {}
    plan = extra.get("plan") or {}
    kind = extra.get("plan_kind") or plan.get("shape")
    if plan.get("paths") and kind and kind != "chain":
        text = f"{kind}: " + " & ".join(_path(b) for b in plan["paths"])
        conditions = plan.get("constraints") or ([plan["constraint"]] if plan.get("constraint") else [])
        for c in conditions:
            text += f", {short(str(c.get('relation', '')))} {c.get('op', '')}".rstrip()
        if plan.get("via"):
            text += f", via {short(str(plan['via'].get('relation', '')))}"
        return text
    path = scored(p, "pred_path")
    return _path(path) if path else "(no path)"


def miss_groups(predictions: Iterable[dict]) -> list[MissGroup]:
    """Labelled questions answered wrong (failures included), grouped by (wording, chosen), the
    largest groups first."""
    labelled = [(p, wording(p)) for p in predictions if p.get("gold_answers")]
    asked = Counter(form for _, form in labelled)
    groups: dict[tuple[str, str], list[dict]] = {}
    for p, form in labelled:
        if p.get("status", "ok") != "ok" or not hit_at_1(p):
            groups.setdefault((form, chosen(p)), []).append(p)
    out = []
    for (form, what), ps in groups.items():
        golds = Counter(_path(scored(p, "gold_path")) for p in ps if scored(p, "gold_path"))
        out.append(MissGroup(form, what, len(ps), asked[form], golds.most_common(1)[0][0] if golds else None,
                             str(ps[0].get("question")), [str(p.get("qid")) for p in ps]))
    return sorted(out, key=lambda g: (-g.misses, -g.asked, g.wording, g.chosen))


COLUMNS = ["wording", "answered with", "missed", "asked", "gold path", "example"]


def rows(groups: Sequence[MissGroup]) -> list[list]:
    return [[g.wording, g.chosen, g.misses, g.asked, g.gold or "", g.example] for g in groups]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a run folder (outputs/infer/...) or its predictions.jsonl")
    ap.add_argument("--top", type=int, default=20, help="the largest groups shown (0: all)")
    ap.add_argument("--json", action="store_true", help="one JSON object per group instead of a table")
    args = ap.parse_args(argv)

    def command() -> None:
        from rra.eval.paired import read_run

        groups = miss_groups(read_run(args.run))
        shown = groups[: args.top] if args.top > 0 else groups
        if args.json:
            for g in shown:
                print(json.dumps(asdict(g), ensure_ascii=False))
            return
        total = sum(g.misses for g in groups)
        print(f"{total} misses in {len(groups)} groups of wording and answer; the {len(shown)} largest:")
        for r in rows(shown):
            gold = f"  (gold {r[4]})" if r[4] else ""
            print(f"{r[2]:>4} of {r[3]:<4} {r[0]}  ->  {r[1]}{gold}")

    return run_command("misses", command, (FileNotFoundError, ValueError))


if __name__ == "__main__":
    raise SystemExit(main())

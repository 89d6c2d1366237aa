"""A question file's relation paths and plans checked against the KG when the file is loaded (by
infer.py and train.py alike, rra.data.qa_files.load_questions), so a path that cannot be walked is
never answered or trained as given.

Refused (cannot be right; one DataFormatError listing every such question by file:line): a relation
of `relation_path`, `relation_paths` or `constraint.relation` that the KG does not have.
Doubtful (warned, counted, kept: the KG or the file may be incomplete): fewer `relation_paths` than
topic entities (the other anchors are not used), a given path or plan whose answers on the KG include
none of the question's answers. A doubtful question carries its reasons in `extra["plan_warnings"]`;
infer.py counts them in metrics.json (`plan_warnings`).

The format's own contradictions (an empty `relation_paths`, `relation_path` not among `relation_paths`,
`hops` against the path's length) are refused earlier, when each row is read.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from typing import Sequence

from rra.graph.base import GraphError, UnknownEntityError, base_relation
from rra.graph.literals import value_forms
from rra.plans.execution import execute
from rra.plans.plan import QueryPlan
from rra.records import DataFormatError, QAExample

log = logging.getLogger(__name__)
MAX_INSTANCES = 10_000  # walks per checked path (a hub must not make loading slow)
SHOWN = 5  # refusals listed in the error, warnings logged one by one


def relations_used(ex: QAExample) -> list[tuple[str, str]]:
    """(key of the record, relation) for every relation a question's labels name."""
    plan = ex.extra.get("plan") or {}
    used = [("relation_path", r) for r in ex.relation_path or []]
    used += [("relation_paths", r) for p in plan.get("paths") or [] for r in p]
    if plan.get("constraint"):
        used.append(("constraint.relation", plan["constraint"]["relation"]))
    return used


def check_questions(examples: Sequence[QAExample], kg) -> int:
    """Check the examples' paths and plans against `kg` (see the module doc): raise one
    DataFormatError for every refused question, mark and log the doubtful ones; returns how many
    are doubtful. Per-question graphs are not checked here (no KG-wide relation list)."""
    todo = [ex for ex in examples if relations_used(ex)]
    if not todo or kg is None or getattr(kg, "per_question", False):
        return 0
    known = set(kg.relation_types())
    refused = []
    for ex in todo:
        missing = [(key, r) for key, r in relations_used(ex) if base_relation(r) not in known]
        if missing:
            key, r = missing[0]
            refused.append(DataFormatError(ex.source or ex.qid, f"{key} names relation {r!r}, which the KG does not "
                                           f"have ({len(known)} relations; an inverse is written ^r)", r))
    if refused:
        shown = "; ".join(str(e) for e in refused[:SHOWN])
        more = f" (and {len(refused) - SHOWN} more)" if len(refused) > SHOWN else ""
        raise DataFormatError(refused[0].source, f"{len(refused)} question(s) name relations the KG does not have: "
                              f"{shown}{more}")
    doubtful = 0
    for i, reasons in _doubts(todo, kg).items():
        ex = todo[i]
        ex.extra["plan_warnings"] = reasons
        doubtful += 1
        if doubtful <= SHOWN:
            log.warning("%s: %s", ex.source or ex.qid, "; ".join(reasons))
    if doubtful:
        log.warning("%d question(s) have doubtful paths or plans (kept; each lists why in extra.plan_warnings, "
                    "infer.py counts them in metrics.json)", doubtful)
    return doubtful


def _doubts(examples: Sequence[QAExample], kg) -> dict[int, list[str]]:
    """Index of each doubtful example -> why."""
    out: dict[int, list[str]] = defaultdict(list)
    chains = defaultdict(list)  # path -> questions with only a relation_path (one batched walk each)
    for i, ex in enumerate(examples):
        plan = ex.extra.get("plan") or {}
        paths, topics = plan.get("paths") or [], list(dict.fromkeys(ex.topic_entities))
        if paths and len(paths) < len(topics):
            out[i].append(f"relation_paths gives {len(paths)} path(s) for {len(topics)} topic entities: "
                          f"{', '.join(topics[len(paths):])} not used")
        if not ex.answers:
            continue
        if paths and plan.get("anchors"):
            try:
                found = execute(kg, QueryPlan.from_dict(plan), max_instances=MAX_INSTANCES).answers
            except UnknownEntityError as err:
                out[i].append(f"an anchor of the plan is not in the KG ({err})")
                continue
            except GraphError as err:
                out[i].append(f"the plan could not be run on the KG ({type(err).__name__})")
                continue
            if not _meets(kg, found, ex.answers):
                out[i].append(f"the given plan reaches {len(found)} entities on the KG, none of the answers")
        elif ex.relation_path and topics:
            chains[tuple(ex.relation_path)].append(i)
    for path, idx in chains.items():
        starts = list(dict.fromkeys(examples[i].topic_entities[0] for i in idx))
        try:
            walks = kg.follow_path_batch(starts, list(path), limit=MAX_INSTANCES)
        except GraphError as err:
            log.warning("could not check relation_path %s on the KG: %s", list(path), err)
            continue
        for i in idx:
            ends = [w.end for w in walks.get(examples[i].topic_entities[0], [])]
            if not _meets(kg, ends, examples[i].answers):
                out[i].append(f"relation_path {list(path)} reaches {len(set(ends))} entities from "
                              f"{examples[i].topic_entities[0]} on the KG, none of the answers")
    return dict(sorted(out.items()))


def _meets(kg, ends: Sequence[str], answers: Sequence[str]) -> bool:
    """Whether the ends include an answer, by id, by value (an answer "2017" is the node
    `"2017-01-01T00:00:00Z"^^xsd:dateTime` of a Wikidata extract: `value_forms`) or, for answers given
    as names, by label."""
    ends = set(ends)
    if ends & set(answers) or any(f in ends for a in answers if a.strip() for f in value_forms(a)):
        return True
    try:
        names = {str(n).casefold() for n in kg.labels(sorted(ends)[:MAX_INSTANCES]).values()}
    except GraphError:
        return True  # cannot tell: no warning
    return any(a.casefold() in names for a in answers)

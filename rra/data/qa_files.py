"""A plain question format for any KG, in JSONL, JSON, TSV or CSV (chosen by the file extension).

JSONL (`.jsonl`), one object per line:
    {"question": "who wrote [The Glass Orchard]",      required, non-empty
     "topic_entities": ["book/the_glass_orchard"],      list of KG entity ids, or one "a|b" string
     "answers": ["person/ilse_varga"],                  list, or "a|b"
     "relation_path": ["written_by"],                   optional: list, or "r1|^r2" (^ = inverse)
     "qid": "q17", "hops": 1, "extra": {...}}           optional
     "relation_paths": [["^written_by"], ["^set_in"]],  optional query plan: one path per topic entity
     "constraint": {"relation": "published_in", "op": ">", "value": 1990}   optional condition on the
                                                        answers (op: > >= < <= = argmax argmin), or a list
     "via": {...}, "aggregate": "count" | "ask", "ask": id, "plan": {...}   optional (docs/query_plans.md)
     "shape": "conjunction"}                            optional: the question's shape, for per-shape metrics
The plan keys are read by rra.plans.plan.plan_from_record into `extra["plan"]`; absent, supervision
derives the plan from the KG (rra.data.plan_supervision). A count question's answer is its number
("7"), a yes/no question's "yes" or "no".

JSON (`.json`): one array of such objects. Keys `answer`, `topic_entity` and `id` are read as
`answers`, `topic_entities` and `qid`.

TSV (`.tsv`) or CSV (`.csv`, quoted as spreadsheets write it): a header row naming the columns,
then one question per row. Columns: question, topic_entities, answers (required); relation_path,
qid, hops (optional); multi-valued cells are `|`-separated. Use JSONL when an entity id itself
contains `|`.

Any of them may come compressed (`questions.jsonl.gz`, `.bz2`, `.xz`): read as it is, its format
from the name before the compression's suffix.

A question without a topic entity is an error naming file:line, unless `require_topic=False`
(inference: entity linking will find it). With `topic_from_brackets=True` (the default) an empty
topic is first taken from a `[...]` marking in the question, MetaQA style. Likewise a question
without answers is an error unless `require_answers=False`.
"""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Iterator, Sequence

from rra.data.jsonl import array_items, lines, no_lone_surrogates, parse_object
from rra.graph.loaders import format_suffix
from rra.records import DataFormatError, QAExample

REQUIRED = ("question", "topic_entities", "answers")
OPTIONAL = ("relation_path", "qid", "hops")
TSV_COLUMNS = REQUIRED + OPTIONAL
PLAN_COLUMNS = ("relation_paths", "constraint")  # TSV/CSV: "r1|r2;r3" per anchor, constraint as JSON
ALIASES = {"answer": "answers", "topic_entity": "topic_entities", "id": "qid"}  # common singular names
FORMATS = {".jsonl": "jsonl", ".json": "json", ".tsv": "tsv", ".csv": "csv"}


def _format(path: Path, format: str | None) -> str:
    fmt = format or FORMATS.get(format_suffix(path))  # questions.jsonl.gz: jsonl, read decompressed
    if fmt not in FORMATS.values():
        raise ValueError(f"cannot tell the question format of {path}: use .jsonl, .json, .tsv or .csv, "
                         "optionally compressed as .gz, .bz2 or .xz (or format=...)")
    return fmt


def _as_list(value, source: str, key: str) -> list[str]:
    """A list of non-empty strings from a list or an `a|b` string. JSON numbers are read as their
    text (an answer 1985, 3 or 1.83; a numeric id); an answer true / false as "yes" / "no", as
    yes/no questions are scored."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        value = value.split("|")
    elif not isinstance(value, list):
        value = [value]
    out = []
    for v in value:
        if isinstance(v, bool) and key == "answers":
            v = "yes" if v else "no"
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            v = str(v)
        if not isinstance(v, str):
            raise DataFormatError(source, f"{key} must be a list of strings or an 'a|b' string", value)
        out.append(v)
    return [v.strip() for v in out if v.strip()]


def topic_in_brackets(question: str) -> str | None:
    start, end = question.find("["), question.find("]")
    if start < 0 or end < start + 2:
        return None
    return question[start + 1 : end].strip() or None


def _example(
    record: dict, source: str, default_qid: str, require_topic: bool, require_answers: bool,
    topic_from_brackets: bool,
) -> QAExample:
    record = {ALIASES.get(k, k): v for k, v in record.items()}
    no_lone_surrogates(record, source)
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DataFormatError(source, "missing or empty 'question'", question)
    topics = _as_list(record.get("topic_entities"), source, "topic_entities")
    if not topics and topic_from_brackets and topic_in_brackets(question):
        topics = [topic_in_brackets(question)]
    if not topics and require_topic:
        raise DataFormatError(
            source, "question has no topic entity (give topic_entities, mark it [...], "
            "or, for questions to answer, load with require_topic=False to leave it to entity linking: "
            "training needs it given, or datamodule.link_topics=true)", question)
    answers = _as_list(record.get("answers"), source, "answers")
    if not answers and require_answers:
        raise DataFormatError(source, "question has no answers (load with require_answers=False for "
                              "unanswered questions)", question)
    path = _as_list(record.get("relation_path"), source, "relation_path") or None
    hops = record.get("hops")
    if hops in (None, ""):
        hops = None
    elif isinstance(hops, int) and not isinstance(hops, bool) and hops >= 1:
        pass
    elif isinstance(hops, str) and hops.strip().isdigit() and int(hops) >= 1:
        hops = int(hops)
    else:  # 2.7, "two", true, 0: a wrong label must not be rounded into a plausible one
        raise DataFormatError(source, "hops must be a positive integer", hops)
    if hops is not None and path and hops != len(path):  # one of the two labels is wrong: say which pair
        raise DataFormatError(source, f"hops {hops} contradicts relation_path {path} ({len(path)} hops)", hops)
    qid = record.get("qid")
    if qid in (None, ""):
        qid = default_qid
    elif isinstance(qid, bool) or not isinstance(qid, (str, int)):
        raise DataFormatError(source, "qid must be a string or an integer", qid)
    extra = record.get("extra") or {}
    if not isinstance(extra, dict):
        raise DataFormatError(source, "extra must be an object", extra)
    from rra.plans.plan import plan_from_record

    plan = plan_from_record(record, topics, path, source)
    if plan is not None:
        extra = {**extra, "plan": plan}
        lengths = {len(p) for p in plan.get("paths") or []}
        if hops is not None and lengths and hops not in lengths:
            raise DataFormatError(source, f"hops {hops} contradicts relation_paths {plan['paths']}", hops)
    shape = record.get("shape")  # the question's shape, as metrics break figures down by it
    if shape not in (None, ""):
        if not isinstance(shape, str):
            raise DataFormatError(source, "shape must be a string (e.g. chain, conjunction, count)", shape)
        extra = {**extra, "shape": shape.strip()}
    return QAExample(
        question=question.strip(),
        topic_entities=topics,
        answers=answers,
        relation_path=path,
        qid=str(qid),
        hops=hops,
        source=source,
        extra=dict(extra),
    )


def load_qa_file(
    path: str | Path,
    format: str | None = None,
    require_topic: bool = True,
    require_answers: bool = True,
    topic_from_brackets: bool = True,
    limit: int | None = None,
) -> list[QAExample]:
    path = Path(path)
    fmt = _format(path, format)
    if not path.exists():
        raise FileNotFoundError(f"question file not found: {path}")
    options = (require_topic, require_answers, topic_from_brackets)
    examples: list[QAExample] = []
    first_line: dict[str, str] = {}
    for source, where, record in _records(path, fmt):
        if limit is not None and len(examples) >= limit:
            break
        ex = _example(record, source, f"{path.stem}-{len(examples)}", *options)
        if ex.qid in first_line:
            raise DataFormatError(source, f"qid already used on {first_line[ex.qid]} (qids must be unique)", ex.qid)
        first_line[ex.qid] = where
        examples.append(ex)
    return examples


def _records(path: Path, fmt: str) -> Iterator[tuple[str, str, dict]]:
    """(source "file:N", where "line N" | "item N", record) of each question, read lazily where
    the format allows (rra.data.jsonl reads JSON, as it does for every question format)."""
    if fmt == "json":
        for source, record in array_items(path):
            yield source, source.rsplit(":", 1)[1], record
        return
    numbered = ((n, text) for n, _, text in lines(path))
    columns, sep = _header(path, numbered, fmt) if fmt in ("tsv", "csv") else (None, None)
    for lineno, line in numbered:
        if not line.strip():
            continue
        source = f"{path}:{lineno}"
        if fmt == "jsonl":
            record = parse_object(line, source)
        else:
            cells = _cells(line, fmt, sep)
            if len(cells) != len(columns):
                raise DataFormatError(source, f"expected {len(columns)} {SEPARATORS[sep]}-separated cells, got {len(cells)}", line)
            record = dict(zip(columns, cells))
        yield source, f"line {lineno}", record


SEPARATORS = {"\t": "tab", ",": "comma", ";": "semicolon"}


def _cells(line: str, fmt: str, sep: str = ",") -> list[str]:
    if fmt == "tsv":
        return line.split("\t")
    return next(csv.reader(io.StringIO(line), delimiter=sep), [])  # a quoted cell may hold the separator (not newlines)


def _header(path: Path, lines, fmt: str) -> tuple[list[str], str]:
    """The columns (names in any case: a spreadsheet's "Question") and the separator: a tab for TSV;
    for CSV a comma, or a semicolon where the header has no comma (spreadsheets in locales that
    write a decimal comma save CSV that way)."""
    header_line = next(lines, (1, ""))[1]
    sep = "\t" if fmt == "tsv" else ";" if ";" in header_line and "," not in header_line else ","
    known = {c.lower(): c for c in (*TSV_COLUMNS, *PLAN_COLUMNS, *ALIASES)}
    names = [known.get(c.strip().lower(), c.strip()) for c in _cells(header_line, fmt, sep)]
    columns = [ALIASES.get(c, c) for c in names]
    missing = [c for c in REQUIRED if c not in columns]
    unknown = [c for c in columns if c not in TSV_COLUMNS + PLAN_COLUMNS]
    if missing or unknown:
        raise DataFormatError(
            f"{path}:1", f"{fmt.upper()} header must name the columns {', '.join(TSV_COLUMNS)} "
            f"(missing {missing}, unknown {unknown})", header_line)
    return columns, sep


def save_qa_file(examples: Sequence[QAExample], path: str | Path, format: str | None = None) -> Path:
    """Write questions; JSONL keeps every field (extra included), TSV the columns above."""
    path = Path(path)
    fmt = _format(path, format)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        if fmt == "jsonl":
            for ex in examples:
                d = ex.to_dict()
                d.pop("source", None)  # where it came from is not part of the written record
                plan = d["extra"].pop("plan", None)
                if plan and (plan.get("via") or plan.get("aggregate") or plan.get("constraints")):
                    d["plan"] = {k: v for k, v in plan.items() if k != "shape"}  # the whole plan, one object
                elif plan:  # written in the documented contract, read back by _example
                    if plan.get("paths"):
                        d["relation_paths"] = plan["paths"]
                    if plan.get("constraint"):
                        d["constraint"] = plan["constraint"]
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
        else:
            f.write("\t".join(TSV_COLUMNS) + "\n")
            for ex in examples:
                cells = [ex.question, "|".join(ex.topic_entities), "|".join(ex.answers),
                         "|".join(ex.relation_path or []), ex.qid, "" if ex.hops is None else str(ex.hops)]
                bad = [c for c in cells if "\t" in c or "\n" in c]
                if bad or any("|" in v for v in [*ex.topic_entities, *ex.answers]):
                    raise ValueError(f"question {ex.qid!r} has a tab, newline or '|' inside a value; save it as .jsonl")
                f.write("\t".join(cells) + "\n")
    return path



def load_questions(path: str | Path | None, kg=None, check_plans: bool = True, **kwargs) -> list[QAExample] | None:
    """`load_qa_file` for a data config's optional question file (conf/data/files.yaml): None when
    the config names no file for that split, so the caller can say which key to set. With the
    dataset's `kg` (train.py and infer.py pass it), each question's relation paths and plan are
    checked against it (rra.data.plan_check: refused or warned, by file:line)."""
    if path is None or str(path).strip() == "":
        return None
    examples = load_qa_file(path, **kwargs)
    if kg is not None and check_plans:
        from rra.data.plan_check import check_questions

        check_questions(examples, kg)
    return examples

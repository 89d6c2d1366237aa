"""MetaQA (Zhang et al., AAAI 2018, on WikiMovies) questions as `QAExample`s.

Layout under `root` (as in ../shared/data/metaqa):
    kb.txt                              head|relation|tail, entity names are the ids
    {1,2,3}-hop/vanilla/qa_{split}.txt  question<TAB>answer|answer|...   topic entity in [...]
    {1,2,3}-hop/ntm/qa_{split}.txt      back-translated paraphrases (only 1-hop here), line-aligned
    {1,2,3}-hop/qa_{split}_qtype.txt    question type per line, e.g. director_to_movie_to_language

Gold relation paths come from the qtype: each `a_to_b` step is one relation of the MetaQA schema,
walked forward when it leaves a movie (movie -> director = `directed_by`) and backwards (`^r`)
when it arrives at one (director -> movie = `^directed_by`).

The loader sets `relation_path` to that gold path and also keeps it in `gold_path`
(with `extra["qtype"]`); supervision (rra.data.supervision) later replaces `relation_path` with
the KG-derived path and leaves `gold_path` alone, so the dataset's annotation is never lost.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from rra.records import DataFormatError, QAExample

# movie -> <attribute> relation of the MetaQA KB, by the type name used in the qtype files.
MOVIE_RELATION = {
    "director": "directed_by",
    "writer": "written_by",
    "actor": "starred_actors",
    "year": "release_year",
    "language": "in_language",
    "genre": "has_genre",
    "tag": "has_tags",
    "tags": "has_tags",
    "imdbrating": "has_imdb_rating",
    "imdbvotes": "has_imdb_votes",
}
SPLITS = ("train", "dev", "test")
VARIANTS = ("vanilla", "ntm")


def metaqa_kb_path(root: str | Path) -> Path:
    return Path(root) / "kb.txt"


def load_metaqa_graph(root: str | Path, backend: str = "networkx"):
    """The MetaQA KB in a graph backend (labels = ids, as in the file)."""
    from rra.graph.loaders import load_graph

    return load_graph(metaqa_kb_path(root), backend=backend, format="pipe")


def qtype_to_path(qtype: str) -> list[str]:
    """`director_to_movie_to_language` -> [`^directed_by`, `in_language`]."""
    types = qtype.split("_to_")
    if len(types) < 2:
        raise ValueError(f"qtype {qtype!r} is not of the form a_to_b[_to_c...]")
    path = []
    for a, b in zip(types, types[1:]):
        if a == "movie" and b in MOVIE_RELATION:
            path.append(MOVIE_RELATION[b])
        elif b == "movie" and a in MOVIE_RELATION:
            path.append("^" + MOVIE_RELATION[a])
        else:
            raise ValueError(f"qtype {qtype!r}: no MetaQA relation for step {a} -> {b}")
    return path


def parse_question_line(line: str, source: str) -> tuple[str, str, list[str]]:
    """`question with [topic]<TAB>a|b` -> (question, topic, answers). The question text keeps
    the `[...]` marking so a model can find (and mask) the topic entity."""
    parts = line.rstrip("\r\n").split("\t")
    if len(parts) != 2:
        raise DataFormatError(source, "expected question<TAB>answers", line)
    question, answer_field = parts[0].strip(), parts[1].strip()
    start, end = question.find("["), question.find("]")
    if start < 0 or end < start + 2:
        raise DataFormatError(source, "no topic entity marked [...] in the question", question)
    answers = list(dict.fromkeys(a.strip() for a in answer_field.split("|") if a.strip()))
    if not answers:
        raise DataFormatError(source, "no answers after the tab", line)
    return question, question[start + 1 : end].strip(), answers


def _read_lines(path: Path) -> list[str]:
    with path.open(encoding="utf-8-sig") as f:  # -sig: an optional byte-order mark is not text
        return [line.rstrip("\r\n") for line in f]


def load_metaqa(
    root: str | Path,
    hops: Iterable[int] = (1, 2, 3),
    split: str = "dev",
    variant: str = "vanilla",
    with_gold_paths: bool = True,
    limit: int | None = None,
) -> list[QAExample]:
    """Questions of the given hop sets and split, in file order; `limit` caps each hop set."""
    root = Path(root)
    if split not in SPLITS:
        raise ValueError(f"unknown MetaQA split {split!r}; expected one of {SPLITS}")
    if variant not in VARIANTS:
        raise ValueError(f"unknown MetaQA variant {variant!r}; expected one of {VARIANTS}")
    examples: list[QAExample] = []
    for hop in hops:
        qa_file = root / f"{hop}-hop" / variant / f"qa_{split}.txt"
        if not qa_file.exists():
            raise FileNotFoundError(f"MetaQA {hop}-hop {variant} {split} questions not found: {qa_file}")
        lines = _read_lines(qa_file)
        qtypes: list[str] | None = None
        if with_gold_paths:
            qtype_file = root / f"{hop}-hop" / f"qa_{split}_qtype.txt"
            if not qtype_file.exists():
                raise FileNotFoundError(f"MetaQA qtype file not found: {qtype_file}")
            qtypes = _read_lines(qtype_file)
            if len(qtypes) != len(lines):
                raise DataFormatError(
                    str(qtype_file), f"has {len(qtypes)} lines but {qa_file} has {len(lines)}"
                )
        n = len(lines) if limit is None else min(limit, len(lines))
        for i in range(n):
            source = f"{qa_file}:{i + 1}"
            question, topic, answers = parse_question_line(lines[i], source)
            ex = QAExample(
                question=question,
                topic_entities=[topic],
                answers=answers,
                qid=f"metaqa-{hop}hop-{split}-{i}",
                hops=hop,
                source=source,
            )
            if qtypes is not None:
                qtype = qtypes[i].strip()
                try:
                    path = qtype_to_path(qtype)
                except ValueError as err:
                    raise DataFormatError(f"{qtype_file}:{i + 1}", str(err), qtype) from None
                if len(path) != hop:
                    raise DataFormatError(f"{qtype_file}:{i + 1}", f"qtype is not {hop}-hop", qtype)
                ex.relation_path = path
                ex.extra["qtype"] = qtype
                ex.gold_path = list(path)
            examples.append(ex)
    return examples

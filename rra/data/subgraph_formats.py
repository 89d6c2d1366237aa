"""Readers for benchmarks that ship one subgraph per question: RoG's and NSM / GNN-RAG's files.

RoG (`rmanluo/RoG-webqsp`, `rmanluo/RoG-cwq` on the Hugging Face Hub): one row per question with
`id`, `question`, `answer` (names), `q_entity`, `a_entity` (names in the graph), `graph` (a list of
`[head, relation, tail]` name triples; compound values appear as unnamed `m.0abc` ids) and
`choices`. Read from a local `.parquet` (needs pyarrow), `.jsonl` or `.json` file, or from the Hub
by id through `datasets` (`load_rog("rmanluo/RoG-webqsp", split="test")`, online only).

NSM / GNN-RAG (`webqsp/train_simple.json` and friends): JSONL with `id`, `question`, `entities`
(the topic entities), `answers` (`[{"kb_id", "text"}]`) and `subgraph` (`{"entities", "tuples":
[[h, r, t], ...]}`), where ids may be integers indexing `entities.txt` / `relations.txt` (one id a
line, beside the file) or the ids themselves. Names come from an optional `entities_names.json`
({kb_id: name}, as GNN-RAG ships it) and from the answers' `text`.

Each reader returns `QAExample`s (topic entities and answers as the graph's ids, the topic's
mention marked `[...]` in the question when its name occurs there, `extra["subgraph"]` the key
of its graph) and registers every question's subgraph with the per-question graph it is given
(`rra.graph.subgraphs.QuestionGraphs`, conf/graph/subgraphs.yaml). Subgraphs are read again
from the file when a question's graph is built, so a whole benchmark is never held as graphs.
A malformed row is a DataFormatError naming file:line and the value.
"""
from __future__ import annotations

import json
import logging
import re
from itertools import chain
from pathlib import Path
from typing import Callable

from rra.records import DataFormatError, QAExample
from rra.graph.subgraphs import QuestionGraphs, Subgraph

log = logging.getLogger(__name__)


def _graphs(kg, reader: str) -> QuestionGraphs:
    if not isinstance(kg, QuestionGraphs):
        raise ValueError(f"{reader} reads questions that each bring their own subgraph: it needs the "
                         f"per-question graph backend (graph=subgraphs), not {type(kg).__name__}")
    return kg


def mark_topic(question: str, names: list[str]) -> str:
    """The first topic name found in the question (case-insensitive, whole words) put in `[...]`,
    so training masks it and inference links it the same way; unchanged if none occurs."""
    if "[" in question:
        return question
    for name in names:
        m = re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", question, flags=re.IGNORECASE) if name else None
        if m:
            return f"{question[:m.start()]}[{m.group(0)}]{question[m.end():]}"
    return question


def _strings(value, source: str, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    try:
        return [str(v) for v in value if v is not None and str(v) != ""]
    except TypeError:
        raise DataFormatError(source, f"{key} must be a list of strings", value) from None


def _triples(graph, source: str) -> list[tuple[str, str, str]]:
    """`[[head, relation, tail], ...]` as tuples; a malformed one is an error naming its position.
    Checked with C-level passes (a subgraph of 5,000 triples is read for every question)."""
    try:
        out = list(map(tuple, graph)) if graph is not None else []
        ok = set(map(len, out)) <= {3} and set(map(type, chain.from_iterable(out))) <= {str} and \
            "" not in set(chain.from_iterable(out))
    except TypeError:
        ok = False
    if not ok:
        for i, t in enumerate(graph):
            if isinstance(t, str) or not isinstance(t, (list, tuple)) or len(t) != 3 or \
                    not all(isinstance(x, str) and x for x in t):
                raise DataFormatError(source, f"graph triple {i + 1} is not [head, relation, tail]", t)
    return out


# -- RoG ---------------------------------------------------------------------------------------
def rog_example(row: dict, source: str, key: str) -> QAExample:
    """One RoG row as a question (its graph is read separately, `rog_subgraph`)."""
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DataFormatError(source, "missing or empty 'question'", question)
    topics = _strings(row.get("q_entity"), source, "q_entity")
    answers = _strings(row.get("a_entity"), source, "a_entity") or _strings(row.get("answer"), source, "answer")
    names = _strings(row.get("answer"), source, "answer")
    qid = str(row.get("id") or "")
    extra = {"subgraph": key, "answer_names": names, "choices": _strings(row.get("choices"), source, "choices")}
    return QAExample(mark_topic(question.strip(), topics), topics, answers, qid=qid, source=source, extra=extra,
                     answer_labels=list(answers), answer_ids=[[a] for a in answers])


def rog_subgraph(row: dict, source: str, topics: list[str]) -> Subgraph:
    return Subgraph(_triples(row.get("graph"), source), keep=frozenset(topics))


def load_rog(path: str, kg=None, split: str | None = None, limit: int | None = None) -> list[QAExample]:
    """Questions of a RoG file (`.parquet`, `.jsonl`, `.json`) or Hub dataset id (`owner/name`, with
    `split`), their subgraphs registered with `kg` (a QuestionGraphs)."""
    graphs = _graphs(kg, "load_rog")
    p = Path(path)
    if any(c in str(path) for c in "*?["):  # the shards of a downloaded dataset, in name order
        shards = sorted(p.parent.glob(p.name))
        if not shards:
            raise FileNotFoundError(f"load_rog: no file matches {path}")
        return [e for shard in shards for e in load_rog(str(shard), kg=kg, split=split)][:limit]
    if p.suffix.lower() == ".parquet":
        rows = _parquet_rows(p)
    elif p.suffix.lower() in (".jsonl", ".json"):
        rows = _json_rows(p)
    elif not p.exists() and re.fullmatch(r"[\w.-]+/[\w.-]+", str(path)):
        rows = _hub_rows(str(path), split or "test")
    else:
        raise ValueError(f"load_rog: cannot read {path}: expected .parquet, .jsonl, .json or a Hub id owner/name")
    out = []
    for source, row, read in rows:
        if limit is not None and len(out) >= limit:
            break
        key = f"{source}"
        ex = rog_example(row, source, key)
        topics = list(ex.topic_entities)
        graphs.add(key, lambda read=read, source=source, topics=topics: rog_subgraph(read(), source, topics))
        out.append(ex)
    return out


def _json_rows(path: Path):
    """(file:line, row, re-reader) for each question of a JSONL file (or a JSON array). A JSONL row
    is read again from its byte offset when its graph is built, never held."""
    if path.suffix.lower() == ".json" and path.read_text(encoding="utf-8-sig")[:1].lstrip() in ("[",):
        data = json.loads(path.read_text(encoding="utf-8-sig"))
        for i, row in enumerate(data, 1):
            if not isinstance(row, dict):
                raise DataFormatError(f"{path}:item {i}", "not a JSON object", row)
            yield f"{path}:item {i}", row, (lambda row=row: row)
        return
    with open(path, "rb") as f:
        line_no = 0
        while True:
            offset = f.tell()
            raw = f.readline()
            if not raw:
                break
            line_no += 1
            text = raw.decode("utf-8-sig" if line_no == 1 else "utf-8").strip()
            if not text:
                continue
            source = f"{path}:{line_no}"
            row = _parse(text, source)
            yield source, row, (lambda offset=offset, source=source: _reread(path, offset, source))


def _parse(text: str, source: str) -> dict:
    try:
        row = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataFormatError(source, f"invalid JSON ({err.msg})", text) from None
    if not isinstance(row, dict):
        raise DataFormatError(source, "not a JSON object", text)
    return row


def _reread(path: Path, offset: int, source: str) -> dict:
    with open(path, "rb") as f:
        f.seek(offset)
        return _parse(f.readline().decode("utf-8-sig" if offset == 0 else "utf-8").strip(), source)


def _parquet_rows(path: Path):
    try:
        import pyarrow.parquet as pq
    except ImportError as err:
        raise ImportError(f"reading {path} needs pyarrow (pip install pyarrow), or give the same "
                          "rows as .jsonl") from err
    table = pq.read_table(path)
    small = table.drop_columns([c for c in ("graph",) if c in table.column_names])
    graph = table.column("graph") if "graph" in table.column_names else None
    for i, row in enumerate(small.to_pylist()):
        def read(i=i, row=row):  # the graph column is converted to Python only when it is built
            return {**row, "graph": graph[i].as_py() if graph is not None else []}
        yield f"{path}:row {i + 1}", row, read


def _hub_rows(name: str, split: str):
    """A dataset on the Hugging Face Hub (online; `datasets` installed). Not exercised offline."""
    try:
        import datasets
    except ImportError as err:
        raise ImportError(f"loading {name} from the Hugging Face Hub needs `pip install datasets` "
                          "(or download its parquet files and give their path)") from err
    ds = datasets.load_dataset(name, split=split)
    for i in range(len(ds)):
        row = {k: v for k, v in ds[i].items() if k != "graph"}
        yield f"{name}[{split}]:row {i + 1}", row, (lambda i=i: ds[i])


# -- NSM / GNN-RAG -----------------------------------------------------------------------------
def _vocab(path: Path | None) -> list[str] | None:
    if path is None or not path.exists():
        return None
    return [line.rstrip("\n").rstrip("\r") for line in path.read_text(encoding="utf-8-sig").splitlines()]


def _nsm_id(value, vocab: list[str] | None, source: str, what: str) -> str:
    """An entity / relation of an NSM row: an index into its vocabulary file, or the id itself."""
    if isinstance(value, bool):
        raise DataFormatError(source, f"{what} must be an index or an id", value)
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit() and vocab is not None):
        if vocab is None:
            raise DataFormatError(source, f"{what} {value} is an index, but there is no {what}s file beside "
                                  "the questions (entities.txt / relations.txt)", value)
        i = int(value)
        if not 0 <= i < len(vocab):
            raise DataFormatError(source, f"{what} index {i} is outside its vocabulary of {len(vocab)}", value)
        return vocab[i]
    if isinstance(value, dict):  # {"kb_id": ..., "text": ...}
        value = value.get("kb_id")
    if not isinstance(value, str) or not value:
        raise DataFormatError(source, f"{what} must be an index or an id", value)
    return value


def load_nsm(path: str, kg=None, entities: str | None = None, relations: str | None = None,
             names: str | None = None, limit: int | None = None) -> list[QAExample]:
    """Questions of an NSM / GNN-RAG JSONL file, subgraphs registered with `kg` (a QuestionGraphs).
    `entities` / `relations` / `names` default to entities.txt, relations.txt, entities_names.json
    beside the file (each optional: ids given as strings need no vocabulary)."""
    graphs = _graphs(kg, "load_nsm")
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"load_nsm: {p} does not exist")
    ent_vocab = _vocab(Path(entities) if entities else p.parent / "entities.txt")
    rel_vocab = _vocab(Path(relations) if relations else p.parent / "relations.txt")
    names_path = Path(names) if names else p.parent / "entities_names.json"
    known: dict[str, str] = json.loads(names_path.read_text(encoding="utf-8-sig")) if names_path.exists() else {}
    if not known:  # then every unnamed Freebase id would look like a compound value
        log.warning("%s: no entity names (%s): entities matching graph.cvt.pattern are folded away as "
                    "compound values; give the names file, or set graph.cvt.pattern=null", p, names_path)
    out = []
    for source, row, read in _json_rows(p):
        if limit is not None and len(out) >= limit:
            break
        ex = nsm_example(row, source, ent_vocab, known)
        topics = list(ex.topic_entities)
        own = dict(zip(ex.answers, ex.answer_labels))
        graphs.add(source, lambda read=read, source=source, topics=topics, own=own: nsm_subgraph(
            read(), source, ent_vocab, rel_vocab, known, own, topics))
        out.append(ex)
    return out


def nsm_example(row: dict, source: str, ent_vocab, known: dict[str, str]) -> QAExample:
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DataFormatError(source, "missing or empty 'question'", question)
    topics = [_nsm_id(e, ent_vocab, source, "entity") for e in row.get("entities") or []]
    answers, labels = [], []
    for a in row.get("answers") or []:
        if not isinstance(a, dict) or not a.get("kb_id"):
            raise DataFormatError(source, "each answer must be {kb_id, text}", a)
        answers.append(str(a["kb_id"]))
        labels.append(str(a.get("text") or known.get(a["kb_id"]) or a["kb_id"]))
    topic_names = [known.get(t, t) for t in topics]
    extra = {"subgraph": source, "topic_labels": topic_names}
    return QAExample(mark_topic(question.strip(), topic_names), topics, answers, qid=str(row.get("id") or ""),
                     source=source, extra=extra, answer_labels=labels, answer_ids=[[a] for a in answers])


def nsm_subgraph(row: dict, source: str, ent_vocab, rel_vocab, known: dict[str, str], own: dict[str, str],
                 topics: list[str]) -> Subgraph:
    sub = row.get("subgraph") or {}
    if not isinstance(sub, dict):
        raise DataFormatError(source, "subgraph must be {entities, tuples}", sub)
    triples = []
    for i, t in enumerate(sub.get("tuples") or []):
        if not isinstance(t, (list, tuple)) or len(t) != 3:
            raise DataFormatError(source, f"subgraph tuple {i + 1} is not [head, relation, tail]", t)
        triples.append((_nsm_id(t[0], ent_vocab, source, "entity"), _nsm_id(t[1], rel_vocab, source, "relation"),
                        _nsm_id(t[2], ent_vocab, source, "entity")))
    ids = {e for h, _, t in triples for e in (h, t)}
    labels = {e: known[e] for e in ids if e in known}
    labels.update({e: n for e, n in own.items() if e in ids and n != e})
    return Subgraph(triples, labels, keep=frozenset(topics))


SOURCES: dict[str, Callable] = {"rog": load_rog, "nsm": load_nsm}


def detect_format(path: str) -> str:
    """rog or nsm, from the file: parquet and Hub ids are RoG's; a JSON row with `subgraph` is
    NSM's, one with `graph` RoG's."""
    p = Path(path)
    if p.suffix.lower() == ".parquet" or not p.exists():
        return "rog"
    for _, row, _ in _json_rows(p):
        if "subgraph" in row:
            return "nsm"
        if "graph" in row:
            return "rog"
        break
    raise DataFormatError(f"{p}:1", "neither a RoG row (graph) nor an NSM row (subgraph)")


def load_subgraph_questions(path: str | None = None, format: str = "auto", kg=None, sample: str | None = None,
                            sample_seed: int = 0, split: str | None = None,
                            **kwargs) -> list[QAExample] | None:
    """Questions of `path` in `format` (rog | nsm | auto: from the file); `split` names the split of a
    Hub dataset id. No path: the generated sample's split `sample` (rra.data.subgraph_generator, RoG
    format), or None (no such split)."""
    if path is None or path == "":
        if sample is None:
            return None
        from rra.data.subgraph_generator import sample_file

        path, format = sample_file(sample, "rog", sample_seed), "rog"
    format = detect_format(path) if format == "auto" else format
    if format not in SOURCES:
        raise ValueError(f"unknown subgraph format {format!r}; expected auto or one of {sorted(SOURCES)}")
    if format == "rog":
        kwargs["split"] = split
    return SOURCES[format](path, kg=kg, **kwargs)

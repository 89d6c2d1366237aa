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
Every row is checked when the file is read, its graph included (then dropped): a row without its
`graph` / `subgraph`, a list field that holds objects or lists, a malformed triple, is a
DataFormatError naming file:line and the value before any question is answered.
"""
from __future__ import annotations

import json
import logging
import re
from itertools import chain
from pathlib import Path
from typing import Callable

from rra.data import jsonl
from rra.graph.cvt import DESCRIBING, domain
from rra.graph.loaders import format_suffix
from rra.graph.subgraphs import QuestionGraphs, Subgraph
from rra.records import DataFormatError, QAExample

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
    """A list of names or ids (or one string); numbers are read as their text. An object or a list
    inside the list is refused: its keys or its printed form would become answers."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if not isinstance(value, (list, tuple)):
        raise DataFormatError(source, f"{key} must be a list of strings (or one string)", value)
    out = []
    for v in value:
        if isinstance(v, str):
            if v.strip():
                out.append(v)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(str(v))
        elif v is not None:
            raise DataFormatError(source, f"{key} must be a list of strings; it holds a {type(v).__name__}", value)
    return out


def _qid(row: dict, source: str) -> str:
    qid = row.get("id")
    if qid is None or qid == "":
        return ""
    if isinstance(qid, bool) or not isinstance(qid, (str, int)):
        raise DataFormatError(source, "id must be a string or an integer", qid)
    return str(qid)


def _question(row: dict, source: str) -> str:
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DataFormatError(source, "missing or empty 'question'", question)
    return question.strip()


def _triples(graph, source: str, key: str = "graph") -> list[tuple[str, str, str]]:
    """`[[head, relation, tail], ...]` as tuples; a malformed one is an error naming its position.
    Checked with C-level passes (a subgraph of 5,000 triples is read for every question)."""
    if not isinstance(graph, (list, tuple)):
        raise DataFormatError(source, f"{key} must be a list of [head, relation, tail] triples"
                              + (" (the row has none: a per-question benchmark row brings its subgraph)"
                                 if graph is None else ""), graph)
    try:
        out = list(map(tuple, graph))
        ok = set(map(len, out)) <= {3} and set(map(type, chain.from_iterable(out))) <= {str} and \
            "" not in set(chain.from_iterable(out))
    except TypeError:
        ok = False
    if not ok:
        for i, t in enumerate(graph):
            if isinstance(t, str) or not isinstance(t, (list, tuple)) or len(t) != 3 or \
                    not all(isinstance(x, str) and x for x in t):
                raise DataFormatError(source, f"{key} triple {i + 1} is not [head, relation, tail]", t)
    return out


# -- RoG ---------------------------------------------------------------------------------------
def rog_example(row: dict, source: str, key: str) -> QAExample:
    """One RoG row as a question (its graph is read separately, `rog_subgraph`)."""
    question = _question(row, source)
    topics = _strings(row.get("q_entity"), source, "q_entity")
    answers = _strings(row.get("a_entity"), source, "a_entity") or _strings(row.get("answer"), source, "answer")
    names = _strings(row.get("answer"), source, "answer")
    extra = {"subgraph": key, "answer_names": names, "choices": _strings(row.get("choices"), source, "choices")}
    return QAExample(mark_topic(question, topics), topics, answers, qid=_qid(row, source), source=source,
                     extra=extra, answer_labels=list(answers), answer_ids=[[a] for a in answers])


def rog_subgraph(row: dict, source: str, topics: list[str]) -> Subgraph:
    return Subgraph(_triples(row.get("graph"), source), keep=frozenset(topics))


def load_rog(path: str, kg=None, split: str | None = None, limit: int | None = None) -> list[QAExample]:
    """Questions of a RoG file (`.parquet`, `.jsonl`, `.json`) or Hub dataset id (`owner/name`, with
    `split`), their subgraphs registered with `kg` (a QuestionGraphs). Every row is checked now,
    its graph included; a question whose graph is empty is counted in a warning."""
    graphs = _graphs(kg, "load_rog")
    p = Path(path)
    if any(c in str(path) for c in "*?["):  # the shards of a downloaded dataset, in name order
        shards = sorted(p.parent.glob(p.name))
        if not shards:
            raise FileNotFoundError(f"load_rog: no file matches {path}")
        return [e for shard in shards for e in load_rog(str(shard), kg=kg, split=split)][:limit]
    if p.suffix.lower() == ".parquet":
        rows = _parquet_rows(p)
    elif format_suffix(p) in (".jsonl", ".json"):  # .jsonl.gz / .bz2 / .xz read decompressed
        if not p.exists():
            raise FileNotFoundError(f"load_rog: {p} does not exist")
        rows = _json_rows(p)
    elif not p.exists() and re.fullmatch(r"[\w.-]+/[\w.-]+", str(path)):
        rows = _hub_rows(str(path), split or "test")
    else:
        raise ValueError(f"load_rog: cannot read {path}: expected .parquet, .jsonl, .json or a Hub id owner/name")
    out, empty = [], []
    for source, row, read in rows:
        if limit is not None and len(out) >= limit:
            break
        ex = rog_example(row, source, source)
        # parquet's graph column is checked as a whole (_parquet_rows); a JSON or Hub row's graph
        # is checked here, then dropped
        size = row["_graph_size"] if "_graph_size" in row else len(_triples(row.get("graph"), source))
        if not size:
            empty.append(source)
        topics = list(ex.topic_entities)
        graphs.add(source, lambda read=read, source=source, topics=topics: rog_subgraph(read(), source, topics))
        out.append(ex)
    _warn_empty(path, empty, len(out))
    return out


def _warn_empty(path, empty: list[str], n: int) -> None:
    if empty:
        log.warning("%s: %d of %d questions come with an empty graph (first: %s): they can only end with "
                    "no answer, and count against the subgraph ceiling", path, len(empty), n, empty[0])


def _json_rows(path: Path):
    """(file:line, row, re-reader) for each question of a JSONL file (or a JSON array), through the
    one JSON reader of the question formats (rra.data.jsonl). A JSONL row is read again from its
    byte offset when its graph is built, never held."""
    if format_suffix(path) == ".json" and jsonl.starts_with_array(path):
        for source, row in jsonl.array_items(path):
            yield source, row, (lambda row=row: row)
        return
    for source, offset, row in jsonl.objects(path):
        yield source, row, (lambda offset=offset, source=source: jsonl.reread(path, offset, source))


def _parquet_rows(path: Path):
    try:
        import pyarrow.parquet as pq
    except ImportError as err:
        raise ImportError(f"reading {path} needs pyarrow (pip install pyarrow), or give the same "
                          "rows as .jsonl") from err
    table = pq.read_table(path)
    if "graph" not in table.column_names:
        raise DataFormatError(f"{path}:row 1", "no 'graph' column: a RoG row brings its subgraph", table.column_names)
    graph = table.column("graph")
    sizes = _check_graph_column(graph, path)
    small = table.drop_columns(["graph"])
    for i, row in enumerate(small.to_pylist()):
        def read(i=i, row=row):  # the graph column is converted to Python only when it is built
            return {**row, "graph": graph[i].as_py()}
        yield f"{path}:row {i + 1}", {**row, "_graph_size": sizes[i]}, read


def _check_graph_column(graph, path: Path) -> list[int]:
    """The parquet `graph` column checked as a whole (no row converted to Python): a list of
    [head, relation, tail] string lists per row, none of them null or empty. Returns each row's
    number of triples."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def bad(i: int, problem: str, value=None):
        raise DataFormatError(f"{path}:row {i + 1}", problem, value)

    graph = graph.combine_chunks() if hasattr(graph, "combine_chunks") else graph
    t = graph.type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)) or not (
            pa.types.is_list(t.value_type) or pa.types.is_large_list(t.value_type)) or not (
            pa.types.is_string(t.value_type.value_type) or pa.types.is_large_string(t.value_type.value_type)):
        bad(0, f"the graph column must hold lists of [head, relation, tail] strings, not {t}")
    if graph.null_count:
        bad(pc.index(pc.is_null(graph), True).as_py(), "graph is null (a RoG row brings its subgraph)")
    triples = pc.list_flatten(graph)
    owner = pc.list_parent_indices(graph)
    lengths = pc.list_value_length(triples)
    wrong = pc.or_(pc.is_null(lengths), pc.not_equal(lengths, 3))
    if pc.any(wrong).as_py():
        at = pc.index(wrong, True).as_py()
        bad(owner[at].as_py(), "graph triple is not [head, relation, tail]", triples[at].as_py())
    names = pc.list_flatten(triples)
    blank = pc.or_(pc.is_null(names), pc.equal(pc.utf8_length(names), 0))
    if pc.any(blank).as_py():
        at = pc.index(blank, True).as_py() // 3
        bad(owner[at].as_py(), "graph triple has an empty or null name", triples[at].as_py())
    return pc.list_value_length(graph).to_pylist()


def _hub_rows(name: str, split: str):
    """A dataset on the Hugging Face Hub (online; `datasets` installed). Not exercised offline."""
    try:
        import datasets
    except ImportError as err:
        raise ImportError(f"loading {name} from the Hugging Face Hub needs `pip install datasets` "
                          "(or download its parquet files and give their path)") from err
    ds = datasets.load_dataset(name, split=split)
    for i in range(len(ds)):
        yield f"{name}[{split}]:row {i + 1}", ds[i], (lambda i=i: ds[i])


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
    beside the file (each optional: ids given as strings need no vocabulary). Every row is checked
    now, its subgraph included. Without a names file, an unnamed id is folded as a compound value
    only where it behaves like one (rra.graph.cvt.cvt_like); the run counts how many were."""
    graphs = _graphs(kg, "load_nsm")
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"load_nsm: {p} does not exist")
    ent_vocab = _vocab(Path(entities) if entities else p.parent / "entities.txt")
    rel_vocab = _vocab(Path(relations) if relations else p.parent / "relations.txt")
    names_path = Path(names) if names else p.parent / "entities_names.json"
    known: dict[str, str] = _names(names_path) if names_path.exists() else {}
    if not known:  # then every unnamed Freebase id would look like a compound value
        log.warning("%s: no entity names (%s): an unnamed id matching graph.cvt.pattern is folded as a "
                    "compound value only where it behaves like one (metrics.json: cvts_folded, "
                    "unnamed_kept); give the names file to fold exactly the unnamed ones", p, names_path)
    out, empty = [], []
    entity_domains: set[str] = set()  # without names: the types of the topics' and answers' properties
    for source, row, read in _json_rows(p):
        if limit is not None and len(out) >= limit:
            break
        ex = nsm_example(row, source, ent_vocab, known)
        topics = list(ex.topic_entities)
        own = dict(zip(ex.answers, ex.answer_labels))
        sub = nsm_subgraph(row, source, ent_vocab, rel_vocab, known, own, topics)  # checked now
        if not sub.triples:
            empty.append(source)
        if not known:
            sure = set(topics) | set(own)
            entity_domains.update(domain(r) for h, r, _ in sub.triples if h in sure and not r.startswith(DESCRIBING))
        graphs.add(source, lambda read=read, source=source, topics=topics, own=own: nsm_subgraph(
            read(), source, ent_vocab, rel_vocab, known, own, topics, frozenset(entity_domains)))
        out.append(ex)
    _warn_empty(path, empty, len(out))
    return out


def _names(path: Path) -> dict[str, str]:
    try:
        names = json.loads(jsonl.decode(path.read_bytes(), path, 1))
    except json.JSONDecodeError as err:
        raise DataFormatError(f"{path}:{err.lineno}", f"invalid JSON ({err.msg})") from None
    if not isinstance(names, dict) or not all(isinstance(v, str) for v in names.values()):
        raise DataFormatError(f"{path}:1", "the names file must be one object {kb_id: name}", type(names).__name__)
    return names


def nsm_example(row: dict, source: str, ent_vocab, known: dict[str, str]) -> QAExample:
    question = _question(row, source)
    entities = row.get("entities")
    if entities is not None and not isinstance(entities, list):
        raise DataFormatError(source, "entities must be a list of topic entities (ids or indices)", entities)
    topics = [_nsm_id(e, ent_vocab, source, "entity") for e in entities or []]
    given = row.get("answers")
    if given is not None and not isinstance(given, list):
        raise DataFormatError(source, "answers must be a list of {kb_id, text}", given)
    answers, labels = [], []
    for a in given or []:
        if not isinstance(a, dict) or not isinstance(a.get("kb_id"), (str, int)) or isinstance(a.get("kb_id"), bool) \
                or a.get("kb_id") == "" or not isinstance(a.get("text"), (str, type(None))):
            raise DataFormatError(source, "each answer must be {kb_id, text} (strings)", a)
        answers.append(str(a["kb_id"]))
        labels.append(str(a.get("text") or known.get(str(a["kb_id"])) or a["kb_id"]))
    topic_names = [known.get(t, t) for t in topics]
    extra = {"subgraph": source, "topic_labels": topic_names}
    return QAExample(mark_topic(question, topic_names), topics, answers, qid=_qid(row, source),
                     source=source, extra=extra, answer_labels=labels, answer_ids=[[a] for a in answers])


def nsm_subgraph(row: dict, source: str, ent_vocab, rel_vocab, known: dict[str, str], own: dict[str, str],
                 topics: list[str], entity_domains: frozenset[str] = frozenset()) -> Subgraph:
    sub = row.get("subgraph")
    if not isinstance(sub, dict) or not isinstance(sub.get("tuples", []), list):
        raise DataFormatError(source, "subgraph must be {entities, tuples}"
                              + (" (the row has none: a per-question benchmark row brings its subgraph)"
                                 if sub is None else ""), sub)
    triples = []
    for i, t in enumerate(sub.get("tuples") or []):
        if not isinstance(t, (list, tuple)) or len(t) != 3:
            raise DataFormatError(source, f"subgraph tuple {i + 1} is not [head, relation, tail]", t)
        triples.append((_nsm_id(t[0], ent_vocab, source, "entity"), _nsm_id(t[1], rel_vocab, source, "relation"),
                        _nsm_id(t[2], ent_vocab, source, "entity")))
    ids = {e for h, _, t in triples for e in (h, t)}
    labels = {e: known[e] for e in ids if e in known}
    labels.update({e: n for e, n in own.items() if e in ids and n != e})
    # Without a names file nothing says which ids are named: the fold then asks the structure too
    return Subgraph(triples, labels, keep=frozenset(topics) | frozenset(own), named=bool(known),
                    entity_domains=entity_domains)


SOURCES: dict[str, Callable] = {"rog": load_rog, "nsm": load_nsm}


def detect_format(path: str) -> str:
    """rog or nsm, from the file: parquet and Hub ids are RoG's; a JSON row with `subgraph` is
    NSM's, one with `graph` RoG's."""
    p = Path(path)
    if p.suffix.lower() == ".parquet" or not p.exists():
        return "rog"
    for source, row, _ in _json_rows(p):
        if "subgraph" in row:
            return "nsm"
        if "graph" in row:
            return "rog"
        raise DataFormatError(source, "neither a RoG row (graph) nor an NSM row (subgraph): a per-question "
                              "benchmark row brings its subgraph", sorted(row))
    raise DataFormatError(f"{p}:1", "the file holds no question")


def load_subgraph_questions(path: str | None = None, format: str = "auto", kg=None, sample: str | None = None,
                            sample_seed: int = 0, split: str | None = None, files=None,
                            **kwargs) -> list[QAExample] | None:
    """Questions of `path` in `format` (rog | nsm | auto: from the file); `split` names the split of a
    Hub dataset id. No path: the generated sample's split `sample` (rra.data.subgraph_generator, RoG
    format) when the dataset names no file at all (`files`: its train / val / test files), else None:
    a run on real files never mixes in generated questions (nor their relations)."""
    if path is None or path == "":
        if sample is None or any(f not in (None, "") for f in (files or ())):
            return None
        from rra.data.subgraph_generator import sample_file

        path, format = sample_file(sample, "rog", sample_seed), "rog"
    format = detect_format(path) if format == "auto" else format
    if format not in SOURCES:
        raise ValueError(f"unknown subgraph format {format!r}; expected auto or one of {sorted(SOURCES)}")
    if format == "rog":
        kwargs["split"] = split
    return SOURCES[format](path, kg=kg, **kwargs)

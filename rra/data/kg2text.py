"""The Retrieve-Rewrite-Answer authors' KG-to-text corpus (ChatGPT texts written from the subgraphs
of MetaQA and WebQSP questions; ../shared/data/rra_kg2text, see its README for provenance).

Each file is a JSON array of Alpaca records whose `instruction` holds the triples:

    "... The knowledge graph is: (A Christmas Kiss, written_by, Joany Kane) (A Christmas Kiss,
     directed_by, John Stimpson). The sentence is:"   ->   output: "A Christmas Kiss was written ..."

Entity names may contain commas and parentheses (`Martin Luther King, Jr.`, `Hamlet (1996 film)`),
so a triple is found by its relation, which must be in the part's relation vocabulary (a list of
names, or a pattern such as Freebase's `domain.type.property`), never by splitting on commas.
WebQSP subgraphs may hold compound-value nodes written `CVT1`, `CVT2`: such pairs are flagged
(`KG2TextEntry.cvt`) so their scores can be reported apart.

Parts (conf/data/rra_kg2text.yaml): `metaqa` (metaqa_dev.json) and `wqsp` (wqsp_train.json +
wqsp_dev.json). Of each part a seeded set of distinct inputs is held out for evaluation; every pair
whose input equals a held-out input is kept out of training (WebQSP repeats inputs across files).
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from rra.records import DataFormatError
from rra.data.webnlg import PairsDataModule, WebNLGEntry, eval_pairs, training_pairs

PREFIX = "The knowledge graph is: "
SUFFIX = "The sentence is:"
CVT_NODE = re.compile(r"CVT\d+")
# a relation name as it can appear between two ", ": no spaces, commas or parentheses
_RELATION_SLOT = re.compile(r"(?=, ([^\s,()]+), )")


@dataclass
class KG2TextEntry(WebNLGEntry):
    """One corpus input with all its reference texts. `category` is the part (metaqa / wqsp)."""

    cvt: bool = False  # holds a compound-value node (CVT1, ...)


class RelationVocabulary:
    """Which strings are relation names: an explicit list and/or a full-match pattern."""

    def __init__(self, names: Sequence[str] = (), pattern: str | None = None):
        if not names and not pattern:
            raise ValueError("a relation vocabulary needs names or a pattern")
        self.names = set(names)
        self.pattern = re.compile(pattern) if pattern else None

    def __contains__(self, name: str) -> bool:
        return name in self.names or bool(self.pattern and self.pattern.fullmatch(name))


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _split_between(text: str) -> tuple[str, str] | None:
    """`tail) (head` -> (tail, head): the `) (` whose two sides have balanced parentheses."""
    cuts = [m.start() for m in re.finditer(r"\) \(", text)]
    good = [i for i in cuts if _balanced(text[:i]) and _balanced(text[i + 3:])]
    if len(good) != 1:
        return None
    return text[:good[0]], text[good[0] + 3:]


def parse_triples(graph: str, vocab: RelationVocabulary) -> list[tuple[str, str, str]]:
    """`(h, r, t) (h, r, t) ...` -> triples, relations found by the vocabulary. Raises ValueError
    saying what does not parse."""
    graph = graph.strip()
    if graph.endswith("."):
        graph = graph[:-1].rstrip()
    if not (graph.startswith("(") and graph.endswith(")")):
        raise ValueError("the knowledge graph is not '(head, relation, tail) ...'")
    body = graph[1:-1]
    slots = [(m.start(), m.start() + len(m.group(1)) + 4, m.group(1)) for m in _RELATION_SLOT.finditer(body)
             if m.group(1) in vocab]
    if not slots:
        raise ValueError("no relation of the vocabulary in the knowledge graph")
    triples: list[tuple[str, str, str]] = []
    head = body[:slots[0][0]]
    for k, (start, end, relation) in enumerate(slots):
        rest = body[end:slots[k + 1][0]] if k + 1 < len(slots) else body[end:]
        if k + 1 < len(slots):
            split = _split_between(rest)
            if split is None:
                raise ValueError(f"cannot tell where the triple with relation {relation!r} ends in {rest!r}")
            tail, next_head = split
        else:
            tail, next_head = rest, ""
        # the corpus has a few triples with an empty value, e.g. `(Kauai, geography.island.body_of_water, )`:
        # kept as an empty string here, dropped (and counted) by the loader
        triples.append((head.strip(), relation, tail.strip()))
        head = next_head
    return triples


def load_kg2text_file(path: str | Path, vocab: RelationVocabulary, part: str = "") -> list[KG2TextEntry]:
    """The records of one corpus file, one entry per record (in file order)."""
    path = Path(path)
    try:
        records = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as e:
        raise DataFormatError(f"{path}:{e.lineno}", f"malformed JSON: {e.msg}") from None
    except OSError as e:
        raise DataFormatError(str(path), f"cannot read: {e}") from None
    if not isinstance(records, list):
        raise DataFormatError(str(path), "expected a JSON array of {instruction, input, output} records")
    entries = []
    for i, rec in enumerate(records):
        where = f"{path}[{i}]"
        if not isinstance(rec, Mapping) or not isinstance(rec.get("instruction"), str):
            raise DataFormatError(where, "record without a string 'instruction'", rec)
        text = rec.get("output")
        if not isinstance(text, str) or not text.strip():
            raise DataFormatError(where, "record without a non-empty 'output'", text)
        instruction = rec["instruction"]
        start, end = instruction.find(PREFIX), instruction.rfind(SUFFIX)
        if start < 0 or end < start:
            raise DataFormatError(where, f"instruction does not hold '{PREFIX}...{SUFFIX}'", instruction)
        try:
            triples = parse_triples(instruction[start + len(PREFIX):end], vocab)
        except ValueError as e:
            raise DataFormatError(where, str(e), instruction) from None
        kept = [t for t in triples if t[0] and t[2]]
        if not kept:
            raise DataFormatError(where, "every triple has an empty head or tail", instruction)
        extra = {"empty_triples": len(triples) - len(kept)} if len(kept) < len(triples) else {}
        triples = kept
        cvt = any(CVT_NODE.fullmatch(x) for t in triples for x in (t[0], t[2]))
        entries.append(KG2TextEntry(triples=triples, texts=[" ".join(text.split())], category=part,
                                    eid=f"{path.stem}:{i}", source=where, cvt=cvt, extra=extra))
    return entries


def merge_inputs(entries: Sequence[KG2TextEntry]) -> list[KG2TextEntry]:
    """One entry per distinct triple list (first occurrence's order), all its distinct texts as references."""
    merged: dict[tuple, KG2TextEntry] = {}
    for e in entries:
        key = tuple(e.triples)
        if key not in merged:
            merged[key] = KG2TextEntry(triples=list(e.triples), texts=[], category=e.category, eid=e.eid,
                                       source=e.source, cvt=e.cvt)
        if e.texts[0] not in merged[key].texts:
            merged[key].texts.append(e.texts[0])
    return list(merged.values())


@dataclass
class KG2TextPart:
    """A part of the corpus split into training pairs and the seeded held-out inputs."""

    name: str
    train: list[KG2TextEntry]  # one entry per record (a text each), held-out inputs removed
    heldout: list[KG2TextEntry]  # distinct inputs in seeded order, all their texts as references
    records: int = 0


def load_part(root: str | Path, name: str, files: Sequence[str], relations: Sequence[str] = (),
              relation_pattern: str | None = None, heldout: int = 200, seed: int = 0,
              max_triples: int | None = None) -> KG2TextPart:
    """Read a part's files; hold out `heldout` distinct inputs (seeded, among those with at most
    `max_triples` triples); training keeps every other record with at most `max_triples` triples."""
    vocab = RelationVocabulary(list(relations or ()), relation_pattern)
    records = [e for f in files for e in load_kg2text_file(Path(root) / f, vocab, name)]
    short = [e for e in records if max_triples is None or len(e.triples) <= max_triples]
    inputs = merge_inputs(short)
    order = list(range(len(inputs)))
    random.Random(seed).shuffle(order)
    held = [inputs[i] for i in order[:heldout]]
    held_keys = {tuple(e.triples) for e in held}
    train = [e for e in short if tuple(e.triples) not in held_keys]
    return KG2TextPart(name, train, held, len(records))


def held_out_sample(part: KG2TextPart, n: int | None, offset: int = 0, cvt: bool | None = None) -> list[KG2TextEntry]:
    """`n` held-out inputs of a part from position `offset` of its seeded order; `cvt` True / False
    keeps only pairs with / without compound-value nodes (None: all)."""
    pool = [e for e in part.heldout if cvt is None or e.cvt == cvt][offset:]
    return pool if n is None else pool[:n]


class KG2TextDataModule(PairsDataModule):
    """Training pairs of the chosen parts; validation and test from their held-out inputs.

    parts: which parts to use (e.g. [metaqa], [wqsp] or both); sources: each part's files,
    relation vocabulary and held-out size. The held-out inputs of a part are, in seeded order,
    `test_size` test inputs, then `val_size` validation inputs (per part)."""

    def __init__(self, root: str, parts: Sequence[str] = ("metaqa", "wqsp"), sources: Mapping | None = None,
                 batch_size: int = 8, num_workers: int = 0, seed: int = 0, split_seed: int = 0, max_triples: int | None = 12,
                 max_train_pairs: int | None = None, val_size: int = 50, test_size: int = 100,
                 kb_path: str | None = None, labels_path: str | None = None, kb_format: str | None = None):
        # kb_path / labels_path / kb_format: every data config names a KG file for the `graph` group;
        # this corpus carries its own triples, so there is none to read
        super().__init__()
        self.save_hyperparameters()
        if kb_path is not None:
            raise ValueError(f"data=rra_kg2text reads no KG file (its pairs hold their triples): kb_path={kb_path!r}")
        sources = dict(sources or {})
        unknown = [p for p in parts if p not in sources]
        if unknown or not parts:
            raise ValueError(f"data.parts {list(parts)}: unknown part(s) {unknown}; known: {sorted(sources)}")
        self.loaded: dict[str, KG2TextPart] = {}

    def load(self) -> dict[str, KG2TextPart]:
        hp = self.hparams
        if not self.loaded:
            for name in hp.parts:
                src = dict(hp.sources[name])
                files = list(src["files"]) * int(src.get("repeat", 1))  # repeat: oversample a small part
                self.loaded[name] = load_part(hp.root, name, files, src.get("relations") or (),
                                              src.get("relation_pattern"), src.get("heldout", 200), hp.split_seed,
                                              hp.max_triples)
        return self.loaded

    @property
    def summary(self) -> dict:
        """Counts per part (logged with the run's config)."""
        return {name: {"records": p.records, "train_pairs": len(p.train), "heldout_inputs": len(p.heldout),
                       "heldout_cvt": sum(e.cvt for e in p.heldout), "train_cvt": sum(e.cvt for e in p.train)}
                for name, p in self.loaded.items()}

    def setup(self, stage: str | None = None) -> None:
        hp = self.hparams
        parts = self.load()
        if not self.train_set:
            train = [e for p in parts.values() for e in p.train]
            random.Random(hp.seed).shuffle(train)  # parts mixed, so a step budget sees both
            self.train_set = training_pairs(train[:hp.max_train_pairs])
        if not self.test_set:
            self.test_set = eval_pairs([e for p in parts.values() for e in held_out_sample(p, hp.test_size)])
        if not self.val_set:
            self.val_set = eval_pairs([e for p in parts.values()
                                       for e in held_out_sample(p, hp.val_size, offset=hp.test_size)])

"""WebNLG 2017 (KG-to-text) loader, triple linearisation, and silver pairs from the project's own KG.

WebNLG entries hold a set of DBpedia triples and one or more human texts saying the same thing.
The trained rewriter learns "linearised triples -> text" from them; `kg_silver_pairs` adds pairs
made from the user's own KG (texts from the template verbaliser) so the rewriter also sees that
KG's relation names.

Layout of ../shared/data/webnlg (unchanged challenge release):
  webnlg_challenge_2017/{train,dev}/{1..7}triples/*.xml
  webnlg_challenge_2017/test/testdata_with_lex.xml
"""
from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import lightning as L
from torch.utils.data import DataLoader

from rra.records import Triple
from rra.text.facts import linearise, template_text

SPLITS = ("train", "dev", "test")
TEST_FILE = "test/testdata_with_lex.xml"


class WebNLGFormatError(ValueError):
    """A WebNLG file that is not the XML we expect; the message names the file (and line)."""


@dataclass
class WebNLGEntry:
    triples: list[tuple[str, str, str]]  # the *modified* triples, raw DBpedia-style strings
    texts: list[str]  # reference texts (lex); may be empty for input-only files
    category: str = ""
    eid: str = ""
    source: str = ""  # "file" or "file:eid" for error messages and traceability
    extra: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- loading


def load_webnlg_file(path: str | Path) -> list[WebNLGEntry]:
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        line, col = e.position
        raise WebNLGFormatError(f"{path}:{line}:{col}: malformed XML: {e}") from None
    except OSError as e:
        raise WebNLGFormatError(f"{path}: cannot read: {e}") from None
    if root.tag != "benchmark":
        raise WebNLGFormatError(f"{path}: not a WebNLG file (root element <{root.tag}>, not <benchmark>)")
    entries = []
    for entry in root.iter("entry"):
        eid = entry.get("eid", "")
        where = f"{path} (entry eid={eid!r})"
        tripleset = entry.find("modifiedtripleset")
        if tripleset is None:
            raise WebNLGFormatError(f"{where}: no <modifiedtripleset>")
        triples = [_parse_triple(t.text or "", where) for t in tripleset.findall("mtriple")]
        if not triples:
            raise WebNLGFormatError(f"{where}: <modifiedtripleset> holds no <mtriple>")
        texts = [" ".join((lex.text or "").split()) for lex in entry.findall("lex")]
        entries.append(
            WebNLGEntry(
                triples=triples,
                texts=[t for t in texts if t],
                category=entry.get("category", ""),
                eid=eid,
                source=f"{path}:{eid}",
            )
        )
    return entries


def _parse_triple(text: str, where: str) -> tuple[str, str, str]:
    parts = [p.strip() for p in text.split(" | ")]
    if len(parts) != 3 or not all(parts):
        raise WebNLGFormatError(
            f"{where}: triple {text.strip()!r} is not 'subject | predicate | object'"
        )
    return parts[0], parts[1], parts[2]


def webnlg_files(root: str | Path, split: str) -> list[Path]:
    """The XML files of one split under `root` (the folder holding webnlg_challenge_2017/,
    or webnlg_challenge_2017/ itself)."""
    if split not in SPLITS:
        raise ValueError(f"unknown WebNLG split {split!r}; expected one of {SPLITS}")
    root = Path(root)
    if (root / "webnlg_challenge_2017").is_dir():
        root = root / "webnlg_challenge_2017"
    files = [root / TEST_FILE] if split == "test" else sorted((root / split).glob("*triples/*.xml"))
    files = [f for f in files if f.exists()]
    if not files:
        raise FileNotFoundError(f"no WebNLG {split} files under {root}")
    return files


def load_webnlg(root: str | Path, split: str) -> list[WebNLGEntry]:
    """All entries of a split, in file order (files sorted by triple count, then category)."""
    return [e for f in webnlg_files(root, split) for e in load_webnlg_file(f)]


def fixed_sample(entries: list[WebNLGEntry], n: int | None, seed: int = 0) -> list[WebNLGEntry]:
    """A seeded sample of `n` entries kept in file order (the documented eval sample)."""
    if n is None or n >= len(entries):
        return entries
    idx = sorted(random.Random(seed).sample(range(len(entries)), n))
    return [entries[i] for i in idx]


# --------------------------------------------------------------------------- silver pairs


def template_verbaliser(triples: Sequence[Sequence[str]]) -> str:
    """The pipeline's template text (`rra.text.facts.template_text`) for (s, r, o) tuples or Triples."""
    return template_text([t if isinstance(t, Triple) else Triple(*t) for t in triples])


def kg_silver_pairs(
    kg,
    n: int,
    seed: int = 0,
    max_triples: int = 3,
    entities: Sequence[str] | None = None,
    verbalise: Callable[[Sequence[Sequence[str]]], str] | None = None,
) -> list[WebNLGEntry]:
    """`n` (triples -> template text) pairs from the project's KG: each groups 1..max_triples
    triples around one seeded-random entity (labels, not ids, in both input and text).

    `entities` picks the centres; by default every head of `kg.all_triples()`."""
    rng = random.Random(seed)
    if entities is None:
        entities = sorted({t.head for t in kg.all_triples()})
    if not entities:
        raise ValueError("kg_silver_pairs: the knowledge graph has no entities")
    verbalise = verbalise or template_verbaliser
    pairs: list[WebNLGEntry] = []
    tries = 0
    while len(pairs) < n and tries < 20 * n:
        tries += 1
        centre = entities[rng.randrange(len(entities))]
        k = rng.randint(1, max_triples)
        triples = kg.triples(centre, limit=k, seed=rng.randrange(1 << 30), direction="out")
        if not triples:
            continue
        labels = kg.labels({x for t in triples for x in (t.head, t.tail)})
        named = [(labels.get(t.head, t.head), t.relation, labels.get(t.tail, t.tail)) for t in triples]
        pairs.append(
            WebNLGEntry(
                triples=named,
                texts=[verbalise(named)],
                category="kg",
                eid=f"kg{len(pairs)}",
                source=f"kg:{centre}",
            )
        )
    return pairs


# --------------------------------------------------------------------------- Lightning data


def training_pairs(entries: Sequence[WebNLGEntry]) -> list[dict]:
    """One example per reference text (WebNLG entries have 1-5 of them)."""
    return [{"source": linearise(e.triples), "target": t, "refs": e.texts} for e in entries for t in e.texts]


def eval_pairs(entries: Sequence[WebNLGEntry]) -> list[dict]:
    """One example per entry: loss on the first text, BLEU/chrF against all of them."""
    return [{"source": linearise(e.triples), "target": e.texts[0], "refs": e.texts} for e in entries if e.texts]


def collate_pairs(items: list[dict]) -> dict:
    return {k: [it[k] for it in items] for k in ("source", "target", "refs")}


class PairsDataModule(L.LightningDataModule):
    """Rewriter pairs (`training_pairs` / `eval_pairs` records) served in batches. Every rewriter
    corpus (WebNLG here, the RRA KG-to-text corpus) batches its pairs alike; a subclass fills the
    three lists in `setup` and has `batch_size` and `num_workers` among its hyperparameters."""

    def __init__(self):
        super().__init__()
        self.train_set: list[dict] = []
        self.val_set: list[dict] = []
        self.test_set: list[dict] = []

    def _loader(self, items: list[dict], shuffle: bool):
        return DataLoader(items, batch_size=self.hparams.batch_size, shuffle=shuffle, collate_fn=collate_pairs,
                          num_workers=self.hparams.num_workers)

    def train_dataloader(self):
        return self._loader(self.train_set, shuffle=True)

    def val_dataloader(self):
        return self._loader(self.val_set, shuffle=False)

    def test_dataloader(self):
        return self._loader(self.test_set, shuffle=False)


class WebNLGDataModule(PairsDataModule):
    """WebNLG train (+ optional silver pairs from a KG) / dev sample / fixed test sample.

    test_size: the documented evaluation sample: `fixed_sample(test, test_size, test_seed)`
    (seeded, kept in file order); None = the whole test set (1,862 entries)."""

    def __init__(self, root: str, batch_size: int = 8, num_workers: int = 0, seed: int = 0,
                 max_train_entries: int | None = None, val_size: int | None = 200, test_size: int | None = 200,
                 test_seed: int = 0, kg=None, silver_pairs: int = 0, silver_max_triples: int = 3,
                 kb_path: str | None = None, labels_path: str | None = None, kb_format: str | None = None):
        # kg: a KnowledgeGraph or a zero-argument callable (train.py passes the `graph` group's
        # backend, built from data.kb_path only when silver pairs need it)
        super().__init__()
        self.save_hyperparameters(ignore=["kg"])
        self.kg = kg
        if silver_pairs and kg is None:
            raise ValueError("silver_pairs > 0 needs a knowledge graph: set data.kb_path=YOUR_KB_FILE")

    def setup(self, stage: str | None = None) -> None:
        hp = self.hparams
        if stage in (None, "fit") and not self.train_set:
            train = fixed_sample(load_webnlg(hp.root, "train"), hp.max_train_entries, hp.seed)
            if hp.silver_pairs:
                if callable(self.kg):
                    self.kg = self.kg()
                train = train + kg_silver_pairs(self.kg, hp.silver_pairs, hp.seed, hp.silver_max_triples)
            self.train_set = training_pairs(train)
        if stage in (None, "fit", "validate") and not self.val_set:
            self.val_set = eval_pairs(fixed_sample(load_webnlg(hp.root, "dev"), hp.val_size, hp.seed))
        if stage in (None, "test") and not self.test_set:
            self.test_set = eval_pairs(fixed_sample(load_webnlg(hp.root, "test"), hp.test_size, hp.test_seed))

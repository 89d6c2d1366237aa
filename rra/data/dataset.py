"""A dataset as its config describes it (conf/data/*.yaml): the KG file, its answer rule and
relation names, and where its questions come from. train.py's datamodule, infer.py and every
method read this one description.

    kb_path / labels_path / kb_format   the KG file (the `graph` group decides which backend holds it)
    property_namespaces                 where the KG names its predicates (rra.graph.rdf.RdfMapping;
                                        None: Wikidata's wdt:P19 named by wd:P19)
    semantics                           what a relation path's answers are (`AnswerSemantics`)
    relation_labels                     names for opaque relation ids (shown to LLMs and encoders)
    train / val / test                  question sources: a reader with its arguments (Hydra
                                        `_target_` + `_partial_: true`), or a list of QAExample
    hop                                 keep only the questions of these hop counts (QAExample.hops)
    train_paths                         where a retriever's training paths come from on this dataset:
                                        auto (its own, KG-derived for the rest) | kg | given
    root                                the dataset's folder, when its readers read one

Any other key is the dataset's own variable for its readers' arguments (`train_file`, ...), so a
new question format is a reader returning `QAExample`s plus a yaml naming it; nothing here changes.
"""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from rra.records import AnswerSemantics, QAExample

Source = Sequence[QAExample] | Callable[..., Sequence[QAExample] | None] | None
SPLITS = ("train", "val", "test")


@dataclass
class Dataset:
    kb_path: str | None = None
    labels_path: str | None = None
    kb_format: str | None = None
    property_namespaces: Mapping[str, str] | None = None
    semantics: AnswerSemantics = AnswerSemantics()
    relation_labels: Any = None
    train: Source = None
    val: Source = None
    test: Source = None
    hop: int | Sequence[int] | None = None
    root: str | None = None
    train_paths: str = "auto"

    def __post_init__(self):
        self.semantics = AnswerSemantics.of(self.semantics)

    @classmethod
    def of(cls, config: "Dataset | Mapping | None") -> "Dataset":
        """From a data config (its question sources already instantiated); keys that are not
        fields are the dataset's own variables and stay in the config."""
        if isinstance(config, cls):
            return config
        config = dict(config or {})
        return cls(**{f.name: config[f.name] for f in fields(cls) if f.name in config})

    @classmethod
    def from_config(cls, node) -> "Dataset":
        """From a data config node as composed (conf/data/*.yaml): the question sources
        instantiated (readers stay partial until `questions`), a value left `???` read as unset."""
        from hydra.utils import instantiate
        from omegaconf import OmegaConf

        if "_target_" in node:
            raise ValueError(f"a data config describes a dataset and has no _target_ (found {node._target_!r}): "
                             "what trains on it is the `datamodule` group's (conf/datamodule/*.yaml)")
        values = {}
        for f in fields(cls):
            if f.name not in node or OmegaConf.is_missing(node, f.name):
                continue
            value = instantiate(node[f.name]) if f.name in SPLITS else node[f.name]
            values[f.name] = OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value
        return cls(**values)

    @property
    def hops(self) -> list[int] | None:
        """`hop` as a list, in the order given (data.hop=2 or data.hop=[1,3])."""
        if self.hop is None:
            return None
        return [int(self.hop)] if isinstance(self.hop, (int, str)) else list(dict.fromkeys(int(h) for h in self.hop))

    def has(self, split: str) -> bool:
        return getattr(self, split, None) is not None

    def questions(self, split: str, kg=None) -> list[QAExample] | None:
        """The questions of `split` (None when the dataset has no source for it, or the source gives
        none, e.g. data=files without that file). A reader with a `kg` parameter gets the graph
        (question generators need it); one with a `hops` parameter reads only the `hop` sets."""
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
        source = getattr(self, split)
        if source is None:
            return None
        if self.root is not None and not Path(self.root).exists():
            raise FileNotFoundError(f"dataset folder data.root={self.root} does not exist")
        if callable(source):
            params = inspect.signature(source).parameters
            if self.hops is not None and "hops" in params:  # read only the wanted hop sets' files
                source = functools.partial(source, hops=self.hops)
            source = source(kg=kg) if "kg" in params else source()
        if source is None:
            return None
        return [e for e in source if self.hops is None or e.hops in self.hops]

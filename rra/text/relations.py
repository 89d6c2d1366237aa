"""How a relation reads, and the names a dataset or a KG gives relations.

Relations are shown three ways, by purpose:
- `relation_display`: the KG name, for prompts whose reply must name it back
  (`^directed_by` -> "directed_by (reverse)");
- `relation_phrase`: words for an encoder (the retriever's input, embedding baselines)
  (`^film.directed_by` -> "film directed by (reverse)", camelCase and URIs split);
- `relation_words`: words for prose, the last name part only (`film.film.directed_by` -> "directed by").
A dataset whose relation ids are opaque (Wikidata's `P50`) names them in its config
(`data.relation_labels`, read by `relation_names`); the three functions then read the name
(`^P50` -> "author (reverse)") wherever a method shows relations to an LLM or an encoder.
"""
from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Iterable, Mapping

from rra.graph.base import GraphUnavailableError, base_relation, is_inverse

log = logging.getLogger(__name__)


def relation_names(value: Mapping[str, str] | str | Path | None) -> dict[str, str]:
    """A dataset's names for its relations (`data.relation_labels`): a mapping relation id -> name,
    or a labels file of `relation<TAB>name` lines (read like `data.labels_path`, bad lines are a
    KGFormatError naming file and line); None: no names (relations read by their ids)."""
    if value is None or value == "":
        return {}
    if not isinstance(value, Mapping):
        from rra.graph.loaders import read_labels

        value = read_labels(value)[0]
    return {str(k): str(v).strip() for k, v in value.items() if str(v).strip()}


def _named(relation: str, names: Mapping[str, str] | None) -> str | None:
    return names.get(base_relation(relation)) if names is not None else None


INVERSE_MARK = " (reverse)"  # how a relation read backwards is written after its name


def relation_display(relation: str, names: Mapping[str, str] | None = None) -> str:
    """`^directed_by` -> "directed_by (reverse)"; a forward relation as it is (its name, if named)."""
    shown = _named(relation, names) or base_relation(relation)
    return f"{shown}{INVERSE_MARK}" if is_inverse(relation) else shown


def local_name(iri: str) -> str:
    """An IRI's last segment (`http://x/ontology/birthPlace` -> `birthPlace`); a plain name as it is."""
    return re.split(r"[/#]", iri.rstrip("/#"))[-1]


def relation_phrase(relation: str, names: Mapping[str, str] | None = None) -> str:
    """`directed_by` -> "directed by"; `^directed_by` -> "directed by (reverse)"; URIs -> local name."""
    named = _named(relation, names)
    if named:
        return f"{named.lower()}{INVERSE_MARK}" if is_inverse(relation) else named.lower()
    name = base_relation(relation)
    name = local_name(name)  # http://x/ontology/birthPlace -> birthPlace
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)  # camelCase -> camel Case
    name = re.sub(r"[_.\-]+", " ", name).strip().lower()
    return f"{name}{INVERSE_MARK}" if is_inverse(relation) else name


def without_direction(text: str) -> str:
    """A relation's text (`relation_phrase`, perhaps with its kind) without the mark of a relation
    read backwards: "directed by (reverse) giving film" -> "directed by giving film"."""
    return text.replace(INVERSE_MARK, "")


def relation_words(relation: str, names: Mapping[str, str] | None = None) -> str:
    """`film.film.directed_by` -> "directed by"; `hasGenre` -> "has genre"; `^r` -> words of r."""
    named = _named(relation, names)
    if named:
        return named.lower()
    if " " in base_relation(relation).strip():  # already words (a relation's name, not an id)
        return " ".join(base_relation(relation).lower().split())
    name = base_relation(relation).rstrip("/")
    r = re.split(r"[/#:.]", name)[-1] or name
    r = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", r)
    return re.sub(r"[_\-\s]+", " ", r).strip().lower() or name


class RelationNames(Mapping[str, str]):
    """Names for a KG's relations, keyed by forward relation id: the dataset's (`data.relation_labels`),
    else the KG's own (a property's rdfs:label, or the label of the entity that describes the
    predicate: `KnowledgeGraph.relation_labels`), asked of the KG once per relation and kept. What
    every method shows an LLM, a rewriter or an encoder, so an opaque id (`wdt:P19`) reads as its
    name ("place of birth") wherever the KG gives one. `prepare` asks for many relations in one call
    (a SPARQL store sees one query per batch of new relations); a lookup of an unseen relation asks
    for it alone. A store that cannot say leaves ids to read as words."""

    def __init__(self, names: Mapping[str, str] | None = None, kg=None):
        self.given = dict(names or {})
        self.kg = kg
        self._found: dict[str, str] = {}
        self._asked: set[str] = set()

    def prepare(self, relations: Iterable[str]) -> None:
        todo = sorted({b for b in map(base_relation, relations) if b not in self._asked and b not in self.given})
        if todo and self.kg is not None:
            try:
                found = self.kg.relation_labels(todo)
            except Exception:  # noqa: BLE001 - names are a nicety: a store that cannot say reads ids as words
                found = {}
            self._found.update({r: n.strip() for r, n in found.items() if n and n.strip()})
        self._asked.update(todo)

    def __getitem__(self, relation: str) -> str:
        if relation in self.given:
            return self.given[relation]
        if relation not in self._asked:
            self.prepare([relation])
        return self._found[relation]

    def __iter__(self):  # the names known so far
        return iter({**self._found, **self.given})

    def __len__(self) -> int:
        return len({**self._found, **self.given})


class RelationText:
    """How an encoder reads a relation, for one KG: the dataset's name for it (`data.relation_labels`),
    else the KG's own (a property's rdfs:label, `KnowledgeGraph.relation_labels`), else its id as
    words (`relation_phrase`); `^r` reads "... (reverse)". The KG's names are asked in batches
    (`prepare`) and kept, so a SPARQL store sees one query per batch of new relations. Per-question
    graphs (no names outside a question) read ids as words.

    `kinds` (rra.plans.reads.KindCheck of the KG) names what each relation leads to; the
    relation scorer reads it after the name (`with_kinds`: "place of birth giving city"), where the
    graph gives classes or typed values. Plan texts say what a plan's results are on their own
    (rra.plans.text.plan_words `kind`), so they read the names alone (`__call__`)."""

    def __init__(self, names: Mapping[str, str] | None = None, kg=None, kinds=None):
        self.names = names if isinstance(names, RelationNames) else RelationNames(names, kg)
        self.kg = kg
        self.kinds = kinds
        self._text: dict[str, str] = {}
        self._kind: dict[str, str | None] = {}

    def prepare(self, relations: Iterable[str], kinds: bool = False) -> None:
        relations = list(relations)
        self.names.prepare(relations)
        new = sorted({r for r in relations if r not in self._kind}) if kinds else []
        if new:
            self._kind.update(dict.fromkeys(new))
            if self.kinds is not None:
                try:
                    self._kind.update(self.kinds.relation_kinds(new))
                except GraphUnavailableError:
                    raise  # a store that cannot be reached is an error, not a missing nicety
                except Exception as e:  # noqa: BLE001 - a store that cannot sample a relation: names alone
                    log.warning("could not read what %d relations lead to (%s: %s); they read by name alone",
                                len(new), type(e).__name__, e)

    def __call__(self, relation: str) -> str:
        text = self._text.get(relation)
        if text is None:
            self.prepare([relation])
            text = self._text[relation] = relation_phrase(relation, self.names)
        return text

    def kind(self, relation: str) -> str | None:
        if relation not in self._kind:
            self.prepare([relation], kinds=True)
        return self._kind[relation]

    def with_kinds(self) -> "KindedRelationText":
        return KindedRelationText(self)


class KindedRelationText:
    """A relation's text with what it leads to: "place of birth giving city" (the name alone where
    the graph does not say). What a retriever trained with `relation_kinds` reads."""

    def __init__(self, text: RelationText):
        self.text = text

    def prepare(self, relations: Iterable[str]) -> None:
        self.text.prepare(relations, kinds=True)

    def __call__(self, relation: str) -> str:
        kind = self.text.kind(relation)
        return f"{self.text(relation)} giving {kind}" if kind else self.text(relation)

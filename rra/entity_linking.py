"""Topic-entity linking: which KG entity does a question start from?

Three sources, tried in order:
1. entities the dataset already gives (`QAExample.topic_entities`), checked against the KG;
2. mentions marked `[...]` in the text, as MetaQA writes them;
3. otherwise the question's word n-grams matched against KG labels, longest first (so
   "Blade Runner 2049" wins over "Blade Runner"), exact label before case-insensitive label.

Nothing here raises for a question the KG cannot serve: the result carries a per-question status
("unknown_entity" when a named entity is not in the KG, "no_topic_entity" when nothing matched),
and a mention that matches several entities is reported in `ambiguous` (the first, by the
backend's (label length, label) order, is used).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from rra.graph.base import KnowledgeGraph

MARKED = re.compile(r"\[([^\[\]]+)\]")
WORD = re.compile(r"\S+")
# Edge punctuation that is part of the sentence, not of a label ("... Alien?").
EDGE_PUNCT = "?!.,;:\"'()"
# An n-gram made only of these never counts as an entity mention on its own: KGs such as MetaQA
# hold entities like "The" or "It" that would otherwise match every question.
STOPWORDS = frozenset(
    """a an the of in on at to for by with from and or is are was were be been who whom whose what
    which when where why how did does do that this these those it its as his her their movie movies
    film films book books acted act direct directed wrote written starred star""".split()
)


@dataclass
class LinkResult:
    entities: list[str]  # linked entity ids, best first (the pipeline walks from entities[0])
    status: str = "ok"  # ok | unknown_entity | no_topic_entity
    mentions: list[str] = field(default_factory=list)  # surface strings that produced `entities`
    ambiguous: dict[str, list[str]] = field(default_factory=dict)  # mention -> all candidate ids
    source: str = ""  # given | marked | lexical
    error: str = ""  # human-readable reason when status != ok


def strip_marks(question: str) -> str:
    """`what movies did [Ridley Scott] direct` -> `what movies did Ridley Scott direct`."""
    return MARKED.sub(lambda m: m.group(1), question)


def lookup(kg: KnowledgeGraph, mention: str, limit: int = 10) -> list[str]:
    """Entity ids for a mention: the id itself, else exact label, else case-insensitive label."""
    if kg.has_entity(mention):
        return [mention]
    for mode in ("exact", "casefold"):
        hits = kg.find_entities(mention, mode=mode, limit=limit)
        if hits:
            return hits
    return []


def link_entities(
    kg: KnowledgeGraph,
    question: str,
    given: list[str] | None = None,
    max_ngram: int = 8,
    max_entities: int = 3,
) -> LinkResult:
    if given:
        known = [e for e in given if kg.has_entity(e)]
        if known:
            return LinkResult(known, mentions=[kg.label(e) for e in known], source="given")
        return LinkResult([], "unknown_entity", list(given), source="given",
                          error=f"topic entity {given[0]!r} is not in the knowledge graph")

    marked = MARKED.findall(question)
    if marked:
        return _link_mentions(kg, [m.strip() for m in marked], "marked", max_entities)
    return _link_lexical(kg, question, max_ngram, max_entities)


def _link_mentions(kg, mentions, source, max_entities) -> LinkResult:
    found, used, ambiguous = [], [], {}
    for m in mentions:
        hits = lookup(kg, m)
        if len(hits) > 1:
            ambiguous[m] = hits
        if hits and hits[0] not in found:
            found.append(hits[0])
            used.append(m)
    if not found:
        return LinkResult([], "unknown_entity", mentions, ambiguous, source,
                          error=f"marked entity {mentions[0]!r} is not in the knowledge graph")
    return LinkResult(found[:max_entities], "ok", used[:max_entities], ambiguous, source)


def _link_lexical(kg, question, max_ngram, max_entities) -> LinkResult:
    words = WORD.findall(question)
    taken = [False] * len(words)  # words already inside a longer match
    found, used, ambiguous = [], [], {}
    for n in range(min(max_ngram, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            if any(taken[i:i + n]):
                continue
            gram = words[i:i + n]
            if all(w.strip(EDGE_PUNCT).casefold() in STOPWORDS for w in gram):
                continue
            text = " ".join(gram)
            # try the raw span first ("Paris, Texas."), then without sentence punctuation
            candidates = dict.fromkeys([text, text.strip(EDGE_PUNCT)])
            hits = next((h for c in candidates if c and (h := lookup(kg, c))), [])
            if not hits:
                continue
            if len(hits) > 1:
                ambiguous[text.strip(EDGE_PUNCT)] = hits
            if hits[0] not in found:
                found.append(hits[0])
                used.append(text.strip(EDGE_PUNCT))
            taken[i:i + n] = [True] * n
            if len(found) >= max_entities:
                return LinkResult(found, "ok", used, ambiguous, "lexical")
    if not found:
        return LinkResult([], "no_topic_entity", [], {}, "lexical",
                          error="no knowledge-graph entity label found in the question")
    return LinkResult(found, "ok", used, ambiguous, "lexical")

"""Topic-entity linking: which KG entity does a question start from?

Three sources, tried in order:
1. entities the dataset already gives (`QAExample.topic_entities`), checked against the KG;
2. mentions marked `[...]` in the text, as MetaQA writes them;
3. otherwise every word n-gram of the question that names a KG entity (its id, its label, or the
   same with `_` for spaces, case-insensitively) becomes a candidate, and the candidates are
   *ranked*, not taken longest-first: a single word written in lower case ("which writer ...") is
   a common word even when some entity is labelled "Writer", and a word of the KG's relation names
   ("genre", "directed") is the question's relation, not its topic; among the rest, a match in the
   label's own case beats a case-insensitive one, and a longer mention beats a shorter one.
   `LinkResult.candidates` keeps the ranked list, so the RRA pipeline can let the retriever decide
   between the first few (prefer the entity from which a predicted relation path has instances).

Nothing here raises for a question the KG cannot serve: the result carries a per-question status
("unknown_entity" when a named entity is not in the KG, "no_topic_entity" when nothing matched),
and a mention that matches several entities is reported in `ambiguous` (the first, by the
backend's (label length, label) order, is used).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from rra.graph.base import KnowledgeGraph
from rra.text import BRACKETED

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
    status: str = "ok"  # ok | unknown_entity | no_topic_entity | graph_error
    mentions: list[str] = field(default_factory=list)  # surface strings that produced `entities`
    ambiguous: dict[str, list[str]] = field(default_factory=dict)  # mention -> all candidate ids
    source: str = ""  # given | marked | lexical
    error: str = ""  # human-readable reason when status != ok
    candidates: list["Candidate"] = field(default_factory=list)  # lexical: every match, best first
    chosen_by: str = ""  # "retriever" when the pipeline picked a lower-ranked candidate

    def choose(self, c: "Candidate") -> "LinkResult":
        """The same link with candidate `c` first (its entity is the one walked from)."""
        rest = [(e, m) for e, m in zip(self.entities, self.mentions) if e != c.entity]
        return LinkResult([c.entity] + [e for e, _ in rest], self.status, [c.mention] + [m for _, m in rest],
                          self.ambiguous, self.source, self.error, self.candidates, "retriever")


@dataclass(frozen=True)
class Candidate:
    """One (mention, entity) match of lexical linking, with what its rank was decided on."""

    mention: str
    entity: str
    start: int  # word index of the mention in the question
    words: int
    common_word: bool  # one lower-case word of the question, or a word of the KG's relation names
    same_case: bool  # the question writes it exactly as the label (or id) does

    def key(self) -> tuple:
        return (self.common_word, not self.same_case, -len(self.mention), self.start, self.entity)


def lookup(kg: KnowledgeGraph, mention: str, limit: int = 10) -> list[str]:
    """Entity ids for a mention: the id itself, else exact label, else case-insensitive label;
    each also with `_` for spaces, so "Julie London" finds the unlabelled id `julie_london`."""
    return _lookup(kg, mention, limit)[0]


def _lookup(kg: KnowledgeGraph, mention: str, limit: int = 10) -> tuple[list[str], bool]:
    """(entity ids, whether the match was case-exact)."""
    forms = list(dict.fromkeys([mention, mention.replace(" ", "_")]))
    for form in forms:
        if kg.has_entity(form):
            return [form], True
    for mode in ("exact", "casefold"):
        for form in forms:
            hits = kg.find_entities(form, mode=mode, limit=limit)
            if hits:
                return hits, mode == "exact"
    return [], False


def link_entities(
    kg: KnowledgeGraph,
    question: str,
    given: list[str] | None = None,
    max_ngram: int = 8,
    max_entities: int = 3,
    rel_words: frozenset[str] | None = None,
    given_labels: dict[str, str] | None = None,
) -> LinkResult:
    """`rel_words`: `relation_vocabulary(kg)`, computed once by a caller that links many questions.
    `given_labels`: `kg.labels(...)` of the given topics, fetched once for a batch (the KG's
    entities among them, with their labels)."""
    if given:
        if given_labels is None:
            given_labels = {e: kg.label(e) for e in given if kg.has_entity(e)}
        known = [e for e in given if e in given_labels]
        if known:
            return LinkResult(known, mentions=[given_labels[e] for e in known], source="given")
        # not KG ids: the dataset names its topics ("Douglas Adams" for Q42); look the names up
        return _link_mentions(kg, list(given), "given", max_entities)

    marked = BRACKETED.findall(question)
    if marked:
        return _link_mentions(kg, [m.strip() for m in marked], "marked", max_entities)
    return _link_lexical(kg, question, max_ngram, max_entities,
                         relation_vocabulary(kg) if rel_words is None else rel_words)


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
        what = "topic entity" if source == "given" else "marked entity"
        return LinkResult([], "unknown_entity", mentions, ambiguous, source,
                          error=f"{what} {mentions[0]!r} is not in the knowledge graph (as an id or a label)")
    return LinkResult(found[:max_entities], "ok", used[:max_entities], ambiguous, source)


def distinct_entities(candidates: list[Candidate]) -> list[Candidate]:
    """The best-ranked candidate of each entity, in rank order."""
    seen: dict[str, Candidate] = {}
    for c in candidates:
        seen.setdefault(c.entity, c)
    return list(seen.values())


def relation_vocabulary(kg: KnowledgeGraph) -> frozenset[str]:
    """The words of the KG's relation names (`directed_by` -> directed, by; `film.film.genre` ->
    film, genre), casefolded: in a question they name the relation, not the topic."""
    words = set()
    for r in kg.relation_types():
        local = re.split(r"[/#]", r.rstrip("/#"))[-1]
        local = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", local)
        words.update(w.casefold() for w in re.split(r"[\W_]+", local) if w)
    return frozenset(words)


def _link_lexical(kg, question, max_ngram, max_entities, rel_words) -> LinkResult:
    words = WORD.findall(question)
    cands: list[Candidate] = []
    ambiguous: dict[str, list[str]] = {}
    for n in range(min(max_ngram, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            gram = words[i:i + n]
            if all(w.strip(EDGE_PUNCT).casefold() in STOPWORDS for w in gram):
                continue
            text = " ".join(gram)
            # try the raw span first ("Paris, Texas."), then without sentence punctuation
            forms = [f for f in dict.fromkeys([text, text.strip(EDGE_PUNCT)]) if f]
            hits, same_case, mention = [], False, ""
            for f in forms:
                hits, same_case = _lookup(kg, f)
                if hits:
                    mention = f
                    break
            if not hits:
                continue
            if len(hits) > 1:
                ambiguous[mention] = hits
            # one plain lower-case word ("writer", not "1979" or "julie_london"), or a relation word
            common = n == 1 and ((mention.isalpha() and mention.islower()) or mention.casefold() in rel_words)
            cands += [Candidate(mention, e, i, n, common, same_case) for e in hits]
    if not cands:
        return LinkResult([], "no_topic_entity", [], {}, "lexical",
                          error="no knowledge-graph entity label found in the question")
    cands.sort(key=Candidate.key)
    found, used = [], []
    for c in cands:
        if c.entity not in found and len(found) < max_entities:
            found.append(c.entity)
            used.append(c.mention)
    return LinkResult(found, "ok", used, ambiguous, "lexical", candidates=cands)

"""Topic-entity linking: which KG entity does a question start from?

Three sources, tried in order:
1. entities the dataset already gives (`QAExample.topic_entities`), checked against the KG;
2. mentions marked `[...]` in the text, as MetaQA writes them;
3. otherwise every n-gram of the question that names a KG entity (its id, its label, or the
   same with `_` for spaces, case-insensitively) becomes a candidate, and the candidates are
   *ranked*, not taken longest-first: a number, year or date ("higher than 13", "in 1999") is a
   value for a condition, not a topic, even where a KG holds it as an entity (a bare TSV cell),
   unless nothing else in the question names one; a single word written in lower case ("which
   writer ...") is a common word even when some entity is labelled "Writer", and a word of the KG's
   relation names ("genre", "directed") is the question's relation, not its topic; among the rest,
   a match in the label's own case beats a case-insensitive one, and a longer mention beats a
   shorter one. A class ("which programming language is X written in": the object of `rdf:type`,
   Wikidata's P31, Freebase's type.object.type, `TYPE_RELATIONS`) names what the answer is, so it
   comes after every entity that is not one (it stays an anchor: a plan may intersect with it).

N-grams are of *units*: a word between spaces, or one character of a script written without
spaces (Chinese, Japanese, Thai, ...; Korean too, whose particles cling to the noun), so
"谁导演了卧虎藏龙" finds 卧虎藏龙 and "刘德华主演的Infernal Affairs" finds both names. A unit span
reads as the question writes it (no space between characters, one between words).
   `LinkResult.candidates` keeps the ranked list, so the RRA pipeline can let the retriever decide
   between the first few (prefer the entity from which a predicted relation path has instances).

Mentions as people type them: with a `FuzzyIndex` (RRA's linker builds one), a name written
without its article ("Iron Atlas" for "The Iron Atlas"), in other punctuation, or misspelt
("The Iron Atlass") is a candidate too, matched by rapidfuzz on normalised labels and ranked
below every exact match. A question may name several anchors ("which player in Real Madrid is
from Spain"): `LinkResult.entities` lists the entities of non-overlapping mentions, best first
(a mention inside a longer one, "Madrid" in "Real Madrid", is not a second anchor), and the
pipeline passes them all on as the prediction's `topic_entities`.

Nothing here raises for a question the KG cannot serve: the result carries a per-question status
(UNKNOWN_ENTITY when a named entity is not in the KG, NO_TOPIC_ENTITY when nothing matched),
and a mention that matches several entities is reported in `ambiguous` (the first, by the
backend's (label length, label) order, is used).

`TopicLinker` links a whole batch for RRA: the graph lookups of every question are made ahead in
a few batched queries (`LookAhead`), and `choose` lets the retriever pick between a question's
first few lexical candidates.
"""
from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np
from rapidfuzz import fuzz, process

from rra.graph.base import TYPE_RELATIONS, GraphError, KnowledgeGraph, UnknownEntityError, inverse
from rra.plans.plan import literal_value
from rra.records import AnswerSemantics, QAExample, Status
from rra.text.questions import BRACKETED
from rra.text.relations import local_name
from rra.text.spans import EDGE_PUNCT, UNSEGMENTED_CHAR, mention_forms, name_in_text, named_in_text, spans

log = logging.getLogger(__name__)

# An n-gram made only of these never counts as an entity mention on its own: KGs such as MetaQA
# hold entities like "The" or "It" that would otherwise match every question.
STOPWORDS = frozenset(
    """a an the of in on at to for by with from and or is are was were be been who whom whose what
    which when where why how did does do that this these those it its as his her their movie movies
    film films book books acted act direct directed wrote written starred star""".split()
)


# A class named in a question (the object of a TYPE_RELATIONS edge) is the answer's type, rarely
# where its path starts.
INCOMING_TYPE = frozenset(inverse(r) for r in TYPE_RELATIONS)  # how a class's relations list them


@dataclass
class LinkResult:
    entities: list[str]  # linked entity ids, best first (the pipeline walks from entities[0])
    status: Status = Status.OK  # OK, UNKNOWN_ENTITY, NO_TOPIC_ENTITY, GRAPH_ERROR
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
    score: float = 100.0  # how closely the mention spells the label (rapidfuzz ratio, 0-100)
    fuzzy: bool = False  # found by `FuzzyIndex` (article dropped, punctuation, typo), not as written
    value: bool = False  # the mention is a number, year or date: a condition's value before a topic
    type_node: bool = False  # the entity is a class (what some entity is `rdf:type` of): the answer's type

    def key(self) -> tuple:
        return (self.value, self.common_word, self.type_node, self.fuzzy, not self.same_case, -self.score,
                -len(self.mention), self.start, self.entity)

    def overlaps(self, other: "Candidate") -> bool:
        return self.start < other.start + other.words and other.start < self.start + self.words


ARTICLES = ("the ", "a ", "an ")
INITIAL = re.compile(r"\w\.")  # one letter and a full stop: a name's initial
_NOT_WORD = re.compile(r"[^\w\s]+")


def normalize_name(text: str) -> str:
    """A name as compared by fuzzy linking: case-folded, `_` and punctuation as spaces, no leading
    article ("The Iron Atlas!" -> "iron atlas")."""
    text = " ".join(_NOT_WORD.sub(" ", text.replace("_", " ")).casefold().split())
    for article in ARTICLES:
        if text.startswith(article) and len(text) > len(article):
            return text[len(article):]
    return text


def _trigrams(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The character trigrams of each text padded with two marks on each side (`len(text) + 2` of
    them, so every character is in three), as (trigram code, text index) arrays: a trigram's three
    code points packed into one int64, computed for all texts at once."""
    padded = [f"\x02\x02{t}\x03\x03" for t in texts]
    chars = np.frombuffer("".join(padded).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    lengths = np.array([len(p) for p in padded], dtype=np.int64)
    counts = lengths - 2
    starts = np.cumsum(lengths) - lengths
    owner = np.repeat(np.arange(len(texts), dtype=np.int32), counts)
    at = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(starts - (np.cumsum(counts) - counts), counts)
    return (chars[at] << 42) | (chars[at + 1] << 21) | chars[at + 2], owner


class FuzzyIndex:
    """Every entity's label, id and aliases, normalised, for names that no exact lookup finds: a dropped
    article or other punctuation (score 100 on the normalised form), else the closest labels by
    rapidfuzz's `ratio` at or above `min_score` (a typo: "iron atlass" ~ "iron atlas", 95).
    Built once from the graph (`all_names`, on any backend).

    A mention is scored against the names that can reach `min_score`, not against every name: a
    ratio of c allows at most D = (1 - c/100)(m + n) insertions and deletions between a mention of m
    characters and a name of n, each of which changes at most three of the mention's m + 2 padded
    trigrams, so such a name shares at least m + 2 - 3D of them and its length is within D of m
    (count filtering, Gravano et al. 2001). The answer is the one a scan of every name gives; on a
    KG of 730,000 names a misspelt question links in 0.1 s instead of 3.5 (bench_fuzzy_scale)."""

    def __init__(self, kg: KnowledgeGraph, min_score: float = 88.0, min_chars: int = 4, limit: int = 3):
        self.kg, self.min_score, self.min_chars, self.limit = kg, min_score, min_chars, limit
        self.names: dict[str, list[str]] | None = None  # read on the first match: most runs never need it

    def _build(self) -> None:
        names: dict[str, set[str]] = {}
        try:
            every = self.kg.all_names()  # a misspelt "L. Bergstrom" too: aliases, other languages
        except GraphError as e:
            # a store too large to list its names within the deadline, or one that cuts results: exact
            # and case-insensitive linking go on; every question asking again would cost it the time-out
            log.warning("fuzzy linking is off for this run: the KG's names could not be read (%s: %s)",
                        type(e).__name__, e)
            every = {}
        for node, forms in every.items():
            for name in {normalize_name(f) for f in [*forms, node]}:
                if len(name) >= self.min_chars:
                    names.setdefault(name, set()).add(node)
        # sorted: ties (names of equal score) fall the same way whatever order a backend lists them in
        self.names = {k: sorted(names[k]) for k in sorted(names)}
        self.keys = list(self.names)
        self.lengths = np.array([len(k) for k in self.keys], dtype=np.int32)
        # postings: the names holding each trigram (once each), grouped by trigram code
        codes, owner = _trigrams(self.keys)
        order = np.lexsort((owner, codes))
        codes, owner = codes[order], owner[order]
        first = np.ones(len(codes), dtype=bool)
        first[1:] = (codes[1:] != codes[:-1]) | (owner[1:] != owner[:-1])
        codes, self.owner = codes[first], owner[first]
        self.grams, starts = np.unique(codes, return_index=True)
        self.starts = np.append(starts, len(codes))

    def _reachable(self, name: str) -> list[str]:
        """The names that can score `min_score` against `name` (see the class), in index order."""
        a = 1.0 - self.min_score / 100.0
        if a >= 1.0 / 3.0:  # a loose cut-off: the trigram bound says nothing; score them all
            return self.keys
        m = len(name)
        longest = math.floor(m * (1 + a) / (1 - a) + 1e-6)
        shortest = math.ceil(m * (1 - a) / (1 + a) - 1e-6)
        edits = math.floor(a * (m + longest) + 1e-6)
        grams = _trigrams([name])[0]
        distinct = np.unique(grams)
        # shared distinct trigrams: the shared count less the mention's repeated ones
        need = len(grams) - 3 * edits - (len(grams) - len(distinct))
        in_range = (self.lengths >= shortest) & (self.lengths <= longest)
        if need > 0:
            at = np.searchsorted(self.grams, distinct)
            known = at < len(self.grams)
            at = at[known][self.grams[at[known]] == distinct[known]]
            if not len(at):
                return []
            found = np.concatenate([self.owner[self.starts[i]:self.starts[i + 1]] for i in at])
            in_range &= np.bincount(found, minlength=len(self.keys)) >= need
        return [self.keys[i] for i in np.flatnonzero(in_range)]

    def match(self, mention: str) -> list[tuple[str, float]]:
        """(entity, score) for a mention, best first; [] when nothing is close enough."""
        name = normalize_name(mention)
        if len(name) < self.min_chars:
            return []
        if self.names is None:
            self._build()
        if name in self.names:
            return [(e, 100.0) for e in self.names[name]]
        hits = process.extract(name, self._reachable(name), scorer=fuzz.ratio, score_cutoff=self.min_score,
                               limit=self.limit)
        return [(e, float(score)) for key, score, _ in hits for e in self.names[key]]


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
    max_ngram: int = 16,
    max_entities: int = 3,
    rel_words: frozenset[str] | None = None,
    given_labels: dict[str, str] | None = None,
    fuzzy: FuzzyIndex | None = None,
    char_ngrams: bool = True,
    max_chars: int = 16,
) -> LinkResult:
    """`rel_words`: `relation_vocabulary(kg)`, computed once by a caller that links many questions.
    `given_labels`: `kg.labels(...)` of the given topics, fetched once for a batch (the KG's
    entities among them, with their labels). `fuzzy`: also link misspelt and partial names.
    `char_ngrams`: n-grams of single characters in scripts without spaces (False: of
    space-separated words only, which finds nothing inside a Chinese question); `max_chars` such
    characters at most in one mention."""
    if given:
        if given_labels is None:
            given_labels = {e: kg.label(e) for e in given if kg.has_entity(e)}
        known = [e for e in given if e in given_labels]
        if known:
            chars = max_chars if char_ngrams else 0
            return LinkResult(known, mentions=[name_in_text(kg, question, e, given_labels[e], max_ngram, chars)
                                               for e in known], source="given")
        # not KG ids: the dataset names its topics ("Douglas Adams" for Q42); look the names up
        return _link_mentions(kg, list(given), "given", max_entities, fuzzy)

    marked = BRACKETED.findall(question)
    if marked:
        return _link_mentions(kg, [m.strip() for m in marked], "marked", max_entities, fuzzy)
    return _link_lexical(kg, question, max_ngram, max_entities,
                         relation_vocabulary(kg) if rel_words is None else rel_words, fuzzy,
                         max_chars if char_ngrams else 0)


def _link_mentions(kg, mentions, source, max_entities, fuzzy: FuzzyIndex | None = None) -> LinkResult:
    found, used, ambiguous = [], [], {}
    for m in mentions:
        hits = lookup(kg, m) or ([e for e, _ in fuzzy.match(m)] if fuzzy else [])
        if len(hits) > 1:
            ambiguous[m] = hits
        if hits and hits[0] not in found:
            found.append(hits[0])
            used.append(m)
    if not found:
        what = "topic entity" if source == "given" else "marked entity"
        return LinkResult([], Status.UNKNOWN_ENTITY, mentions, ambiguous, source,
                          error=f"{what} {mentions[0]!r} is not in the knowledge graph (as an id or a label)")
    return LinkResult(found[:max_entities], Status.OK, used[:max_entities], ambiguous, source)


def distinct_entities(candidates: list[Candidate]) -> list[Candidate]:
    """The best-ranked candidate of each entity, in rank order."""
    seen: dict[str, Candidate] = {}
    for c in candidates:
        seen.setdefault(c.entity, c)
    return list(seen.values())


def relation_vocabulary(kg: KnowledgeGraph) -> frozenset[str]:
    """The words of the KG's relation names (`directed_by` -> directed, by; `film.film.genre` ->
    film, genre), casefolded: in a question they name the relation, not the topic. Relations the KG
    names by label (`wdt:P569`, named "date of birth" by Wikidata's property entity) add the label's
    words and the whole label, so "date of birth" in a question is not taken for an entity so named
    (the property entity itself, where the KG holds it)."""
    words = set()
    relations = kg.relation_types()
    for r in relations:
        local = local_name(r)
        local = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", local)
        words.update(w.casefold() for w in re.split(r"[\W_]+", local) if w)
    for name in kg.relation_labels(relations).values():
        name = " ".join(name.casefold().split())
        words.add(name)
        words.update(w for w in re.split(r"[\W_]+", name) if w)
    return frozenset(words)


def _is_value(mention: str) -> bool:
    """A number, year or date ("13", "1999", "2017-05-01"): what a condition compares with."""
    return any(c.isdigit() for c in mention) and literal_value(mention) is not None


def _link_lexical(kg, question, max_ngram, max_entities, rel_words, fuzzy: FuzzyIndex | None = None,
                  max_chars: int = 16) -> LinkResult:
    cands: list[Candidate] = []
    ambiguous: dict[str, list[str]] = {}
    grams = spans(question, max_ngram, max_chars)
    for i, n, text, gram in grams:
        if all(w.strip(EDGE_PUNCT).casefold() in STOPWORDS for w in gram):
            continue
        hits, same_case, mention = [], False, ""
        for f in mention_forms(text):
            hits, same_case = _lookup(kg, f)
            if hits:
                mention = f
                break
        if not hits:
            continue
        if len(hits) > 1:
            ambiguous[mention] = hits
        # one plain lower-case word ("writer", not "1979" or "julie_london"), one character of a
        # script without spaces ("的"), or a word of the relation names
        common = ((n == 1 and ((mention.isalpha() and mention.islower()) or bool(UNSEGMENTED_CHAR.fullmatch(mention))))
                  or mention.casefold() in rel_words)
        value = _is_value(mention)
        cands += [Candidate(mention, e, i, n, common, same_case, value=value) for e in hits]
    if fuzzy is not None:
        cands += _fuzzy_candidates(grams, cands, fuzzy, rel_words)
    if not cands:
        return LinkResult([], Status.NO_TOPIC_ENTITY, [], {}, "lexical",
                          error="no knowledge-graph entity label found in the question")
    cands = _mark_classes(kg, cands)
    cands.sort(key=Candidate.key)
    chosen = anchors(cands, max_entities)
    return LinkResult([c.entity for c in chosen], Status.OK, [c.mention for c in chosen], ambiguous, "lexical",
                      candidates=cands)


def _mark_classes(kg, cands: list[Candidate]) -> list[Candidate]:
    """The candidates with `type_node` set on classes: entities with an incoming type relation. Asked
    (one batched call) only when the question names more than one entity, so the order matters."""
    entities = sorted({c.entity for c in cands if not c.value})
    if len(entities) < 2 or getattr(kg, "recording", False):
        return cands
    rels = kg.relations_batch(entities)
    classes = {e for e in entities if INCOMING_TYPE.intersection(rels.get(e, ()))}
    return [replace(c, type_node=True) if c.entity in classes else c for c in cands]


def _fuzzy_candidates(grams: list[tuple[int, int, str, list[str]]], exact: list[Candidate], fuzzy: FuzzyIndex,
                      rel_words: frozenset[str]) -> list[Candidate]:
    """Fuzzy matches of the word n-grams that no exact name covers (an exact match of a name is
    never second-guessed). A name neither starts (after an article) nor ends with a common or
    relation word, so such n-grams are skipped: on MetaQA's 3-hop questions that is most of them,
    and each lookup scans every name of the KG. Spans holding characters of a script without
    spaces are left to the exact lookups (a wrong character is another word there, not a typo)."""
    taken = [c for c in exact if not c.common_word]

    def common(word: str) -> bool:
        if INITIAL.fullmatch(word):  # "H." begins "H. Hoffman", though "h" is a word of "h-index"
            return False
        w = word.strip(EDGE_PUNCT).casefold()
        return not w or w in STOPWORDS or w in rel_words

    out = []
    for i, n, text, gram in grams:
        span = Candidate("", "", i, n, False, False)
        if any(span.overlaps(c) for c in taken) or any(UNSEGMENTED_CHAR.search(w) for w in gram):
            continue
        first = 1 if n > 1 and gram[0].strip(EDGE_PUNCT).casefold() in ("the", "a", "an") else 0
        if common(gram[first]) or common(gram[-1]):
            continue
        tried: set[str] = set()
        # as written, then without a possessive ("S. McAlilster's" as "S. McAlilster"); the forms
        # that differ only in punctuation normalise alike, and each lookup scans every name
        for mention in dict.fromkeys(f.strip(EDGE_PUNCT) for f in mention_forms(text)):
            if normalize_name(mention) in tried:
                continue
            tried.add(normalize_name(mention))
            hits = fuzzy.match(mention)
            if hits:
                out += [Candidate(mention, entity, i, n, False, False, score, fuzzy=True, value=_is_value(mention))
                        for entity, score in hits]
                break
    return out


def anchors(candidates: list[Candidate], limit: int = 3) -> list[Candidate]:
    """The anchors of a question: ranked candidates whose mentions do not overlap, one per entity,
    at most `limit` ("which player in Real Madrid is from Spain" -> Real Madrid, Spain; not also
    Madrid). A common word or a value ("higher than 13") is an anchor only when nothing better is
    (the sole match of a question): a value is what a condition compares with."""
    chosen: list[Candidate] = []
    for c in candidates:
        if len(chosen) >= limit:
            break
        if (c.common_word or c.value) and chosen:
            continue
        if any(c.entity == d.entity or c.overlaps(d) for d in chosen):
            continue
        chosen.append(c)
    return chosen


# --- a batch of questions, for RRA ------------------------------------------------------------
# A question linked lexically to several candidate topics: each candidate's best path score is
# weighed by this factor per step down the lexical ranking (1st x1, 2nd x0.5, 3rd x0.25).
RANK_DISCOUNT = 0.5
# Instances of a candidate's path looked at to see whether it reaches an answer from that topic.
CHECK_INSTANCES = 100


def link_training_topics(kg: KnowledgeGraph, examples: Sequence[QAExample], max_hops: int = 3,
                         semantics: AnswerSemantics | None = None, adjacency=None) -> dict[str, int]:
    """Topic entities for training questions that give none ("who directed The Glass Atlas" with its
    answers only), linked from their text as answering links them: of the linker's candidates, best
    first, the first from which a path of at most `max_hops` relations reaches one of the question's
    answers (the KG-derived supervision's own search), else the linker's first. `datamodule.link_topics`;
    train.py hands it to the datamodule, which hands it the graph's adjacency it shares with the
    other labellers (rra.data.supervision.adjacency_once; else built here). Returns how many questions were linked to a topic with such a
    path, linked without one, or found no entity in their text."""
    from rra.data.supervision import SupervisionConfig, first_reaching, resolve_adjacency, resolve_gold_answers

    todo = [ex for ex in examples if not ex.topic_entities]
    counts = {"linked": 0, "no_path": 0, "not_found": 0}
    if not todo:
        return counts
    links = TopicLinker(kg, use_gold_topic=False).link_batch(todo)
    resolve_gold_answers(kg, todo)
    adj = resolve_adjacency(kg, adjacency)
    config = SupervisionConfig(max_hops=max_hops, semantics=semantics or AnswerSemantics())
    for ex, link in zip(todo, links):
        options = list(dict.fromkeys([*link.entities, *(c.entity for c in link.candidates if not c.value)]))[:8]
        if not options:
            counts["not_found"] += 1
            continue
        hit = first_reaching(adj, options, ex, config)
        first = hit or options[0]
        ex.topic_entities = [first] + [e for e in link.entities if e != first]
        ex.extra["topic_source"] = "linked"
        counts["linked" if hit else "no_path"] += 1
    return counts


class TopicLinker:
    """The topic entities of a batch of questions (RRA's linking): the given ones (ids or names)
    with `use_gold_topic`, else linked from the text by `link_entities`, the KG lookups of the whole
    batch made ahead (`LookAhead`); a question linked to several candidates lets the retriever
    choose between them (`choose`)."""

    def __init__(self, kg: KnowledgeGraph, use_gold_topic: bool = True, max_ngram: int = 16,
                 link_candidates: int = 3, fuzzy: bool = True, char_ngrams: bool = True):
        self.kg, self.use_gold_topic, self.char_ngrams = kg, use_gold_topic, char_ngrams
        self.max_ngram, self.link_candidates = max_ngram, link_candidates
        self._rel_words: frozenset[str] | None = None
        self.fuzzy = fuzzy  # misspelt / partial names (FuzzyIndex), built on first need
        self._fuzzy_index: FuzzyIndex | None = None

    def link_batch(self, examples: Sequence[QAExample]) -> list[LinkResult]:
        """One `LinkResult` per question, in order."""
        return self._link_all(examples, self._given_labels(examples))

    def _given_labels(self, examples: Sequence[QAExample]) -> dict[str, str] | None:
        """Labels of every given topic of the batch in one call (only the KG's entities come
        back); None when topics are linked from the text or the call failed (then per question)."""
        if not self.use_gold_topic:
            return None
        try:
            return self.kg.labels(sorted({e for ex in examples for e in ex.topic_entities}))
        except GraphError:
            return None

    def _link_all(self, examples: Sequence[QAExample], given_labels: dict[str, str] | None) -> list[LinkResult]:
        """Link every question of the batch. Questions linked from their text ask the graph for
        every n-gram (id, exact and case-insensitive label): a first pass only records those
        lookups, they are answered in batches (a few queries on a SPARQL store instead of ~200
        per question), and the second pass links from the answers, with the same result."""
        if self.use_gold_topic and given_labels is not None and all(
                any(e in given_labels for e in ex.topic_entities)
                and named_in_text(ex.question, [given_labels[e] for e in ex.topic_entities if e in given_labels])
                for ex in examples):
            return [self._link(ex, given_labels) for ex in examples]  # KG ids, named by their labels: no lookup
        ahead = LookAhead(self.kg)
        try:
            for ex in examples:
                self._link(ex, given_labels, ahead)
            ahead.resolve()
        except GraphError:  # then question by question (each failure costs its own question)
            ahead = None
        return [self._link(ex, given_labels, ahead or self.kg) for ex in examples]

    def _link(self, ex: QAExample, given_labels: dict[str, str] | None = None, kg=None) -> LinkResult:
        """The question's topic entity; a graph failure costs this question, not the batch."""
        try:
            given = ex.topic_entities if self.use_gold_topic else None
            return link_entities(kg or self.kg, ex.question, given, self.max_ngram, rel_words=self._relation_words(),
                                 given_labels=given_labels, fuzzy=self._fuzzy(kg), char_ngrams=self.char_ngrams)
        except GraphError as err:
            return LinkResult([], status=Status.GRAPH_ERROR, error=f"linking: {type(err).__name__}: {err}")

    def _fuzzy(self, kg) -> FuzzyIndex | None:
        """The fuzzy index, once lookups are real (not while LookAhead records them: the exact
        matches decide which n-grams need it, and those are known on the second pass only)."""
        if not self.fuzzy or getattr(kg, "recording", False):
            return None
        if self._fuzzy_index is None:
            self._fuzzy_index = FuzzyIndex(self.kg)  # reads the graph on its first match only
        return self._fuzzy_index

    def _relation_words(self) -> frozenset[str]:
        """The KG's relation words, for linking questions from their text (read once)."""
        if self._rel_words is None:
            self._rel_words = relation_vocabulary(self.kg)
        return self._rel_words

    def choose(self, examples: Sequence[QAExample], links: list[LinkResult], todo: list[int],
               predict: Callable[[list[str], list[str | None]], list[list]], semantics: AnswerSemantics
               ) -> dict[int, list]:
        """Candidate paths for each question `i` of `todo`, from its linked topic, by
        `predict(texts, topics)` (the retriever: candidate paths per question text, best first).
        A question linked lexically to several candidate topics asks the retriever once per
        candidate (the first `link_candidates` entities) and keeps the one whose best predicted
        path has an answer instance from it (under `semantics`), by path score times
        RANK_DISCOUNT per step down the lexical ranking; `links[i]` is reordered to match.
        A class the question names ("the capital of the country where [Acme Ltd.] is based") is an
        option only where nothing else is: from the class, every instance's path reaches answers, so
        it would outscore the entity the question is about."""
        queries: list[tuple[int, Candidate | None]] = []
        for i in todo:
            linked = distinct_entities(links[i].candidates)
            options = ([c for c in linked if not c.type_node] or linked)[: self.link_candidates]
            queries += [(i, c) for c in options] if len(options) > 1 else [(i, None)]
        texts = [marked(examples[i].question, links[i], c.mention if c else None) for i, c in queries]
        found: dict[int, list] = {}
        topics = [c.entity if c else (links[i].entities[0] if links[i].entities else None) for i, c in queries]
        for (i, c), paths in zip(queries, predict(texts, topics)):
            found.setdefault(i, []).append((c, paths))
        many = [(c.entity, paths) for options in found.values() if len(options) > 1 for c, paths in options]
        scores = iter(self._instantiated_scores(many, semantics))
        out = {}
        for i, options in found.items():
            if len(options) > 1:
                score = [RANK_DISCOUNT ** k * next(scores) for k in range(len(options))]
                k = max(range(len(options)), key=lambda j: (score[j], -j))
                links[i] = links[i].choose(options[k][0]) if k else links[i]
            else:
                k = 0
            out[i] = options[k][1]
        return out

    def _instantiated_scores(self, options: list[tuple[str, list]], semantics: AnswerSemantics) -> list[float]:
        """`_instantiated_score` of many (entity, paths) at once, in rounds: each option's next best
        path, all of a round in one `follow_paths_batch` call (one query on a SPARQL store); an
        option stops at its first path with an answer instance. On a graph failure, one by one."""
        order = [sorted(paths, key=lambda p: -float(p.score)) for _, paths in options]
        score: list[float | None] = [None] * len(options)
        step = [0] * len(options)
        while True:
            active = [k for k in range(len(options)) if score[k] is None and step[k] < len(order[k])]
            if not active:
                break
            starts: dict[tuple[str, ...], list[str]] = {}
            for k in active:
                starts.setdefault(tuple(order[k][step[k]].path), []).append(options[k][0])
            try:
                requests = [(e, list(p)) for p, e in starts.items()]
                got = dict(zip(starts, self.kg.follow_paths_batch(requests, CHECK_INSTANCES)))
            except GraphError:  # each option alone, as before
                return [self._instantiated_score(e, paths, semantics) for e, paths in options]
            for k in active:
                entity, p = options[k][0], order[k][step[k]]
                walks = got[tuple(p.path)].get(entity, [])
                if any(semantics.keeps(w.entities, entity) for w in walks):
                    score[k] = float(p.score)
                step[k] += 1
        return [s if s is not None else 0.0 for s in score]

    def _instantiated_score(self, entity: str, paths: list, semantics: AnswerSemantics) -> float:
        """The score of the best predicted path with an answer instance from `entity` (0 if none)."""
        for p in sorted(paths, key=lambda p: -float(p.score)):
            try:
                walks = self.kg.follow_path(entity, list(p.path), limit=CHECK_INSTANCES)
            except (GraphError, UnknownEntityError):  # a graph failure here only costs the linking choice
                return 0.0
            if any(semantics.keeps(w.entities, entity) for w in walks):
                return float(p.score)
        return 0.0


class LookAhead:
    """The graph, with `has_entity` and `find_entities` answered from lookups made in batches.
    Recording (before `resolve`), an unknown lookup is noted and answered False / []; after it,
    lookups are answered from the batch results, and anything not asked ahead goes to the graph."""

    def __init__(self, kg: KnowledgeGraph):
        self.kg, self.recording = kg, True
        self._exists: dict[str, bool] = {}
        self._found: dict[tuple, list[str]] = {}
        self._ask_exists: set[str] = set()
        self._ask_found: dict[tuple[str, int], set[str]] = {}

    def has_entity(self, entity: str) -> bool:
        if entity in self._exists:
            return self._exists[entity]
        if self.recording:
            self._ask_exists.add(entity)
            return False
        return self.kg.has_entity(entity)

    def find_entities(self, text: str, mode: str = "exact", limit: int = 10) -> list[str]:
        key = (text, mode, limit)
        if key in self._found:
            return list(self._found[key])
        if self.recording:
            self._ask_found.setdefault((mode, limit), set()).add(text)
            return []
        return self.kg.find_entities(text, mode, limit)

    def resolve(self) -> None:
        """Answer what was recorded: one `labels` call for the ids (only entities come back) and
        one batched lookup per match mode."""
        if self._ask_exists:
            asked = sorted(self._ask_exists)
            known = self.kg.labels(asked)
            self._exists.update({e: e in known for e in asked})
        for (mode, limit), texts in self._ask_found.items():
            for text, hits in self.kg.find_entities_batch(sorted(texts), mode, limit).items():
                self._found[(text, mode, limit)] = hits
        self._ask_exists, self._ask_found, self.recording = set(), {}, False

    def __getattr__(self, name):
        return getattr(self.kg, name)


def link_anchors(link, limit: int = 3, classes: bool = True) -> tuple[list[str], list[str]]:
    """(anchor ids, their mentions): the linked entities, best first, without those whose mention
    is a literal ("1990" names a year entity, but in a plan it is the comparison's value) and, with
    `classes=False`, without classes ("what did researchers of U present at C": `Person` names the
    answer's kind, and a plan anchored on it intersects with every person; a question's given
    topics, which plans are trained on, never hold one), unless nothing else is linked."""
    pairs = list(dict.fromkeys(zip(link.entities, link.mentions or link.entities)))
    kinds = {c.entity for c in link.candidates if c.type_node} if not classes else set()
    kept = [(e, m) for e, m in pairs if literal_value(m) is None and e not in kinds] or pairs[:1]
    kept = kept[:limit]
    return [e for e, _ in kept], [m for _, m in kept]


def marked(question: str, link: LinkResult, mention: str | None = None) -> str:
    """The question with its topic mention (default: the link's first) in `[...]` (unchanged if
    already marked or not found)."""
    if BRACKETED.search(question) or not (mention or link.mentions):
        return question
    m = mention or link.mentions[0]
    i = question.casefold().find(m.casefold())
    return question if i < 0 else f"{question[:i]}[{question[i:i + len(m)]}]{question[i + len(m):]}"

"""Relation-path supervision from the KG itself: no dataset-specific label files needed.

For each question we enumerate the relation paths of length <= H from its (first) topic entity,
in both directions (`^r` walks r backwards), and score each path by the answer-F1 of its end-entity
set against the gold answers. The best path is the training target, its length the hop label.
An answer given by a name that several nodes share (a film and a band both labelled "The Burning
Compass") is one answer, which a path answers by reaching any of those nodes, as scoring reads it.
A question that states its hop count (`QAExample.hops`) only gets paths of exactly that length:
on KGs with inverse shortcuts a shorter path often reaches the same answers, and the question set
knows better.

What a path's end set is follows the dataset's `AnswerSemantics` (rra.records). The general
rule: every entity a walk ends at, the topic included ("the spouse of X's spouse" is X). MetaQA's
rule (`topic_can_be_answer=False, revisit_topic=False`): the topic is removed from every entity set
after the start, so "films by the director of [X]" are the *other* films.

Ties are broken deterministically: higher F1, then shorter path, then the relation names in
lexicographic order. On each question `label_examples` sets:
    ex.relation_path              the best path (None when no path reaches any answer)
    ex.extra["hop_label"]         its length (None when none)
    ex.extra["path_candidates"]   the top-k paths as {"path", "f1", "precision", "recall", "n_end"}
    ex.gold_path                  the dataset's own path, kept as it was; if the example came with a
                                  relation_path but no gold_path, that path is kept here first.
    ex.extra["no_path_reason"]    why there is none: topic not in KG / no answer in KG / no path
The report counts the same per dataset hop set, reasons included.

Speed. Questions are grouped by topic entity so each topic's paths are enumerated once. Sets are
expanded relation-wise over a relation-major adjacency (one C-level set.update per relation and
frontier). Exact prunes (they never change a label): the last hop only walks relations that can
arrive at one of the group's gold answers, and skips a frontier that has no edge into them; a
relation is walked only if the KG's schema lets a useful relation follow it. One cap (this one can
drop paths): a set larger than `max_frontier` entities is scored but not extended. Such sets only
arise through hub nodes (a language, a genre, a year), and longer paths through them end in sets so
large that their F1 is near zero. On MetaQA the largest intermediate set of a gold 3-hop path is
219 entities; the default cap is 500.
Labels are cached on disk, keyed by the KG's stats, the question set, H and the other settings.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from rra.graph.base import KnowledgeGraph, inverse
from rra.records import AnswerSemantics, QAExample

# Bump when the labelling semantics change, so old cache files stop matching.
SUPERVISION_VERSION = 4  # 3: answers resolved to KG nodes (values by value), canonical literal ids;
#                         4: under one_hop, a walk goes on from a self-loop's far end

# Why a question got no path (SupervisionReport.reasons, ex.extra["no_path_reason"]).
TOPIC_MISSING = "topic not in KG"
NO_TOPIC = "no topic entity given"  # the question file names none (answering links it; training cannot)
ANSWER_MISSING = "no answer in KG"
NO_PATH = "no path within max_hops"
NO_PATH_OF_LENGTH = "no path of the stated hop count"

@dataclass
class SupervisionConfig:
    max_hops: int = 3
    max_frontier: int = 500  # sets larger than this are scored but not extended (hub nodes)
    top_k: int = 10  # ranked candidate paths kept per question
    semantics: AnswerSemantics = field(default_factory=AnswerSemantics)
    exact_hops: bool = True  # a question with `hops` set only gets paths of that length


@dataclass
class SupervisionReport:
    n: int = 0
    covered: int = 0  # questions with at least one path reaching a gold answer
    exact: int = 0  # questions whose best path has F1 = 1
    topic_missing: int = 0  # no topic entity, or not in the KG
    reasons: dict = field(default_factory=dict)  # why uncovered questions got no path -> count
    hop_label_counts: dict = field(default_factory=dict)  # hop label -> count ("none" for uncovered)
    per_hop: dict = field(default_factory=dict)  # dataset hop count -> same figures for that subset
    gold_known: int = 0  # questions with a dataset gold path
    gold_agree: int = 0  # ... whose best KG path equals it
    gold_hop_agree: int = 0  # ... whose hop label equals its length
    gold_in_top_k: int = 0  # ... whose gold path is among the kept candidates
    gold_best_f1: int = 0  # ... whose gold path scores the best F1 (a tie lost to a shorter path counts)
    seconds: float = 0.0
    cache_hit: bool = False
    cache_file: str | None = None

    @property
    def coverage(self) -> float:
        return self.covered / self.n if self.n else 0.0

    @property
    def gold_agreement(self) -> float:
        return self.gold_agree / self.gold_known if self.gold_known else 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["coverage"] = self.coverage
        d["gold_agreement"] = self.gold_agreement
        return d


# -- adjacency ------------------------------------------------------------------------------
class _LazyNeighbours(dict):
    """entity -> neighbours over one relation, fetched through the KnowledgeGraph protocol on
    first use: for backends (SPARQL) that cannot hand over the whole graph. Slow but general."""

    def __init__(self, kg: KnowledgeGraph, relation: str):
        super().__init__()
        self.kg, self.relation = kg, relation

    def get(self, entity, default=None):
        if not dict.__contains__(self, entity):
            self[entity] = tuple(self.kg.neighbors(entity, self.relation)) if self.kg.has_entity(entity) else ()
        return self[entity] or default

    def __contains__(self, entity) -> bool:
        return bool(self.get(entity))


@dataclass
class Adjacency:
    """Relation-major adjacency: `by_relation[r][e]` = entities reached from e over r (`^r`
    included). Relation-major so one hop of a whole entity set over r is a single C-level
    `set.update(*map(by_relation[r].get, frontier))`."""

    by_relation: dict[str, dict[str, tuple[str, ...]]]
    entities: set[str] | None = None  # None: ask the KG (lazy backends)
    kg: object = None
    _follows: dict | None = field(default=None, repr=False)

    def has(self, entity: str) -> bool:
        return entity in self.entities if self.entities is not None else self.kg.has_entity(entity)

    def relations_at(self, entity: str) -> list[str]:
        return [r for r, m in self.by_relation.items() if entity in m]

    def follows(self) -> dict[str, set[str]]:
        """r -> the relations that can be walked right after r (some entity reached by r has
        them): a schema-level filter that skips relations that cannot continue a path."""
        if self._follows is None:
            rels = list(self.by_relation)
            if self.entities is None:  # lazy backend: no schema at hand, allow everything
                self._follows = {r: set(rels) for r in rels}
            else:  # one pass over the edges: the relations at each entity, then their union where r arrives
                at: dict[str, set[str]] = defaultdict(set)
                for r2, m in self.by_relation.items():
                    for e in m:
                        at[e].add(r2)
                empty: set[str] = set()
                self._follows = {r: empty.union(*(at[x] for x in self.by_relation.get(inverse(r), {})))
                                 for r in rels}
        return self._follows


def build_adjacency(kg) -> Adjacency:
    """Read the whole graph in one pass (`all_triples`); a graph object that only answers
    neighbour queries gets its neighbours fetched lazily instead."""
    if hasattr(kg, "all_triples"):
        edges: Iterable = (t.as_tuple() for t in kg.all_triples())
    else:
        rels = [r for base in kg.relation_types() for r in (base, inverse(base))]
        return Adjacency({r: _LazyNeighbours(kg, r) for r in rels}, None, kg)
    lists: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    entities: set[str] = set()
    for h, r, t in edges:
        lists[r][h].append(t)
        lists["^" + r][t].append(h)
        entities.add(h)
        entities.add(t)
    by_relation = {r: {e: tuple(v) for e, v in m.items()} for r, m in sorted(lists.items())}
    return Adjacency(by_relation, entities, kg)


def adjacency_once(kg) -> Callable[[], Adjacency]:
    """A function giving `kg`'s adjacency, built on its first call and kept: the several labellers
    of one training setup (topics linked, paths and plans of each split) then read the graph once,
    not once each (five passes over a cold cache; on a KG of millions of triples each pass is
    most of a minute and a copy of the graph in memory)."""
    built: list[Adjacency] = []

    def get() -> Adjacency:
        if not built:
            built.append(build_adjacency(kg))
        return built[0]
    return get


def resolve_adjacency(kg, adjacency: Adjacency | Callable[[], Adjacency] | None) -> Adjacency:
    """`adjacency` as given (an Adjacency, or `adjacency_once`'s function), else built from `kg`."""
    if adjacency is None:
        return build_adjacency(kg)
    return adjacency if isinstance(adjacency, Adjacency) else adjacency()


def _expand(adj: Adjacency, frontier: set[str], only: set[str] | None) -> dict[str, set[str]]:
    """One hop from every entity of `frontier` over every relation (or only those in `only`):
    relation -> set of entities reached (non-empty sets only)."""
    buckets: dict[str, set[str]] = {}
    for r in adj.by_relation if only is None else sorted(only):
        m = adj.by_relation.get(r)
        if m is None:
            continue
        if len(frontier) == 1:
            nbrs = m.get(next(iter(frontier)))
            if nbrs:
                buckets[r] = set(nbrs)
            continue
        reached: set[str] = set()
        reached.update(*filter(None, map(m.get, frontier)))
        if reached:
            buckets[r] = reached
    return buckets


def enumerate_paths(
    adj: Adjacency,
    topic: str,
    config: SupervisionConfig,
    answers: Iterable[str] | None = None,
) -> dict[tuple[str, ...], set[str]]:
    """End-entity set of every relation path (length 1..H) from `topic` that is not empty.
    With `answers`, only paths that can end in one of them are returned (the others are walked
    only as prefixes of longer paths); None returns every path."""
    answers = set(answers) if answers is not None else None
    sem = config.semantics
    end_relations = _end_relations(adj, answers) if answers is not None else None
    out: dict[tuple[str, ...], set[str]] = {}
    follows = adj.follows()
    useful = _useful_relations(adj, end_relations, config.max_hops)
    into_answers = _Preimages(adj, answers) if answers is not None else None
    level: list[tuple[tuple[str, ...], set[str]]] = [((), {topic})]
    for depth in range(1, config.max_hops + 1):
        last = depth == config.max_hops
        grown = []
        for prefix, frontier in level:
            if len(frontier) > config.max_frontier:
                continue
            rels = useful[depth] if not prefix else useful[depth] & follows[prefix[-1]]
            if last and into_answers is not None:  # skip last hops that cannot reach an answer
                rels = {r for r in rels if into_answers.may_reach(frontier, r)}
            for r, ends in _expand(adj, frontier, rels).items():
                path = prefix + (r,)
                scored = ends if sem.topic_answers(depth) else ends - {topic}
                if scored and (end_relations is None or r in end_relations):
                    out[path] = scored
                onward = ends if sem.passes_topic(depth) else ends - {topic}
                if onward and not last:
                    grown.append((path, onward))
        level = grown
    return out


class _Preimages:
    """For the last hop: the entities with an r-edge into the answers, per relation r, so a
    frontier that cannot reach an answer over r is skipped without building its end set.
    Built lazily; skipped (no pruning) when the answers are hubs and the preimage is too large."""

    LIMIT = 20_000

    def __init__(self, adj: Adjacency, answers: set[str]):
        self.adj, self.answers, self.cache = adj, answers, {}

    def may_reach(self, frontier: set[str], relation: str) -> bool:
        if relation not in self.cache:
            back = self.adj.by_relation.get(inverse(relation), {})
            lists = [n for n in map(back.get, self.answers) if n]
            pre = None
            if sum(map(len, lists)) <= self.LIMIT:
                pre = set()
                pre.update(*lists)
            self.cache[relation] = pre
        pre = self.cache[relation]
        return pre is None or not frontier.isdisjoint(pre)


def _useful_relations(adj: Adjacency, end_relations: set[str] | None, max_hops: int) -> dict[int, set[str]]:
    """depth -> relations worth walking at that depth: the last hop must arrive at an answer;
    an earlier hop must either do so or be followable by a relation useful one depth later."""
    follows = adj.follows()
    useful = {max_hops: set(follows) if end_relations is None else set(end_relations)}
    for depth in range(max_hops - 1, 0, -1):
        useful[depth] = useful[max_hops] | {r for r in follows if follows[r] & useful[depth + 1]}
    return useful


def score_paths(
    paths: dict[tuple[str, ...], set[str]], answers: Sequence, top_k: int | None = None
) -> list[dict]:
    """Paths whose end set holds a gold answer, best first: (-F1, length, relation names).
    `answers`: node ids, or per answer the nodes it names (`gold_groups`). An answer is hit when the
    end set holds one of its nodes (recall: answers hit / answers); precision is the share of the end
    set that is some answer's node. With one node per answer this is the F1 of the two sets."""
    groups = [tuple(a) if isinstance(a, (list, tuple)) else (a,) for a in answers]
    shared = any(len(g) > 1 for g in groups)
    nodes = {x for g in groups for x in g}
    scored = []
    for path, ends in paths.items():
        if shared:
            hits = sum(1 for g in groups if not ends.isdisjoint(g))
            matched = len(ends & nodes) if hits else 0
        else:
            hits = matched = sum(1 for (g,) in groups if g in ends)
        if hits:
            # 2PR / (P + R) with P = matched / |ends|, R = hits / |groups|, in integers until the
            # division: one node per answer gives 2 hits / (|ends| + |groups|) to the last bit
            f1 = 2.0 * matched * hits / (matched * len(groups) + hits * len(ends))
            scored.append((-f1, len(path), path, hits, matched, len(ends)))
    scored.sort()
    if top_k is not None:
        scored = scored[:top_k]
    return [
        {
            "path": list(path),
            "f1": -neg_f1,
            "precision": matched / n_end,
            "recall": hits / len(groups),
            "n_end": n_end,
        }
        for neg_f1, _, path, hits, matched, n_end in scored
    ]


def path_candidates(
    kg_or_adj, topic: str, answers: Sequence[str], config: SupervisionConfig | None = None
) -> list[dict]:
    """Ranked candidate paths for one question (convenience; `label_examples` is the fast bulk path)."""
    config = config or SupervisionConfig()
    adj = kg_or_adj if isinstance(kg_or_adj, Adjacency) else build_adjacency(kg_or_adj)
    if not adj.has(topic):
        return []
    return score_paths(enumerate_paths(adj, topic, config, answers), answers, config.top_k)


def _end_relations(adj: Adjacency, answers: Iterable[str]) -> set[str]:
    """Relations whose walk can arrive at one of `answers`: r arrives at g iff g has ^r (inverse)."""
    return {inverse(r) for r, m in adj.by_relation.items() for g in answers if g in m}


def compute_candidates(
    adj: Adjacency, examples: Sequence[QAExample], config: SupervisionConfig, progress: bool = False
) -> list[list[dict]]:
    """Ranked candidates per example (same order), grouping questions by topic entity."""
    from tqdm import tqdm

    groups: dict[str, list[int]] = defaultdict(list)
    result: list[list[dict]] = [[] for _ in examples]
    for i, ex in enumerate(examples):
        if ex.topic_entities and adj.has(ex.topic_entities[0]):
            groups[ex.topic_entities[0]].append(i)
    for topic, idx in tqdm(groups.items(), desc="supervision", unit="topic", disable=not progress):
        union = {a for i in idx for a in gold_nodes(examples[i])}
        paths = enumerate_paths(adj, topic, config, union)
        by_length: dict[int, dict] = defaultdict(dict)
        for path, ends in paths.items():
            by_length[len(path)][path] = ends
        for i in idx:
            hops = examples[i].hops if config.exact_hops else None
            result[i] = score_paths(paths if hops is None else by_length.get(hops, {}),
                                    gold_groups(examples[i]), config.top_k)
    return result


# -- gold answers as KG nodes -----------------------------------------------------------------
def resolve_gold_answers(kg, examples: Sequence[QAExample]) -> None:
    """Fill `ex.answer_ids` (the KG nodes each gold answer names) where the data left it empty, by
    the lookups scoring uses too (`rra.graph.answers.resolve_answers`): an answer given as a name or
    as a value written as text ("2017", "2017.0", `"2017"^^<...XMLSchema#gYear>`) supervises the
    paths that reach its node (`"2017"^^xsd:gYear`), instead of counting as "no answer in KG"."""
    from rra.graph.answers import resolve_answers

    todo = [ex for ex in examples if ex.answers and not ex.answer_ids]
    if not todo:
        return
    labels, ids = resolve_answers(kg, (a for ex in todo for a in ex.answers))
    for ex in todo:
        ex.answer_ids = [[a] if a in labels else list(ids.get(a, [])) for a in ex.answers]


def resolve_topic_names(kg, examples: Sequence[QAExample], config: SupervisionConfig | None = None,
                        adjacency: Adjacency | Callable[[], Adjacency] | None = None) -> dict[str, int]:
    """Topic entities a question file names instead of giving their ids ("Douglas Adams" for Q42, a
    spreadsheet's "Saint-Étienne-du-Lac"), replaced by the node that name finds with the lookups
    answering and scoring use (the id itself, else the exact label, else the label in any case). A
    name several entities share (a film and a band both "The Burning Compass"): with `config`, per
    question the first of them from which a path of the KG-derived supervision reaches one of its
    answers, else (or without `config`) the first match, as linking a given name does. A name that
    finds nothing stays, so supervision counts that question's topic as missing. Returns how many
    topics were read by name, how many of those names are shared, how many questions took another
    entity of a shared name than the first by its paths, and how many names were not found."""
    from rra.graph.answers import resolve_answers

    given = sorted({t for ex in examples for t in ex.topic_entities})
    counts = {"by_name": 0, "shared_name": 0, "chosen_by_path": 0, "not_found": 0}
    if not given:
        return counts
    labels, ids = resolve_answers(kg, given)
    found = {t: ids.get(t, [None])[0] for t in given if t not in labels}
    shared = {t: list(dict.fromkeys(ids[t])) for t in found if len(set(ids.get(t, ()))) > 1}
    for t, hit in found.items():
        counts["by_name" if hit else "not_found"] += 1
    counts["shared_name"] = len(shared)
    if not found:
        return counts
    asked = [ex for ex in examples if any(t in shared for t in ex.topic_entities)] if config is not None else []
    if asked:  # the answers of the questions a shared name is chosen for, in one batch of lookups
        resolve_gold_answers(kg, asked)
        adj = resolve_adjacency(kg, adjacency)
    for ex in examples:
        if not any(t in found for t in ex.topic_entities):
            continue
        picked = []
        for t in ex.topic_entities:
            node = found.get(t) or t
            if t in shared and asked:
                node = first_reaching(adj, shared[t], ex, config) or node
                counts["chosen_by_path"] += node != found[t]
            picked.append(node)
        ex.topic_entities = list(dict.fromkeys(picked))
    return counts


def first_reaching(adj: Adjacency, entities: Sequence[str], ex: QAExample, config: SupervisionConfig) -> str | None:
    """The first of `entities` from which a path of at most `config.max_hops` relations reaches one
    of the question's answers (resolved to nodes: `resolve_gold_answers`), or None."""
    answers = gold_groups(ex)
    return next((e for e in entities if path_candidates(adj, e, answers, config)), None)


def gold_groups(ex: QAExample) -> list:
    """Per gold answer the KG nodes it names: a node id where it names one (or the data gave ids), a
    tuple where a name several nodes share names them all; answers naming no node are left out,
    and an answer naming the same nodes as an earlier one is the same answer."""
    if not ex.answer_ids:
        return list(ex.answers)
    groups = (tuple(dict.fromkeys(ids)) for ids in ex.answer_ids if ids)
    return list(dict.fromkeys(g[0] if len(g) == 1 else g for g in groups))


def gold_nodes(ex: QAExample) -> list[str]:
    """The KG nodes of a question's gold answers: those its answers name (`answer_ids`), else the
    answers as given (KG ids)."""
    if ex.answer_ids:
        return list(dict.fromkeys(x for ids in ex.answer_ids for x in ids))
    return list(ex.answers)


# -- cache ----------------------------------------------------------------------------------
def default_cache_dir() -> Path:
    base = os.environ.get("RRA_CACHE_DIR") or Path.home() / ".cache" / "rra"
    return Path(base) / "supervision"


def cache_key(kg, examples: Sequence[QAExample], config: SupervisionConfig) -> str:
    stats = kg.stats()
    h = hashlib.sha256()
    header = {
        "version": SUPERVISION_VERSION,
        "kg": [stats.entities, stats.triples, sorted(stats.relations.items())],
        "config": asdict(config),
    }
    h.update(json.dumps(header, sort_keys=True).encode())
    for ex in examples:  # the question set: ids, topics, answers and stated hops, in order
        groups = gold_groups(ex)  # the nodes alone where each answer names one (the keys before groups)
        gold = gold_nodes(ex) if all(isinstance(g, str) for g in groups) else groups
        h.update(json.dumps([ex.qid, ex.topic_entities[:1], gold, ex.hops]).encode())
    return h.hexdigest()[:24]


def _read_cache(path: Path) -> list[list[dict]] | None:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError, EOFError):
        return None  # missing or damaged: recompute


def _write_cache(path: Path, candidates: list[list[dict]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=3) as f:
        json.dump(candidates, f, separators=(",", ":"))
    os.replace(tmp, path)  # atomic: a crashed run never leaves a half-written cache


# -- entry point ----------------------------------------------------------------------------
_DEFAULT = object()


def label_examples(
    kg,
    examples: Sequence[QAExample],
    config: SupervisionConfig | None = None,
    cache_dir: str | Path | None | object = _DEFAULT,
    adjacency: Adjacency | Callable[[], Adjacency] | None = None,
    progress: bool = False,
) -> SupervisionReport:
    """Label `examples` in place (see the module doc) and return the report.
    `cache_dir=None` disables the cache; by default it is ~/.cache/rra/supervision ($RRA_CACHE_DIR)."""
    config = config or SupervisionConfig()
    if getattr(kg, "per_question", False):  # one subgraph per question (rra.graph.subgraphs)
        return label_each(kg, examples, config, progress)
    start = time.perf_counter()
    resolve_gold_answers(kg, examples)
    report = SupervisionReport()
    candidates = None
    cache_file = None
    if cache_dir is not None:
        cache_dir = default_cache_dir() if cache_dir is _DEFAULT else Path(cache_dir)
        cache_file = cache_dir / f"labels-{cache_key(kg, examples, config)}.json.gz"
        report.cache_file = str(cache_file)
        candidates = _read_cache(cache_file)
        if candidates is not None and len(candidates) != len(examples):
            candidates = None
        report.cache_hit = candidates is not None
    has = None
    if candidates is None:
        adj = resolve_adjacency(kg, adjacency)
        has = adj.has
        candidates = compute_candidates(adj, examples, config, progress)
        if cache_file is not None:
            _write_cache(cache_file, candidates)
    reasons = no_path_reasons(has or kg.has_entity, examples, candidates, config)
    report.topic_missing = sum(r == TOPIC_MISSING for r in reasons)
    _apply(examples, candidates, report, reasons)
    report.seconds = time.perf_counter() - start
    return report


def label_each(kg, examples: Sequence[QAExample], config: SupervisionConfig,
               progress: bool = False) -> SupervisionReport:
    """`label_examples` for per-question graphs: each question labelled on its own subgraph
    (`kg.scope(example)`), not cached (building and walking one subgraph takes milliseconds)."""
    from tqdm import tqdm

    start = time.perf_counter()
    candidates: list[list[dict]] = []
    reasons: list[str | None] = []
    for ex in tqdm(examples, desc="supervision", unit="q", disable=not progress):
        with kg.scope(ex):
            adj = build_adjacency(kg)
            cands = compute_candidates(adj, [ex], config)
            reasons += no_path_reasons(adj.has, [ex], cands, config)
        candidates += cands
    report = SupervisionReport()
    report.topic_missing = sum(r == TOPIC_MISSING for r in reasons)
    _apply(examples, candidates, report, reasons)
    report.seconds = time.perf_counter() - start
    return report


def no_path_reasons(has_entity, examples: Sequence[QAExample], candidates: list[list[dict]],
                    config: SupervisionConfig) -> list[str | None]:
    """Per example, None when it has a path, else why not (checked only for those without one)."""
    out: list[str | None] = []
    for ex, cands in zip(examples, candidates):
        if cands:
            out.append(None)
        elif not ex.topic_entities:
            out.append(NO_TOPIC)
        elif not has_entity(ex.topic_entities[0]):
            out.append(TOPIC_MISSING)
        elif not any(has_entity(a) for a in gold_nodes(ex)):
            out.append(ANSWER_MISSING)
        elif config.exact_hops and ex.hops is not None:
            out.append(NO_PATH_OF_LENGTH)
        else:
            out.append(NO_PATH)
    return out


def _apply(examples: Sequence[QAExample], candidates: list[list[dict]], report: SupervisionReport,
           reasons: list[str | None]) -> None:
    per_hop: dict = defaultdict(lambda: {"n": 0, "covered": 0, "exact": 0, "hop_label_counts": Counter(),
                                         "reasons": Counter()})
    labels = Counter()
    for ex, cands, reason in zip(examples, candidates, reasons):
        if ex.relation_path is not None and ex.gold_path is None:
            ex.gold_path = list(ex.relation_path)
        best = cands[0]["path"] if cands else None
        ex.relation_path = list(best) if best else None
        ex.extra["hop_label"] = len(best) if best else None
        ex.extra["path_candidates"] = cands
        label = len(best) if best else "none"
        labels[label] += 1
        bucket = per_hop[ex.hops if ex.hops is not None else "unknown"]
        bucket["n"] += 1
        bucket["hop_label_counts"][label] += 1
        report.n += 1
        ex.extra.pop("no_path_reason", None)
        if reason:
            ex.extra["no_path_reason"] = reason
            bucket["reasons"][reason] += 1
            report.reasons[reason] = report.reasons.get(reason, 0) + 1
        if best:
            report.covered += 1
            bucket["covered"] += 1
            if cands[0]["f1"] == 1.0:
                report.exact += 1
                bucket["exact"] += 1
        gold = ex.gold_path
        if gold:
            report.gold_known += 1
            report.gold_agree += best == list(gold)
            report.gold_hop_agree += best is not None and len(best) == len(gold)
            in_top = [c for c in cands if c["path"] == list(gold)]
            report.gold_in_top_k += bool(in_top)
            report.gold_best_f1 += bool(in_top) and in_top[0]["f1"] == cands[0]["f1"]
    report.hop_label_counts = {str(k): v for k, v in sorted(labels.items(), key=str)}
    report.per_hop = {
        str(h): {
            "n": b["n"],
            "covered": b["covered"],
            "coverage": b["covered"] / b["n"],
            "exact": b["exact"],
            "hop_label_counts": {str(k): v for k, v in sorted(b["hop_label_counts"].items(), key=str)},
            "reasons": dict(b["reasons"].most_common()),
        }
        for h, b in sorted(per_hop.items(), key=lambda kv: str(kv[0]))
    }

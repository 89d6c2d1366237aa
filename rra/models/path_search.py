"""How a trained retriever finds relation paths: the graph-constrained search of the relation
scorer (and the paper's classifier's beam search over its hop count), for answering and for
validation's decoding. A mixin of rra.models.retriever.Retriever, as generation is of a language
model: the search reads the retriever's encoder, heads, caches and settings, and keeps none of its own.

The scorer's search (`_scorer_predict`): each step's candidates are the relations at the walked
prefix's frontier in the graph (rra.models.frontier), scored by name against the question and the
prefix (rra.models.relation_scorer.search_paths), so paths of every length compete in one beam;
`pretrained_reading` may re-read the found paths (rra.models.pretrained_reading).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import torch
from torch.nn import functional as F

from rra.models.encoder import load_encoder
from rra.models.frontier import Frontier, Transitions, both_directions
from rra.models.hop_classifier import HopClassifier
from rra.models.path_predictor import beam_search, path_phrase, step_text
from rra.models.relation_scorer import search_paths
from rra.text.relations import relation_phrase, without_direction


@dataclass
class PathPrediction:
    path: list[str]  # relations, inverse ones written `^r`
    score: float  # product of the step probabilities
    hop: int  # path length the search was run for
    hop_prob: float  # the hop classifier's probability of that length

    def to_dict(self) -> dict:
        return asdict(self)


class PathSearch:
    """`predict` and the searches behind it; see the module docstring."""

    def _search(self, questions: list[str], first_logits: torch.Tensor, lengths: list[int], beam: int,
                query_question: list[int] | None = None, batch_size: int = 256, cache: dict | None = None,
                allowed=None):
        """Beam search for query j over question `query_question[j]` (default j) with `lengths[j]` steps.
        `allowed(items)`: optional graph pruning over (question index, prefix) items."""
        qq = query_question if query_question is not None else list(range(len(lengths)))

        def score(items):
            texts = [step_text(questions[qq[j]], [self.relations[r] for r in prefix], self.sep) for j, prefix in items]
            return F.log_softmax(self.path_head(self.encode_unique(texts, batch_size, cache)).float(), -1)

        allow = (lambda items: allowed([(qq[j], prefix) for j, prefix in items])) if allowed else None
        first_logp = F.log_softmax(first_logits.float(), -1)[torch.tensor(qq, device=first_logits.device)]
        return beam_search(first_logp, lengths, beam, score, allow)

    def graph_pruner(self, kg, topics: Sequence[str | None], max_frontier: int | None = None):
        """The classifier's `allowed` for beam search: relation ids with an instance from where a
        prefix leads from question i's topic (rra.models.frontier; None: no pruning there)."""
        return Frontier(kg, topics, max_frontier or self.hparams.max_frontier).allowed_ids(self.rel_index)

    def relation_reader(self, relation_text=None):
        """How this scorer reads a relation: as it was trained, with what the relation leads to
        (`relation_kinds`: rra.text.relations.RelationText.with_kinds) or by its name alone."""
        if relation_text is None:
            return relation_phrase
        if self.hparams.get("relation_kinds", False) and hasattr(relation_text, "with_kinds"):
            return relation_text.with_kinds()
        return relation_text

    def _prefix_reader(self, text_of):
        """How a step text reads the relations already walked: with their direction mark, or without
        it where `prefix_directions` is false. A query whose prefix says "(reverse)" resembles every
        candidate that says it too, so a scorer that never saw a relation's reverse as a negative (a
        training frontier rarely holds it) chooses it after a reversed step wherever a wide frontier
        offers it (a film named after a year: `^release_year`). Without the mark, the prefix's names
        pull the same way on candidates of the same name, unless `datamodule.inverse_negatives`
        teaches direction too; together they were not better overall (docs/retriever.md).
        Candidates always keep their mark."""
        if self.hparams.get("prefix_directions", True):
            return text_of
        return lambda r: without_direction(text_of(r))

    def _relation_vectors(self, relations: Sequence[str], text_of, batch_size: int = 256,
                          after: tuple[str, ...] = ()) -> torch.Tensor:
        """Unit vectors of the relations' texts, each text encoded once while the weights stay
        (cleared at every training step). `after`: each relation read at the end of these walked
        ones, the whole path as one phrase (length_rule path_text)."""
        if hasattr(text_of, "prepare"):
            text_of.prepare(relations)  # the relations' names and kinds in one batch of graph reads
        texts = [path_phrase((*after, r), text_of) for r in relations] if after else [text_of(r) for r in relations]
        todo = [t for t in dict.fromkeys(texts) if t not in self._relation_cache]
        if todo:
            self._relation_cache.update(zip(todo, F.normalize(self.encode_unique(todo, batch_size).float(), dim=-1)))
        return torch.stack([self._relation_cache[t] for t in texts]) if texts else torch.zeros(0, self.encoder.dim)

    def _search_step(self, masked: list[str], pooled: torch.Tensor, kg, topics, text_of, batch_size: int,
                     cache: dict | None):
        """The scorer search's step: for each (question index, walked prefix), the relations at the
        prefix's frontier with (log P(r), log P(end after r), log P(go on after r))."""
        walked = self._prefix_reader(text_of)
        frontier = Frontier(kg, topics or [], self.hparams.max_frontier) if kg is not None else None
        transitions = self._transitions_in(kg)
        fallback: list[str] | None = None

        def everything() -> list[str]:
            nonlocal fallback
            if fallback is None:
                fallback = both_directions(kg.relation_types()) if kg is not None else list(self.relations)
                if not fallback:
                    raise ValueError("the relation scorer needs a graph to choose relations from (kg=..., topics=...)")
            return fallback

        scale = float(self.path_head.scale)
        # path_text: every step compares the question alone with the path so far read as one phrase
        phrases = self.hparams.get("length_rule", "end_head") == "path_text"

        def step(items):
            if frontier is not None:
                frontier.prepare(items)  # the round's graph lookups in a few batched calls
            cands_of = [frontier.relations(i, p) if frontier is not None else None for i, p in items]
            if transitions is not None:  # the round's far-end reads in one batch
                transitions.prepare({p[-1] for _, p in items if p},
                                    {c for (_, p), cs in zip(items, cands_of) if p and cs for c in cs})
            prefixed = [] if phrases else [(j, (i, p)) for j, (i, p) in enumerate(items) if p]
            vectors: dict[int, torch.Tensor] = {j: pooled[i].float() for j, (i, p) in enumerate(items)
                                                if phrases or not p}
            if prefixed:
                texts = [step_text(masked[i], p, self.sep, walked) for _, (i, p) in prefixed]
                enc = self.encode_unique(texts, batch_size, cache).float()
                vectors.update({j: enc[k] for k, (j, _) in enumerate(prefixed)})
            out = []
            for j, (i, p) in enumerate(items):
                cands = everything() if cands_of[j] is None else cands_of[j]
                if transitions is not None and p and cands:
                    cands = transitions.keep(p[-1], cands)
                if not cands:
                    out.append({})
                    continue
                rel = self._relation_vectors(cands, text_of, batch_size, tuple(p) if phrases else ())
                logp = F.log_softmax(scale * (rel @ F.normalize(vectors[j], dim=-1)), -1).tolist()
                end = self.path_head.end_logits(vectors[j], rel)
                lp_end, lp_go = F.logsigmoid(end).tolist(), F.logsigmoid(-end).tolist()
                out.append({r: (a, b, c) for r, a, b, c in zip(cands, logp, lp_end, lp_go)})
            return out

        return step

    def _scorer_predict(self, masked: list[str], pooled: torch.Tensor, hop_prob: torch.Tensor, topk: int,
                        hops: int | None, batch_size: int, cache: dict | None, kg, topics, relation_text,
                        hop_weight: float | None, pretrained_reading: float = 0.0) -> list[list[PathPrediction]]:
        """Graph-constrained search with the relation scorer (see rra.models.relation_scorer).
        Candidates at each step: the relations at the prefix's frontier from the question's topic;
        where that cannot be said (no graph or topic, a hub frontier) every relation of the KG
        (both directions), else the training vocabulary."""
        text_of = self.relation_reader(relation_text)
        step = self._search_step(masked, pooled, kg, topics, text_of, batch_size, cache)
        phrases = self.hparams.get("length_rule", "end_head") == "path_text"

        novelty = None  # per question, how unlike the training wordings (pretrained_reading)
        if hops is None and phrases:
            found = self._paths_by_text(pooled, topk, step, text_of, batch_size)
        else:
            prune = [self.hparams.prune_ratio] * len(masked)
            if pretrained_reading > 0:
                # a second reading chooses among the paths the search keeps, and pruning drops the continuations
                # the trained end head made unlikely, the ones it may overrule ("the band that recorded [E] is from
                # which country": artist, hometown, country after artist, hometown at P(end) near 1); so questions
                # it will re-read are searched unpruned, the others as without it
                novelty = self.pretrained_reader().novelty(masked)
                prune = [0.0 if g > 0 else r for g, r in zip(novelty, prune)]
            found = search_paths(len(masked), topk, self.hparams.max_hops, step,
                                 [hops] * len(masked) if hops is not None else None, prune)
        if pretrained_reading > 0:  # paths read as phrases by name alone, as the pretrained encoder reads text
            names = relation_text if relation_text is not None else relation_phrase
            found = self.pretrained_reader().rerank(masked, found, names, pretrained_reading, novelty)
        weight = self.hparams.hop_weight if hop_weight is None else hop_weight
        results = []
        for i, paths in enumerate(found):
            scored = []
            for path, logscore in paths:
                p_hop = float(hop_prob[i, len(path) - 1])
                scored.append(PathPrediction(list(path), math.exp(logscore + weight * math.log(max(p_hop, 1e-12))),
                                             len(path), p_hop))
            results.append(sorted(scored, key=lambda x: -x.score))
        return results

    def pretrained_reader(self):
        """The pretrained encoder this retriever was fine-tuned from (read by name: the packaged one
        offline) with the wordings it trained on, loaded once."""
        if self._pretrained_reading is None:
            from rra.models.pretrained_reading import PretrainedReading

            encoder = load_encoder(self.hparams.encoder).to(self.device)
            self._pretrained_reading = PretrainedReading(encoder, self.training_wordings)
        return self._pretrained_reading

    def _transitions_in(self, kg) -> Transitions | None:
        """What may follow each relation in `kg` (kept while the same graph is searched), or None
        where the search leaves no composition out (no graph, `transition_floor` 0)."""
        floor = float(self.hparams.get("transition_floor", 0.01))
        if kg is None or floor <= 0:
            return None
        if self._transitions is None or self._transitions.kg is not kg or self._transitions.floor != floor:
            self._transitions = Transitions(kg, floor)
        return self._transitions

    def _paths_by_text(self, pooled: torch.Tensor, k: int, step, text_of, batch_size: int) -> list[list[tuple]]:
        """Paths whose length the question's words decide, for an end head that has not learnt when
        a path ends (retriever=zero_shot: P(end) = 0.5 at every step, so the shortest path always
        won and no 2- or 3-hop question was answered). `step` (phrases mode) scores a path so far by
        the cosine of the question with the path read as one phrase ("doctoral advisor,
        affiliation, country"); the `k` best paths of each length 1..max_hops by those step scores
        are then ranked by that cosine less `length_penalty` per relation: a longer phrase shares
        more words with any question, so a relation must raise the cosine by more than that to be
        walked (0.08 was the best of those tried on two KGs, docs/retriever.md)."""
        n = len(pooled)
        pools: list[dict[tuple[str, ...], float]] = [{} for _ in range(n)]
        for length in range(1, self.hparams.max_hops + 1):
            for i, paths in enumerate(search_paths(n, k, length, step, [length] * n, 0.0)):
                pools[i].update(paths)
        scale, penalty = float(self.path_head.scale), float(self.hparams.get("length_penalty", 0.08))
        found = []
        for i, pool in enumerate(pools):
            paths = list(pool)
            if not paths:
                found.append([])
                continue
            # the phrases' vectors are those the last step of each search encoded (cached, no new pass)
            phrases = self._relation_vectors(paths, lambda path: path_phrase(path, text_of), batch_size)
            cos = phrases @ F.normalize(pooled[i].float(), dim=-1)
            fit = cos - penalty * torch.tensor([len(p) for p in paths], dtype=cos.dtype)
            logp = F.log_softmax(scale * fit, -1).tolist()
            found.append(sorted(zip(paths, logp), key=lambda c: (-c[1], len(c[0]), c[0]))[:k])
        return found

    @torch.no_grad()
    def predict(
        self,
        questions: Sequence[str],
        topk: int = 3,
        hops: int | None = None,
        try_second_hop: bool = False,
        batch_size: int = 256,
        topic_entities: Sequence[Sequence[str]] | None = None,
        use_cache: bool = True,
        kg=None,
        topics: Sequence[str | None] | None = None,
        graph_pruning: bool = True,
        relation_text=None,
        hop_weight: float | None = None,
        pretrained_reading: float = 0.0,
    ) -> list[list[PathPrediction]]:
        """Top-`topk` relation paths per question, best first.

        The scorer head searches the graph: kg + topics (each question's topic id) give every step
        its candidates, `relation_text` how a relation reads (rra.text.relations.RelationText; default its id
        as words); `hop_weight` weighs the hop classifier's prior (default: the model's setting);
        `pretrained_reading` > 0 re-reads the found paths of questions worded unlike training with the
        pretrained encoder, at that weight (rra.models.pretrained_reading).
        `hops` forces a length; `try_second_hop` and `graph_pruning` are the classifier's.

        hops: None -> the hop classifier's choice; an int forces that length.
        try_second_hop: also search the classifier's second-best length; those paths follow the
            first length's (so a caller can fall back when the first ones have no KG instance).
        topic_entities: per question, entity strings to mask when the question has no `[...]` span.
        use_cache: reuse encodings of texts seen by earlier calls (bounded by `cache_size`); with
            masked topic entities, templated questions then cost almost no encoder passes.
        """
        if hops is not None and not 1 <= hops <= self.hparams.max_hops:
            raise ValueError(f"hops={hops} outside 1..{self.hparams.max_hops}")
        was_training = self.training
        if was_training:  # in training mode the weights may have changed since the last call
            self._predict_cache.clear()
        self.eval()
        try:
            mask_with = topic_entities or [()] * len(questions)
            masked = [self.mask(q, t) for q, t in zip(questions, mask_with)]
            cache = self._predict_cache if use_cache else None
            pooled = self.encode_unique(masked, batch_size, cache)
            if topics is not None and len(topics) != len(masked):
                raise ValueError(f"predict: {len(topics)} topics for {len(masked)} questions")
            if self.scorer:
                hop_prob = self.hop_head(pooled).float().softmax(-1)
                return self._scorer_predict(masked, pooled, hop_prob, topk, hops, batch_size, cache, kg, topics,
                                            relation_text, hop_weight, pretrained_reading)
            hop_rank, hop_prob = HopClassifier.predict(self.hop_head(pooled))
            first_logits = self.path_head(pooled)
            queries = []  # (question index, hop, hop probability)
            for i in range(len(masked)):
                if hops is not None:
                    queries.append((i, hops, float(hop_prob[i][hop_rank[i] == hops])))
                    continue
                for rank in range(2 if try_second_hop and self.hparams.max_hops > 1 else 1):
                    queries.append((i, int(hop_rank[i, rank]), float(hop_prob[i, rank])))
            allowed = self.graph_pruner(kg, topics) if graph_pruning and kg is not None and topics else None
            beams = self._search(masked, first_logits, [h for _, h, _ in queries], topk,
                                 [i for i, _, _ in queries], batch_size, cache, allowed)
            results: list[list[PathPrediction]] = [[] for _ in masked]
            for (i, hop, p), found in zip(queries, beams):
                results[i] += [
                    PathPrediction([self.relations[r] for r in ids], math.exp(s), hop, p) for ids, s in found
                ]
            return results
        finally:
            self.train(was_training)

    @torch.no_grad()
    def continuations(self, questions: Sequence[str], prefixes: Sequence[Sequence[str]], kg, topics: Sequence[str],
                      relation_text=None, batch_size: int = 256) -> list[dict[str, tuple[float, float, float]]]:
        """One more step of the scorer's search after each question's walked prefix (relations from
        `topics[i]`): every relation at the prefix's frontier with (log P(r), log P(end after r),
        log P(go on after r)), as the search scores it. The plan search asks it where the path the
        search ended looks a step short (rra.pipeline.plans, `walk_on`): an end head trained on few
        three-hop questions stops after two, and the search never offers the third. {} per question
        for a retriever without the relation scorer."""
        if not self.scorer:
            return [{} for _ in questions]
        was_training = self.training
        self.eval()
        try:
            cache = self._predict_cache
            masked = [self.mask(q, ()) for q in questions]
            pooled = self.encode_unique(masked, batch_size, cache)
            step = self._search_step(masked, pooled, kg, list(topics), self.relation_reader(relation_text),
                                     batch_size, cache)
            return step([(i, tuple(p)) for i, p in enumerate(prefixes)])
        finally:
            self.train(was_training)

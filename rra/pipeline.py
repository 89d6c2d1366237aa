"""The RRA method: link topic entity -> Retrieve -> Rewrite -> Answer, as a `QAMethod`.

Per question it records what the evaluation and a reader need: the kept paths with scores, the
triples with the path each came from, the knowledge text, the answer, the LLM calls and tokens it
spent (from the backend's usage counters, before/after) and the wall time. A question that cannot
be answered (unknown entity, no path, graph or LLM failure) gets a status and the best answer
available, never an exception.

`answer_batch` runs the retriever's encoder on a whole batch of questions at once (the expensive
part on a CPU), retrieves per question, then rewrites and answers the batch with one call each
(`rewrite_many`, `answer_many`: a local LLM generates a batch much faster than one by one). Each
question travels between the steps as a `QuestionContext`. `build_rra` is the Hydra target of
conf/method/rra.yaml.
"""
from __future__ import annotations

import inspect
import logging
import time
from typing import Protocol, Sequence

from rra.answer import Answer, Answerer, fallback
from rra.data.records import QAExample
from rra.entity_linking import (Candidate, LinkResult, distinct_entities, link_entities,
                                relation_vocabulary)
from rra.graph.base import (INVERSE_PREFIX, GraphError, KnowledgeGraph, Triple, UnknownEntityError, base_relation,
                            is_inverse)
from rra.methods import Prediction, QAMethod, failure_status
from rra.retrieve import PathRetrieval, QuestionContext
from rra.rewrite import Rewriter
from rra.text import BRACKETED, relation_names

log = logging.getLogger(__name__)


class RRAPipeline(QAMethod):
    def __init__(self, kg: KnowledgeGraph, retrieval: PathRetrieval, rewriter: Rewriter,
                 answerer: Answerer, llm=None, name: str = "rra", use_gold_topic: bool = True,
                 max_ngram: int = 8, link_candidates: int = 3, retriever_ckpt: str | None = None,
                 relation_labels=None):
        for step, protocol in ((rewriter, Rewriter), (answerer, Answerer)):
            if not isinstance(step, protocol):  # its batch method is what the pipeline calls
                raise TypeError(f"{type(step).__name__} is not a {protocol.__name__} (it needs `name`, and the "
                                f"batch method that subclassing {protocol.__module__}.{protocol.__name__} gives)")
        self.kg, self.retrieval, self.rewriter, self.answerer = kg, retrieval, rewriter, answerer
        self.llm, self.name = llm, name
        self.use_gold_topic, self.max_ngram, self.link_candidates = use_gold_topic, max_ngram, link_candidates
        self._rel_words: frozenset[str] | None = None
        self.retriever_ckpt = retriever_ckpt
        self.relation_names = relation_names(relation_labels)  # the dataset's names for opaque relation ids

    def describe(self) -> dict:
        return {"retriever": self.retriever_ckpt, "rewriter": self.rewriter.name, "answer": self.answerer.name}

    # --- QAMethod ------------------------------------------------------------------------------
    def answer(self, example: QAExample) -> Prediction:
        return self.answer_batch([example])[0]

    def answer_batch(self, examples: Sequence[QAExample], concurrency: int = 1) -> list[Prediction]:
        """The whole batch through each step at once (`concurrency` is not needed: the batch is the
        unit of parallel work)."""
        start = time.perf_counter()
        given_labels = self._given_labels(examples)
        links = self._link_all(examples, given_labels)
        # The retriever masks a `[...]` mention (as in MetaQA); mark the linked one in questions
        # that came unmarked, so training and inference see the same question shape.
        todo = [i for i, link in enumerate(links) if link.status == "ok"]
        candidates: dict[int, list] = {}
        model_error = ""
        if todo:
            try:
                candidates = self._predict(examples, links, todo)
            except Exception as err:  # a broken checkpoint/model must not lose the batch
                model_error = f"retriever: {type(err).__name__}: {err}"
        # One graph request per distinct predicted path for the whole batch (SPARQL stores). A path
        # whose batch query failed is not prefetched: each question's own call retries and records it.
        prefetched, _ = self.retrieval.prefetch(
            self.kg, [(links[i].entities[0], candidates[i]) for i in candidates if links[i].entities])
        shared_s = (time.perf_counter() - start) / max(1, len(examples))

        # Retrieve per question; rewrite the ready ones together, then answer them together.
        preds, ready, contexts = [], [], []
        for i, (ex, link) in enumerate(zip(examples, links)):
            t0 = time.perf_counter()
            pred, context = self._prepare(ex, link, candidates.get(i, []), model_error, prefetched)
            pred.latency_s = time.perf_counter() - t0 + shared_s
            preds.append(pred)
            if context is not None:
                ready.append(pred)
                contexts.append(context)
        if contexts:
            self._fill_labels(contexts)
            self._timed(ready, self._rewrite_all, contexts)
            answers = self._timed(ready, self._answer_all, contexts)
            for pred, context, ans in zip(ready, contexts, answers):
                self._apply(pred, ans, context)
        for pred in preds:
            pred.latency_s = round(pred.latency_s, 6)
        return preds

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
                any(e in given_labels for e in ex.topic_entities) for ex in examples):
            return [self._link(ex, given_labels) for ex in examples]  # every question has a KG id
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
            return link_entities(kg or self.kg, ex.question, ex.topic_entities if self.use_gold_topic else None,
                                 self.max_ngram, rel_words=self._relation_words(), given_labels=given_labels)
        except GraphError as err:
            return LinkResult([], status="graph_error", error=f"linking: {type(err).__name__}: {err}")

    def _relation_words(self) -> frozenset[str]:
        """The KG's relation words, for linking questions from their text (read once)."""
        if self._rel_words is None:
            self._rel_words = relation_vocabulary(self.kg)
        return self._rel_words

    def _predict(self, examples: Sequence[QAExample], links: list[LinkResult], todo: list[int]) -> dict[int, list]:
        """Candidate paths per question, for its linked topic. A question linked lexically to several
        candidate topics asks the retriever once per candidate (the first `link_candidates`
        entities) and keeps the one whose best predicted path has an answer instance from it, by
        path score halved per step down the lexical ranking; `links[i]` is reordered to match."""
        queries: list[tuple[int, Candidate | None]] = []
        for i in todo:
            options = distinct_entities(links[i].candidates)[: self.link_candidates]
            queries += [(i, c) for c in options] if len(options) > 1 else [(i, None)]
        texts = [marked(examples[i].question, links[i], c.mention if c else None) for i, c in queries]
        found: dict[int, list] = {}
        topics = [c.entity if c else (links[i].entities[0] if links[i].entities else None) for i, c in queries]
        for (i, c), paths in zip(queries, self.retrieval.predict(texts, kg=self.kg, topics=topics)):
            found.setdefault(i, []).append((c, paths))
        many = [(c.entity, paths) for options in found.values() if len(options) > 1 for c, paths in options]
        scores = iter(self._instantiated_scores(many))
        out = {}
        for i, options in found.items():
            if len(options) > 1:
                score = [0.5 ** k * next(scores) for k in range(len(options))]
                k = max(range(len(options)), key=lambda j: (score[j], -j))
                links[i] = links[i].choose(options[k][0]) if k else links[i]
            else:
                k = 0
            out[i] = options[k][1]
        return out

    def _instantiated_scores(self, options: list[tuple[str, list]]) -> list[float]:
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
                got = dict(zip(starts, self.kg.follow_paths_batch([(e, list(p)) for p, e in starts.items()], 100)))
            except GraphError:  # each option alone, as before
                return [self._instantiated_score(e, paths) for e, paths in options]
            for k in active:
                entity, p = options[k][0], order[k][step[k]]
                walks = got[tuple(p.path)].get(entity, [])
                if any(self.retrieval.semantics.keeps(w.entities, entity) for w in walks):
                    score[k] = float(p.score)
                step[k] += 1
        return [s if s is not None else 0.0 for s in score]

    def _instantiated_score(self, entity: str, paths: list) -> float:
        """The score of the best predicted path with an answer instance from `entity` (0 if none)."""
        for p in sorted(paths, key=lambda p: -float(p.score)):
            try:
                walks = self.kg.follow_path(entity, list(p.path), limit=100)
            except (GraphError, UnknownEntityError):  # a graph failure here only costs the linking choice
                return 0.0
            if any(self.retrieval.semantics.keeps(w.entities, entity) for w in walks):
                return float(p.score)
        return 0.0

    # --- one question ----------------------------------------------------------------------------
    def _prepare(self, ex: QAExample, link: LinkResult, cands: list, model_error: str,
                 prefetched=None) -> tuple[Prediction, QuestionContext | None]:
        """Link and retrieve. Returns the prediction so far and, if the question has knowledge to
        rewrite, its context for the next steps."""
        pred = Prediction(qid=ex.qid, question=ex.question, answers=[])
        pred.topic_entities = link.entities
        pred.extra["linking"] = {"source": link.source, "mentions": link.mentions,
                                 "ambiguous": link.ambiguous, "chosen_by": link.chosen_by}
        if link.status != "ok":
            pred.status, pred.errors = link.status, [link.error]
            return pred, None
        if model_error:
            pred.status, pred.errors = "no_path", [model_error]
            return pred, None

        r = self.retrieval.retrieve(self.kg, link.entities[0], cands, prefetched)
        pred.errors += r.errors
        pred.paths = [p.to_dict() for p in r.paths]
        pred.triples = r.triples
        pred.extra["dropped_paths"] = [p.to_dict() for p in r.dropped]
        pred.extra["evidence_paths"] = ["/".join(e.path) for e in r.evidence]
        if r.paths:
            pred.pred_hop, pred.pred_path = len(r.paths[0].path), list(r.paths[0].path)
        elif cands:  # nothing instantiated: still report what the model predicted
            best = max(cands, key=lambda c: float(c.score))
            pred.pred_hop, pred.pred_path = len(best.path), list(best.path)
        if r.status != "ok":
            pred.status = r.status
            return pred, None

        return pred, QuestionContext(ex.question, retrieval=r)

    @staticmethod
    def _timed(preds: list[Prediction], step, contexts: list[QuestionContext]):
        """Run a batch step; each question's latency gets an equal share of its time."""
        t0 = time.perf_counter()
        out = step(contexts)
        share = (time.perf_counter() - t0) / len(contexts)
        for pred in preds:
            pred.latency_s += share
        return out

    @staticmethod
    def _batch_then_each(call, contexts: list[QuestionContext], recover) -> list:
        """`call(contexts)` for the whole batch; if it raises, each question alone, so a question
        that breaks a step costs only itself; one that fails alone gets `recover(context, error)`."""
        if len(contexts) > 1:
            try:
                return list(call(contexts))
            except Exception:  # noqa: BLE001 - retried one by one below, where each error is kept
                pass
        out = []
        for c in contexts:
            try:
                out.append(call([c])[0])
            except Exception as err:
                out.append(recover(c, err))
        return out

    def _fill_labels(self, contexts: list[QuestionContext]) -> None:
        """Labels of every entity the questions retrieved, in one `labels` call for the batch
        (chunked by the backend); each context gets its labels and its triples written with them."""
        wanted = [{e for t in c.retrieval.triples for e in (t.head, t.tail)} | {e for p in c.retrieval.paths for e in p.ends}
                  for c in contexts]
        try:
            labels = self.kg.labels(sorted(set().union(*wanted)))
        except GraphError:  # labels are cosmetic for id==label KGs; never fail a question on them
            labels = {}
        for c, own in zip(contexts, wanted):
            c.labels = {e: labels.get(e, e) for e in own}
            c.triples = [Triple(c.labels.get(t.head, t.head), self._relation_name(t.relation),
                                c.labels.get(t.tail, t.tail)) for t in c.retrieval.triples]

    def _relation_name(self, relation: str) -> str:
        """How a rewriter reads a relation: the dataset's name for it (`^P50` -> `^author`), else its id."""
        name = self.relation_names.get(base_relation(relation))
        return relation if not name else (INVERSE_PREFIX + name if is_inverse(relation) else name)

    def _rewrite_all(self, contexts: list[QuestionContext]) -> None:
        """Each context's knowledge text, by one `rewrite_many` call for the batch. A failed
        rewrite falls back to the triple form and records the error."""
        from rra.rewrite import TripleRewriter

        name = self.rewriter.name

        def recover(c: QuestionContext, err: Exception) -> None:
            c.trace.errors.append(f"rewriter {name}: {type(err).__name__}: {err}")

        texts = self._batch_then_each(self.rewriter.rewrite_many, contexts, recover)
        for c, text in zip(contexts, texts):
            c.knowledge = TripleRewriter().rewrite(c.question, c.triples) if text is None else text

    def _answer_all(self, contexts: list[QuestionContext]) -> list[Answer]:
        """Answers by one `answer_many` call for the batch; a failed answer is the graph scorer's,
        with the error (bugs raise under strict errors)."""
        def recover(c: QuestionContext, err: Exception) -> Answer:
            return fallback(c.retrieval, failure_status(err), f"answerer: {type(err).__name__}: {err}")

        return self._batch_then_each(self.answerer.answer_many, contexts, recover)

    @staticmethod
    def _apply(pred: Prediction, ans: Answer, context: QuestionContext) -> None:
        pred.knowledge = context.knowledge
        pred.answers, pred.reply, pred.status = ans.answers, ans.reply, ans.status
        pred.errors += context.trace.errors + ans.errors
        pred.extra.update(ans.extra)
        pred.answer_set, pred.hits_mode = list(ans.answer_set), ans.hits_mode
        pred.extra["answer_labels"] = [context.labels.get(a, a) for a in ans.answers[:10]]
        context.trace.count_into(pred)


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


def marked(question: str, link: LinkResult, mention: str | None = None) -> str:
    """The question with its topic mention (default: the link's first) in `[...]` (unchanged if
    already marked or not found)."""
    if BRACKETED.search(question) or not (mention or link.mentions):
        return question
    m = mention or link.mentions[0]
    i = question.casefold().find(m.casefold())
    return question if i < 0 else f"{question[:i]}[{question[i:i + len(m)]}]{question[i + len(m):]}"


def build(cfg, **available):
    """Instantiate a Hydra config node, passing only the objects (kg, llm, ...) its target's
    signature names: a template rewriter gets no LLM, an LLM answerer gets one."""
    from hydra.utils import get_object, instantiate

    target = get_object(cfg["_target_"])
    params = {} if _protocol_init(target) else inspect.signature(target).parameters
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kw = {k: v for k, v in available.items() if takes_all or k in params}
    return instantiate(cfg, **kw)


def _protocol_init(target) -> bool:
    """A step class without an __init__ of its own (TripleRewriter) inherits typing.Protocol's
    placeholder, whose signature (*args, **kwargs) would seem to take any keyword: it takes none."""
    if not isinstance(target, type):
        return False
    owner = next(c for c in target.__mro__ if "__init__" in vars(c))
    return Protocol in owner.__bases__


def build_rra(kg: KnowledgeGraph, retriever, rewriter, answer, llm=None, name: str = "rra",
              use_gold_topic: bool = True, max_ngram: int = 8, check_relations: bool = True,
              semantics=None, link_candidates: int = 3, strict_relations: bool = False,
              relation_labels=None) -> RRAPipeline:
    """Hydra target of conf/method/rra.yaml (`_recursive_: false`): builds the three steps from
    their config groups with the shared graph and LLM. With `check_relations`, a retriever trained
    on relations the KG lacks is refused at once (instead of every question ending in no_path); KG
    relations it never saw are a warning (an error with `strict_relations`).
    `semantics` is the dataset's answer rule (data.semantics), applied to the retrieved paths;
    `relation_labels` its names for relation ids (data.relation_labels), what rewriters read."""
    from rra.data.records import AnswerSemantics

    retrieval = build(retriever, kg=kg, llm=llm)
    retrieval.semantics = AnswerSemantics.of(semantics)
    check = getattr(retrieval.model, "check_relations", None)
    if check_relations and check is not None:
        warning = check(kg.relation_types(), strict=strict_relations)
        if warning:
            log.warning(warning)
    return RRAPipeline(
        kg=kg,
        retrieval=retrieval,
        rewriter=build(rewriter, llm=llm),
        answerer=build(answer, llm=llm),
        llm=llm, name=name, use_gold_topic=use_gold_topic, max_ngram=max_ngram, link_candidates=link_candidates,
        retriever_ckpt=retriever.get("ckpt"), relation_labels=relation_labels,
    )

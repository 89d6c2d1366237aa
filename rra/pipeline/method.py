"""The RRA method: link topic entity (rra.linking.TopicLinker) -> Retrieve -> Rewrite ->
Answer, as a `QAMethod`.

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

import dataclasses
import logging
import time
from typing import Sequence

from rra.pipeline.answer import Answer, Answerer, fallback
from rra.linking import LinkResult, TopicLinker, link_anchors
from rra.graph.base import INVERSE_PREFIX, GraphError, KnowledgeGraph, base_relation, is_inverse
from rra.graph.cvt import unfold  # a folded compound value reads as (x, r1, CVT1) (CVT1, r2, y)
from rra.methods import QAMethod, failure_status
from rra.pipeline.plans import PlanChoice, PlanSearch, PlanSettings, retrieve_plan
from rra.records import Prediction, QAExample, Status, Triple
from rra.plans.reads import KindCheck  # what a relation leads to, for a scorer that reads it
from rra.pipeline.retrieve import PathRetrieval, QuestionContext
from rra.pipeline.rewrite import Rewriter
from rra.plans.text import plan_sentence
from rra.text.relations import RelationNames, RelationText, relation_names

log = logging.getLogger(__name__)


class RRAPipeline(QAMethod):
    def __init__(self, kg: KnowledgeGraph, retrieval: PathRetrieval, rewriter: Rewriter,
                 answerer: Answerer, name: str = "rra", use_gold_topic: bool = True,
                 max_ngram: int = 16, link_candidates: int = 3, retriever_ckpt: str | None = None,
                 relation_labels=None, fuzzy_linking: bool = True, plans: PlanSettings | dict | None = None):
        for step, protocol in ((rewriter, Rewriter), (answerer, Answerer)):
            if not isinstance(step, protocol):  # its batch method is what the pipeline calls
                raise TypeError(f"{type(step).__name__} is not a {protocol.__name__} (it needs `name`, and the "
                                f"batch method that subclassing {protocol.__module__}.{protocol.__name__} gives)")
        self.kg, self.retrieval, self.rewriter, self.answerer = kg, retrieval, rewriter, answerer
        self.name = name
        self.linker = TopicLinker(kg, use_gold_topic, max_ngram, link_candidates, fuzzy_linking)
        self.retriever_ckpt = retriever_ckpt
        # the dataset's names for opaque relation ids, else the KG's own (wdt:P19 -> "place of birth")
        self.relation_names = RelationNames(relation_names(relation_labels), kg)
        if getattr(retrieval, "relation_text", "absent") is None:  # how the scorer reads this KG's relations
            retrieval.relation_text = RelationText(self.relation_names, kg, KindCheck(kg))
        # query plans, where the retriever has a plan ranker (datamodule.plan_ranker)
        self.plan_search = PlanSearch(kg, retrieval, plans if isinstance(plans, PlanSettings)
                                      else PlanSettings(**dict(plans or {})))

    def describe(self) -> dict:
        return {"retriever": self.retriever_ckpt, "rewriter": self.rewriter.name, "answer": self.answerer.name}

    # --- QAMethod ------------------------------------------------------------------------------
    def answer(self, example: QAExample) -> Prediction:
        return self.answer_batch([example])[0]

    def answer_batch(self, examples: Sequence[QAExample], concurrency: int = 1) -> list[Prediction]:
        """The whole batch through each step at once (`concurrency` is not needed: the batch is the
        unit of parallel work)."""
        start = time.perf_counter()
        links = self.linker.link_batch(examples)
        # The retriever masks a `[...]` mention (as in MetaQA); mark the linked one in questions
        # that came unmarked, so training and inference see the same question shape.
        todo = [i for i, link in enumerate(links) if link.status == Status.OK]
        candidates: dict[int, list] = {}
        failed: dict[int, tuple[Status, str]] = {}  # question -> (status, error) of a retriever failure
        if todo:
            try:
                candidates = self.linker.choose(examples, links, todo, self._predict, self.retrieval.semantics)
            except Exception as err:  # noqa: BLE001 - retry one by one: a failure costs its question only
                for i in todo:
                    try:
                        candidates.update(self.linker.choose(examples, links, [i], self._predict,
                                                             self.retrieval.semantics))
                    except Exception as one:  # noqa: BLE001 - a graph error is graph_error, a model's no_path
                        status = Status.GRAPH_ERROR if failure_status(one) == Status.GRAPH_ERROR else Status.NO_PATH
                        failed[i] = (status, f"retriever: {type(one).__name__}: {one}")
        choices: dict[int, PlanChoice] = {}
        if candidates and self.plan_search.enabled:  # rank the candidate plans of every question
            try:
                choices = self._plans(examples, links, candidates)
            except Exception as err:  # noqa: BLE001 - a broken ranker costs the plans, not the batch
                if self.strict and failure_status(err) == Status.ERROR:  # a bug, not the graph's or LLM's
                    raise
                log.warning("query plans failed, answering as chains: %s: %s", type(err).__name__, err)
        chains = {i: self._chain_of(links[i], candidates[i], choices.get(i)) for i in candidates}
        # One graph request per distinct predicted path for the whole batch (SPARQL stores). A path
        # whose batch query failed is not prefetched: each question's own call retries and records it.
        prefetched, _ = self.retrieval.prefetch(
            self.kg, [(c[0].entities[0], c[1]) for c in chains.values() if c is not None and c[0].entities])
        shared_s = (time.perf_counter() - start) / max(1, len(examples))

        # Retrieve per question; rewrite the ready ones together, then answer them together.
        preds, ready, contexts = [], [], []
        for i, (ex, link) in enumerate(zip(examples, links)):
            t0 = time.perf_counter()
            if i in choices and chains[i] is None:
                pred, context = self._prepare_plan(ex, link, choices[i], prefetched)
            else:
                link_i, cands = chains.get(i) or (link, candidates.get(i, []))
                pred, context = self._prepare(ex, link_i, cands, failed.get(i), prefetched)
                if i in choices:
                    pred.extra.update(choices[i].record(self.plan_search.settings.shown))
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

    def _predict(self, texts: list[str], topics: list[str | None]) -> list[list]:
        """The retriever's candidate paths for each (question text, topic)."""
        return self.retrieval.predict(texts, kg=self.kg, topics=topics)

    # --- query plans ------------------------------------------------------------------------------
    def _plans(self, examples, links: list[LinkResult], candidates: dict[int, list]) -> dict[int, PlanChoice]:
        """The ranked candidate plans of each question with a link (rra.pipeline.plans): its anchors
        are every entity linked (up to three; a literal's mention is the comparison's value and a
        class's the answer's kind, not anchors), the chain predictions already made for the first reused.
        A linked name that several entities share is read as each (PlanSearch `alternates`); where
        the plans choose another of them, `links[i]` and `candidates[i]` follow."""
        anchors, mentions, first, alternates = {}, {}, {}, {}
        for i in candidates:
            anchors[i], mentions[i] = link_anchors(links[i], self.plan_search.settings.max_anchors, classes=False)
            # the link's first (were it a literal or a class) keeps its place: `first` holds its chains
            if links[i].entities and anchors[i][:1] != links[i].entities[:1]:
                anchors[i] = [links[i].entities[0]] + [a for a in anchors[i] if a != links[i].entities[0]]
                mentions[i] = [(links[i].mentions or links[i].entities)[0]] + mentions[i][: len(anchors[i]) - 1]
            first[i] = candidates[i]
            shared = {k: [e for e in links[i].ambiguous.get(m, []) if e not in anchors[i]][: self.linker.link_candidates - 1]
                      for k, m in enumerate(mentions[i])}
            alternates[i] = {k: es for k, es in shared.items() if es}
        n = len(examples)
        choices = self.plan_search.choose([ex.question for ex in examples],
                                          [anchors.get(i, []) for i in range(n)], [mentions.get(i, []) for i in range(n)],
                                          first, alternates)
        for i, choice in choices.items():
            read = dict(zip(anchors[i], choice.anchors))
            if any(a != b for a, b in read.items()):  # another entity of a shared name
                links[i] = dataclasses.replace(links[i], entities=[read.get(e, e) for e in links[i].entities],
                                               chosen_by="plan")
                candidates[i] = choice.predictions.get(links[i].entities[0], candidates[i])
        return choices

    def _chain_of(self, link: LinkResult, cands: list, choice: PlanChoice | None):
        """(link, candidate paths) a question is answered by as one chain; None when its best plan is
        more than a chain. A chain from another anchor than the link's first walks from that anchor,
        with the paths predicted with it in focus."""
        if choice is None or choice.best is None:
            return link, cands
        best = next((p for p in choice.ranked if p.plan.is_chain), None) if not choice.best.plan.is_chain else choice.best
        if best is not choice.best:
            return None
        anchor = best.plan.anchors[0]
        if not link.entities or anchor == link.entities[0]:
            return link, self._ordered(choice, anchor, cands)
        k = link.entities.index(anchor)
        mentions = list(link.mentions or link.entities)
        moved = dataclasses.replace(link, entities=[anchor] + [e for e in link.entities if e != anchor],
                                    mentions=[mentions[k]] + [m for j, m in enumerate(mentions) if j != k],
                                    chosen_by="plan")
        return moved, self._ordered(choice, anchor, choice.predictions.get(anchor, cands))

    def _ordered(self, choice: PlanChoice, anchor: str, cands: list) -> list:
        return choice.chain_order(anchor, cands) if self.plan_search.settings.rank_chains else cands

    def _prepare_plan(self, ex: QAExample, link: LinkResult, choice: PlanChoice,
                      prefetched=None) -> tuple[Prediction, QuestionContext | None]:
        """Retrieve by the question's best query plan. Should no plan ranked above the first chain
        answer on the graph (it cannot be empty: only plans with answers are candidates, but a walk
        may be cut at `max_instances`), that chain answers, and the record says why."""
        rs = self.retrieval
        r = retrieve_plan(self.kg, choice, rs.semantics, rs.max_triples, rs.seed, rs.max_instances)
        record = choice.record(self.plan_search.settings.shown)
        if r.status != Status.OK:
            chain = next((p for p in choice.ranked if p.plan.is_chain), None)
            if chain is None:
                pred, _ = self._prepare(ex, link, [], None, retrieval=r)
                pred.extra.update(record)
                return pred, None
            anchor = chain.plan.anchors[0]
            moved = self._chain_of(link, choice.predictions.get(anchor, []),
                                   PlanChoice(choice.anchors, [chain], choice.predictions))
            pred, context = self._prepare(ex, moved[0], moved[1], None, prefetched)
            pred.extra.update(record)
            pred.extra["plan_fallback"] = r.errors[-1:] or [str(r.status)]
            return pred, context
        pred, context = self._prepare(ex, link, [], None, retrieval=r)
        pred.topic_entities = list(dict.fromkeys(r.plans[0].plan.anchors + link.entities))
        pred.extra.update(record)
        pred.extra["plan"] = r.plans[0].to_dict()
        return pred, context

    # --- one question ----------------------------------------------------------------------------
    def _prepare(self, ex: QAExample, link: LinkResult, cands: list, model_error: tuple | None,
                 prefetched=None, retrieval=None) -> tuple[Prediction, QuestionContext | None]:
        """Link and retrieve. Returns the prediction so far and, if the question has knowledge to
        rewrite, its context for the next steps."""
        pred = Prediction(qid=ex.qid, question=ex.question, answers=[])
        pred.topic_entities = link.entities
        pred.extra["linking"] = {"source": link.source, "mentions": link.mentions,
                                 "ambiguous": link.ambiguous, "chosen_by": link.chosen_by}
        if link.status != Status.OK:
            pred.status, pred.errors = link.status, [link.error]
            return pred, None
        if model_error:  # (status, error) of the retriever's failure on this question
            pred.status, pred.errors = model_error[0], [model_error[1]]
            return pred, None

        r = retrieval or self.retrieval.retrieve(self.kg, link.entities[0], cands, prefetched)
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
        if r.status != Status.OK:
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
        wanted = [{e for t in c.retrieval.triples for e in (t.head, t.tail)} | {e for p in c.retrieval.ranked for e in p.ends}
                  | {e for p in c.retrieval.plans for e in p.plan.entities} for c in contexts]
        try:
            labels = self.kg.labels(sorted(set().union(*wanted)))
        except GraphError:  # labels are cosmetic for id==label KGs; never fail a question on them
            labels = {}
        self.relation_names.prepare(t.relation for c in contexts for t in c.retrieval.triples)  # one ask per batch
        for c, own in zip(contexts, wanted):
            c.labels = {e: labels.get(e, e) for e in own}
            c.triples = unfold([Triple(c.labels.get(t.head, t.head), self._relation_name(t.relation),
                                       c.labels.get(t.tail, t.tail)) for t in c.retrieval.triples])

    def _relation_name(self, relation: str) -> str:
        """How a rewriter reads a relation: its name (`^P50` -> `^author`; `RelationNames`), else its id."""
        name = self.relation_names.get(base_relation(relation))
        return relation if not name else (INVERSE_PREFIX + name if is_inverse(relation) else name)

    def _rewrite_all(self, contexts: list[QuestionContext]) -> None:
        """Each context's knowledge text, by one `rewrite_many` call for the batch. A failed
        rewrite falls back to the triple form and records the error."""
        from rra.pipeline.rewrite import TripleRewriter

        name = self.rewriter.name

        def recover(c: QuestionContext, err: Exception) -> None:
            c.trace.errors.append(f"rewriter {name}: {type(err).__name__}: {err}")

        texts = self._batch_then_each(self.rewriter.rewrite_many, contexts, recover)
        for c, text in zip(contexts, texts):
            c.knowledge = TripleRewriter().rewrite(c.question, c.triples) if text is None else text
            if c.retrieval.plans:  # the plan itself, so the reader knows the answers must meet all of it
                c.knowledge = (c.knowledge + "\n" + plan_sentence(c.retrieval.plans[0].plan, c.labels,
                                                                   self._relation_name)).strip()

    def _answer_all(self, contexts: list[QuestionContext]) -> list[Answer]:
        """Answers by one `answer_many` call for the batch; a failed answer is the graph scorer's,
        with the error (bugs raise under strict errors)."""
        def recover(c: QuestionContext, err: Exception) -> Answer:
            return fallback(c.retrieval, failure_status(err, self.strict), f"answerer: {type(err).__name__}: {err}")

        return self._batch_then_each(self.answerer.answer_many, contexts, recover)

    def _apply(self, pred: Prediction, ans: Answer, context: QuestionContext) -> None:
        pred.knowledge = context.knowledge
        if context.retrieval.plans:  # the plan in words, for the page and the record
            pred.extra["plan_text"] = plan_sentence(context.retrieval.plans[0].plan, context.labels, self._relation_name)
        pred.answers, pred.reply, pred.status = ans.answers, ans.reply, ans.status
        pred.errors += context.trace.errors + ans.errors
        pred.extra.update(ans.extra)
        pred.answer_set, pred.hits_mode = list(ans.answer_set), ans.hits_mode
        pred.answer_labels = [context.labels.get(a, a) for a in ans.answers[:10]]
        context.trace.count_into(pred)


def build_step(cfg, llm=None):
    """A Rewrite or Answer step from its config node; the run's LLM goes to the steps whose class
    says it uses one (`uses_llm`), so a template rewriter is built without it."""
    from hydra.utils import get_object, instantiate

    return instantiate(cfg, llm=llm) if getattr(get_object(cfg["_target_"]), "uses_llm", False) else instantiate(cfg)


def build_rra(kg: KnowledgeGraph, retriever, rewriter, answer, llm=None, name: str = "rra",
              use_gold_topic: bool = True, max_ngram: int = 16, check_relations: bool = True,
              semantics=None, link_candidates: int = 3, strict_relations: bool = False,
              relation_labels=None, fuzzy_linking: bool = True, plans=None) -> RRAPipeline:
    """Hydra target of conf/method/rra.yaml (`_recursive_: false`): builds the three steps from
    their config groups with the shared graph and LLM. With `check_relations`, a retriever trained
    on relations the KG lacks is refused at once (instead of every question ending in no_path); KG
    relations it never saw are a warning (an error with `strict_relations`).
    `semantics` is the dataset's answer rule (data.semantics), applied to the retrieved paths;
    `relation_labels` its names for relation ids (data.relation_labels), what rewriters read;
    `plans` the bounds of the query-plan search (rra.pipeline.plans.PlanSettings)."""
    from hydra.utils import instantiate

    from rra.records import AnswerSemantics

    retrieval = instantiate(retriever, semantics=AnswerSemantics.of(semantics))
    check = getattr(retrieval.model, "check_relations", None)
    # per-question graphs (graph=subgraphs): each question's subgraph holds a few of the checkpoint's
    # relations and no KG-wide list exists before the questions are read, so there is nothing to check
    if check_relations and check is not None and not getattr(kg, "per_question", False):
        warning = check(kg.relation_types(), strict=strict_relations)
        if warning:
            log.warning(warning)
    return RRAPipeline(
        kg=kg,
        retrieval=retrieval,
        rewriter=build_step(rewriter, llm),
        answerer=build_step(answer, llm),
        name=name, use_gold_topic=use_gold_topic, max_ngram=max_ngram, link_candidates=link_candidates,
        retriever_ckpt=retriever.get("ckpt"), relation_labels=relation_labels, fuzzy_linking=fuzzy_linking,
        plans=plans,
    )

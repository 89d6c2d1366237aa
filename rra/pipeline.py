"""The RRA method: link topic entity -> Retrieve -> Rewrite -> Answer, as a `QAMethod`.

Per question it records what the evaluation and a reader need: the kept paths with scores, the
triples with the path each came from, the knowledge text, the answer, the LLM calls and tokens it
spent (from the backend's usage counters, before/after) and the wall time. A question that cannot
be answered (unknown entity, no path, graph or LLM failure) gets a status and the best answer
available, never an exception.

`answer_batch` runs the retriever's encoder on a whole batch of questions at once (the expensive
part on a CPU), retrieves and rewrites per question, then answers the batch with one batched LLM
call when the answerer offers `answer_many`. `build_rra` is the Hydra target of conf/method/rra.yaml.
"""
from __future__ import annotations

import inspect
import time
from typing import Sequence

from rra.answer import Answer, Answerer, fallback
from rra.data.records import QAExample
from rra.entity_linking import (MARKED, Candidate, LinkResult, distinct_entities, link_entities,
                                relation_words)
from rra.graph.base import KnowledgeGraph, Triple
from rra.methods import Prediction
from rra.retrieve import PathRetrieval, Retrieval
from rra.rewrite import Rewriter


class RRAPipeline:
    def __init__(self, kg: KnowledgeGraph, retrieval: PathRetrieval, rewriter: Rewriter,
                 answerer: Answerer, llm=None, name: str = "rra", use_gold_topic: bool = True,
                 max_ngram: int = 8, link_candidates: int = 3):
        self.kg, self.retrieval, self.rewriter, self.answerer = kg, retrieval, rewriter, answerer
        self.llm, self.name = llm, name
        self.use_gold_topic, self.max_ngram, self.link_candidates = use_gold_topic, max_ngram, link_candidates
        self._rel_words: frozenset[str] | None = None

    # --- QAMethod ------------------------------------------------------------------------------
    def answer(self, example: QAExample) -> Prediction:
        return self.answer_batch([example])[0]

    def answer_batch(self, examples: Sequence[QAExample]) -> list[Prediction]:
        start = time.perf_counter()
        links = [link_entities(self.kg, ex.question, ex.topic_entities if self.use_gold_topic else None,
                               self.max_ngram, rel_words=self._relation_words()) for ex in examples]
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
        shared_s = (time.perf_counter() - start) / max(1, len(examples))

        # Retrieve per question; rewrite the ready ones together (a trained rewriter generates all
        # their chunks in one batched call), then answer them with one batched answer call (a
        # local LLM generates a batch much faster than one by one).
        preds, ready = [], []
        for i, (ex, link) in enumerate(zip(examples, links)):
            t0 = time.perf_counter()
            pred, item = self._prepare(ex, link, candidates.get(i, []), model_error)
            pred.latency_s = time.perf_counter() - t0 + shared_s
            preds.append(pred)
            if item is not None:
                ready.append((pred, item))
        waiting = self._rewrite_all(ready)
        if waiting:
            t0 = time.perf_counter()
            answers = self._answer_all([item for _, item in waiting])
            each = (time.perf_counter() - t0) / len(waiting)
            for (pred, (_, _, _, labels)), ans in zip(waiting, answers):
                self._apply(pred, ans, labels)
                pred.latency_s += each
        for pred in preds:
            pred.latency_s = round(pred.latency_s, 6)
        return preds

    def _relation_words(self) -> frozenset[str]:
        """The KG's relation words, for linking questions from their text (read once)."""
        if self._rel_words is None:
            self._rel_words = relation_words(self.kg)
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
        out = {}
        for i, options in found.items():
            if len(options) > 1:
                score = [0.5 ** k * self._instantiated_score(c.entity, paths) for k, (c, paths) in enumerate(options)]
                k = max(range(len(options)), key=lambda j: (score[j], -j))
                links[i] = links[i].choose(options[k][0]) if k else links[i]
            else:
                k = 0
            out[i] = options[k][1]
        return out

    def _instantiated_score(self, entity: str, paths: list) -> float:
        """The score of the best predicted path with an answer instance from `entity` (0 if none)."""
        for p in sorted(paths, key=lambda p: -float(p.score)):
            try:
                walks = self.kg.follow_path(entity, list(p.path), limit=100)
            except Exception:  # a graph failure here only costs the linking choice
                return 0.0
            if any(self.retrieval.semantics.keeps(w.entities, entity) for w in walks):
                return float(p.score)
        return 0.0

    # --- one question ----------------------------------------------------------------------------
    def _prepare(self, ex: QAExample, link: LinkResult, cands: list, model_error: str):
        """Link and retrieve. Returns the prediction so far and, if the question has knowledge to
        rewrite, (question, retrieval, labels)."""
        pred = Prediction(qid=ex.qid, question=ex.question, answers=[], gold_answers=list(ex.answers))
        if ex.extra.get("answer_labels"):  # KGs whose ids are not names: score replies on labels too
            pred.extra["gold_labels"] = list(ex.extra["answer_labels"])
        gold_path = ex.extra.get("gold_path") or ex.relation_path
        gold_path = list(gold_path) if gold_path else None
        pred.extra.update({
            "gold_hop": ex.hops if ex.hops is not None else (len(gold_path) if gold_path else None),
            "gold_path": gold_path,
        })
        pred.topic_entities = link.entities
        pred.extra["linking"] = {"source": link.source, "mentions": link.mentions,
                                 "ambiguous": link.ambiguous, "chosen_by": link.chosen_by}
        if link.status != "ok":
            pred.status, pred.errors = link.status, [link.error]
            return pred, None
        if model_error:
            pred.status, pred.errors = "no_path", [model_error]
            return pred, None

        r = self.retrieval.retrieve(self.kg, link.entities[0], cands)
        pred.errors += r.errors
        pred.paths = [p.to_dict() for p in r.paths]
        pred.triples = r.triples
        pred.extra["dropped_paths"] = [p.to_dict() for p in r.dropped]
        pred.extra["evidence_paths"] = ["/".join(e.path) for e in r.evidence]
        if r.paths:
            pred.extra["pred_hop"], pred.extra["pred_path"] = len(r.paths[0].path), r.paths[0].path
        elif cands:  # nothing instantiated: still report what the model predicted
            best = max(cands, key=lambda c: float(c.score))
            pred.extra["pred_hop"], pred.extra["pred_path"] = len(best.path), list(best.path)
        if r.status != "ok":
            pred.status = r.status
            return pred, None

        return pred, (ex.question, r, self._labels(r))

    def _answer_all(self, items: list[tuple]) -> list[Answer]:
        many = getattr(self.answerer, "answer_many", None)
        try:
            if many is not None:
                return many(items)
        except Exception as err:  # an answerer bug must cost answers, not the run
            return [fallback(r, "llm_error", f"answerer: {type(err).__name__}: {err}") for _, _, r, _ in items]
        answers = []
        for item in items:
            before = self.llm.usage.snapshot() if self.llm is not None else None
            try:
                ans = self.answerer.answer(*item)
            except Exception as err:
                ans = fallback(item[2], "llm_error", f"answerer: {type(err).__name__}: {err}")
            if ans.usage is None and before is not None:
                used = self.llm.usage.since(before)
                ans.usage = {"calls": used.calls, "prompt_tokens": used.prompt_tokens,
                             "completion_tokens": used.completion_tokens}
            answers.append(ans)
        return answers

    def _labels(self, r: Retrieval) -> dict[str, str]:
        ents = {e for t in r.triples for e in (t.head, t.tail)} | {e for p in r.paths for e in p.ends}
        try:
            labels = self.kg.labels(sorted(ents))
        except Exception:  # labels are cosmetic for id==label KGs; never fail a question on them
            labels = {}
        return {e: labels.get(e, e) for e in ents}

    def _rewrite_all(self, ready: list[tuple]) -> list[tuple]:
        """Knowledge text for each (pred, (question, retrieval, labels)); returns (pred, answerer
        input). One `rewrite_many` call when the rewriter has it, else question by question with
        its LLM use counted per question. A failed rewrite falls back to the triple form."""
        from rra.rewrite import TripleRewriter

        if not ready:
            return []
        items = [(q, [Triple(labels.get(t.head, t.head), t.relation, labels.get(t.tail, t.tail)) for t in r.triples])
                 for _, (q, r, labels) in ready]
        name = getattr(self.rewriter, "name", "?")
        texts: list[str | None] = [None] * len(items)
        errors: list[list[str]] = [[] for _ in items]
        many = getattr(self.rewriter, "rewrite_many", None)
        start = time.perf_counter()
        if many is not None:
            try:
                texts = list(many(items))
            except Exception as err:
                errors = [[f"rewriter {name}: {type(err).__name__}: {err}"] for _ in items]
            share = (time.perf_counter() - start) / len(items)
            for pred, _ in ready:
                pred.latency_s += share
        else:
            for k, ((pred, _), (q, triples)) in enumerate(zip(ready, items)):
                t0 = time.perf_counter()
                before = self.llm.usage.snapshot() if self.llm is not None else None
                try:
                    texts[k] = self.rewriter.rewrite(q, triples)
                    errors[k] = list(getattr(self.rewriter, "last_errors", []) or [])
                except Exception as err:
                    errors[k] = [f"rewriter {name}: {type(err).__name__}: {err}"]
                self._count(pred, before)
                pred.latency_s += time.perf_counter() - t0
        out = []
        for (pred, (q, r, labels)), (_, triples), text, errs in zip(ready, items, texts, errors):
            pred.errors += errs
            if text is None:
                text = TripleRewriter().rewrite(q, triples)
            pred.knowledge = text
            out.append((pred, (q, text, r, labels)))
        return out

    @staticmethod
    def _apply(pred: Prediction, ans: Answer, labels: dict[str, str]) -> None:
        pred.answers, pred.reply, pred.status = ans.answers, ans.reply, ans.status
        pred.errors += ans.errors
        pred.extra.update(ans.extra)
        pred.extra["answer_set"] = ans.answer_set
        pred.extra["hits_mode"] = ans.hits_mode
        pred.extra["answer_labels"] = [labels.get(a, a) for a in ans.answers[:10]]
        if ans.usage:
            pred.llm_calls += ans.usage.get("calls", 0)
            pred.llm_prompt_tokens += ans.usage.get("prompt_tokens", 0)
            pred.llm_completion_tokens += ans.usage.get("completion_tokens", 0)

    def _count(self, pred: Prediction, before) -> None:
        """LLM use of the retrieve/rewrite steps (e.g. an LLM rewriter), by usage before/after."""
        if before is not None:
            used = self.llm.usage.since(before)
            pred.llm_calls += used.calls
            pred.llm_prompt_tokens += used.prompt_tokens
            pred.llm_completion_tokens += used.completion_tokens


def marked(question: str, link: LinkResult, mention: str | None = None) -> str:
    """The question with its topic mention (default: the link's first) in `[...]` (unchanged if
    already marked or not found)."""
    if MARKED.search(question) or not (mention or link.mentions):
        return question
    m = mention or link.mentions[0]
    i = question.casefold().find(m.casefold())
    return question if i < 0 else f"{question[:i]}[{question[i:i + len(m)]}]{question[i + len(m):]}"


def build(cfg, **available):
    """Instantiate a Hydra config node, passing only the objects (kg, llm, ...) its target's
    signature names: a template rewriter gets no LLM, an LLM answerer gets one."""
    from hydra.utils import get_object, instantiate

    target = get_object(cfg["_target_"])
    params = inspect.signature(target).parameters
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kw = {k: v for k, v in available.items() if takes_all or k in params}
    return instantiate(cfg, **kw)


def build_rra(kg: KnowledgeGraph, retriever, rewriter, answer, llm=None, name: str = "rra",
              use_gold_topic: bool = True, max_ngram: int = 8, check_relations: bool = True,
              semantics=None, link_candidates: int = 3) -> RRAPipeline:
    """Hydra target of conf/method/rra.yaml (`_recursive_: false`): builds the three steps from
    their config groups with the shared graph and LLM. With `check_relations`, a retriever trained
    on a KG with other relations is refused at once (instead of every question ending in no_path).
    `semantics` is the dataset's answer rule (data.semantics), applied to the retrieved paths."""
    from rra.data.records import AnswerSemantics

    retrieval = build(retriever, kg=kg, llm=llm)
    retrieval.semantics = AnswerSemantics.of(semantics)
    check = getattr(retrieval.model, "check_relations", None)
    if check_relations and check is not None:
        check(kg.relation_types())
    return RRAPipeline(
        kg=kg,
        retrieval=retrieval,
        rewriter=build(rewriter, llm=llm),
        answerer=build(answer, llm=llm),
        llm=llm, name=name, use_gold_topic=use_gold_topic, max_ngram=max_ngram, link_candidates=link_candidates,
    )

"""RRA's Answer step: three answerers behind one protocol.

- `GraphScorer`: no LLM. Ranks the end entities of the kept paths by path score
  (`Retrieval.end_scores`: sum of the scores of the paths reaching an entity, or max). It is a
  baseline and the upper bound of what retrieval hands the LLM.
- `LLMAnswerer`: free-form. The LLM reads the question and the knowledge text and replies; the
  answers are the knowledge entities named in the reply, in reply order. Scored as the RRA paper
  scores it: a hit when a gold answer appears in the reply (`hits_mode="reply"`).
- `ChoiceAnswerer`: the LM chooses among the candidate entities found in the knowledge, either by
  log-likelihood of each candidate as the continuation (`mode="score"`, `llm.score`) or by a
  numbered list and a parsed number (`mode="number"`). Small local models restate facts instead of
  answering; choosing is what they can do.

A failed LLM call, an empty reply or an unparseable choice never ends the question: the error is
recorded, the status says so (llm_error / unparseable) and the graph scorer's ranking is returned.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from abc import ABC, abstractmethod
from typing import Sequence

from rra.graph.base import note
from rra.llm.base import LLMError
from rra.llm.parse import clean_reply, parse_choice, try_parse
from rra.records import Status
from rra.pipeline.retrieve import QuestionContext, Retrieval
from rra.text.matching import mentioned_entities
from rra.text.prompts import CHOICE_PROMPT, NO_KNOWLEDGE_PROMPT, RRA_ANSWER_PROMPT
from rra.text.questions import strip_brackets

@dataclass
class Answer:
    answers: list[str]  # ranked; answers[0] is the Hits@1 answer (entity ids when from the KG)
    answer_set: list[str] = field(default_factory=list)  # what answer F1 is computed on
    reply: str = ""
    status: Status = Status.OK
    errors: list[str] = field(default_factory=list)
    hits_mode: str = "top"  # "top": answers[0] must be gold; "reply": a gold answer in the reply
    extra: dict = field(default_factory=dict)


class Answerer(ABC):
    """Reads a `QuestionContext` (question, knowledge text, retrieval, labels) and answers. The
    pipeline calls `answer_many` with the batch; subclasses get the one-by-one default, and one
    that calls an LLM records each reply with `context.trace.record(reply)`. `uses_llm`: the
    pipeline hands the run's LLM to the constructor (`llm=`)."""

    name: str
    uses_llm: bool = False

    @abstractmethod
    def answer(self, context: QuestionContext) -> Answer:
        """One question's answer."""

    def answer_many(self, contexts: Sequence[QuestionContext]) -> list[Answer]:
        return [self.answer(c) for c in contexts]


class GraphScorer(Answerer):
    """Answers = end entities of the kept paths, ranked by path score (summed over the paths that
    reach an entity, or their max). Entities scoring below `min_relative_score` x the best score
    are not answers (a path at 0.002 next to one at 0.98 is noise), but every candidate is kept
    in `extra["candidates"]` with its score and the best path that reaches it."""

    name = "graph"

    def __init__(self, aggregate: str = "sum", min_relative_score: float = 0.1, max_candidates: int = 50,
                 max_answers: int = 100):
        if aggregate not in ("sum", "max"):
            raise ValueError(f"answer.aggregate must be sum or max, got {aggregate!r}")
        if not 0.0 <= min_relative_score <= 1.0:
            raise ValueError(f"answer.min_relative_score must be in [0, 1], got {min_relative_score!r}")
        if max_answers < 1:
            raise ValueError(f"answer.max_answers must be at least 1, got {max_answers!r}")
        self.aggregate, self.min_relative_score, self.max_candidates = aggregate, min_relative_score, max_candidates
        self.max_answers = max_answers

    def answer(self, context: QuestionContext) -> Answer:
        retrieval, labels = context.retrieval, context.labels
        ranked = retrieval.end_scores(self.aggregate)
        best_path: dict[str, list[str]] = {}
        for p in retrieval.ranked:  # best first: the first path (or plan) reaching an entity is its evidence
            for e in p.ends:
                best_path.setdefault(e, [p.describe(labels)] if retrieval.plans else list(p.path))
        top = ranked[0][1] if ranked else 0.0
        answers = [e for e, s in ranked if s >= self.min_relative_score * top]
        bounds = []
        if len(answers) > self.max_answers:  # a path through a hub ends at thousands: keep the best, say so
            bounds = [f"answers capped at {self.max_answers} of {len(answers)} (answer.max_answers)"]
            note(bounds[0])
            answers = answers[: self.max_answers]
        top_ends = retrieval.ranked[0].ends if retrieval.ranked else []
        candidates = [{"entity": e, "label": labels.get(e, e), "score": round(s, 6), "path": best_path.get(e, [])}
                      for e, s in ranked[: self.max_candidates]]
        return Answer(answers, answer_set=list(top_ends),
                      extra={"answer_scores": [round(s, 6) for _, s in ranked[:10]], "candidates": candidates,
                             "candidates_total": len(ranked), **({"bounds": bounds} if bounds else {})})


def fallback(retrieval: Retrieval, status: Status, error: str, reply: str = "") -> Answer:
    """The graph scorer's answer, marked with why the LLM's could not be used."""
    a = GraphScorer().answer(QuestionContext("", retrieval=retrieval))
    a.status, a.errors, a.reply = status, [error], reply
    return a


def candidate_entities(retrieval: Retrieval, topics: set[str], source: str) -> list[str]:
    """Entities the knowledge offers as answers: `ends` (end entities of the kept paths, by path
    score) or `knowledge` (every entity in the sampled triples, in evidence order), topics excluded.
    A question answered by a query plan offers the plans' answers (its triples also hold the other
    anchors and the condition's values, which are not answers)."""
    if source == "ends" or retrieval.plans:  # a plan's answers are its candidates: not its anchors or values
        return [e for e, _ in retrieval.end_scores()]
    if source != "knowledge":
        raise ValueError(f"candidates must be 'ends' or 'knowledge', got {source!r}")
    seen: dict[str, None] = {}
    for t in retrieval.triples:
        for e in (t.head, t.tail):
            if e not in topics:
                seen.setdefault(e, None)
    return list(seen)


class LLMAnswerer(Answerer):
    """Free-form answers. `answer_many` sends the prompts of a whole batch in one `generate` call
    (local backends batch them, HTTP ones send them concurrently)."""

    name = "llm"
    uses_llm = True

    def __init__(self, llm, prompt: str = RRA_ANSWER_PROMPT, no_knowledge_prompt: str = NO_KNOWLEDGE_PROMPT,
                 max_new_tokens: int = 48):
        if llm is None:
            raise ValueError("answer=llm needs an LLM backend (set llm=... in the config)")
        self.llm, self.prompt, self.no_knowledge_prompt = llm, prompt, no_knowledge_prompt
        self.max_new_tokens = max_new_tokens

    def answer(self, context: QuestionContext) -> Answer:
        return self.answer_many([context])[0]

    def answer_many(self, contexts: Sequence[QuestionContext]) -> list[Answer]:
        prompts = []
        for c in contexts:
            q = strip_brackets(c.question)
            prompts.append(self.prompt.format(knowledge=c.knowledge, question=q) if c.knowledge.strip()
                           else self.no_knowledge_prompt.format(question=q))
        replies = self.llm.generate(prompts, max_new_tokens=self.max_new_tokens)
        return [self._read(c.trace.record(reply), c.retrieval, c.labels) for reply, c in zip(replies, contexts)]

    @staticmethod
    def _read(reply, retrieval, labels) -> Answer:
        text = clean_reply(reply.text)
        if not reply.ok:
            a = fallback(retrieval, Status.LLM_ERROR, f"answer llm: {reply.error}")
        elif not text:
            a = fallback(retrieval, Status.UNPARSEABLE, "answer llm: empty reply")
        else:
            answers = mentioned_entities(text, labels) or [text.splitlines()[0].strip()]
            a = Answer(answers, answer_set=answers, reply=text, hits_mode="reply")
        return a


class ChoiceAnswerer(Answerer):
    """The LM picks one of the candidate entities. `mode=score`: one `llm.score` call per question
    (all candidates scored in it); `mode=number`: the prompts of a batch go in one `generate` call."""

    name = "choice"
    uses_llm = True

    def __init__(self, llm, mode: str = "score", candidates: str = "knowledge",
                 max_candidates: int = 20, prompt: str = RRA_ANSWER_PROMPT,
                 choice_prompt: str = CHOICE_PROMPT, max_new_tokens: int = 8,
                 length_norm: bool = False):
        if llm is None:
            raise ValueError("answer=choice needs an LLM backend (set llm=... in the config)")
        if mode not in ("score", "number"):
            raise ValueError(f"answer.mode must be score or number, got {mode!r}")
        self.llm, self.mode, self.source = llm, mode, candidates
        self.max_candidates, self.prompt, self.choice_prompt = max_candidates, prompt, choice_prompt
        self.max_new_tokens, self.length_norm = max_new_tokens, length_norm

    def answer(self, context: QuestionContext) -> Answer:
        return self.answer_many([context])[0]

    def answer_many(self, contexts: Sequence[QuestionContext]) -> list[Answer]:
        out: list[Answer | None] = [None] * len(contexts)
        asks = []  # (index, context, candidates, names)
        for i, c in enumerate(contexts):
            r = c.retrieval
            cands = candidate_entities(r, {r.topic_entity}, self.source)[: self.max_candidates]
            if not cands:
                out[i] = fallback(r, Status.NO_PATH, "choice: no candidate entity in the knowledge")
            elif len(cands) == 1:  # nothing to choose: no LLM call
                out[i] = Answer(cands, answer_set=cands, extra={"candidates": cands})
            else:
                asks.append((i, c, cands, [c.labels.get(e, e) for e in cands]))
        if self.mode == "score":
            for i, *ask in asks:
                out[i] = self._by_score(*ask)
        elif asks:
            prompts = [self.choice_prompt.format(knowledge=c.knowledge, question=strip_brackets(c.question),
                                                 options="\n".join(f"{n}. {name}" for n, name in enumerate(names, 1)))
                       for _, c, _, names in asks]
            replies = self.llm.generate(prompts, max_new_tokens=self.max_new_tokens)
            for (i, c, cands, names), reply in zip(asks, replies):
                out[i] = self._read_number(c.trace.record(reply), c.retrieval, cands, names)
        return out

    def _by_score(self, context: QuestionContext, cands, names) -> Answer:
        retrieval = context.retrieval
        prompt = self.prompt.format(knowledge=context.knowledge, question=strip_brackets(context.question))
        before = self.llm.usage.snapshot()
        try:
            scores = self.llm.score(prompt, [" " + n for n in names])
            error = ""
        except NotImplementedError:
            error = "choice: this LLM backend cannot score; use answer.mode=number"
        except LLMError as err:  # a failed call; anything else is a bug (recorded as `error` by the pipeline)
            error = f"choice llm: {type(err).__name__}: {err}"
        used = self.llm.usage.since(before)  # `score` gives no reply objects: count by the backend's delta
        context.trace.usage.add(used)
        if error:
            a = fallback(retrieval, Status.LLM_ERROR, error)
        else:
            if self.length_norm:  # per-character log-likelihood, so long names are not penalised
                scores = [s / max(1, len(n)) for s, n in zip(scores, names)]
            order = sorted(range(len(cands)), key=lambda i: -scores[i])
            ranked = [cands[i] for i in order]
            a = Answer(ranked, answer_set=ranked[:1],
                       extra={"candidates": cands, "choice_scores": [round(float(s), 4) for s in scores]})
        return a

    @staticmethod
    def _read_number(reply, retrieval, cands, names) -> Answer:
        if not reply.ok:
            a = fallback(retrieval, Status.LLM_ERROR, f"choice llm: {reply.error}")
        else:
            # a number ("2", "Option 2", "(B)") or, failing that, an option's name in the reply
            k, error = try_parse(parse_choice, reply.text, len(cands), names)
            if k is None:
                a = fallback(retrieval, Status.UNPARSEABLE, f"choice: {error}", reply.text)
            else:
                ranked = [cands[k]] + [c for j, c in enumerate(cands) if j != k]
                a = Answer(ranked, answer_set=ranked[:1], reply=reply.text, extra={"candidates": cands})
        return a

"""KGQP: find the entities a question names, read the facts around them, answer from the facts.

  identify - the LLM lists the entities the question names (`identify="llm"`), or the question's
             `[marked]` spans / word n-grams are matched against KG labels (`identify="lexical"`,
             the shared `rra.linking`); an LLM reply that names nothing usable falls back to
             lexical matching, recorded;
  look up  - each name: exact label, then case-insensitive label, then case-insensitive substring
             (`KnowledgeGraph.find_entities`), shortest label first;
  gather   - the facts within `hops` of the matched entities, at most `max_facts` (seeded sample
             of the outer hop when over);
  answer   - the LLM reads the facts (LLM mode); heuristic mode ranks the facts by MiniLM
             similarity to the question and answers with the entities of the best facts.
"""
from __future__ import annotations

from dataclasses import dataclass

from rra.baselines.common import (BaselineSettings, excluded, knowledge_text, read_answers, set_answers,
                                  triple_text)
from rra.baselines.replies import parse_answers
from rra.linking import link_entities
from rra.graph.base import KnowledgeGraph, sample
from rra.records import Prediction, QAExample, Status, Trace, Triple
from rra.text.prompts import TRIPLES_ANSWER_PROMPT
from rra.text.questions import strip_brackets
from rra.text.relations import relation_phrase

IDENTIFY_PROMPT = """List the named entities (people, movies, places, years, ...) mentioned in the question. Reply with the names only, separated by " | ".
Example:
Question: who directed the movies written by Stephen King
Entities: Stephen King

Question: {question}
Entities:"""


def look_up(kg: KnowledgeGraph, name: str) -> list[str]:
    """Exact label, then case-insensitive, then case-insensitive substring; shortest label first."""
    name = name.strip()
    if not name:
        return []
    if kg.has_entity(name):
        return [name]
    for mode in ("exact", "casefold", "substring"):
        hits = kg.find_entities(name, mode=mode, limit=3)
        if hits:
            return hits
    return []


def rank_facts(encoder, question: str, facts: list[Triple], labels: dict[str, str], text: str = "relation",
               names: dict[str, str] | None = None) -> list[Triple]:
    """Facts by similarity to the question, best first (stable for ties). `text="relation"` embeds
    only the relation's words (a handful of distinct strings, cached: cheap); `"triple"` embeds
    each whole fact (better, but every fact is new text: ~50x the encoder work on MetaQA)."""
    if text == "triple":
        texts = [triple_text(t, labels, names) for t in facts]
    elif text == "relation":
        texts = [relation_phrase(t.relation, names) for t in facts]
    else:
        raise ValueError(f"fact_text must be 'relation' or 'triple', got {text!r}")
    distinct = list(dict.fromkeys(texts))
    sim = dict(zip(distinct, encoder.similarity(question, distinct)))
    return [t for _, t in sorted(zip(texts, facts), key=lambda x: -sim[x[0]])]


@dataclass(eq=False)  # identity semantics: methods are shared objects, not values
class KGQP(BaselineSettings):
    """Entities named in the question, their facts within `hops`, an answer read from those facts."""

    name = "kgqp"

    identify: str | None = None
    hops: int = 2
    max_entities: int = 3
    max_facts: int = 60
    max_answers: int = 10
    fact_text: str = "relation"
    max_new_tokens: int = 32

    def __post_init__(self):
        super().__post_init__()
        self.identify = self.identify or ("llm" if self.mode == "llm" else "lexical")
        if self.identify not in ("llm", "lexical"):
            raise ValueError(f"KGQP identify must be 'llm' or 'lexical', got {self.identify!r}")
        if self.identify == "llm" and self.llm is None:
            raise ValueError("KGQP with the LLM needs an `llm`; use mode=heuristic to run without one")

    # -- steps ---------------------------------------------------------------------------
    def identify_entities(self, example: QAExample, trace: Trace) -> tuple[list[str], list[str], str]:
        """(entity ids, the names that produced them, how): LLM names first, lexical fallback."""
        question = strip_brackets(example.question)
        if self.identify == "llm":
            reply = trace.ask([IDENTIFY_PROMPT.format(question=question)])[0]
            names = parse_answers(reply.text) if reply.ok else None
            found, used = [], []
            for name in names or []:
                hits = look_up(self.kg, name)
                if hits and hits[0] not in found:
                    found.append(hits[0])
                    used.append(name)
            if found:
                return found[: self.max_entities], used[: self.max_entities], "llm"
            trace.bad_reply("entity list", reply)
        link = link_entities(self.kg, example.question, None, max_entities=self.max_entities)
        found, used = list(link.entities), list(link.mentions)
        if not found:  # a marked or n-gram mention with no exact/casefold label: try substrings
            for m in link.mentions:
                hits = look_up(self.kg, m)
                if hits:
                    found.append(hits[0])
                    used.append(m)
        return found[: self.max_entities], used[: self.max_entities], "lexical"

    def gather_facts(self, entities: list[str], qid: str) -> list[Triple]:
        facts: list[Triple] = []
        seen_entities = set(entities)
        frontier = list(entities)
        for hop in range(self.hops):
            layer: list[Triple] = []
            for e in frontier:
                layer += [t for t in self.kg.triples(e) if not excluded(t.relation, self.excluded)]
            layer = [t for t in dict.fromkeys(layer) if t not in facts]
            room = self.max_facts - len(facts)
            layer = sample(layer, room, self.seed + hop) if room > 0 else []
            facts += layer
            frontier = [x for t in layer for x in (t.head, t.tail) if x not in seen_entities]
            frontier = list(dict.fromkeys(frontier))
            seen_entities.update(frontier)
            if not frontier or len(facts) >= self.max_facts:
                break
        return facts

    def explore(self, example: QAExample, pred: Prediction, trace: Trace) -> None:
        question = strip_brackets(example.question)
        entities, names, how = self.identify_entities(example, trace)
        pred.topic_entities = entities
        pred.extra.update(identified=names, identified_by=how)
        if not entities:
            pred.status = Status.NO_TOPIC_ENTITY
            set_answers(pred, [], False)
            return
        facts = self.gather_facts(entities, example.qid)
        labels = self.kg.labels({x for t in facts for x in (t.head, t.tail)} | set(entities))
        pred.triples = facts
        pred.knowledge = knowledge_text(facts, labels, self.relation_names)
        pred.extra["visited"] = list(dict.fromkeys([*entities, *(x for t in facts for x in (t.head, t.tail))]))
        if not facts:
            pred.status = Status.NO_PATH
            set_answers(pred, [], False)
            return
        if self.mode == "heuristic":
            ranked = rank_facts(self.encoder, question, facts, labels, self.fact_text, self.relation_names)
            answers = [x for t in ranked for x in (t.tail, t.head) if x not in entities]
            answers = list(dict.fromkeys(answers))[: self.max_answers]
            set_answers(pred, answers, False, answers[:1])
            pred.status = Status.OK
            return
        reply = trace.ask([TRIPLES_ANSWER_PROMPT.format(question=question, knowledge=pred.knowledge)],
                          self.answer_max_new_tokens)[0]
        pred.reply = reply.text
        answers = read_answers(reply.text, labels, entities)
        if answers is None:
            trace.bad_reply("answer", reply)
        set_answers(pred, answers or [], True)
        pred.status = trace.status()

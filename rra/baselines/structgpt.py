"""StructGPT: iterative reading-reasoning over the KG.

Each iteration (at most `max_iterations`):
  read      - the relations around the current entities, both directions (`^r` = incoming),
              minus schema/label relations and the edge each entity was reached by;
  select    - the LLM picks up to `max_relations` of them, seeing the history of earlier picks;
  read      - the triples of the picked relations (at most `max_candidates` seeded neighbours per
              entity and relation);
  filter    - when more than `max_triples` were read, the LLM keeps the relevant ones (by number);
  check     - the LLM says whether the triples so far answer the question (yes/no + answer).
The far ends of the kept triples become the next current entities. Without a "yes", the LLM
answers from all kept triples (or from its own knowledge when nothing was read).

Heuristic mode: MiniLM similarity between the question and the relation chain leading to each
entity picks relations and filters triples; it stops at `max_iterations` or when the best triple
reaches `stop_similarity`; the answer is the reached entities ranked by that similarity.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rra.baselines.common import (WalkSettings, excluded, knowledge_text, missing_status, read_answers,
                                  seed_for, set_answers, topic_entities, triple_text)
from rra.baselines.replies import parse_choices, parse_yes_no
from rra.graph.base import inverse, sample, step_triple
from rra.records import Prediction, QAExample, Status, Trace, Triple
from rra.text.prompts import OWN_KNOWLEDGE_PROMPT, TRIPLES_ANSWER_PROMPT
from rra.text.questions import strip_brackets
from rra.text.relations import relation_display, relation_phrase

SELECT_PROMPT = """You are reading a knowledge graph to answer a question. Choose the relations (at most {k}) worth following next from the current entities. Reply with the relation names separated by ";".
Example:
Question: Who directed the movies that Tom Hanks acted in?
Current entities: Tom Hanks
Relations chosen so far: none
Relations: 1. starred_actors (reverse); 2. written_by (reverse)
Answer: starred_actors (reverse)

Question: {question}
Current entities: {entities}
Relations chosen so far: {history}
Relations: {relations}
Answer:"""

FILTER_PROMPT = """Which of these knowledge graph triples help to answer the question? Reply with their numbers separated by commas.

Question: {question}
Triples:
{triples}
Answer:"""

CHECK_PROMPT = """Given a question and knowledge graph triples (entity, relation, entity), can you answer the question with these triples and your knowledge? Reply Yes or No; if Yes, add "Answer: " and the answer entities separated by " | ".

Question: {question}
Triples:
{triples}
Reply:"""


@dataclass
class Walk:
    """One question's exploration state: the relation chain that reached each visited entity (the
    history StructGPT's prompts are made of), similarity scores, the current frontier."""

    chain: dict[str, list[str]]
    current: list[str]
    labels: dict[str, str]
    score: dict[str, float] = field(default_factory=dict)
    history: list[list[str]] = field(default_factory=list)
    kept: list[Triple] = field(default_factory=list)
    sufficient: bool = False

    def advance(self, kept: list[tuple[Triple, str, str]]) -> None:
        """Keep the triples, visit the entities they reach first; those become the frontier."""
        self.kept += [t for t, _, _ in kept if t not in self.kept]
        nxt = []
        for t, e, n in kept:
            if n not in self.chain:
                self.chain[n] = self.chain[e] + [_relation_of(t, e)]
                nxt.append(n)
        self.current = nxt

    def reached(self, topics) -> list[str]:
        return [e for e in self.chain if e not in topics]


@dataclass(eq=False)  # identity semantics: methods are shared objects, not values
class StructGPT(WalkSettings):
    """StructGPT: read relations, select, read triples, filter, check; at most `max_iterations` times."""

    name = "structgpt"

    max_iterations: int = 3
    max_relations: int = 3  # relations selected per iteration
    max_triples: int = 20  # above this many triples read, they are filtered
    max_relations_shown: int = 60

    def explore(self, example: QAExample, pred: Prediction, trace: Trace) -> None:
        question = strip_brackets(example.question)
        topics = topic_entities(self.kg, example)
        pred.topic_entities = topics or pred.topic_entities
        walk = Walk(chain={t: [] for t in topics}, current=list(topics), labels=dict(self.kg.labels(topics)))
        answers, reply_text = None, ""
        for _ in range(self.max_iterations):
            cands, around = self._relations_around(walk)
            if not cands:
                break
            selected = (self._select_heuristic(question, walk, cands, around) if self.mode == "heuristic"
                        else self._select_llm(question, walk.current, walk.labels, walk.history, cands, trace))
            walk.history.append(selected)
            read = self._read_triples(example, walk, selected, around)
            if not read:
                break
            walk.labels.update(self.kg.labels({n for _, _, n in read}))
            if self.mode == "heuristic":
                kept = [read[i] for i in self._filter_heuristic(question, walk, read)]
                walk.advance(kept)
                if walk.score and max(walk.score[n] for _, _, n in kept) >= self.stop_similarity:
                    walk.sufficient = True
                    break
                continue
            keep = self._filter_llm(question, read, walk.labels, trace) if len(read) > self.max_triples \
                else list(range(len(read)))
            walk.advance([read[i] for i in keep])
            answers, reply_text = self._check_llm(question, walk, topics, trace)
            if answers is not None:
                break
        self._record(example, pred, walk, topics)
        if self.mode == "heuristic":
            self._answer_heuristic(example, pred, walk, topics)
        else:
            self._answer_llm(example, pred, walk, topics, question, answers, reply_text, trace)

    # -- one iteration's steps -----------------------------------------------------------
    def _relations_around(self, walk: "Walk") -> tuple[list[str], dict[str, list[str]]]:
        """Relations (both directions) around the current entities; the candidates shown are the
        first `max_relations_shown` of them, sorted. The edge an entity was reached over, walked
        back, is one of them: it leads to siblings (the other films of a director); entities
        already visited are never read again (`_read_triples`)."""
        around: dict[str, list[str]] = {}
        for e in walk.current:
            around[e] = [r for r in self.kg.relations(e, "both") if not excluded(r, self.excluded)]
        cands = sorted({r for rels in around.values() for r in rels})[: self.max_relations_shown]
        return cands, around

    def _select_heuristic(self, question, walk: "Walk", cands, around) -> list[str]:
        texts = {(e, r): _chain_phrase(walk.chain[e] + [r], self.relation_names) for e in walk.current for r in around[e] if r in cands}
        sims = dict(zip(texts, self.encoder.similarity(question, list(texts.values()))))
        best = {r: max(s for (e, rr), s in sims.items() if rr == r) for r in cands}
        return sorted(cands, key=lambda r: -best[r])[: self.max_relations]

    def _read_triples(self, example, walk: "Walk", selected, around) -> list[tuple[Triple, str, str]]:
        """(triple, from entity, reached entity) over the selected relations, a seeded sample of at
        most `max_candidates` unvisited neighbours per (entity, relation)."""
        read = []
        for e in walk.current:
            for r in selected:
                if r not in around[e]:
                    continue
                nbrs = [n for n in self.kg.neighbors(e, r) if n not in walk.chain]
                for n in sample(nbrs, self.max_candidates, seed_for(self.seed, example.qid, e, r)):
                    read.append((step_triple(e, r, n), e, n))
        return read

    def _filter_heuristic(self, question, walk: "Walk", read) -> list[int]:
        """The `max_triples` read triples most similar to the question (relation chain, plus the
        reached entity's label when `entity_weight` > 0); records each reached entity's score."""
        rel_sims = self.encoder.similarity(question, [_chain_phrase(walk.chain[e] + [_relation_of(t, e)], self.relation_names)
                                                      for t, e, _ in read])
        ent_sims = (self.encoder.similarity(question, [walk.labels.get(n, n) for _, _, n in read])
                    if self.entity_weight else [0.0] * len(read))  # labels are new text: costly
        scored = [((1 - self.entity_weight) * a + self.entity_weight * b, i)
                  for i, (a, b) in enumerate(zip(rel_sims, ent_sims))]
        for s, i in scored:
            n = read[i][2]
            walk.score[n] = max(walk.score.get(n, -1.0), s)
        return sorted(i for _, i in sorted(scored, key=lambda x: -x[0])[: self.max_triples])

    def _check_llm(self, question, walk: "Walk", topics, trace: Trace) -> tuple[list[str] | None, str]:
        """Ask whether the triples kept so far answer the question; (answers, reply) on a usable yes."""
        prompt = CHECK_PROMPT.format(question=question, triples=knowledge_text(walk.kept, walk.labels, self.relation_names))
        reply = trace.ask([prompt])[0]
        verdict = parse_yes_no(reply.text)
        if verdict is None:
            trace.bad_reply("sufficiency (yes/no)", reply)
        if not verdict:
            return None, ""
        answers = read_answers(reply.text, walk.labels, topics)
        walk.sufficient = answers is not None  # "yes" but no answer: ask for the answer at the end
        return answers, reply.text

    # -- the answer ----------------------------------------------------------------------
    def _record(self, example, pred: Prediction, walk: "Walk", topics) -> None:
        pred.triples = walk.kept
        pred.knowledge = knowledge_text(walk.kept, walk.labels, self.relation_names)
        pred.paths = [{"path": [*walk.chain[e], e], "relations": walk.chain[e],
                       "score": round(walk.score.get(e, 0.0), 6)} for e in walk.reached(topics)]
        pred.extra.update(visited=list(walk.chain), relation_history=walk.history,
                          iterations=len(walk.history), sufficient=walk.sufficient)

    def _answer_heuristic(self, example, pred: Prediction, walk: "Walk", topics) -> None:
        answers = sorted(walk.reached(topics), key=lambda e: -walk.score.get(e, -1.0))
        best = walk.chain[answers[0]] if answers else None
        set_answers(pred, answers, False, [e for e in answers if walk.chain[e] == best])
        pred.paths.sort(key=lambda p: -p["score"])
        pred.status = missing_status(example, topics) or (Status.OK if walk.kept else Status.NO_PATH)

    def _answer_llm(self, example, pred: Prediction, walk: "Walk", topics, question, answers, reply_text,
                    trace: Trace) -> None:
        if answers is None:
            prompt = (TRIPLES_ANSWER_PROMPT.format(question=question, knowledge=pred.knowledge) if walk.kept
                      else OWN_KNOWLEDGE_PROMPT.format(question=question))
            reply = trace.ask([prompt], self.answer_max_new_tokens)[0]
            reply_text = reply.text
            answers = read_answers(reply.text, walk.labels, topics)
            if answers is None:
                trace.bad_reply("answer", reply)
        pred.reply = reply_text
        set_answers(pred, answers or [], True)
        pred.status = missing_status(example, topics) or (Status.NO_PATH if not walk.kept else trace.status())
        pred.extra["answered_from"] = "triples" if walk.kept else "own_knowledge"

    def _select_llm(self, question, current, labels, history, cands, trace: Trace) -> list[str]:
        if len(cands) == 1:
            return cands
        shown = "; ".join(f"{i}. {relation_display(r, self.relation_names)}" for i, r in enumerate(cands, 1))
        hist = "; ".join(", ".join(relation_display(r, self.relation_names) for r in step) for step in history) or "none"
        ents = ", ".join(labels.get(e, e) for e in current[:10]) + (" ..." if len(current) > 10 else "")
        prompt = SELECT_PROMPT.format(k=self.max_relations, question=question, entities=ents,
                                      history=hist, relations=shown)
        reply = trace.ask([prompt])[0]
        picked = parse_choices(reply.text, cands, {r: relation_display(r, self.relation_names) for r in cands}) if reply.ok else None
        if not picked:
            trace.bad_reply("relation choice", reply)
            return cands[: self.max_relations]
        return [r for r, _ in sorted(picked.items(), key=lambda kv: -kv[1])][: self.max_relations]

    def _filter_llm(self, question, read, labels, trace: Trace) -> list[int]:
        lines = "\n".join(f"{i}. {triple_text(t, labels, self.relation_names)}" for i, (t, _, _) in enumerate(read, 1))
        reply = trace.ask([FILTER_PROMPT.format(question=question, triples=lines)])[0]
        # the candidates are the shown numbers "1".."n", found in the reply as whole words
        numbers = [str(i) for i in range(1, len(read) + 1)]
        picked = parse_choices(reply.text, numbers, {}) if reply.ok else None
        if not picked:
            trace.bad_reply("triple filter", reply)
            return list(range(min(len(read), self.max_triples)))
        return sorted(int(i) - 1 for i in picked)[: self.max_triples]


def _relation_of(t: Triple, from_entity: str) -> str:
    """The (maybe inverse) relation walked from `from_entity` over triple `t`."""
    return t.relation if t.head == from_entity else inverse(t.relation)


def _chain_phrase(relations: list[str], names: dict[str, str] | None = None) -> str:
    return ", then ".join(relation_phrase(r, names) for r in relations)

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

from rra.baselines.common import (
    resolve_mode, run_method, DEFAULT_EXCLUDED, Trace, excluded, knowledge_text, missing_status, set_answers, read_answers, seed_for, topic_entities, triple_text,
)
from rra.baselines.replies import parse_choices, parse_yes_no
from rra.data.records import QAExample
from rra.graph.base import KnowledgeGraph, Triple, inverse, sample, step_triple
from rra.methods import Prediction
from rra.text import OWN_KNOWLEDGE_PROMPT, TRIPLES_ANSWER_PROMPT, relation_display, relation_phrase, strip_brackets

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


class StructGPT:
    name = "structgpt"

    def __init__(
        self,
        kg: KnowledgeGraph,
        llm=None,
        encoder=None,
        mode: str = "auto",
        max_iterations: int = 3,
        max_relations: int = 3,
        max_candidates: int = 20,
        max_triples: int = 20,
        max_relations_shown: int = 60,
        excluded_relations: list[str] | None = None,
        seed: int = 0,
        entity_weight: float = 0.0,
        stop_similarity: float = 0.8,
        max_new_tokens: int = 96,
        answer_max_new_tokens: int = 64,
    ):
        mode = resolve_mode("StructGPT", mode, llm, encoder)
        self.kg, self.llm, self.encoder, self.mode = kg, llm, encoder, mode
        self.max_iterations, self.max_relations = max_iterations, max_relations
        self.max_candidates, self.max_triples = max_candidates, max_triples
        self.max_relations_shown = max_relations_shown
        self.excluded = list(DEFAULT_EXCLUDED if excluded_relations is None else excluded_relations)
        self.seed, self.entity_weight, self.stop_similarity = seed, entity_weight, stop_similarity
        self.max_new_tokens, self.answer_max_new_tokens = max_new_tokens, answer_max_new_tokens

    def answer(self, example: QAExample) -> Prediction:
        return run_method(self, example, self.max_new_tokens)

    def _run(self, example: QAExample, pred: Prediction, trace: Trace) -> None:
        question = strip_brackets(example.question)
        topics = topic_entities(self.kg, example)
        pred.topic_entities = topics or pred.topic_entities
        heuristic = self.mode == "heuristic"
        # entity -> relation chain that reached it (the trace that StructGPT's history is made of)
        chain: dict[str, list[str]] = {t: [] for t in topics}
        score: dict[str, float] = {}
        current = list(topics)
        history: list[list[str]] = []
        kept_all: list[Triple] = []
        answers, reply_text, sufficient = None, "", False
        labels = dict(self.kg.labels(topics))

        for it in range(1, self.max_iterations + 1):
            if not current:
                break
            # -- read relations (bidirectional) -----------------------------------------
            around: dict[str, list[str]] = {}
            for e in current:
                back = inverse(chain[e][-1]) if chain[e] else None
                around[e] = [r for r in self.kg.relations(e, "both")
                             if not excluded(r, self.excluded) and r != back]
            cands = sorted({r for rels in around.values() for r in rels})[: self.max_relations_shown]
            if not cands:
                break
            # -- select ---------------------------------------------------------------------
            if heuristic:
                texts = {(e, r): _chain_phrase(chain[e] + [r]) for e in current for r in around[e] if r in cands}
                sims = dict(zip(texts, self.encoder.similarity(question, list(texts.values()))))
                best = {r: max(s for (e, rr), s in sims.items() if rr == r) for r in cands}
                selected = sorted(cands, key=lambda r: -best[r])[: self.max_relations]
            else:
                selected = self._select_llm(question, current, labels, history, cands, trace)
            history.append(selected)
            # -- read triples ---------------------------------------------------------------
            read: list[tuple[Triple, str, str]] = []  # (triple, from entity, reached entity)
            for e in current:
                for r in selected:
                    if r not in around[e]:
                        continue
                    nbrs = [n for n in self.kg.neighbors(e, r) if n not in chain]
                    for n in sample(nbrs, self.max_candidates, seed_for(self.seed, example.qid, e, r)):
                        read.append((step_triple(e, r, n), e, n))
            if not read:
                break
            labels.update(self.kg.labels({n for _, _, n in read}))
            # -- filter -----------------------------------------------------------------------
            if heuristic:
                rel_texts = [_chain_phrase(chain[e] + [_relation_of(t, e)]) for t, e, _ in read]
                rel_sims = self.encoder.similarity(question, rel_texts)
                ent_sims = (self.encoder.similarity(question, [labels.get(n, n) for _, _, n in read])
                            if self.entity_weight else [0.0] * len(read))  # labels are new text: costly
                scored = [((1 - self.entity_weight) * a + self.entity_weight * b, i)
                          for i, (a, b) in enumerate(zip(rel_sims, ent_sims))]
                keep = sorted(i for _, i in sorted(scored, key=lambda x: -x[0])[: self.max_triples])
                for s, i in scored:
                    n = read[i][2]
                    score[n] = max(score.get(n, -1.0), s)
            elif len(read) > self.max_triples:
                keep = self._filter_llm(question, read, labels, trace)
            else:
                keep = list(range(len(read)))
            kept = [read[i] for i in keep]
            kept_all += [t for t, _, _ in kept if t not in kept_all]
            nxt = []
            for t, e, n in kept:
                if n not in chain:
                    chain[n] = chain[e] + [_relation_of(t, e)]
                    nxt.append(n)
            current = nxt
            # -- check -----------------------------------------------------------------------
            if heuristic:
                if score and max(score[n] for _, _, n in kept) >= self.stop_similarity:
                    sufficient = True
                    break
                continue
            prompt = CHECK_PROMPT.format(question=question, triples=knowledge_text(kept_all, labels))
            reply = trace.ask([prompt])[0]
            verdict = parse_yes_no(reply.text)
            if verdict is None:
                trace.bad_reply("sufficiency (yes/no)", reply)
            if verdict:
                sufficient, reply_text = True, reply.text
                answers = read_answers(reply.text, labels, topics)
                if answers is not None:
                    break
                sufficient = False  # "yes" but no answer: ask for the answer below

        pred.triples = kept_all
        pred.knowledge = knowledge_text(kept_all, labels)
        reached = [e for e in chain if e not in topics]
        pred.paths = [{"path": [*chain[e], e], "relations": chain[e], "score": round(score.get(e, 0.0), 6)}
                      for e in reached]
        pred.extra.update(visited=list(chain), relation_history=history, iterations=len(history),
                          sufficient=sufficient)
        missing = missing_status(example, topics)
        if heuristic:
            answers = sorted(reached, key=lambda e: -score.get(e, -1.0))
            best = chain[answers[0]] if answers else None
            set_answers(pred, answers, False, [e for e in answers if chain[e] == best])
            pred.paths.sort(key=lambda p: -p["score"])
            pred.status = missing or ("ok" if kept_all else "no_path")
            return
        if answers is None:
            prompt = (TRIPLES_ANSWER_PROMPT.format(question=question, knowledge=pred.knowledge) if kept_all
                      else OWN_KNOWLEDGE_PROMPT.format(question=question))
            reply = trace.ask([prompt], self.answer_max_new_tokens)[0]
            reply_text = reply.text
            answers = read_answers(reply.text, labels, topics)
            if answers is None:
                trace.bad_reply("answer", reply)
        pred.reply = reply_text
        set_answers(pred, answers or [], True)
        pred.status = missing or ("no_path" if not kept_all else trace.status())
        pred.extra["answered_from"] = "triples" if kept_all else "own_knowledge"

    def _select_llm(self, question, current, labels, history, cands, trace: Trace) -> list[str]:
        if len(cands) == 1:
            return cands
        shown = "; ".join(f"{i}. {relation_display(r)}" for i, r in enumerate(cands, 1))
        hist = "; ".join(", ".join(relation_display(r) for r in step) for step in history) or "none"
        ents = ", ".join(labels.get(e, e) for e in current[:10]) + (" ..." if len(current) > 10 else "")
        prompt = SELECT_PROMPT.format(k=self.max_relations, question=question, entities=ents,
                                      history=hist, relations=shown)
        reply = trace.ask([prompt])[0]
        picked = parse_choices(reply.text, cands, {r: relation_display(r) for r in cands}) if reply.ok else None
        if not picked:
            trace.bad_reply("relation choice", reply)
            return cands[: self.max_relations]
        return [r for r, _ in sorted(picked.items(), key=lambda kv: -kv[1])][: self.max_relations]

    def _filter_llm(self, question, read, labels, trace: Trace) -> list[int]:
        lines = "\n".join(f"{i}. {triple_text(t, labels)}" for i, (t, _, _) in enumerate(read, 1))
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


def _chain_phrase(relations: list[str]) -> str:
    return ", then ".join(relation_phrase(r) for r in relations)

"""Think-on-Graph (ToG): beam exploration of the KG from the topic entities, pruned by the LLM.

Each depth step (at most `depth`), for every beam (at most `width`):
  relation pruning  - the LLM picks and scores up to `width` relations around the beam's end entity;
  entity pruning    - for each chosen relation, at most `max_candidates` neighbours (seeded sample)
                      are scored by the LLM (a single candidate gets score 1 with no call);
  beam update       - candidates ranked by relation score x entity score, the best `width` kept;
  sufficiency       - the LLM reads the kept paths and says whether it can answer (yes/no + answer).
Exploration stops early when no entity is left. Without a "yes", the LLM answers from all explored
triples, or from its own knowledge when exploration found nothing.

Heuristic mode (`mode="heuristic"`): no LLM at all. MiniLM similarity between the question and the
relation chain of a path (plus a little of the end entity's label) scores relations and entities;
exploration stops at `depth` or when the best path reaches `stop_similarity`; the answer is the end
entities of the best-scoring paths over all depths (so a 2-hop question can end at depth 2).

All prompts of one step are independent and go to `llm.generate` as one list, which HTTP backends
send concurrently.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rra.baselines.common import (WalkSettings, excluded, knowledge_text, missing_status, read_answers,
                                  seed_for, set_answers, topic_entities)
from rra.baselines.replies import parse_choices, parse_scores, parse_yes_no
from rra.graph.base import sample, step_triple
from rra.records import Prediction, QAExample, Status, Trace, Triple
from rra.text.prompts import OWN_KNOWLEDGE_PROMPT, TRIPLES_ANSWER_PROMPT
from rra.text.questions import strip_brackets
from rra.text.relations import relation_display, relation_phrase

RELATION_PROMPT = """Please retrieve {width} relations (separated by semicolon) that contribute to the question and rate their contribution on a scale from 0 to 1 (the sum of the scores of {width} relations is 1).
Example:
Question: Who directed the movie that Tom Hanks starred in in 1994?
Topic entity: Tom Hanks
Relations: 1. starred_actors (reverse); 2. directed_by (reverse); 3. has_tags (reverse)
Answer: {{starred_actors (reverse) (Score: 0.8)}}; {{has_tags (reverse) (Score: 0.1)}}; {{directed_by (reverse) (Score: 0.1)}}

Question: {question}
Topic entity: {entity}
Relations: {relations}
Answer:"""

ENTITY_PROMPT = """Please score the entities' contribution to the question on a scale from 0 to 1 (the sum of the scores of all entities is 1).
Example:
Question: Which movies did the director of Alien also direct?
Relation: directed_by
Entities: 1. Ridley Scott; 2. James Cameron
Score: {{Ridley Scott (Score: 1.0)}}; {{James Cameron (Score: 0.0)}}

Question: {question}
Relation: {relation}
Entities: {entities}
Score:"""

SUFFICIENCY_PROMPT = """Given a question and the associated retrieved knowledge graph triplets (entity, relation, entity), you are asked to answer whether it's sufficient for you to answer the question with these triplets and your knowledge (Yes or No). If Yes, also give the answer as "Answer: ...".
Example:
Question: Who directed the movie Alien?
Knowledge triplets:
(Alien, directed_by, Ridley Scott)
Reply: {{Yes}}. Answer: Ridley Scott

Question: {question}
Knowledge triplets:
{knowledge}
Reply:"""


@dataclass
class Beam:
    entities: list[str]  # topic entity first
    relations: list[str] = field(default_factory=list)
    triples: list[Triple] = field(default_factory=list)
    score: float = 1.0

    @property
    def end(self) -> str:
        return self.entities[-1]

    def as_path(self) -> dict:
        seq: list[str] = [self.entities[0]]
        for r, e in zip(self.relations, self.entities[1:]):
            seq += [r, e]
        return {"path": seq, "relations": list(self.relations), "score": round(self.score, 6)}


def _numbered(items: list[str]) -> str:
    return "; ".join(f"{i}. {s}" for i, s in enumerate(items, 1))


@dataclass(eq=False)  # identity semantics: methods are shared objects, not values
class ToG(WalkSettings):
    """Think-on-Graph: a beam of `width` relation paths grown for at most `depth` steps."""

    name = "tog"

    width: int = 3
    depth: int = 3
    max_relations: int = 60  # relations shown to the LLM per entity

    # -- the walk -----------------------------------------------------------------------
    def _candidate_relations(self, beam: Beam) -> list[str]:
        # The edge we came over, walked back, is offered too: it leads to the siblings (the other
        # films of a director), never to an entity the beam holds (`_neighbours` drops those).
        # Leaving it out made "which films share the director of X" unanswerable.
        rels = [r for r in self.kg.relations(beam.end, "both") if not excluded(r, self.excluded)]
        return rels[: self.max_relations]

    def _neighbours(self, beam: Beam, relation: str, qid: str) -> list[str]:
        seen = set(beam.entities)
        nbrs = [n for n in self.kg.neighbors(beam.end, relation) if n not in seen]
        return sample(nbrs, self.max_candidates, seed_for(self.seed, qid, beam.end, relation))

    def explore(self, example: QAExample, pred: Prediction, trace: Trace) -> None:
        question = strip_brackets(example.question)
        topics = topic_entities(self.kg, example)
        pred.topic_entities = topics or pred.topic_entities
        beams = [Beam([t]) for t in topics]
        explored: list[Beam] = []  # every beam kept at any depth, in order
        visited: list[str] = list(topics)
        sufficient, reply_text, answers = False, "", None
        depth_reached = 0
        heuristic = self.mode == "heuristic"
        qsim = _Similarity(self.encoder, question) if heuristic else None

        for depth in range(1, self.depth + 1):
            if not beams:
                break
            rel_choices = (self._prune_relations_heuristic(beams, qsim) if heuristic
                           else self._prune_relations_llm(beams, question, trace))
            grown = (self._prune_entities_heuristic(rel_choices, qsim, example.qid) if heuristic
                     else self._prune_entities_llm(rel_choices, question, example.qid, trace))
            grown.sort(key=lambda b: -b.score)
            beams = grown[: self.width]
            if not beams:
                break  # early stop: no entity left to explore
            depth_reached = depth
            explored += beams
            visited += [b.end for b in beams if b.end not in visited]
            if heuristic:
                if max(b.score for b in beams) >= self.stop_similarity:
                    sufficient = True
                    break
                continue
            labels = self.kg.labels({e for b in explored for e in b.entities})
            prompt = SUFFICIENCY_PROMPT.format(question=question, knowledge=knowledge_text(_triples(beams), labels, self.relation_names))
            reply = trace.ask([prompt])[0]
            verdict = parse_yes_no(reply.text)
            if verdict is None:
                trace.bad_reply("sufficiency (yes/no)", reply)
            if verdict:
                sufficient, reply_text = True, reply.text
                answers = read_answers(reply.text, labels, topics)
                break

        triples = _triples(explored)
        labels = self.kg.labels({e for b in explored for e in b.entities} | set(topics))
        pred.triples = triples
        pred.knowledge = knowledge_text(triples, labels, self.relation_names)
        pred.paths = [b.as_path() for b in sorted(explored, key=lambda b: -b.score)]
        pred.extra.update(visited=visited, depth_reached=depth_reached, sufficient=sufficient)

        if heuristic:
            ranked = [b for b in sorted(explored, key=lambda b: -b.score) if b.end not in topics]
            answers = list(dict.fromkeys(b.end for b in ranked))
            # the answer set: every end reached over the best path's relation chain
            best = ranked[0].relations if ranked else None
            set_answers(pred, answers, False, [a for a in dict.fromkeys(b.end for b in ranked if b.relations == best)])
            pred.status = missing_status(example, topics) or (Status.OK if explored else Status.NO_PATH)
            return
        if answers is None:
            if explored:
                prompt = TRIPLES_ANSWER_PROMPT.format(question=question, knowledge=pred.knowledge)
            else:
                prompt = OWN_KNOWLEDGE_PROMPT.format(question=question)
            reply = trace.ask([prompt], self.answer_max_new_tokens)[0]
            reply_text = reply.text
            answers = read_answers(reply.text, labels, topics)
            if answers is None:
                trace.bad_reply("answer", reply)
        pred.reply = reply_text
        set_answers(pred, answers or [], True)
        missing = missing_status(example, topics) or (Status.NO_PATH if not explored else None)
        pred.status = missing or trace.status()
        pred.extra["answered_from"] = "paths" if explored else "own_knowledge"

    # -- LLM pruning --------------------------------------------------------------------
    def _prune_relations_llm(self, beams: list[Beam], question: str, trace: Trace):
        """[(beam, relation, score)]: one concurrent batch of relation-pruning prompts."""
        out, prompts, asked = [], [], []
        labels = self.kg.labels(b.end for b in beams)
        for b in beams:
            rels = self._candidate_relations(b)
            if len(rels) == 1:  # nothing to choose
                out.append((b, rels[0], 1.0))
            elif rels:
                shown = [relation_display(r, self.relation_names) for r in rels]
                prompts.append(RELATION_PROMPT.format(
                    width=self.width, question=question, entity=labels.get(b.end, b.end), relations=_numbered(shown)))
                asked.append((b, rels))
        for (b, rels), reply in zip(asked, trace.ask(prompts)):
            picked = parse_choices(reply.text, rels, {r: relation_display(r, self.relation_names) for r in rels}) if reply.ok else None
            if not picked:
                trace.bad_reply("relation choice", reply)
                picked = {r: 1.0 / len(rels) for r in rels[: self.width]}  # keep going, uniformly
            top = sorted(picked.items(), key=lambda kv: -kv[1])[: self.width]
            total = sum(s for _, s in top) or 1.0
            out += [(b, r, s / total) for r, s in top]
        return out

    def _prune_entities_llm(self, rel_choices, question: str, qid: str, trace: Trace) -> list[Beam]:
        grown, prompts, asked = [], [], []
        for b, rel, rel_score in rel_choices:
            cands = self._neighbours(b, rel, qid)
            if len(cands) == 1:
                grown.append(_extend(b, rel, cands[0], rel_score))
            elif cands:
                labels = self.kg.labels(cands)
                names = [labels.get(c, c) for c in cands]
                prompts.append(ENTITY_PROMPT.format(question=question, relation=relation_display(rel, self.relation_names), entities=_numbered(names)))
                asked.append((b, rel, rel_score, cands, labels))
        for (b, rel, rel_score, cands, labels), reply in zip(asked, trace.ask(prompts)):
            scores = None
            if reply.ok:
                picked = parse_choices(reply.text, cands, labels)
                if picked:
                    scores = [picked.get(c, 0.0) for c in cands]
                else:
                    scores = parse_scores(reply.text, len(cands))
            if scores is None:
                trace.bad_reply("entity scores", reply)
                scores = [1.0 / len(cands)] * len(cands)
            grown += [_extend(b, rel, c, rel_score * s) for c, s in zip(cands, scores)]
        return grown

    # -- heuristic pruning --------------------------------------------------------------
    def _prune_relations_heuristic(self, beams: list[Beam], qsim: "_Similarity"):
        out = []
        for b in beams:
            rels = self._candidate_relations(b)
            if not rels:
                continue
            sims = qsim([_chain_phrase(b.relations + [r], self.relation_names) for r in rels])
            top = sorted(zip(rels, sims), key=lambda kv: -kv[1])[: self.width]
            out += [(b, r, s) for r, s in top]
        return out

    def _prune_entities_heuristic(self, rel_choices, qsim: "_Similarity", qid: str) -> list[Beam]:
        grown = []
        for b, rel, rel_score in rel_choices:
            cands = self._neighbours(b, rel, qid)
            if not cands:
                continue
            if self.entity_weight:  # every candidate label is new text: costly, so optional
                labels = self.kg.labels(cands)
                ent_sims = qsim([labels.get(c, c) for c in cands])
            else:
                ent_sims = [0.0] * len(cands)
            for c, es in zip(cands, ent_sims):
                nb = _extend(b, rel, c, 0.0)
                nb.score = (1 - self.entity_weight) * rel_score + self.entity_weight * es
                grown.append(nb)
        return grown


class _Similarity:
    """Cosine similarity of one question with many texts (encoder caches repeated texts)."""

    def __init__(self, encoder, question: str):
        self.encoder, self.question = encoder, question

    def __call__(self, texts: list[str]) -> list[float]:
        return self.encoder.similarity(self.question, texts)


def _chain_phrase(relations: list[str], names: dict[str, str] | None = None) -> str:
    return ", then ".join(relation_phrase(r, names) for r in relations)


def _extend(b: Beam, rel: str, ent: str, score: float) -> Beam:
    return Beam(b.entities + [ent], b.relations + [rel], b.triples + [step_triple(b.end, rel, ent)], score)


def _triples(beams: list[Beam]) -> list[Triple]:
    return list(dict.fromkeys(t for b in beams for t in b.triples))

"""`OracleLLM` (`llm=oracle`): a scripted backend that answers every prompt of every method as a
perfect model would, from the gold labels the evaluation loop holds. It measures a method's
ceiling (what its walk and prompts can reach when the LLM does exactly what it is asked), never a
model: runs with it say "oracle" in metrics.json, summary.md and compare.

The evaluation loop hands it the questions about to be answered (`observe(examples, kg)`); a
prompt is matched to its question by the last `Question: ...` line. Per question it knows the gold
answers and the gold relation path, and the labels of the entities the gold path reaches at each
step. On per-question graphs (graph=subgraphs: WebQSP, CWQ) it learns each question inside its own
subgraph, and where the data gives answers but no path, the gold path is the subgraph's best one
(answer F1, at most `path_hops` hops, as KG supervision picks a training path). What it replies, per prompt type (recognised by the methods' own wording):
- relation choice (ToG pruning, StructGPT selection): the gold path's relation for the step the
  shown entity is on (ToG: the step whose entities include it; StructGPT: the number of steps
  already chosen), scored 1;
- entity choice (ToG): the shown entities the gold path reaches after that relation and from which
  the rest of it reaches a gold answer, score split;
- triple filter (StructGPT): the triples along gold-path instances that end in a gold answer;
- sufficiency (ToG, StructGPT): Yes with the gold answers when the triples hold a gold answer and
  every relation of the gold path, else No;
- entity identification (KGQP): the topic entities' labels;
- rewriting (rewriter=llm): the triples as they are (a lossless verbaliser);
- final answers (free-form, numbered options, `score`): the gold answers the prompt's knowledge
  names, "unknown" when it names none. It reads; it does not know the world, so an answer from
  "your own knowledge" is "unknown": a method that retrieved nothing gets nothing.
"""
from __future__ import annotations

import re
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Sequence

from rra.graph.base import GraphError, base_relation
from rra.llm.base import LLM, Prompt, prompt_to_text
from rra.records import LLMReply, LLMUsage
from rra.text.matching import normalize_answer
from rra.text.questions import strip_brackets
from rra.text.relations import relation_display

MAX_LEVEL = 5000  # entities followed per gold-path step when the oracle learns a question


@dataclass
class Gold:
    answers: list[str]  # labels (and ids) of the gold answers, as shown to a model
    path: list[str] = field(default_factory=list)  # the gold relation path
    levels: list[set[str]] = field(default_factory=list)  # normalised labels reached after each step
    useful: list[set[str]] = field(default_factory=list)  # of those, the ones the rest of the path takes to a gold answer
    topics: list[str] = field(default_factory=list)  # topic labels

    def step_names(self, d: int) -> set[str]:
        """How a prompt may show the relation of step `d` (`r (reverse)` when walked backwards)."""
        return {normalize_answer(relation_display(self.path[d])), normalize_answer(self.path[d])} if d < len(self.path) else set()

    def step_base(self, d: int) -> str:
        """The relation of step `d` as a triple shows it: forward, whatever the direction walked."""
        return normalize_answer(relation_display(base_relation(self.path[d])))


def key(question: str) -> str:
    return normalize_answer(strip_brackets(question))


class OracleLLM(LLM):
    oracle = True  # read by the evaluation loop, reports and compare

    def __init__(self, name: str = "oracle", model: str = "gold labels (a ceiling, not a model)",
                 path_hops: int = 2):
        self.name, self.model = name, model
        self.path_hops = path_hops  # per-question graphs without a gold path: the KG's best path up to this long
        self.usage = LLMUsage()
        self.gold: dict[str, Gold] = {}
        self._lock = threading.Lock()

    # --- what the evaluation loop tells it ----------------------------------------------------
    def observe(self, examples: Sequence, kg=None) -> None:
        """Learn the gold labels of `examples` (QAExamples with answers, their labels
        `answer_labels` and a gold path `gold_path`, else `relation_path`)."""
        per_question = getattr(kg, "per_question", False)  # graph=subgraphs: each question on its own graph
        for ex in examples:
            labels = list(getattr(ex, "answer_labels", None) or ex.extra.get("answer_labels") or [])
            path = list(getattr(ex, "gold_path", None) or ex.extra.get("gold_path") or ex.relation_path or [])
            gold = Gold(list(dict.fromkeys(labels + list(ex.answers))), path)
            topics = list(ex.topic_entities or [])
            if kg is not None and topics:
                try:
                    with kg.scope(ex) if per_question else nullcontext():
                        if per_question and not path:  # WebQSP / CWQ rows give answers only
                            gold.path = path = self._best_path(kg, ex)
                        self._learn(gold, kg, ex, topics, path)
                except GraphError:  # no subgraph for it: the oracle knows its answers, not its graph
                    pass
            with self._lock:
                self.gold[key(ex.question)] = gold

    def _best_path(self, kg, ex) -> list[str]:
        """The relation path of at most `path_hops` hops from the topic whose end set best matches
        the gold answers (answer F1, as KG supervision labels a training question), on the
        question's own small graph; [] when none reaches an answer."""
        from rra.data.supervision import SupervisionConfig, build_adjacency, compute_candidates

        config = SupervisionConfig(max_hops=self.path_hops, top_k=1, exact_hops=False)
        found = compute_candidates(build_adjacency(kg), [ex], config)[0]
        return list(found[0]["path"]) if found else []

    def _learn(self, gold: Gold, kg, ex, topics: list[str], path: list[str]) -> None:
        """What the graph says about a question's gold labels: topic names, and per step of the
        gold path the entities reached (`_levels`)."""
        names = kg.labels(topics)
        gold.topics = [names.get(t, t) for t in topics]
        named = getattr(ex, "answer_ids", None) or ex.extra.get("answer_ids") or []
        answer_ids = set(ex.answers) | {a for ids in named for a in ids}
        gold.levels, gold.useful = self._levels(kg, topics, path, answer_ids)

    @staticmethod
    def _levels(kg, topics: list[str], path: list[str], answers: set[str]) -> tuple[list[set[str]], list[set[str]]]:
        """Per step of the gold path: the entities it reaches from the topics, and of those the
        ones from which the rest of the path reaches a gold answer (a perfect model keeps those:
        of the films sharing an actor with X, the ones that have a language, when it is asked)."""
        frontier, ids, edges = list(topics), [set(topics)], []
        for relation in path:
            reached = kg.neighbors_batch(frontier, relation)
            edges.append(reached)
            frontier = list(dict.fromkeys(n for e in frontier for n in reached.get(e, [])))[:MAX_LEVEL]
            ids.append(set(frontier))
        useful = [set() for _ in ids]
        useful[-1] = (ids[-1] & answers) or ids[-1]
        for d in range(len(path) - 1, -1, -1):
            useful[d] = {e for e in ids[d] if useful[d + 1].intersection(edges[d].get(e, ()))}
        names = kg.labels(set().union(*ids))

        def shown(level: set[str]) -> set[str]:
            return {normalize_answer(names.get(e, e)) for e in level} | {normalize_answer(e) for e in level}

        return [shown(level) for level in ids], [shown(level) for level in useful]

    # --- the LLM protocol -----------------------------------------------------------------------
    def generate(self, prompts: Sequence[Prompt], max_new_tokens: int = 128, temperature: float = 0.0) -> list[LLMReply]:
        out = []
        for p in prompts:
            start = time.perf_counter()
            text = prompt_to_text(p)
            try:
                reply = LLMReply(self.reply(text))
            except LookupError as err:
                reply = LLMReply("", error=f"oracle: {err}")
            reply.prompt_tokens = len(text.split())
            reply.completion_tokens = len(reply.text.split())
            reply.latency_s = time.perf_counter() - start
            self.usage.record(reply)
            out.append(reply)
        return out

    def score(self, prompt: Prompt, continuations: Sequence[str], reduction: str = "sum") -> list[float]:
        text = prompt_to_text(prompt)
        gold = {normalize_answer(a) for a in self._gold(text).answers}
        self.usage.record(LLMReply("", prompt_tokens=len(text.split())))
        return [0.0 if normalize_answer(c) in gold else -100.0 for c in continuations]

    # --- replies per prompt type ----------------------------------------------------------------
    def _gold(self, text: str) -> Gold:
        asked = re.findall(r"^Question:\s*(.+)$", text, re.M)
        if not asked:
            raise LookupError("no 'Question:' line in the prompt")
        gold = self.gold.get(key(asked[-1]))
        if gold is None:
            raise LookupError(f"question not observed by the evaluation loop: {asked[-1][:80]!r}")
        return gold

    def reply(self, text: str) -> str:
        if text.startswith("Rewrite the following knowledge graph triples"):
            return _between(text, "Triples:\n", "\n\nSentences:")
        gold = self._gold(text)
        if "Please retrieve" in text and "relations" in text:  # ToG relation pruning
            entity = normalize_answer(_field(text, "Topic entity"))
            steps = [d for d, level in enumerate(gold.levels[:-1]) if entity in level] or [0]
            return self._relations(gold, steps, _numbered(_field(text, "Relations")), scored=True)
        if "Please score the entities" in text:  # ToG entity pruning
            relation = normalize_answer(_field(text, "Relation"))
            options = _numbered(_field(text, "Entities"))
            good = set().union(*[gold.useful[d + 1] for d in range(len(gold.path)) if relation in gold.step_names(d)] or [set()])
            picked = [o for o in options if normalize_answer(o) in good]
            return "; ".join(f"{{{o} (Score: {1 / len(picked) if o in picked else 0.0:.3f})}}" for o in options)
        if "Choose the relations (at most" in text:  # StructGPT selection
            history = _field(text, "Relations chosen so far")
            step = 0 if history.strip().lower() == "none" else len(history.split(";"))
            return self._relations(gold, [step], _numbered(_field(text, "Relations")), scored=False)
        if text.startswith("Which of these knowledge graph triples help"):  # StructGPT filter
            lines = re.findall(r"^(\d+)\. \((.*)\)$", _between(text, "Triples:\n", "\nAnswer:"), re.M)
            keep = [n for n, body in lines if self._on_path(gold, body)]
            return ", ".join(keep) if keep else "none"
        if "sufficient for you to answer" in text or "can you answer the question with these triples" in text:
            knowledge = _between(text, "Knowledge triplets:\n" if "Knowledge triplets:" in text else "Triples:\n", "\nReply:")
            found = self._named(gold, knowledge)
            shown = normalize_answer(knowledge)
            enough = bool(found) and all(f", {gold.step_base(d)}, " in shown for d in range(len(gold.path)))
            return f"{{Yes}}. Answer: {' | '.join(found)}" if enough else "{No}"
        if text.startswith("List the named entities"):  # KGQP entity identification
            return " | ".join(gold.topics) or "none"
        if "Choose the correct answer from these options" in text:
            options = re.findall(r"^(\d+)\. (.+)$", _between(text, "options:\n", "\nReply with"), re.M)
            gold_names = {normalize_answer(a) for a in gold.answers}
            return next((n for n, name in options if normalize_answer(name) in gold_names), "0")
        # a final answer: the gold answers the knowledge in the prompt names
        found = self._named(gold, text[: text.rfind("Question:")] + "\n" + _between(text, "Knowledge triplets:\n", "\nAnswer:")
                            + _between(text, "Knowledge:\n", "\nAnswer:"))
        return " | ".join(found) if found else "unknown"

    def _relations(self, gold: Gold, steps: list[int], options: list[str], scored: bool) -> str:
        wanted = set().union(*[gold.step_names(d) for d in steps])
        picked = [o for o in options if normalize_answer(o) in wanted] or options[:1]
        if scored:
            return "; ".join(f"{{{o} (Score: {1 / len(picked):.3f})}}" for o in picked)
        return "; ".join(picked)

    @staticmethod
    def _on_path(gold: Gold, body: str) -> bool:
        """A triple `head, relation, tail` whose relation is on the gold path and whose head and
        tail the gold path reaches (labels may hold commas: the relation is found by name)."""
        body = normalize_answer(body)
        for d in range(len(gold.path)):
            mark = f", {gold.step_base(d)}, "
            if mark in body and d + 1 < len(gold.useful):
                head, tail = body.split(mark, 1)
                if {head, tail} <= gold.useful[d] | gold.useful[d + 1]:
                    return True
        return False

    @staticmethod
    def _named(gold: Gold, knowledge: str) -> list[str]:
        """Gold answers the text names as whole words (case-insensitive), each once, labels first."""
        text = normalize_answer(knowledge)
        found = []
        for a in gold.answers:
            name = normalize_answer(a)
            if name and re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text) and name not in map(normalize_answer, found):
                found.append(a)
        return found


def _field(text: str, name: str) -> str:
    """The value of the last `Name: value` line."""
    values = re.findall(rf"^{re.escape(name)}:\s*(.*)$", text, re.M)
    return values[-1] if values else ""


def _numbered(value: str) -> list[str]:
    """`1. a; 2. b (reverse)` -> ["a", "b (reverse)"]."""
    return [m.strip() for m in re.split(r"(?:^|;\s*)\d+\.\s+", value) if m.strip()]


def _between(text: str, start: str, end: str) -> str:
    i = text.rfind(start)
    if i < 0:
        return ""
    i += len(start)
    j = text.find(end, i)
    return text[i: j if j >= 0 else len(text)]

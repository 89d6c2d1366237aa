"""The plain vector-retrieval baseline: the KG as text, chunked, embedded, nearest chunks as context.

Index (built once per KG, encoder and chunking, then cached on disk):
  verbalise - every triple becomes a sentence "Alien directed by Ridley Scott.", sorted by head so an
              entity's facts sit together;
  chunk     - the sentences' tokens (the encoder's own tokenizer, no special tokens) as one stream,
              cut into windows of `chunk_tokens` (100) overlapping by `overlap` (5%, i.e. 5 tokens);
              each chunk's text is the original characters its tokens cover, so case survives;
  embed     - MiniLM, mean pooled, unit length; saved to `cache_dir/vector-<key>.pt` where the key
              hashes the sentences and the settings (a changed KG or setting is a new file).
Query: cosine top-`top_k` chunks. LLM mode: the LLM answers from them. Heuristic mode: the entities of
the facts in the top chunks, ranked by their chunk's rank then the similarity of the fact's relation.

On MetaQA (133,582 facts) the index is ~18k chunks; indexing time is measured by
bench/bench_baselines.py (`vector_index_s`) and `max_facts` bounds it for quick runs.
"""
from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from rra.baselines.common import BaselineSettings, excluded, read_answers, run_method, set_answers
from rra.baselines.kgqp import rank_facts
from rra.graph.base import sample
from rra.records import Prediction, QAExample, Status, Trace, Triple
from rra.text.prompts import TRIPLES_ANSWER_PROMPT
from rra.text.questions import strip_brackets
from rra.text.relations import relation_phrase

log = logging.getLogger(__name__)


@dataclass
class Chunk:
    text: str
    first_fact: int  # index of the first fact (sentence) the chunk touches
    last_fact: int  # ... and the last, inclusive


def verbalise(t: Triple, labels: dict[str, str], names: dict[str, str] | None = None) -> str:
    return f"{labels.get(t.head, t.head)} {relation_phrase(t.relation, names)} {labels.get(t.tail, t.tail)}."


def chunk_sentences(sentences: list[str], tokenizer, chunk_tokens: int = 100, overlap: float = 0.05,
                    batch: int = 4096) -> list[Chunk]:
    """Windows of `chunk_tokens` tokens over the sentences' token stream, consecutive windows
    sharing round(chunk_tokens * overlap) tokens. Sentences are joined by one space."""
    step = chunk_tokens - int(round(chunk_tokens * overlap))
    if step <= 0:
        raise ValueError(f"overlap {overlap} leaves no step for chunks of {chunk_tokens} tokens")
    starts, ends, owner = [], [], []  # per token: char span in the joined text, sentence
    offset = 0
    for b in range(0, len(sentences), batch):
        enc = tokenizer(sentences[b : b + batch], add_special_tokens=False, return_offsets_mapping=True)
        for j, spans in enumerate(enc["offset_mapping"]):
            for s, e in spans:
                starts.append(offset + s)
                ends.append(offset + e)
                owner.append(b + j)
            offset += len(sentences[b + j]) + 1
    text = " ".join(sentences)
    chunks = []
    n = len(starts)
    for i in range(0, max(n, 1), step):
        j = min(i + chunk_tokens, n)
        if j <= i:
            break
        chunks.append(Chunk(text[starts[i] : ends[j - 1]], owner[i], owner[j - 1]))
        if j == n:
            break
    return chunks


@dataclass(eq=False)  # identity semantics: methods are shared objects, not values
class VectorRAG(BaselineSettings):
    """Chunk-and-embed RAG over the KG's facts as text: the `top_k` chunks nearest the question."""

    name = "vector"

    chunk_tokens: int = 100
    overlap: float = 0.05
    top_k: int = 5
    max_facts: int | None = None
    max_answers: int = 10
    cache_dir: str | None = "bench/cache"
    fact_text: str = "relation"  # heuristic: how facts of the top chunks are ranked (see kgqp.rank_facts)
    needs_encoder_always = True

    def __post_init__(self):
        super().__post_init__()
        self.cache_dir = Path(self.cache_dir) if self.cache_dir else None
        self.facts: list[Triple] | None = None
        self.chunks: list[Chunk] = []
        self.vectors: torch.Tensor | None = None
        self.index_seconds = 0.0
        self.index_from_cache = False

    def build_index(self) -> None:
        # A per-question graph (rra.graph.subgraphs) holds another graph for every question: index
        # the question's own facts, and do not keep one cache file per question.
        scope = getattr(self.kg, "scope_key", lambda: None)()
        if self.vectors is not None and scope == getattr(self, "_indexed_scope", None):
            return
        self._indexed_scope = scope
        start = time.perf_counter()
        facts = sorted(t for t in self.kg.all_triples() if not excluded(t.relation, self.excluded))
        facts = sample(facts, self.max_facts, self.seed)
        labels = self.kg.labels({x for t in facts for x in (t.head, t.tail)})
        sentences = [verbalise(t, labels, self.relation_names) for t in facts]
        key = hashlib.sha1("\n".join(sentences).encode())
        key.update(f"{self.encoder.model_name}|{self.chunk_tokens}|{self.overlap}".encode())
        path = self.cache_dir / f"vector-{key.hexdigest()[:16]}.pt" if self.cache_dir and scope is None else None
        if path is not None and path.exists():
            saved = torch.load(path, weights_only=False)
            self.chunks = [Chunk(*c) for c in saved["chunks"]]
            self.vectors = saved["vectors"]
            self.index_from_cache = True
        else:
            self.chunks = chunk_sentences(sentences, self.encoder.tokenizer, self.chunk_tokens, self.overlap)
            log.info("vector index: embedding %d chunks of %d facts", len(self.chunks), len(facts))
            self.vectors = self.encoder.encode([c.text for c in self.chunks], cache=False)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(".tmp")
                torch.save({"chunks": [(c.text, c.first_fact, c.last_fact) for c in self.chunks],
                            "vectors": self.vectors}, tmp)
                tmp.replace(path)
        self.facts = facts
        self.index_seconds = time.perf_counter() - start

    def search(self, question: str) -> list[tuple[int, float]]:
        self.build_index()
        if not self.chunks:
            return []
        q = self.encoder.encode([question])[0]
        scores = self.vectors @ q
        k = min(self.top_k, len(self.chunks))
        top = torch.topk(scores, k)
        return [(int(i), float(s)) for s, i in zip(top.values, top.indices)]

    # -- answering -------------------------------------------------------------------------
    def answer(self, example: QAExample) -> Prediction:
        return run_method(self, example, self.answer_max_new_tokens)

    def explore(self, example: QAExample, pred: Prediction, trace: Trace) -> None:
        question = strip_brackets(example.question)
        hits = self.search(question)
        chunks = [self.chunks[i] for i, _ in hits]
        facts = list(dict.fromkeys(t for c in chunks for t in self.facts[c.first_fact : c.last_fact + 1]))
        pred.triples = facts
        pred.knowledge = "\n\n".join(c.text for c in chunks)
        pred.extra.update(chunks=[{"chunk": i, "score": round(s, 6)} for i, s in hits])
        if not facts:
            pred.status = Status.NO_PATH
            set_answers(pred, [], False)
            return
        topics = set(example.topic_entities)
        labels = self.kg.labels({x for t in facts for x in (t.head, t.tail)})
        if self.mode == "heuristic":
            answers = []
            for c in chunks:
                own = list(dict.fromkeys(self.facts[c.first_fact : c.last_fact + 1]))
                for t in rank_facts(self.encoder, question, own, labels, self.fact_text, self.relation_names):
                    answers += [x for x in (t.tail, t.head) if x not in topics]
            answers = list(dict.fromkeys(answers))[: self.max_answers]
            set_answers(pred, answers, False, answers[:1])
            pred.status = Status.OK
            return
        reply = trace.ask([TRIPLES_ANSWER_PROMPT.replace("Knowledge triplets:", "Knowledge:").format(
            question=question, knowledge=pred.knowledge)], self.answer_max_new_tokens)[0]
        pred.reply = reply.text
        answers = read_answers(reply.text, labels, list(topics))
        if answers is None:
            trace.bad_reply("answer", reply)
        set_answers(pred, answers or [], True)
        pred.status = trace.status()

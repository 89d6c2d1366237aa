"""The server's state: the graph, the LLM and the QA method, built once from the config as infer.py
builds them, and how a question becomes a served record.

Requests only ever contribute questions (text, optional topic entities, an optional id): they are
checked here against the configured limits, answered through the micro-batcher, and returned as the
predictions.jsonl record plus what a client wants at hand (ranked answers with labels and scores,
labels of the evidence entities, timings).
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from rra.serve import adapter
from rra.serve.batcher import MicroBatcher

log = logging.getLogger("serve")


class RequestError(Exception):
    """A request the server refuses: HTTP `status`, the `field` at fault and why."""

    def __init__(self, status: int, kind: str, field: str, message: str):
        super().__init__(f"{field}: {message}" if field else message)
        self.status, self.kind, self.field, self.message = status, kind, field, str(self)


@dataclass
class Limits:
    max_question_chars: int = 1000
    max_batch: int = 64
    max_body_bytes: int = 1_000_000


class Service:
    def __init__(self, kg, llm, method, limits: Limits, batching: dict | None = None, info: dict | None = None,
                 question_seconds: float | None = None):
        self.kg, self.llm, self.method, self.limits = kg, llm, method, limits
        self.question_seconds = question_seconds  # each question's time budget (bounds.max_seconds)
        batching = dict(batching or {})
        self.chunk = int(batching.get("max_batch", 32))
        self.batcher = MicroBatcher(self._records, max_batch=self.chunk,
                                    max_wait_ms=float(batching.get("max_wait_ms", 25.0)))
        self.started = time.time()
        self._info = dict(info or {})
        self._count = 0

    @classmethod
    def from_config(cls, cfg: DictConfig) -> "Service":
        """Graph, LLM and method exactly as `python infer.py` builds them from the same groups."""
        from rra.config import graph_description
        from rra.eval.run import build

        kg, llm, method = build(cfg)
        if llm is not None and hasattr(llm, "load") and uses_llm(method, llm):
            llm.load()  # once, at start-up, not on the first request
        stats = kg.stats()
        ttl = cfg.get("graph_cache_ttl_s")
        if hasattr(kg, "cache_ttl"):  # a long-running server must see edits to the store (clear_caches: SIGHUP)
            kg.cache_ttl = float(ttl) if ttl else None
        info = {"method": getattr(method, "name", type(method).__name__),
                "method_parts": {k: public_name(v) if k == "retriever" else v for k, v in method.describe().items()},
                "checkpoint": public_name(OmegaConf.select(cfg, "retriever.ckpt", default=None)),
                "graph": public(graph_description(kg)),
                "kg": {"entities": stats.entities, "triples": stats.triples,
                       "relations": dict(sorted(stats.relations.items()))},
                "llm": None if llm is None else {"name": getattr(llm, "name", None),
                                                  "model": getattr(llm, "model", None),
                                                  "used": uses_llm(method, llm)}}
        from rra.eval.run import question_seconds

        limits = Limits(**OmegaConf.to_container(cfg.get("limits") or {}))
        batching = OmegaConf.to_container(cfg.get("batching") or {})
        return cls(kg, llm, method, limits, batching, info, question_seconds(cfg))

    def clear_caches(self) -> None:
        """Forget every cached graph result (after the store was edited; the server does it on SIGHUP)."""
        clear = getattr(self.kg, "clear_cache", None)
        if clear is not None:
            clear()
            log.info("graph cache cleared")

    def info(self) -> dict:
        return {**self._info, "limits": vars(self.limits), "bounds": {"max_seconds": self.question_seconds},
                "batching": {"max_batch": self.batcher.max_batch, "max_wait_ms": self.batcher.max_wait * 1000,
                             "batches": self.batcher.batches, "questions": self.batcher.questions,
                             "busy_s": round(self.batcher.busy_s, 3)},
                "uptime_s": round(time.time() - self.started, 3)}

    # --- requests ----------------------------------------------------------------------------------
    def example(self, question, topic_entities=None, qid=None, field: str = "question",
                topic_field: str = "topic_entities") -> adapter.QAExample:
        """A question of a request as the method's input, or RequestError naming the field at fault."""
        if not isinstance(question, str) or not question.strip():
            raise RequestError(422, "invalid_question", field, "must be a non-empty string")
        if len(question) > self.limits.max_question_chars:
            raise RequestError(422, "invalid_question", field,
                               f"is {len(question)} characters long; the limit is {self.limits.max_question_chars}")
        topics = [t.strip() for t in topic_entities or [] if isinstance(t, str) and t.strip()]
        if topic_entities and len(topics) != len(topic_entities):
            raise RequestError(422, "invalid_topic_entities", topic_field,
                               "must be non-empty strings (KG ids or entity names)")
        id_field = topic_field.replace("topic_entities", "id") if topic_field.endswith("topic_entities") else "id"
        for value, where in [(question, field), (qid, id_field), *((t, topic_field) for t in topics)]:
            if isinstance(value, str) and not valid_unicode(value):  # it could never be written back as JSON
                raise RequestError(422, "invalid_text", where, "holds half of a UTF-16 surrogate pair (a cut "
                                   "emoji?): not valid Unicode")
        self._count += 1
        return adapter.QAExample(question.strip(), topics, [], qid=qid or f"q{self._count}")

    def check_batch(self, n: int, field: str = "questions") -> None:
        if n < 1:
            raise RequestError(422, "invalid_batch", field, "must hold at least one question")
        if n > self.limits.max_batch:
            raise RequestError(422, "batch_too_large", field, f"holds {n} questions; the limit is {self.limits.max_batch}")

    async def answer(self, examples: list, fields: list[tuple[str, str]]) -> tuple[list[dict], int, dict | None]:
        """Served records for the examples, the HTTP status and (unless 200) the error: 422 when a
        question named no entity of the KG (`fields`: its question and topic fields), 5xx when the
        graph or the LLM failed."""
        t0 = time.perf_counter()
        try:
            records, batch = await self.batcher.submit(examples)
        except Exception as err:  # noqa: BLE001 - the method raised on this request alone: its 500, not the server's end
            log.exception("answering failed")
            raise RequestError(500, "error", None, public(f"{type(err).__name__}: {err}")) from err
        total = round(time.perf_counter() - t0, 6)
        for rec in records:
            rec["timings"] = {"answer_s": rec["latency_s"], "queue_s": round(batch.queue_s, 6),
                              "batch_s": round(batch.batch_s, 6), "batch_size": batch.batch_size, "total_s": total}
        return (records, *verdict(records, examples, fields))

    def _records(self, examples: list) -> list[dict]:
        """In the answering thread: the method's predictions for a batch as served records (the
        predictions.jsonl record, `ranked` answers, `labels` of every entity shown, one labels call)."""
        preds = adapter.answer_batch(self.method, examples, self.chunk, self.question_seconds)
        labels = self._labels(preds)
        out = []
        for pred in preds:
            rec = adapter.record(pred)
            rec["errors"] = [public(e) for e in rec["errors"]]  # a graph error names the store's URL
            ents = {e for t in rec["triples"] for e in (t[0], t[2])} | set(rec["topic_entities"]) | set(rec["answers"])
            rec["ranked"] = adapter.ranked_answers(rec)
            rec["labels"] = {e: labels.get(e, e) for e in sorted(ents)}
            out.append(rec)
        return out

    def _labels(self, preds) -> dict[str, str]:
        """Labels of every entity the predictions show, in one call (cosmetic: ids on failure)."""
        ents = {e for p in preds for t in p.triples for e in (t.head, t.tail)}
        ents |= {e for p in preds for e in list(p.topic_entities) + list(p.answers)}
        try:
            return self.kg.labels(sorted(ents))
        except Exception as err:  # noqa: BLE001 - labels only decorate the record
            log.warning("labels failed: %s", err)
            return {}


def valid_unicode(text: str) -> bool:
    """False for a string holding a lone UTF-16 surrogate ("\\ud83d" in JSON): valid JSON, not text."""
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>)]+", re.IGNORECASE)
_ABS_PATH = re.compile(r"(?<![\w.~/-])/(?:[^\s/'\"<>():;,]+/)+([^\s/'\"<>():;,]+)")


def public(text: str) -> str:
    """Text a client may read: a URL (the graph store's, an LLM server's) said as "the server",
    an absolute path as its file name. Clients learn what failed, not where the server's parts live."""
    return _ABS_PATH.sub(r"\1", _URL.sub("<server>", text))


def public_name(path) -> str | None:
    """A checkpoint or KG file as a client sees it: its folder and file name, never the full path."""
    if path in (None, ""):
        return None
    parts = Path(str(path)).parts
    return "/".join(parts[-2:]) if not _URL.match(str(path)) else "<server>"


STATUS_CODE = {"graph_error": 502, "llm_error": 502, "error": 500}


def verdict(records: list[dict], examples: list, fields: list[tuple[str, str]]) -> tuple[int, dict | None]:
    """HTTP status of a request from its questions' statuses: a failure of the graph or LLM is the
    server's (5xx with that kind), an entity the KG lacks is the client's (422), anything else 200."""
    for rec in records:
        if rec["status"] in adapter.FAILURE_STATUSES:
            return STATUS_CODE[rec["status"]], {"type": rec["status"], "field": None,
                                                "message": "; ".join(rec["errors"]) or rec["status"]}
    for rec, ex, (qfield, tfield) in zip(records, examples, fields):
        if rec["status"] in adapter.INPUT_STATUSES:
            given = bool(ex.topic_entities)
            where = tfield if given else qfield
            what = (f"no entity of the KG is named {ex.topic_entities}" if given
                    else "names no entity of the KG (mark one as [Name], or give topic_entities)")
            return 422, {"type": rec["status"], "field": where, "message": f"{where}: {what}"}
    return 200, None


def uses_llm(method, llm) -> bool:
    """Whether answering calls the LLM: RRA holds it for its rewriter / answerer only if they take
    it; a baseline calls it whenever it has one."""
    parts = [getattr(method, name, None) for name in ("rewriter", "answerer", "retrieval")]
    if any(p is not None for p in parts):
        return any(getattr(p, "llm", None) is llm for p in parts)
    return getattr(method, "llm", None) is llm

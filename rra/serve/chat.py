"""The OpenAI-compatible face: a chat request's last user message is the question, the reply is the
answer in words followed by its evidence, as a chat completion (or its stream of chunks).

Only the messages are read; every other field an OpenAI client sends (temperature, max_tokens, ...)
is accepted and ignored, since the answer comes from the KG, not from sampling.
"""
from __future__ import annotations

import json
import time
import uuid

from rra.serve.service import RequestError

MAX_EVIDENCE = 8  # triples quoted in a chat reply (the full record rides along under "rra")


def question_of(messages: list) -> str:
    """The text of the last user message (a string, or the text parts of a content list)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role != "user":
            continue
        content = m.content
        if isinstance(content, list):  # [{"type": "text", "text": ...}, {"type": "image_url", ...}]
            texts = []
            for j, part in enumerate(content):
                if not isinstance(part, dict):
                    raise RequestError(422, "invalid_request", f"messages[{i}].content[{j}]",
                                       "must be a content part object ({\"type\": \"text\", \"text\": ...})")
                if part.get("type") == "text":
                    if not isinstance(part.get("text"), str):
                        raise RequestError(422, "invalid_request", f"messages[{i}].content[{j}].text", "must be a string")
                    texts.append(part["text"])
            content = " ".join(texts)
        if not isinstance(content, str) or not content.strip():
            raise RequestError(422, "invalid_question", f"messages[{i}].content", "the last user message has no text")
        return content
    raise RequestError(422, "invalid_question", "messages", "holds no message with role 'user'")


def reply_text(rec: dict) -> str:
    """The answer in words, then the evidence: topic, relation paths with scores, triples by label."""
    labels = rec.get("labels") or {}
    name = lambda e: labels.get(e, e)  # noqa: E731
    ranked = rec.get("ranked") or []
    status = rec.get("status")
    if ranked:
        best = ranked[0]
        score = f" (score {best['score']:.3f})" if best.get("score") is not None else ""
        lines = [f"{best['label']}{score}."]
        if len(ranked) > 1:
            lines[0] = f"{', '.join(a['label'] for a in ranked[:10])}{'' if len(ranked) <= 10 else ', ...'}."
    elif status in ("unknown_entity", "no_topic_entity"):
        lines = ["I found no entity of the knowledge graph in the question. Mark one in brackets, "
                 "e.g. [Ridley Scott], or use its exact name."]
    else:
        lines = [f"I could not answer from the knowledge graph (status: {status})."]
    if rec.get("topic_entities"):
        lines += ["", "Evidence:", f"- topic: {', '.join(name(e) for e in rec['topic_entities'])}"]
        for p in rec.get("paths") or []:
            lines.append(f"- path: {' -> '.join(p['path'])} (score {float(p['score']):.3f})")
        triples = rec.get("triples") or []
        for h, r, t in triples[:MAX_EVIDENCE]:
            lines.append(f"- ({name(h)}, {r}, {name(t)})")
        if len(triples) > MAX_EVIDENCE:
            lines.append(f"- ... {len(triples) - MAX_EVIDENCE} more triples")
    return "\n".join(lines)


def completion(rec: dict, model: str) -> dict:
    text = reply_text(rec)
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            "rra": rec}


def stream(rec: dict, model: str):
    """Server-sent events as OpenAI streams them: a role chunk, the text line by line, a stop chunk, [DONE]."""
    cid, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())

    def event(delta: dict, finish=None) -> str:
        chunk = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"

    yield event({"role": "assistant", "content": ""})
    lines = reply_text(rec).split("\n")
    for i, line in enumerate(lines):
        yield event({"content": line + ("\n" if i < len(lines) - 1 else "")})
    yield event({}, "stop")
    yield "data: [DONE]\n\n"

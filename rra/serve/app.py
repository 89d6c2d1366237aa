"""The HTTP API (FastAPI): answers with evidence, an OpenAI-compatible chat face, and the page.

    POST /v1/answer             {"question": "..."} or {"questions": ["...", {"question": ..., "topic_entities": [...]}]}
    POST /v1/chat/completions   OpenAI chat format, "stream": true for server-sent events
    GET  /v1/models  /v1/info  /healthz  /docs  /   (the page, static files shipped in rra/serve/static)

Errors are {"error": {"type", "field", "message"}}, for every refusal whatever raised it: 400 a body that
is not JSON (malformed, not UTF-8, nested too deeply), 404 / 405 no such route or method, 413 body too
large (declared or streamed), 422 a field at fault (named: an empty question, half of a UTF-16 pair,
a chat part that is not text), 502 / 500 the graph / LLM / method failed for this request (the others go
on). No reply is ever a traceback or plain text, and none names a server file or the graph store's address.
"""
from __future__ import annotations

import gc
import json
import logging
import signal
from contextlib import asynccontextmanager
from pathlib import Path

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException

from rra.serve import chat
from rra.serve.service import RequestError, Service

STATIC = Path(__file__).resolve().parent / "static"
log = logging.getLogger("serve")


class QuestionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(description="the question; an entity may be marked as [Name]")
    topic_entities: list[str] | None = Field(None, description="KG ids or names of its topic entities (else linked from the text)")
    id: str | None = Field(None, description="echoed as the record's qid")


class AnswerRequest(BaseModel):
    """One question (`question`, optional `topic_entities` and `id`) or a list of them (`questions`)."""
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"question": "who wrote [The Narrow Tide]"},
        {"questions": ["who wrote [The Narrow Tide]", {"question": "where was its writer born", "topic_entities": ["book/the_narrow_tide"]}]}]})
    question: str | None = None
    topic_entities: list[str] | None = None
    id: str | None = None
    questions: list[str | QuestionIn] | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list | None = None


class ChatRequest(BaseModel):
    """OpenAI's chat request; only `messages` (the last user message) and `stream` are read."""
    model_config = ConfigDict(extra="allow")
    model: str | None = None
    messages: list[ChatMessage]
    stream: bool = False


class FastJSONResponse(JSONResponse):
    """JSON rendered by orjson: a served record is several kB of nested lists and dicts, and the
    standard library's encoder took half of the event loop's time per request under load (the
    time between two micro-batches, when the answering thread waits for the next requests)."""

    def render(self, content) -> bytes:
        try:
            return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)
        except orjson.JSONEncodeError:  # text orjson refuses (half of a UTF-16 pair): escaped, still JSON
            return json.dumps(content, ensure_ascii=True, default=str).encode("ascii")


def error(status: int, kind: str, field: str | None, message: str, **more) -> JSONResponse:
    return FastJSONResponse({"error": {"type": kind, "field": field, "message": message}, **more}, status_code=status)


ANSWER_PATH = "/v1/answer"


async def answer_payload(service: Service, body: AnswerRequest) -> tuple[dict, int]:
    """The reply to a POST /v1/answer (its JSON and HTTP status); RequestError names a field at fault."""
    single = body.questions is None
    if single == (body.question is None):
        raise RequestError(422, "invalid_request", "question", "give either `question` or `questions`")
    if single:
        examples = [service.example(body.question, body.topic_entities, body.id)]
        fields = [("question", "topic_entities")]
    else:
        if body.topic_entities is not None or body.id is not None:
            raise RequestError(422, "invalid_request", "topic_entities" if body.topic_entities is not None else "id",
                               "goes inside each item of `questions`")
        service.check_batch(len(body.questions))
        examples, fields = [], []
        for i, item in enumerate(body.questions):
            q = item if isinstance(item, QuestionIn) else QuestionIn(question=item)
            where = f"questions[{i}]" if isinstance(item, str) else f"questions[{i}].question"
            examples.append(service.example(q.question, q.topic_entities, q.id, where, f"questions[{i}].topic_entities"))
            fields.append((where, f"questions[{i}].topic_entities"))
    records, status, err = await service.answer(examples, fields)
    payload = records[0] if single else {"records": records}
    if err:
        return {"error": err, **({"record": payload} if single else payload)}, status
    return payload, 200


class App(FastAPI):
    """The FastAPI app with a short way in for its busiest request: a well-formed POST /v1/answer.

    Under load the answering thread waits, between two micro-batches, for the event loop to send the
    last batch's replies and read the next requests; FastAPI's layers (middleware, routing, body
    parsing) were two thirds of that loop's time per request. This path reads the body, validates it
    with the same model and answers with the same function as the route; every other request, and
    one this path would refuse (no JSON content type, no or too large Content-Length, a body the
    model rejects), goes through the full stack, so errors and documentation are FastAPI's."""

    def __init__(self, service: Service, **kwargs):
        super().__init__(**kwargs)
        self.service = service

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != ANSWER_PATH:
            return await super().__call__(scope, receive, send)
        headers = dict(scope["headers"])
        length = headers.get(b"content-length", b"")
        json_body = headers.get(b"content-type", b"").split(b";")[0].strip().lower() == b"application/json"
        if not (json_body and length.isdigit() and int(length) <= self.service.limits.max_body_bytes):
            return await super().__call__(scope, receive, send)
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            request = AnswerRequest.model_validate_json(body)
        except ValidationError:
            return await super().__call__(scope, replay(body, receive), send)
        try:
            payload, status = await answer_payload(self.service, request)
            response = FastJSONResponse(payload, status_code=status)
        except RequestError as exc:
            response = error(exc.status, exc.kind, exc.field, exc.message)
        await response(scope, receive, send)


def replay(body: bytes, receive):
    """An ASGI `receive` that hands over a body already read, then the connection's next messages
    (a disconnect)."""
    sent = False

    async def again():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


def field_name(loc) -> str:
    """pydantic's location ("body", "questions", 3, "question") as questions[3].question."""
    out = ""
    for part in loc:
        if part == "body":
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("str", "QuestionIn") or str(part).startswith("list["):
            continue  # the union member pydantic tried, not a field
        else:
            out += ("." if out else "") + str(part)
    return out or "body"


class BodyLimit:
    """Refuse request bodies above `limit` bytes (413) before they are read whole: by the declared
    Content-Length, or, for a body sent in chunks, as soon as the chunks read pass the limit (the
    body is read here, at most `limit` bytes, and handed on; FastAPI's own reading would turn any
    error into a 400)."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, int(limit)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            return await too_large(self.limit)(scope, receive, send)
        chunks, seen, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            if seen > self.limit:
                return await too_large(self.limit)(scope, receive, send)
            more = message.get("more_body", False)
        await self.app(scope, replay(b"".join(chunks), receive), send)


def too_large(limit: int) -> JSONResponse:
    return error(413, "body_too_large", "body", f"body: larger than the limit of {limit} bytes")


def create_app(service: Service) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app):
        # The KG, the model and the caches loaded at start-up are millions of long-lived objects on a
        # large KG; freezing them keeps the cyclic GC from walking them again on every full collection
        # that the requests' short-lived allocations trigger (each such walk stalls a batch).
        gc.collect()
        gc.freeze()
        await service.batcher.start()
        try:  # SIGHUP: forget cached graph results (the store was edited), as servers reload on it
            import asyncio

            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, service.clear_caches)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread (tests), or no SIGHUP
            pass
        yield
        await service.batcher.stop()  # in-flight requests have been answered by now (graceful shutdown)
        gc.unfreeze()  # a process that builds several apps (tests) gets its collector back

    app = App(service, title="rra", version="0.1.0", lifespan=lifespan, default_response_class=FastJSONResponse,
              description="Question answering over a knowledge graph, with the evidence of every answer.")

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        errors = exc.errors()
        # of a union's alternatives (a string or a question object), the one that got deepest names the field
        first = max(errors, key=lambda e: len(field_name(e.get("loc", ())))) if errors else {}
        if first.get("type") == "json_invalid":
            return error(400, "invalid_json", "body", f"body: malformed JSON ({first.get('ctx', {}).get('error', '')})")
        field = field_name(first.get("loc", ()))
        return error(422, "invalid_request", field, f"{field}: {first.get('msg', 'invalid')}")

    @app.exception_handler(RequestError)
    async def refused(request: Request, exc: RequestError):
        return error(exc.status, exc.kind, exc.field, exc.message)

    @app.exception_handler(HTTPException)
    async def http_refusal(request: Request, exc: HTTPException):
        """Starlette's and FastAPI's own refusals (no such route, wrong method, a body it could not
        read) in the same envelope as ours."""
        if exc.status_code == 400:  # FastAPI: a body json.loads refused with something else than a JSON error
            cause = exc.__cause__
            why = ("not valid UTF-8" if isinstance(cause, UnicodeError) else
                   "nested too deeply" if isinstance(cause, RecursionError) else "not readable")
            return error(400, "invalid_json", "body", f"body: not valid JSON ({why})")
        kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return error(exc.status_code, kind, None, str(exc.detail))

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception):
        """A bug: logged with its traceback here, the client gets the envelope with the error's kind."""
        log.error("unhandled %s on %s", type(exc).__name__, request.url.path, exc_info=exc)
        return error(500, "error", None, f"internal error ({type(exc).__name__}); the server goes on")

    @app.post(ANSWER_PATH, summary="Answer one question or a list, with the evidence of each answer")
    async def answer(body: AnswerRequest):
        """Each answer is the record infer.py writes to predictions.jsonl (answers, paths with scores,
        evidence triples, knowledge text, status), plus `ranked` (id, label, score, path), `labels`
        (of every entity shown) and `timings`. One question gives the record, a list `{"records": [...]}`."""
        payload, status = await answer_payload(service, body)
        return FastJSONResponse(payload, status_code=status)

    @app.post("/v1/chat/completions", summary="OpenAI-compatible chat: the last user message is the question")
    async def chat_completions(body: ChatRequest):
        question = chat.question_of(body.messages)
        example = service.example(question, field="messages[-1].content")
        records, status, err = await service.answer([example], [("messages[-1].content", "messages[-1].content")])
        if status >= 500:
            return error(status, err["type"], None, err["message"])
        model = body.model or service.info()["method"]
        if body.stream:
            return StreamingResponse(chat.stream(records[0], model), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache"})
        return FastJSONResponse(chat.completion(records[0], model))

    @app.get("/v1/models", summary="The one model this server is (OpenAI's list format)")
    async def models():
        return {"object": "list", "data": [{"id": service.info()["method"], "object": "model", "owned_by": "rra"}]}

    @app.get("/v1/info", summary="KG size and relations, method, checkpoint, LLM, limits")
    async def info():
        return service.info()

    @app.get("/healthz", summary="Liveness: 200 while the server answers")
    async def healthz():
        return {"status": "ok"}

    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(BodyLimit, limit=service.limits.max_body_bytes)
    return app


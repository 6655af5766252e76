"""The FastAPI application of ``memdoor serve``: routes, authentication and error rendering.

Routes (all answers and errors in OpenAI's shapes):

- ``GET /v1/models`` and ``GET /v1/models/{id}`` — the teams served;
- ``POST /v1/chat/completions`` — a team solves the conversation's coding request
  (``stream: true`` for server-sent events); header ``x-memdoor-trace-id``;
  a review model (``memdoor/review-N``, with ``--review-repo``) reviews the diff it is sent
  (:mod:`memdoor.server.review`);
- ``GET /health`` — ``{"status": "ok", "running", "waiting"}``, without authentication.

Order of checks on a completion request: token (401), content type (415: JSON only), body size (413),
body (400 ``invalid_body``), model (404), request (400 ``invalid_request``),
queue (429); then the run (504 on its deadline or token budget, 502 when no code came out).
A client that disconnects cancels its team. The body is parsed and the request read (its function, its
examples) in a worker thread, never on the event loop: one large request does not hold up the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
import time
from collections.abc import AsyncIterator

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from memdoor.core.errors import first_problem
from memdoor.core.protocols import Sandbox
from memdoor.core.trace import TraceEvent
from memdoor.models.pool import ModelPool
from memdoor.problems.jsonl import parse_json
from memdoor.server.config import ServeConfig
from memdoor.server.errors import (
    APIError,
    InternalError,
    InvalidBody,
    MethodNotAllowed,
    ModelNotFound,
    NotFound,
    PayloadTooLarge,
    Unauthorized,
    UnsupportedMediaType,
)
from memdoor.server.review import ReviewService
from memdoor.server.schema import ChatRequest, completion_body, model_card
from memdoor.server.service import ServedRun, TeamService
from memdoor.server.stream import team_stream

TRACE_HEADER = "x-memdoor-trace-id"


def error_response(e: APIError) -> JSONResponse:
    return JSONResponse(e.body(), status_code=e.status, headers=e.headers())


def check_media_type(content_type: str | None) -> None:
    """UnsupportedMediaType unless the body is declared JSON (``application/json``, ``...+json``, with
    parameters such as charset) or not declared at all (some minimal clients send no content-type)."""
    if content_type is None:
        return
    media = content_type.partition(";")[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise UnsupportedMediaType(
            f"the body must be JSON (content-type: application/json), not {media or repr(content_type)}"
        )


def parse_body(raw: bytes) -> ChatRequest:
    """The request body as a ChatRequest; InvalidBody naming the first bad field."""
    try:
        data = parse_json(raw)  # never RecursionError, however deeply the body is nested
    except ValueError as e:  # UnicodeDecodeError included
        raise InvalidBody(f"the body is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise InvalidBody("the body must be a JSON object")
    try:
        return ChatRequest.model_validate(data)
    except ValidationError as e:
        field, msg = first_problem(e)
        param = field or "body"
        more = f" (and {e.error_count() - 1} more problem(s))" if e.error_count() > 1 else ""
        raise InvalidBody(f"{param}: {msg}{more}", param=param) from None


class Authorizer:
    """Bearer-token check (constant-time); no token configured means no check."""

    def __init__(self, token: str | None):
        self._token = token.encode() if token else None

    def __call__(self, request: Request) -> None:
        if self._token is None:
            return
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise Unauthorized("missing bearer token: send the header 'Authorization: Bearer <token>'")
        if not hmac.compare_digest(value.strip().encode(), self._token):
            raise Unauthorized("invalid bearer token")


async def read_body(request: Request, limit: int) -> bytes:
    """The body, read up to ``limit`` bytes; PayloadTooLarge beyond (without reading the rest)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"the body is larger than the server's limit of {limit} bytes")
    parts, size = [], 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            raise PayloadTooLarge(f"the body is larger than the server's limit of {limit} bytes")
        parts.append(part)
    return b"".join(parts)


async def _disconnected(request: Request) -> None:
    """Returns when the client has gone away."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _first(request: Request, *aws: asyncio.Future) -> bool:
    """Wait until one of ``aws`` is done; False if the client disconnected first."""
    watcher = asyncio.ensure_future(_disconnected(request))
    try:
        done, _ = await asyncio.wait({watcher, *aws}, return_when=asyncio.FIRST_COMPLETED)
        return any(a in done for a in aws)
    finally:
        watcher.cancel()


async def review_answer(request: Request, body: ChatRequest) -> Response:
    """A review model's answer (see :mod:`memdoor.server.review`); a client that leaves cancels it."""
    reviews: ReviewService = request.app.state.reviews
    created = int(time.time())
    task = asyncio.ensure_future(reviews.review(body))
    tasks: set[asyncio.Task] = request.app.state.tasks
    tasks.add(task)  # held until it ends: a cancelled review first waits for its threads to stop
    task.add_done_callback(tasks.discard)
    if not await _first(request, task):
        task.cancel()  # it stops its test command, then lets go of its ticket and directory
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # nobody reads its outcome
        return Response(status_code=499)
    report = task.result()  # an APIError here is answered by its handler
    headers = {TRACE_HEADER: report.trace_id}
    if body.stream:
        usage = bool(body.stream_options and body.stream_options.include_usage)
        events = reviews.stream(body.model, report, created, usage)
        return StreamingResponse(iter(events), media_type="text/event-stream", headers=headers)
    return JSONResponse(reviews.body(body.model, report, created), headers=headers)


def create_app(
    config: ServeConfig, *, pool: ModelPool | None = None, sandbox: Sandbox | None = None
) -> FastAPI:
    """The server application. ``pool``/``sandbox`` default to new ones made at startup and closed at
    shutdown (ones given are the caller's to close); tests pass a pool holding scripted models."""
    from memdoor.run.env import open_env

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        slots = os.cpu_count() or 1  # candidates running at once over every request
        async with open_env(pool=pool, sandbox=sandbox, trace_dir=config.trace_dir, slots=slots) as env:
            app.state.service = TeamService(config, env)
            app.state.reviews = ReviewService(config, env, app.state.service.admission)
            app.state.tasks = set()
            yield

    app = FastAPI(title="memdoor serve", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    if config.cors_origins:  # browser pages of these origins only; a preflight needs no token
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["*"],  # browser SDKs add headers of their own (x-stainless-*); origins stay named
            expose_headers=[TRACE_HEADER],
            max_age=600,
        )
    authorize = Authorizer(config.token.get_secret_value() if config.token else None)

    @app.exception_handler(APIError)
    async def _api_error(request: Request, e: APIError) -> JSONResponse:
        return error_response(e)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
        if e.status_code == 405:
            return error_response(MethodNotAllowed(f"{request.method} is not allowed on {request.url.path}"))
        if e.status_code == 404:
            return error_response(NotFound(f"no route {request.method} {request.url.path}"))
        return error_response(InternalError(f"HTTP {e.status_code}"))

    @app.exception_handler(ClientDisconnect)
    async def _left(request: Request, e: ClientDisconnect) -> Response:
        # the client left while sending its request: nothing to answer, and not an error of the server
        return Response(status_code=499)

    @app.exception_handler(Exception)
    async def _bug(request: Request, e: Exception) -> JSONResponse:
        # the traceback goes to the server's log (Starlette re-raises to uvicorn), never to the client
        return error_response(InternalError("internal error; see the server log"))

    def service(request: Request) -> TeamService:
        return request.app.state.service

    @app.get("/health")
    async def health(request: Request) -> dict:
        adm = service(request).admission
        return {"status": "ok", "running": adm.running, "waiting": adm.waiting}

    @app.get("/v1/models")
    async def list_models(request: Request) -> dict:
        authorize(request)
        svc = service(request)
        ids = [*svc.teams, *request.app.state.reviews.ids]
        return {"object": "list", "data": [model_card(m, svc.created) for m in ids]}

    @app.get("/v1/models/{model_id:path}")
    async def get_model(request: Request, model_id: str) -> dict:
        authorize(request)
        svc = service(request)
        if model_id not in svc.teams and model_id not in request.app.state.reviews.ids:
            raise ModelNotFound(f"The model {model_id!r} does not exist on this server", param="model")
        return model_card(model_id, svc.created)

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        authorize(request)
        check_media_type(request.headers.get("content-type"))  # before reading a body to refuse
        raw = await read_body(request, config.max_body_bytes)
        # reading a body and its request is work on untrusted text (up to the body limit): in a thread, so
        # that one request never holds the event loop, every other client's answers, streams and /health
        body = await asyncio.to_thread(parse_body, raw)
        svc = service(request)
        if body.model in request.app.state.reviews.ids:  # memdoor/review-N: a diff to review
            return await review_answer(request, body)
        job = await asyncio.to_thread(svc.plan, body)
        ticket = svc.admission.admit()
        events: asyncio.Queue[TraceEvent] = asyncio.Queue()
        started: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def on_start(trace_id: str) -> None:
            if not started.done():
                started.set_result(trace_id)

        task = asyncio.ensure_future(
            svc.run(
                job,
                ticket,
                on_event=events.put_nowait if body.stream and config.progress != "none" else None,
                on_start=on_start,
            )
        )
        tasks: set[asyncio.Task[ServedRun]] = request.app.state.tasks
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        streaming = False
        try:
            waiting = (task, started) if body.stream else (task,)  # a stream starts with the team
            if not await _first(request, *waiting):
                task.cancel()  # the client went away: stop its team
                return Response(status_code=499)
            if task.done():
                outcome = task.result()  # an APIError here is answered by its handler
            if not body.stream:
                return JSONResponse(
                    completion_body(
                        id=outcome.completion_id,
                        created=job.created,
                        model=job.model,
                        content=outcome.content(),
                        usage=outcome.usage(),
                        extra=outcome.metadata(),
                    ),
                    headers={TRACE_HEADER: outcome.trace_id},
                )
            trace_id = started.result() if started.done() else outcome.trace_id
            response = StreamingResponse(
                team_stream(
                    task=task,
                    events=events,
                    ticket=ticket,
                    completion_id=f"chatcmpl-{trace_id}",
                    created=job.created,
                    model=job.model,
                    progress=config.progress,
                    heartbeat_s=config.heartbeat_s,
                    include_usage=bool(body.stream_options and body.stream_options.include_usage),
                ),
                media_type="text/event-stream",
                headers={TRACE_HEADER: trace_id, "cache-control": "no-cache", "x-accel-buffering": "no"},
            )
            streaming = True  # the stream releases the ticket when it ends
            return response
        finally:
            if not streaming:
                ticket.release()

    return app

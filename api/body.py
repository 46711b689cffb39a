"""Request bodies: a size limit on every route, and the JSON body a command reads.

``BodyLimitMiddleware`` (added once in ``create_app``) holds every request, on every route,
to ``ABATE_API_MAX_BODY_BYTES`` (``POST journal`` to ``ABATE_API_MAX_JOURNAL_BYTES``): a
declared ``Content-Length`` over the limit is 413 before anything is read, and a body that
streams past it is 413 as soon as it does, whatever the route was doing with it (a JSON
object, a JSONL journal, a form), so a route that reads its body in any way is covered
without a check of its own. ``body_chunks(request)`` is the one way to stream a body; the
limit applies to it like to every other read. ``SpooledBody`` hands a route its body as a
file, kept in memory up to ``SPOOL_IN_MEMORY_BYTES`` and on disk beyond (a journal of tens
of megabytes is never held whole in memory as bytes).

``json_body`` reads a command's body with the journal's own bounds: nested no deeper than a
journal line, numbers with a fraction read as Decimal (never binary floats), an object.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import AsyncIterator
from typing import IO, Annotated, Any

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.deps import ServicesDep
from api.errors import ApiError, error_response
from cases.errors import JournalError
from cases.journal import parse_journal_line


SPOOL_IN_MEMORY_BYTES = 1_048_576  # a spooled body past this goes to a temporary file
_JOURNAL_PATH = re.compile(r"/api/v1/[^/]+/journal/?")


def is_journal_post(scope: Scope) -> bool:
    """Whether this request sends a journal (``POST journal``): larger and longer than any
    other request, by design."""
    return scope.get("method") == "POST" and bool(_JOURNAL_PATH.fullmatch(scope.get("path", "")))


def body_limit(scope: Scope) -> tuple[int, str]:
    """(the largest body this request may send, the setting that says so)."""
    settings = scope["app"].state.services.settings
    if is_journal_post(scope):
        return settings.max_journal_bytes, "ABATE_API_MAX_JOURNAL_BYTES"
    return settings.max_body_bytes, "ABATE_API_MAX_BODY_BYTES"


def too_large(limit: tuple[int, str]) -> ApiError:
    size, setting = limit
    return ApiError(413, "too_large", f"the body is larger than the limit of {size:,} bytes "
                                      f"({setting})")


class BodyTooLarge(Exception):
    """Raised from ``receive`` when the body passes the limit (answered 413 by the
    middleware, whatever the route did with the exception)."""


class BodyLimitMiddleware:
    """413 for any request whose body is larger than the limit (module docstring)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = body_limit(scope)
        declared = dict(scope.get("headers", ())).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit[0]:
            await error_response(too_large(limit))(scope, receive, send)
            return
        size, over, started = 0, False, False

        async def limited() -> Message:
            nonlocal size, over
            message = await receive()
            if message["type"] == "http.request":
                size += len(message.get("body", b""))
                if size > limit[0]:
                    over = True
                    raise BodyTooLarge
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if over:  # the route answered after the body broke the limit: 413 instead
                if message["type"] == "http.response.start" and not started:
                    started = True
                    await error_response(too_large(limit))(scope, receive, send)
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, guarded)
        except BodyTooLarge:
            if not started:
                await error_response(too_large(limit))(scope, receive, send)


async def body_chunks(request: Request) -> AsyncIterator[bytes]:
    """The body as it arrives (held to the limit by the middleware)."""
    try:
        async for chunk in request.stream():
            yield chunk
    except BodyTooLarge:
        raise too_large(body_limit(request.scope)) from None


async def spooled_body(request: Request) -> AsyncIterator[IO[bytes]]:
    """The body as a file read from its start: in memory while small, in a temporary file
    past ``SPOOL_IN_MEMORY_BYTES`` (written off the event loop), removed after the answer."""
    spool, written = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY_BYTES), 0
    try:
        async for chunk in body_chunks(request):
            written += len(chunk)
            if written > SPOOL_IN_MEMORY_BYTES:  # on disk (from the write that rolls it over)
                await run_in_threadpool(spool.write, chunk)
            else:
                spool.write(chunk)
        spool.seek(0)
        yield spool
    finally:
        spool.close()


async def bounded_body(request: Request, svc: ServicesDep) -> bytes:
    """The body's bytes (held to the limit by the middleware: 413 past it)."""
    return b"".join([chunk async for chunk in body_chunks(request)])


async def json_body(request: Request, svc: ServicesDep) -> dict[str, Any]:
    raw = await bounded_body(request, svc)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(422, "invalid", f"the body is not UTF-8 (byte {exc.start})") from None
    try:
        data = parse_journal_line(1, text, svc.settings.max_body_bytes,
                                  svc.settings.base.journal_max_depth)
    except JournalError as exc:
        raise ApiError(422, "invalid", exc.reason) from None
    if data is None:
        raise ApiError(422, "invalid", "the body must be a JSON object")
    return data


JsonBody = Annotated[dict[str, Any], Depends(json_body)]
BoundedBody = Annotated[bytes, Depends(bounded_body)]
SpooledBody = Annotated[IO[bytes], Depends(spooled_body)]

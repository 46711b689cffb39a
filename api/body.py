"""Request bodies: one size limit on every route, and the JSON body a command reads.

``BodyLimitMiddleware`` (added once in ``create_app``) holds every request, on every route,
to ``ABATE_API_MAX_BODY_BYTES``: a declared ``Content-Length`` over the limit is 413 before
anything is read, and a body that streams past it is 413 as soon as it does, whatever the
route was doing with it (a JSON object, a JSONL journal read line by line, a form), so a
route that reads its body in any way is covered without a check of its own.
``body_chunks(request)`` is the one way to stream a body (e.g. a journal's lines); the
limit applies to it like to every other read.

``json_body`` reads a command's body with the journal's own bounds: nested no deeper than a
journal line, numbers with a fraction read as Decimal (never binary floats), an object.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.deps import ServicesDep
from api.errors import ApiError, error_response
from cases.errors import JournalError
from cases.journal import parse_journal_line


def too_large(limit: int) -> ApiError:
    return ApiError(413, "too_large", f"the body is larger than the limit of {limit:,} bytes "
                                      "(ABATE_API_MAX_BODY_BYTES)")


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
        limit = scope["app"].state.services.settings.max_body_bytes
        declared = dict(scope.get("headers", ())).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await error_response(too_large(limit))(scope, receive, send)
            return
        size, over, started = 0, False, False

        async def limited() -> Message:
            nonlocal size, over
            message = await receive()
            if message["type"] == "http.request":
                size += len(message.get("body", b""))
                if size > limit:
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
        raise too_large(request.app.state.services.settings.max_body_bytes) from None


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

"""Past its capacity a worker says so at once, instead of queueing without bound.

Each worker process works on at most ``ABATE_API_MAX_IN_FLIGHT`` requests at a time; one
more is answered 503 ``overloaded`` with ``Retry-After`` at once, before its body is read
or the store touched, so a burst leaves no backlog behind it. A request that has not begun
its answer within ``ABATE_API_REQUEST_SECONDS`` is answered 503 ``timed_out``; its work
goes on to its end (a thread cannot be stopped halfway through a unit of work) and keeps its
place in the count until then, so the count stays true. Nothing waits for a turn, so a
client that gives up leaves no queue behind it. ``/health`` is never refused (it is how an
operator or a load balancer tells a busy worker from a dead one), and ``POST journal`` has
no time limit (an import of tens of megabytes is long by design; its body limit bounds it).
"""

from __future__ import annotations

import asyncio
from html import escape
from typing import Any

from starlette.responses import HTMLResponse, JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.body import is_journal_post
from cases.logging import get_logger

log = get_logger("abate.api.overload")

RETRY_AFTER_SECONDS = 1
NEVER_REFUSED = ("/health",)
API_PATHS = ("/api/", "/docs", "/openapi.json", "/health")

BUSY = ("this worker is answering as many requests as it may at once "
        "(ABATE_API_MAX_IN_FLIGHT); nothing was read or changed: try again in a moment "
        "(Retry-After)")
SLOW = ("the answer took longer than the time limit (ABATE_API_REQUEST_SECONDS); a read "
        "changed nothing; a command may still be recorded: look again, or send it again "
        "with the same Idempotency-Key and it is recorded once")
PAGE_WORDS = {"overloaded": "Abate is busy just now and did not look at this request, so "
                            "nothing was changed. Try again in a moment.",
              "timed_out": "This took longer than Abate allows. If you sent a form, look at "
                           "the case or list again before sending it a second time."}


class OverloadGuard:
    """The cap on requests in flight and their time limit (module docstring)."""

    def __init__(self, app: ASGIApp, *, max_in_flight: int, request_seconds: float):
        self.app = app
        self.max_in_flight = max_in_flight
        self.request_seconds = request_seconds
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path", "").startswith(NEVER_REFUSED):
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.max_in_flight:
            log.warning("request_refused_overloaded", path=scope.get("path"),
                        in_flight=self.in_flight)
            await _answer(scope, receive, send, "overloaded", BUSY)
            return
        self.in_flight += 1
        loop = asyncio.get_running_loop()
        begun = loop.create_future()  # done once the answer starts, the work ends, or time is up
        answered_by_us = started = False

        def settle(_: object = None) -> None:
            if not begun.done():
                begun.set_result(None)

        async def watched(message: Message) -> None:
            nonlocal started
            if answered_by_us:
                return  # the client was told 503 already: the late answer goes nowhere
            if message["type"] == "http.response.start":
                started = True
                settle()
            await send(message)

        # One task and one timer per request: this runs for every request, and two tasks
        # with ``asyncio.wait`` cost a twentieth of a small request's CPU.
        work = asyncio.ensure_future(self._work(scope, receive, watched))
        work.add_done_callback(settle)
        limit = None if is_journal_post(scope) else self.request_seconds
        timer = loop.call_later(limit, settle) if limit is not None else None
        try:
            await begun
        finally:
            if timer is not None:
                timer.cancel()
        if work.done() or started:
            await work  # its answer is under way: let it finish (and raise what it raises)
            return
        answered_by_us = True
        work.add_done_callback(_log_late_failure)
        log.warning("request_timed_out", path=scope.get("path"), seconds=self.request_seconds)
        await _answer(scope, receive, send, "timed_out", SLOW)

    async def _work(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1


def _log_late_failure(work: asyncio.Future) -> None:
    """A request's work that failed after its client was answered 503 (nobody awaits it)."""
    if not work.cancelled() and work.exception() is not None:
        log.error("request_failed_after_time_limit", error=repr(work.exception())[:300])


async def _answer(scope: Scope, receive: Receive, send: Send, error: str, detail: str) -> None:
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS), "Cache-Control": "no-store"}
    response: Any
    if scope.get("path", "").startswith(API_PATHS):
        response = JSONResponse({"error": error, "detail": detail, "field": None},
                                status_code=503, headers=headers)
    else:  # a page: the same in words, without templates (there is no time for them)
        words = escape(PAGE_WORDS[error])
        response = HTMLResponse(
            "<!doctype html><html lang=en><meta charset=utf-8><title>Busy</title><main>"
            f"<h1>Abate is busy</h1><p class=error-detail>{words}</p>"
            "<p><a href=\"/\">Back to the start page</a></p></main>",
            status_code=503, headers=headers)
    await response(scope, receive, send)

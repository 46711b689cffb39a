"""Every request, logged in one place: its request id, one JSON log line, and for a request
of a signed-in user (an ``/api/v1`` request with a token, or a web page of a signed-in
session: ``api.web.session`` notes the user) a row of the access log (``api.access_log``).

The request id is the client's ``X-Request-ID`` when it is sane (1 to 64 letters, digits,
``.``, ``_``, ``:`` or ``-``), else a new one; it is returned as a header and bound (structlog
contextvars) on every log line the request writes. An unforeseen failure is answered here by
the app's own handler for ``Exception`` (a page for a page, JSON for the API), which shows
the request id as the failure's reference. The log line and the row name the
user, role, municipality, case, route, status and duration; never the token or any header.

A route says what kind of access it is with one dependency: ``Export`` ("this request
hands records out": an export, a referral packet). Writes, certifications and reads are
known from the role matrix. Each is recorded whatever its answer, a failure after
sign-in included.
"""

from __future__ import annotations

import datetime as dt
import re
import time
import uuid
from dataclasses import dataclass
from typing import Any

import structlog
from fastapi import Depends, Request
from fastapi.responses import Response
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.access_log import CERTIFY, EXPORT, READ, WRITE, AccessEntry
from api.accounts import User
from api.errors import logged_reference, unexpected
from api.roles import CERTIFYING, WRITES

log = structlog.get_logger("abate.api")

HEADER = "X-Request-ID"
_SANE_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,64}$")
_KEY = "abate.request"


@dataclass
class RequestRecord:
    """What the request's dependencies learn about it (the user, an export, the command a
    case page's form names)."""

    request_id: str
    user: User | None = None
    action: str | None = None
    command: str | None = None


def request_id_from(given: str | None) -> str:
    return given if given and _SANE_ID.match(given) else uuid.uuid4().hex


def note_user(request: Request, user: User) -> None:
    """The signed-in user of this request (called once, where the token is checked)."""
    record = request.scope.get(_KEY)
    if record is not None:
        record.user = user


def note_command(request: Request, command: str) -> None:
    """The command a case page's form names (in its body, not its address)."""
    record = request.scope.get(_KEY)
    if record is not None:
        record.command = command


def mark_export(request: Request) -> None:
    """This request hands records out (an export or a download): always logged as one."""
    record = request.scope.get(_KEY)
    if record is not None:
        record.action = EXPORT


# A route's dependency: ``dependencies=[Export]`` or a parameter ``_: None = Export``.
Export = Depends(mark_export)


def action_of(route: Any, marked: str | None, command: str | None = None) -> str:
    """What the request did; a route that declares ``Export`` is an export even when it was
    refused before its own dependencies ran (a 403). A case page's form post
    (``page.command``) is the command it names, as the API's route of that command: a
    write (a certification for ``certify_charge``), also when it is refused."""
    dependant = getattr(route, "dependant", None)
    if marked or (dependant and any(d.call is mark_export for d in dependant.dependencies)):
        return EXPORT
    name = getattr(route, "name", "")
    if name == "page.command":
        return CERTIFY if f"command.{command}" in CERTIFYING else WRITE
    if name in CERTIFYING:
        return CERTIFY
    return WRITE if name in WRITES else READ


class RequestLog:
    """ASGI middleware: the request id, the log line, the access-log row."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        given = headers.get(HEADER.lower().encode(), b"").decode("latin-1")
        record = RequestRecord(request_id_from(given))
        scope[_KEY] = record
        scope.setdefault("state", {})["request_id"] = record.request_id  # request.state
        services = scope["app"].state.services
        started_at, started = services.clock(), time.perf_counter()
        status, sent = 500, False

        async def send_with_id(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status, sent = message["status"], True
                MutableHeaders(scope=message).append(HEADER, record.request_id)
            await send(message)

        with structlog.contextvars.bound_contextvars(request_id=record.request_id):
            try:
                await self.app(scope, receive, send_with_id)
            except Exception as exc:  # noqa: BLE001 - answered here, with the request id
                status = 500
                answer = await self._answer(scope, receive, exc)
                if not sent:
                    await answer(scope, receive, send_with_id)
            finally:
                duration_ms = round((time.perf_counter() - started) * 1000, 3)
                await self._record(scope, record, status, duration_ms, started_at)

    @staticmethod
    async def _answer(scope: Scope, receive: Receive, exc: Exception) -> Response:
        """The app's answer to an unforeseen failure (its handler for ``Exception`` logs it);
        should that handler fail too, the API's plain one."""
        request = Request(scope, receive)
        handler = scope["app"].exception_handlers.get(Exception)
        try:
            if handler is not None:
                return await handler(request, exc)
        except Exception:  # noqa: BLE001 - the handler's own failure: still one answer
            log.exception("error_handler_failed")
        return unexpected(exc, logged_reference(request, exc))

    async def _record(self, scope: Scope, record: RequestRecord, status: int,
                      duration_ms: float, at: dt.datetime) -> None:
        matched = scope.get("route")
        route = getattr(matched, "name", None) or ""
        params: dict[str, Any] = scope.get("path_params") or {}
        user = record.user
        municipality = params.get("municipality") if isinstance(
            params.get("municipality"), str) else None
        case_ref = params.get("case_ref") if isinstance(params.get("case_ref"), str) else None
        action = action_of(matched, record.action, record.command)
        client = (scope.get("client") or (None,))[0]
        log.info("request", method=scope["method"], path=scope["path"][:512],
                 route=route or None,
                 status=status, duration_ms=duration_ms, action=action,
                 user=user.name if user else None, role=user.role if user else None,
                 municipality=municipality, case_ref=case_ref, client=client)
        if user is None:  # nobody signed in (sign-in form, static files, health)
            return
        entry = AccessEntry(
            request_id=record.request_id, requested_at=at, user=user.name, role=user.role,
            municipality=municipality, user_municipalities=user.municipalities,
            case_ref=case_ref, route=route or "unmatched",
            action=action, method=scope["method"], path=scope["path"], status=status,
            duration_ms=duration_ms, client=client)
        # Queued, committed by the writer's thread with others (api.access_log_writer).
        scope["app"].state.services.access_log_writer.put(entry)

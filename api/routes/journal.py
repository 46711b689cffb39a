"""``POST journal``: a journal of commands (JSON lines) recorded all or nothing, as
``abate import`` records one, by ``CaseService.import_journal``.

Each line is admitted before it is parsed: its municipality is the path's (filled in when
absent), its actor is the signed-in user (filled in when absent; a line naming anyone else
is refused, 403), and the user's role may run its command (the role matrix of the command's
own route; else 403). The first line at fault is named (``line``, and ``field`` where one
field is), and nothing is recorded: 422 for bad input or a command the case refuses, 403
as above, 409 when another writer recorded first, 413 over ``ABATE_API_MAX_JOURNAL_BYTES``.
The body is spooled (api/body.py ``SpooledBody``) and read line by line from there.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

from api import idempotency
from api.accounts import User
from api.body import SpooledBody
from api.deps import AllowedUser, GrantedMunicipality, ServicesDep
from api.errors import WRITE_RESPONSES, ApiError, ErrorBody, field_of
from api.roles import may
from api.routes.cases import Outcome
from cases.commands import COMMAND_NAMES
from cases.errors import JournalError
from cases.journal_file import journal_lines
from cases.seals import seal_store

router = APIRouter(tags=["journal"])


class JournalResult(BaseModel):
    """What the journal recorded and the log position it reached."""

    outcome: Outcome
    position: int


class ForbiddenLine(JournalError):
    """A line this user may not record (another actor, or a command the role may not run)."""


def route_of(command: str) -> str:
    """The route whose roles decide who may run a command in a journal."""
    return "cases.open" if command == "open_case" else f"command.{command}"


def admitter(user: User, municipality: str, request: Request):  # noqa: ANN201 - the admit hook
    def admit(number: int, fields: dict[str, Any]) -> dict[str, Any]:
        command = fields.get("command")
        # An unknown command is bad input (422 from the parser, naming the known ones), not
        # a matter of the role.
        if command in COMMAND_NAMES and not may(user.role, route_of(command)):
            raise ForbiddenLine(number, f"field command: the role {user.role} may not run "
                                        f"{command}")
        actor = fields.setdefault("actor", user.name)
        if actor != user.name:
            raise ForbiddenLine(number, f"field actor: {actor!r} is not the signed-in user "
                                        f"{user.name!r} (every line's actor is the signed-in "
                                        "user)")
        derived = idempotency.command_id(request, f"line {number}")
        if derived and "id" not in fields:  # a retry of this Idempotency-Key records nothing twice
            fields["id"] = derived
        named = fields.setdefault("municipality", municipality)
        if named != municipality:
            raise JournalError(number, f"field municipality: {named!r} is not {municipality!r}, "
                                       "the municipality of the path")
        return fields
    return admit


def _refusal(exc: JournalError) -> ApiError:
    if isinstance(exc, ForbiddenLine):
        status, error = 403, "forbidden"
    elif exc.line == 0:  # found when the journal was saved: another writer recorded first
        status, error = 409, "conflict"
    else:
        status, error = 422, "invalid"
    detail = str(exc) if exc.line else f"at the end of the journal: {exc.reason}"
    return ApiError(status, error, f"{detail}; nothing was recorded", field_of(exc.reason),
                    line=exc.line or None)


@router.post("/{municipality}/journal", name="journal.import", response_model=JournalResult,
             responses={**WRITE_RESPONSES, 403: {
                 "model": ErrorBody, "description": "the role may not call this route, or a "
                 "line names another actor or a command the role may not run (names the line)"},
                 422: {"model": ErrorBody, "description": "a line is bad input or the case "
                       "refuses it: names the line and the field; nothing was recorded"}},
             summary="Record a journal of commands (JSON lines), all or nothing",
             openapi_extra={"requestBody": {"required": True, "content": {
                 "text/plain": {"schema": {
                     "type": "string", "description": "one command per line (JSON lines, "
                     "as a journal for `abate import`; municipality and actor may be left "
                     "out); any content type is read the same, application/x-ndjson too"}}}}})
def import_journal(svc: ServicesDep, user: AllowedUser, municipality: GrantedMunicipality,
                   body: SpooledBody, request: Request) -> JournalResult:
    lines = journal_lines(body, svc.settings.base.journal_max_line_bytes)
    try:
        with svc.exclusive():
            outcome = svc.cases.import_journal(lines, svc.clock(),
                                               admit=admitter(user, municipality, request))
            if outcome.events_recorded:  # as after `abate import`: the new tail sealed
                seal_store(svc.store, actor=user.name, reason="automatic: journal over HTTP")
            position = svc.head()
    except JournalError as exc:
        raise _refusal(exc) from None
    return JournalResult(outcome=Outcome(**outcome.as_dict()), position=position)

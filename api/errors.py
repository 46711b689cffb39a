"""The domain's errors as HTTP answers, mapped once.

Bad input is 422 and names the field (the command models' and the journal's own
texts); a command the case's state refuses is 409; a case that is missing, or that
belongs to a municipality the user has no grant for, is 404 with the same body; a body
over the limit is 413. Every answer has the same shape (``ErrorBody``). Anything not
foreseen is 500 with one line, no traceback and a ``reference`` (the request's id): the
log line that holds the traceback carries the same reference, so an operator finds it. A
store that cannot be reached (``cases.store_reach``) is no bug: 503 with ``Retry-After``,
and a log line naming the setting and where it points.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from api import no_route
from cases import errors
from cases.store_reach import RETRY_AFTER_SECONDS, location, unreachable

log = structlog.get_logger("abate.api")


class ErrorBody(BaseModel):
    """What went wrong, in words a clerk can act on; ``field`` when one field is at fault,
    ``line`` when one line of a journal is (given only then)."""

    error: str
    detail: str
    field: str | None = None
    line: int | None = None


class StaleVersionBody(ErrorBody):
    """412: the case's current version (its ETag without the quotes)."""

    version: int


class ApiError(Exception):
    """An answer other than success, raised by the API's own checks."""

    def __init__(self, status: int, error: str, detail: str, field: str | None = None,
                 headers: dict[str, str] | None = None, extra: dict[str, Any] | None = None,
                 line: int | None = None):
        super().__init__(detail)
        self.status, self.error, self.detail, self.field = status, error, detail, field
        self.headers, self.line = headers, line
        self.extra = extra or {}  # more fields of the body (e.g. the current version)


def not_found(detail: str) -> ApiError:
    return ApiError(404, "not_found", detail)


def case_not_found(municipality: str, case_ref: str) -> ApiError:
    """The one answer for a case that is missing or that the user may not see."""
    return not_found(f"no case {case_ref!r} in {municipality}")


# Domain error class -> (status, error name). The first match in order wins.
STATUS: tuple[tuple[type[Exception], int, str], ...] = (
    (errors.CaseNotFoundError, 404, "not_found"),
    (errors.CaseAlreadyExistsError, 409, "conflict"),
    (errors.ConcurrentChangeError, 409, "conflict"),
    (errors.StaleVersionError, 412, "precondition_failed"),
    (errors.InvalidCommandError, 422, "invalid"),
    (errors.JournalError, 422, "invalid"),
    (errors.FutureTimeError, 422, "invalid"),
    (errors.InvalidAmountError, 422, "invalid"),
    (errors.InvalidParcelError, 422, "invalid"),
    (errors.OffenseDateError, 422, "invalid"),
    (errors.UnknownRuleError, 422, "invalid"),
    (errors.UsageError, 422, "invalid"),
    (errors.InputError, 422, "invalid"),
    (errors.CommandRejectedError, 409, "refused"),  # the case's state refuses it
    (errors.TamperedStoreError, 500, "tampered"),
    (errors.AbateError, 500, "server"),
)

# The error answers each kind of route declares in the OpenAPI schema.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "no token, or a token unknown, revoked or expired"},
    403: {"model": ErrorBody, "description": "the user's role may not call this route"},
    404: {"model": ErrorBody, "description": "no such case or municipality for this user"},
    422: {"model": ErrorBody, "description": "bad input; names the field"},
}
WRITE_RESPONSES: dict[int | str, dict[str, Any]] = {
    **ERROR_RESPONSES,
    409: {"model": ErrorBody, "description": "the case's state refuses the command, or "
                                             "another writer recorded first"},
    412: {"model": StaleVersionBody, "description": "If-Match names a version the case "
                                                      "is no longer at; nothing was recorded"},
    413: {"model": ErrorBody, "description": "the body is larger than the limit"},
}


def field_of(detail: str) -> str | None:
    """The field a domain message names (``field served_on: ...``), if it names one."""
    named = set(re.findall(r"(?:^|; )field ([^\s:]+):", detail))
    return named.pop() if len(named) == 1 else None


def domain_answer(exc: errors.AbateError) -> ApiError:
    for cls, status, name in STATUS:
        if isinstance(exc, cls):
            detail = str(exc)
            if isinstance(exc, errors.JournalError):
                detail = exc.reason  # one body is one line: no "line 1:"
            if isinstance(exc, errors.StaleVersionError):
                return ApiError(status, name, detail, extra={"version": exc.current})
            return ApiError(status, name, detail,
                            getattr(exc, "field", None) or field_of(detail))
    raise exc  # pragma: no cover - AbateError is last in STATUS


def error_response(exc: ApiError) -> JSONResponse:
    """The answer for ``exc`` (also an ASGI app, for middleware); ``line`` only for a
    journal's errors."""
    body = ErrorBody(error=exc.error, detail=exc.detail, field=exc.field, line=exc.line)
    shown = body.model_dump(exclude={"line"} if exc.line is None else None)
    return JSONResponse({**shown, **exc.extra}, status_code=exc.status, headers=exc.headers)


_respond = error_response


# A parameter's pattern in a clerk's words, not as a regular expression.
PATTERN_WORDS = {
    r"^[0-9a-fA-F]{64}$": "give a digest of 64 hexadecimal characters (0-9, a-f), as "
                          "`abate seal` prints it",
    r"^[a-z]+$": "lower-case letters only, e.g. belleville",
    r"^[a-z0-9_]+$": "lower-case letters, digits and _ only, e.g. junk",
}

# An offset typed with ``+`` in a query string arrives as a space (``+`` means a space
# there): ``2026-01-07T08:35:00 05:30``.
_PLUS_AS_SPACE = re.compile(r"\d{2}:\d{2}(:\d{2}(\.\d+)?)? \d{2}(:?\d{2})?$")


def _message(item: dict[str, Any], where: str) -> str:
    message = str(item.get("msg", "invalid")).removeprefix("Value error, ")
    pattern = (item.get("ctx") or {}).get("pattern")
    if item.get("type") == "string_pattern_mismatch" and pattern in PATTERN_WORDS:
        message = PATTERN_WORDS[pattern]
    typed = item.get("input")
    if where == "query" and isinstance(typed, str) and _PLUS_AS_SPACE.search(typed):
        message += (f" (got {typed!r}: a + in a query string arrives as a space; send the "
                    "offset's + as %2B, e.g. 2026-01-07T08:35:00%2B05:30)")
    return message


def validation_detail(exc: RequestValidationError) -> tuple[str, str | None]:
    """FastAPI's parameter errors in the command models' wording (``field X: message``),
    a list item by its position (``costs.1.amount``)."""
    parts, fields = [], []
    for item in exc.errors():
        loc = [str(p) for p in item.get("loc", ())]
        where = loc[0] if loc else "request"
        name = ".".join(loc[1:]) or where
        fields.append(name)
        label = "field" if where == "body" else f"{where} parameter"
        parts.append(f"{label} {name}: {_message(item, where)}")
    return "; ".join(parts), fields[0] if len(fields) == 1 else None


def install(app: FastAPI) -> None:
    """Register the handlers on the app (once, in ``create_app``)."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return _respond(exc)

    @app.exception_handler(errors.AbateError)
    async def _domain_error(request: Request, exc: errors.AbateError) -> JSONResponse:
        answer = domain_answer(exc)
        if answer.status >= 500:
            log.error("request_failed", path=request.url.path, error=type(exc).__name__,
                      detail=str(exc))
        return _respond(answer)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        detail, field = validation_detail(exc)
        return _respond(ApiError(422, "invalid", detail, field))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        names = {404: "not_found", 405: "method_not_allowed"}
        if exc.status_code == 400:
            # FastAPI's answer to a body it cannot parse (not UTF-8, not JSON): bad input, as
            # on every other route (422 with the same shape), not a bare 400.
            return _respond(ApiError(422, "invalid", "field body: not a JSON document in "
                                                     "UTF-8 (" + str(exc.detail) + ")", "body"))
        headers = getattr(exc, "headers", None)
        detail = str(exc.detail)
        if exc.status_code == 404 and detail == "Not Found":  # the router's: no route
            detail = no_route.not_found(request.method, request.url.path)
        elif exc.status_code == 405 and detail == "Method Not Allowed":
            detail = no_route.method_not_allowed(request.method, request.url.path,
                                                 (headers or {}).get("Allow"))
        return _respond(ApiError(exc.status_code, names.get(exc.status_code, "http"),
                                 detail, headers=headers))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        answer = store_unavailable(request, exc)
        if answer is not None:
            return _respond(answer)
        return unexpected(exc, logged_reference(request, exc))


def store_unavailable(request: Request, exc: BaseException) -> ApiError | None:
    """503 with ``Retry-After`` when ``exc`` means the store cannot be reached, logged once
    (``store_unreachable``: the setting, where it points, the driver's words; no traceback,
    there is nothing to fix in the code); None for any other failure."""
    reason = unreachable(exc)
    if reason is None:
        return None
    svc = request.app.state.services
    log.error("store_unreachable", method=request.method, path=request.url.path,
              reason=reason, **location(svc.settings.database_url, svc.store.schema))
    svc.drop_connections()  # the next request, once the store is back, opens new ones
    if request.method in ("GET", "HEAD"):
        detail = ("the records cannot be reached just now (the database does not answer); "
                  "nothing was changed: try again in a few seconds (Retry-After)")
    else:
        detail = ("the records cannot be reached just now (the database does not answer), so "
                  "this request may or may not have been recorded: send it again in a few "
                  "seconds (Retry-After); with the same Idempotency-Key it is recorded once")
    return ApiError(503, "unavailable", detail,
                    headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


def logged_reference(request: Request, exc: Exception) -> str:
    """Log an unforeseen failure with its traceback under a reference (the request's id,
    which every log line of the request carries), and return the reference to show."""
    reference = getattr(request.state, "request_id", None) or uuid.uuid4().hex
    log.exception("request_failed_unexpectedly", path=request.url.path,
                  error=type(exc).__name__, reference=reference, exc_info=exc)
    return reference


def unexpected(exc: Exception, reference: str) -> JSONResponse:
    """The answer to a failure nobody foresaw: one line, no traceback (that goes to the log,
    under ``reference``)."""
    return _respond(ApiError(500, "server", f"unexpected {type(exc).__name__} (a bug; the "
                             f"details are in the server's log under reference {reference})",
                             extra={"reference": reference}))

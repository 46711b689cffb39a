"""A request's JSON body, read with the journal's own bounds: at most the size limit
(else 413), nested no deeper than a journal line, numbers with a fraction read as Decimal
(never binary floats), and an object."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from api.deps import ServicesDep
from api.errors import ApiError
from cases.errors import JournalError
from cases.journal import parse_journal_line


def too_large(limit: int) -> ApiError:
    return ApiError(413, "too_large", f"the body is larger than the limit of {limit:,} bytes "
                                      "(ABATE_API_MAX_BODY_BYTES)")


async def bounded_body(request: Request, svc: ServicesDep) -> bytes:
    """The body's bytes, refused (413) past the limit before more is read."""
    limit = svc.settings.max_body_bytes
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def json_body(request: Request, svc: ServicesDep) -> dict[str, Any]:
    raw = await bounded_body(request, svc)
    limit = svc.settings.max_body_bytes
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(422, "invalid", f"the body is not UTF-8 (byte {exc.start})") from None
    try:
        data = parse_journal_line(1, text, limit, svc.settings.base.journal_max_depth)
    except JournalError as exc:
        raise ApiError(422, "invalid", exc.reason) from None
    if data is None:
        raise ApiError(422, "invalid", "the body must be a JSON object")
    return data


JsonBody = Annotated[dict[str, Any], Depends(json_body)]
BoundedBody = Annotated[bytes, Depends(bounded_body)]

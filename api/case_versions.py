"""A case's version as an HTTP validator: ``ETag`` out, ``If-Match`` and ``If-None-Match`` in.

The version is the number of events the case holds (the position of its last event); every
answer about one case (a read, its history, a command's result) carries it as a strong
``ETag`` (``"7"``): the same version always reads the same. A write sent with ``If-Match``
runs only on the case at that version (``CaseService.handle(expected_version=...)``), else
412 with the current version; a read with ``If-None-Match`` naming the current version is
304 with no body.
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import Depends, Header, Response

from api.errors import ApiError, domain_answer
from cases.errors import StaleVersionError

_STRONG = re.compile(r'^"(\d{1,12})"$')


def etag(version: int) -> str:
    return f'"{version}"'


def tag_response(response: Response, version: int) -> None:
    response.headers["ETag"] = etag(version)


async def expected_version(if_match: Annotated[str | None, Header(
        alias="If-Match", max_length=200,
        description='the ETag of the case as you read it (e.g. "7"): the command runs only '
                    'if the case is still at that version, else 412')] = None) -> int | None:
    """The version ``If-Match`` names (None without the header, or for ``*``)."""
    if if_match is None or if_match.strip() == "*":
        return None
    found = _STRONG.match(if_match.strip())
    if not found:
        raise ApiError(422, "invalid", 'header If-Match: one ETag as the API gave it, e.g. "7" '
                                       "(with the quotes), or *", "If-Match")
    return int(found.group(1))


ExpectedVersion = Annotated[int | None, Depends(expected_version)]


def stale(exc: StaleVersionError) -> ApiError:
    """412 with the current version in the body and as the ETag."""
    answer = domain_answer(exc)
    answer.headers = {"ETag": etag(exc.current)}
    return answer


def not_modified(if_none_match: str | None, version: int) -> bool:
    """True when ``If-None-Match`` names the current version (or is ``*``)."""
    if if_none_match is None:
        return False
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or etag(version) in tags


IfNoneMatch = Annotated[str | None, Header(
    alias="If-None-Match", max_length=200,
    description="the ETag you hold: 304 without a body if the case is still at it")]

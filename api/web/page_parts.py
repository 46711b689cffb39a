"""A part of a page that lists rows a page at a time (the worklist's sections, the repeat
offenders' parcels and parties): its rows, the whole count, and where the pages before and
after it start. One part is paged at a time (``?section=KEY&offset=N``), the others show
their first rows, so a page stays quick however many cases the village holds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Query

from api.web.session import PageError
from cases.page_sizes import MAX_OFFSET

# The query parameters that page a part: which part (``?section=``) and from where.
PartName = Annotated[str | None, Query(max_length=16)]
PartOffset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]


def asked_part(section: str | None, parts: tuple[str, ...], page: str) -> None:
    """Refuse (404) a ``?section=`` the page does not have; ``page`` names it in words."""
    if section is not None and section not in parts:
        raise PageError(404, f"{page} has no part {section[:16]!r}")


@dataclass(frozen=True)
class Section:
    """One part of a page: a page of its rows and where the others start."""

    key: str
    title: str
    rows: list[dict[str, Any]]
    total: int
    offset: int
    size: int  # rows a part shows at once

    @property
    def previous(self) -> int | None:
        return max(self.offset - self.size, 0) if self.offset else None

    @property
    def next(self) -> int | None:
        end = self.offset + len(self.rows)
        return end if end < self.total else None

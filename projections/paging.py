"""Lists come in pages: a default and a maximum size, the total, and where the next starts.

Every list a person or a program reads (worklist, cases, repeat offenses, access log)
answers at most ``MAX_LIMIT`` rows at once, so an answer's size and time do not grow with
the store. Pages are by offset in a total order that ends in a unique key, so walking
``next_offset`` from 0 visits every row once while nothing is recorded meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from cases.page_sizes import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "MAX_OFFSET", "Page", "read_page"]


@dataclass(frozen=True)
class Page:
    """One page of a list: its rows, the list's total, and the next page's offset."""

    rows: list[dict[str, Any]]
    total: int
    limit: int
    offset: int

    @property
    def next_offset(self) -> int | None:
        end = self.offset + len(self.rows)
        return end if end < self.total and self.rows else None


def read_page(conn: sa.Connection, query: sa.Select, order: Sequence[Any], *, limit: int,
              offset: int = 0, shape: Callable[[dict[str, Any]], dict[str, Any]] = dict
              ) -> Page:
    """The rows of ``query`` from ``offset`` (at most ``limit``) in ``order``, each made
    by ``shape``, and how many rows the whole query holds."""
    total = conn.execute(sa.select(sa.func.count()).select_from(query.subquery())).scalar_one()
    rows: list[dict[str, Any]] = []
    if offset < total:
        found = conn.execute(query.order_by(*order).limit(limit).offset(offset))
        names = tuple(found.keys())  # once: a row's own mapping builds its keys every time
        rows = [shape(dict(zip(names, row))) for row in found]
    return Page(rows, total, limit, offset)

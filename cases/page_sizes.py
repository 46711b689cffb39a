"""How long a page of a list may be, at every door (HTTP, pages, the command line).

An answer's size and time must not grow with the store: every list comes in pages of
``DEFAULT_LIMIT`` rows unless asked for fewer or more, never more than ``MAX_LIMIT``.
Apart from ``projections.paging`` so that building the command line imports no database.
A list already in memory (a case's events) is cut with ``paged`` and described with
``page_of``, in the same words as the views' pages.
"""

from typing import Any

DEFAULT_LIMIT = 100
MAX_LIMIT = 500
MAX_OFFSET = 10_000_000


def paged(items: list[Any], limit: int, offset: int) -> list[Any]:
    return items[offset:offset + limit]


def page_of(total: int, limit: int, offset: int) -> dict[str, Any]:
    """Where a page of ``limit`` from ``offset`` stands among ``total`` items, as every
    paged list says it (``projections.paging.Page``)."""
    shown = max(min(limit, total - offset), 0)
    end = offset + shown
    return {"total": total, "limit": limit, "offset": offset,
            "next_offset": end if shown and end < total else None}

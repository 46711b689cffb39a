"""Query parameters a person types, checked as the journal checks its fields: dates and
instants within the years a municipality's records can hold (cases.instants), text on one
line under the character policy (cases.text_policy), and filters that could match nothing
refused with the accepted values (cases.filters, the same checks as the command line's).
Else 422 naming the parameter."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from fastapi import Query

from cases import filters
from cases.page_sizes import MAX_LIMIT, MAX_OFFSET

# A list's page: how many rows (the default is each route's, mostly ``DEFAULT_LIMIT``) and
# from where (the answer's ``next_offset``).
PageLimit = Annotated[int, Query(ge=1, le=MAX_LIMIT)]
PageOffset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]


def query_name(name: str) -> str:
    """How an answer names a query parameter (``cases.filters``' ``named``)."""
    return f"query parameter {name}"


def bounded_day(name: str, value: dt.date | None) -> dt.date | None:
    return filters.day(name, value, query_name)


def bounded_instant(name: str, value: dt.datetime | None) -> dt.datetime | None:
    return filters.instant(name, value, query_name)


def one_line(name: str, value: str | None) -> str | None:
    return filters.one_line(name, value, query_name)

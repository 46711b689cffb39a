"""Query parameters a person types, checked as the journal checks its fields: dates and
instants within the years a municipality's records can hold (cases.instants), text on one
line under the character policy (cases.text_policy), and filters that could match nothing
refused with the accepted values (cases.filters, the same checks as the command line's).
Else 422 naming the parameter."""

from __future__ import annotations

import datetime as dt

from cases import filters


def query_name(name: str) -> str:
    """How an answer names a query parameter (``cases.filters``' ``named``)."""
    return f"query parameter {name}"


def bounded_day(name: str, value: dt.date | None) -> dt.date | None:
    return filters.day(name, value, query_name)


def bounded_instant(name: str, value: dt.datetime | None) -> dt.datetime | None:
    return filters.instant(name, value, query_name)


def one_line(name: str, value: str | None) -> str | None:
    return filters.one_line(name, value, query_name)

"""Query parameters a person types, checked as the journal checks its fields: dates and
instants within the years a municipality's records can hold (1900-2199, so that no
arithmetic on them, the end of a local day, a window of months, UTC, can overflow), and
text on one line under the character policy (cases.text_policy). Else 422 naming the
parameter."""

from __future__ import annotations

import datetime as dt

from api.errors import ApiError
from cases.text_policy import check_one_line

FIRST_DAY, LAST_DAY = dt.date(1900, 1, 1), dt.date(2199, 12, 31)


def _refuse(name: str, why: str) -> ApiError:
    return ApiError(422, "invalid", f"query parameter {name}: {why}", name)


def bounded_day(name: str, value: dt.date | None) -> dt.date | None:
    if value is not None and not FIRST_DAY <= value <= LAST_DAY:
        raise _refuse(name, f"give a date from {FIRST_DAY} to {LAST_DAY}")
    return value


def bounded_instant(name: str, value: dt.datetime | None) -> dt.datetime | None:
    if value is not None:
        bounded_day(name, value.date())
    return value


def one_line(name: str, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return check_one_line(value)
    except ValueError as exc:
        raise _refuse(name, str(exc)) from None

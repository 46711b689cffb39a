"""Times shown to people: always in the municipality's own zone, with its UTC offset.

Abate stores instants as they were given (events) or in UTC (views). Every time a
person reads (CLI tables and JSON, CSV files, API responses, console logs) goes
through ``local_iso`` with the municipality's zone, so 8 pm in Belleville reads
``2026-12-02T20:00:00-06:00`` and not ``2026-12-03T02:00:00+00:00``. JSON meant for
programs may add the UTC value beside it (``utc_iso``).
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from zoneinfo import ZoneInfo


@lru_cache(maxsize=32)
def zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def _instant(value: dt.datetime | str) -> dt.datetime:
    instant = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    if instant.tzinfo is None:
        raise ValueError(f"{value!r} has no UTC offset")
    return instant


def local_iso(value: dt.datetime | str | None, tz: ZoneInfo | str) -> str | None:
    """ISO 8601 in the municipality's zone, seconds precision, with the offset."""
    if value is None or value == "":
        return None
    tz = zone(tz) if isinstance(tz, str) else tz
    return _instant(value).astimezone(tz).isoformat(timespec="seconds")


def utc_iso(value: dt.datetime | str | None) -> str | None:
    if value is None or value == "":
        return None
    return _instant(value).astimezone(dt.timezone.utc).isoformat(timespec="seconds")


def local_date(value: dt.datetime, tz: ZoneInfo | str) -> dt.date:
    """The calendar date of an instant in the municipality's zone (never the offset typed)."""
    tz = zone(tz) if isinstance(tz, str) else tz
    return value.astimezone(tz).date()

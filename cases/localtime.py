"""Times shown to people: always in the municipality's own zone, with its UTC offset.

Abate stores instants as they were given (events) or in UTC (views). Every time a
person reads (CLI tables and JSON, CSV files, API responses) goes through here with
the municipality's zone, so 8 pm in Belleville reads ``2026-12-02T20:00:00-06:00`` and
not ``2026-12-03T02:00:00+00:00``; JSON adds the UTC value beside it (``localized``);
a table on a terminal reads ``2026-12-02 20:00 CST`` (``table_time``). A time a person
types on a page, without an offset, is read in the same zone (``typed_instant``).
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo


@lru_cache(maxsize=32)
def zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def instant(value: dt.datetime | str) -> dt.datetime:
    """A time kept as ISO text with its offset (or already a datetime) as an instant."""
    instant = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    if instant.tzinfo is None:
        raise ValueError(f"{value!r} has no UTC offset")
    return instant


def local_iso(value: dt.datetime | str | None, tz: ZoneInfo | str) -> str | None:
    """ISO 8601 in the municipality's zone, seconds precision, with the offset."""
    if value is None or value == "":
        return None
    tz = zone(tz) if isinstance(tz, str) else tz
    return instant(value).astimezone(tz).isoformat(timespec="seconds")


def utc_iso(value: dt.datetime | str | None) -> str | None:
    if value is None or value == "":
        return None
    return instant(value).astimezone(dt.timezone.utc).isoformat(timespec="seconds")


def shared_zone(zones: Any) -> str:
    """The zone of a report about several municipalities (the whole store's ``verify``):
    theirs when they all keep one, else UTC (said by the ``+00:00`` offset)."""
    found = set(zones)
    return found.pop() if len(found) == 1 else "UTC"


def local_date(value: dt.datetime, tz: ZoneInfo | str) -> dt.date:
    """The calendar date of an instant in the municipality's zone (never the offset typed)."""
    tz = zone(tz) if isinstance(tz, str) else tz
    return value.astimezone(tz).date()


def table_time(value: dt.datetime | str | None, tz: ZoneInfo | str) -> str:
    """``YYYY-MM-DD HH:MM`` and the zone's abbreviation (CST/CDT), for a table on a terminal."""
    if value is None or value == "":
        return "-"
    tz = zone(tz) if isinstance(tz, str) else tz
    return instant(value).astimezone(tz).strftime("%Y-%m-%d %H:%M %Z")


def instant_of(value: Any) -> dt.datetime | None:
    """The instant a value names, or None when it is not a time with an offset (a date, text)."""
    if isinstance(value, dt.datetime):
        return value if value.tzinfo is not None else None
    if isinstance(value, str) and "T" in value:
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            return None
        return parsed if parsed.tzinfo is not None else None
    return None


# Fields holding a moment whose names do not end in ``_at``: a case's cure deadline, a
# separate offense's day (``from`` .. ``to``), a read's ``as_of``.
MOMENTS = frozenset({"as_of", "cure_deadline", "from", "to"})


def localized(data: Any, tz: ZoneInfo | str) -> Any:
    """JSON data for people and programs, with every instant in one convention.

    Every field named ``at`` or ``*_at`` (and the other moments of ``MOMENTS``, e.g.
    ``as_of`` when it is a moment, not a date) that holds a time with an offset is shown in
    the municipality's zone with its offset, and its UTC value is added beside it as
    ``<field>_utc`` (text that sorts and compares across DST changes). Dates (``*_on``) are
    already local calendar dates and are left as they are.
    """
    tz = zone(tz) if isinstance(tz, str) else tz
    if isinstance(data, list):
        return [_localized_dict(item, tz) if type(item) is dict else localized(item, tz)
                for item in data]
    return _localized_dict(data, tz) if isinstance(data, dict) else data


@lru_cache(maxsize=4096)
def _kind(key: str) -> int:
    """0: not a moment; 1: a moment; 2: a moment whose absence is shown as two nulls."""
    if key == "at" or key == "cure_deadline" or key.endswith("_at"):
        return 2
    return 1 if key in MOMENTS else 0


_UTC = dt.timezone.utc


def _utc_to_the_second(value: Any) -> bool:
    """Whether ``value`` is already its own UTC text (``2026-11-16T05:59:59+00:00``, as the
    views store times): most times shown are, and need no second conversion."""
    return (type(value) is str and len(value) == 25 and value.endswith("+00:00")
            and value[4] == value[7] == "-" and value[10] == "T" and value[13] == value[16] == ":")


def _localized_dict(data: dict[str, Any], tz: ZoneInfo) -> dict[str, Any]:
    """``localized`` of one object (a worklist row, a case): called for every row of a page,
    so field names are classified once (``_kind``) and plain values are copied as they are."""
    shown: dict[str, Any] = {}
    for key, value in data.items():
        kind = _kind(key)
        if kind:
            if value is None and kind == 2:
                shown[key] = shown[f"{key}_utc"] = None
                continue
            instant = instant_of(value)
            if instant is not None:
                shown[key] = instant.astimezone(tz).isoformat(timespec="seconds")
                shown[f"{key}_utc"] = value if _utc_to_the_second(value) else \
                    instant.astimezone(_UTC).isoformat(timespec="seconds")
                continue
        if type(value) is dict:
            shown[key] = _localized_dict(value, tz)
        elif isinstance(value, (list, dict)):
            shown[key] = localized(value, tz)
        else:
            shown[key] = value
    return shown


class SkippedLocalTime(ValueError):
    """A wall-clock time the village's clocks never showed (daylight saving time began)."""


def typed_instant(text: str, tz: ZoneInfo) -> str:
    """A time typed in the village's zone (``2026-03-09T14:30``, as a page's date-and-time
    field sends it) as an instant with its offset; a text with its own offset is kept, and
    one that is not a time is returned as typed (the command refuses it, naming the field).

    A time inside the hour the clocks skip when daylight saving time begins raises
    ``SkippedLocalTime``: read as it stands it would silently become another hour. A time
    in the hour that happens twice when it ends is taken as the first (daylight) one, as
    the clocks showed it first."""
    try:
        local = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return text.strip()
    if local.tzinfo is not None:
        return local.isoformat()
    placed = local.replace(tzinfo=tz)
    if placed.astimezone(dt.timezone.utc).astimezone(tz).replace(tzinfo=None) != local:
        before, after = (dt.datetime.combine(local.date(), dt.time(h), tz) for h in (0, 23))
        hours = int((after.utcoffset() - before.utcoffset()).total_seconds() // 3600) or 1
        raise SkippedLocalTime(
            f"{local:%Y-%m-%d %H:%M} never happened in the village's time ({tz.key}): the "
            f"clocks moved {hours} hour{'s' if hours != 1 else ''} forward that night "
            "(daylight saving time); give the time the clock showed")
    return placed.isoformat()

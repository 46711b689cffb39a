"""Separate offenses of a continuing violation, counted from the rule's offense periods.

"Each twenty-four (24) hour period where a violation occurs shall constitute a separate
offense" (Belleville § 9.09(5), Mazomanie § 360-10) and "each day a violation continues"
(Belleville § 9.25(28), § 11.013(1)): a citation states the offenses computed from when
the violation began (the rule's starting point) to when it ended (abatement or
compliance) or, if it still goes on, to the citation. A period in which the violation
occurs for part of the time counts: the violation occurs in it.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

if TYPE_CHECKING:  # the rule's periods are passed in: the domain imports this module
    from cases.rules.catalog import OffensePeriods

DAY = dt.timedelta(hours=24)
# A bound on the periods one citation lists (ten years of days): larger is a typing error.
MAX_OFFENSES = 3660


def offense_periods(periods: OffensePeriods, began: dt.datetime, ended: dt.datetime,
                    tz: ZoneInfo) -> list[dict[str, Any]]:
    """Each separate offense between ``began`` and ``ended``: its number, local date and the
    times it runs from and to (the last one ends when the violation ended)."""
    if ended <= began:
        return []
    found: list[dict[str, Any]] = []
    if periods.unit == "24_hours":
        start = began
        while start < ended and len(found) < MAX_OFFENSES:
            end = min(start + DAY, ended)
            found.append(_offense(len(found) + 1, start, end, tz))
            start = start + DAY
        return found
    day = first_day(began, tz)
    last_day = (ended.astimezone(tz) - dt.timedelta(microseconds=1)).date()
    while day <= last_day and len(found) < MAX_OFFENSES:
        midnight = dt.datetime.combine(day, dt.time(0), tzinfo=tz)
        next_midnight = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(0), tzinfo=tz)
        found.append(_offense(len(found) + 1, max(began, midnight), min(ended, next_midnight), tz))
        day += dt.timedelta(days=1)
    return found


def first_day(began: dt.datetime, tz: ZoneInfo) -> dt.date:
    """The first local day of a violation that began at ``began``: a day deadline runs out
    at the last second of its day (23:59:59), so the violation's first day is the next."""
    return (began.astimezone(tz) + dt.timedelta(seconds=1)).date()


def _offense(number: int, start: dt.datetime, end: dt.datetime, tz: ZoneInfo) -> dict[str, Any]:
    local_start = start.astimezone(tz)
    return {"number": number, "date": local_start.date(), "from": local_start,
            "to": end.astimezone(tz)}

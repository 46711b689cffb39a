"""The deadline clock: when a period that starts at an instant ends.

Readings (DOMAIN.md, "Readings Abate uses"):
- hour-based periods run in elapsed hours, so 24 hours across a daylight-saving
  change is still 24 real hours;
- day-based periods count from the local calendar day of the start (the start
  day itself is not counted) and end at the end of the last local day;
- business days skip Saturdays, Sundays and Wisconsin state holidays (from the
  maintained ``holidays`` library, not a hand-kept list), imported when a business day
  is counted: the domain imports this module, and reading a case counts none
  (docs/benchmarks.md).
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

if TYPE_CHECKING:  # imported where used: a read wanting only the end of a day (the tax-roll
    import holidays  # list) starts without the holiday calendar and the catalog

    from cases.rules.catalog import Period

# The last representable instant of a local day: a deadline "on" a day ends here.
END_OF_DAY = dt.time(23, 59, 59)


@lru_cache(maxsize=16)
def _holiday_calendar(subdivision: str) -> holidays.HolidayBase:
    import holidays

    return holidays.country_holidays("US", subdiv=subdivision)


def is_business_day(day: dt.date, subdivision: str = "WI") -> bool:
    return day.weekday() < 5 and day not in _holiday_calendar(subdivision)


def end_of_local_day(day: dt.date, tz: ZoneInfo) -> dt.datetime:
    return dt.datetime.combine(day, END_OF_DAY, tzinfo=tz)


def add_business_days(start: dt.date, count: int, subdivision: str = "WI") -> dt.date:
    day = start
    remaining = count
    while remaining > 0:
        day += dt.timedelta(days=1)
        if is_business_day(day, subdivision):
            remaining -= 1
    return day


def deadline_after(
    start: dt.datetime, period: Period, tz: ZoneInfo, subdivision: str = "WI"
) -> dt.datetime:
    """The instant a period starting at ``start`` ends, in the municipality's zone."""
    if start.tzinfo is None:
        raise ValueError(f"start {start!r} must be timezone-aware")
    if period.unit == "hours":
        ends = start.astimezone(dt.timezone.utc) + dt.timedelta(hours=period.amount)
        return ends.astimezone(tz)
    local_day = start.astimezone(tz).date()
    if period.unit == "calendar_days":
        return end_of_local_day(local_day + dt.timedelta(days=period.amount), tz)
    return end_of_local_day(add_business_days(local_day, period.amount, subdivision), tz)

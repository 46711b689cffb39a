"""What a person types into a page's search form (a year, a count, a county, a date, a
moment), checked as the API checks its query parameters, but answered as an error beside the
field (``errors[name]``) on the page itself instead of a bare 422: the page still shows,
with the form filled in as typed so the person can fix it."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

from cases.instant_bounds import FIRST_DAY, LAST_DAY, TAX_YEAR_FIRST, TAX_YEAR_LAST
from cases.errors import UnknownRuleError
from cases.localtime import SkippedLocalTime, typed_instant
from cases.rules.catalog import Municipality

YEAR_MIN, YEAR_MAX = TAX_YEAR_FIRST, TAX_YEAR_LAST  # every year a page asks for is a tax year
_TO_THE_MINUTE = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d")  # no seconds, no offset


class Asked:
    """The values of one form, each checked; ``errors`` names the fields that were not."""

    def __init__(self) -> None:
        self.errors: dict[str, str] = {}

    def year(self, name: str, text: str | None, default: int) -> int:
        if text in (None, ""):
            return default
        try:
            value = int(text.strip())
        except ValueError:
            self.errors[name] = f"give a year as four digits, e.g. {default}"
            return default
        if not YEAR_MIN <= value <= YEAR_MAX:
            self.errors[name] = f"give a year from {YEAR_MIN} to {YEAR_MAX}"
            return default
        return value

    def whole_number(self, name: str, text: str | None, default: int, low: int, high: int
                     ) -> int:
        """A count typed into a number field (``low`` to ``high``, digits 0-9 only); empty
        is the default."""
        if text in (None, ""):
            return default
        digits = text.strip()
        if not (digits.isascii() and digits.isdigit() and len(digits) <= len(str(high))
                and low <= int(digits) <= high):
            self.errors[name] = f"give a whole number from {low} to {high}"
            return default
        return int(digits)

    def county(self, name: str, text: str | None, place: Municipality) -> str | None:
        """A county of the village (any capitals), or None for every county."""
        if text in (None, ""):
            return None
        try:
            return place.county_named(text.strip())
        except UnknownRuleError as exc:
            self.errors[name] = str(exc)
            return None

    def day(self, name: str, text: str | None, default: dt.date) -> dt.date:
        if text in (None, ""):
            return default
        try:
            value = dt.date.fromisoformat(text.strip())
        except ValueError:
            self.errors[name] = "give a date as YYYY-MM-DD, e.g. 2026-11-15"
            return default
        if not FIRST_DAY <= value <= LAST_DAY:
            self.errors[name] = f"give a date from {FIRST_DAY} to {LAST_DAY}"
            return default
        return value

    def moment(self, name: str, text: str | None, tz: ZoneInfo) -> dt.datetime | None:
        """A local date and time as a browser's ``datetime-local`` field sends it
        (``2026-11-15T14:30``), read in the village's zone; an offset given wins. A time
        typed to the minute means the end of that minute: pages show recorded times to the
        minute, so "as known at 09:54" takes in what a page shows as recorded at 09:54."""
        if text in (None, ""):
            return None
        try:
            value = dt.datetime.fromisoformat(typed_instant(text, tz))
        except SkippedLocalTime as exc:
            self.errors[name] = str(exc)
            return None
        except ValueError:
            self.errors[name] = "give a date and time as YYYY-MM-DD HH:MM, e.g. 2026-11-15 14:30"
            return None
        if not FIRST_DAY <= value.date() <= LAST_DAY:
            self.errors[name] = f"give a date from {FIRST_DAY} to {LAST_DAY}"
            return None
        if _TO_THE_MINUTE.fullmatch(text.strip()):
            value = value.replace(second=59, microsecond=999_999)
        return value


def local_today(now: dt.datetime, place: Municipality) -> dt.date:
    return now.astimezone(ZoneInfo(place.time_zone)).date()

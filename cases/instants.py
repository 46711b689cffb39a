"""The times and dates Abate accepts as input: written as ISO 8601 text (a time with its
UTC offset), and within 1900-01-01 .. 2200-12-31.

A number is refused rather than read as seconds since 1970: ``known_at=2026`` would
otherwise mean 1970-01-01T00:33:46Z.

A time outside that range is a typing error, not a fact of a code-enforcement case (the
tax roll's years stop at 2200 too, ``CertifyCharge.tax_year``). The bound also keeps
every accepted time convertible to any municipality's zone and to UTC: a year-1 or
year-9999 time with an offset would overflow there (an ``OverflowError``, not a clear
error naming the field).
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BeforeValidator

from cases.instant_bounds import EARLIEST, END, FIRST_DAY, LAST_DAY


_NUMBER = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")


def _not_a_number(example: str) -> Any:
    """A check that refuses a number, naming ``example`` (a time's or a date's)."""
    def check(value: Any) -> Any:
        if isinstance(value, (int, float, Decimal)) or (
                isinstance(value, str) and _NUMBER.fullmatch(value)):
            raise ValueError(f"write it in ISO 8601, e.g. {example} (a number is not read as "
                             "seconds since 1970)")
        return value
    return check


def _instant_in_range(value: dt.datetime) -> dt.datetime:
    if not EARLIEST <= value < END:  # aware comparisons never overflow
        raise ValueError(f"{value.isoformat()} is outside the times Abate accepts "
                         f"({FIRST_DAY} to {LAST_DAY}, UTC)")
    return value


def _date_in_range(value: dt.date) -> dt.date:
    if not FIRST_DAY <= value <= LAST_DAY:
        raise ValueError(f"{value} is outside the dates Abate accepts ({FIRST_DAY} to {LAST_DAY})")
    return value


Instant = Annotated[AwareDatetime, BeforeValidator(_not_a_number("2026-01-07T08:35:00-06:00")),
                    AfterValidator(_instant_in_range)]
CalendarDate = Annotated[dt.date, BeforeValidator(_not_a_number("2026-01-07")),
                         AfterValidator(_date_in_range)]

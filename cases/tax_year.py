"""Which year's tax roll a charge goes on: one rule for certifying it (``cases.domain``)
and for the worklist's action that says to enter it (``cases.actions``).

The municipality's cut-off (``certification_cutoff``, MM-DD; DOMAIN.md reading) decides
the first roll: a charge eligible on or before it (the local date) goes on that year's
roll, a later one on next year's. A charge whose rule names its roll's year (§ 9.24(8):
"for the year in which the work is completed") goes on that year's (``roll_year``),
whatever the cut-off. The tax-roll view's list query applies the same reading
(projections/tax_roll.py)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo


def first_roll_year(eligible_at: dt.datetime, tz: ZoneInfo, cutoff: str) -> int:
    """The first roll a charge eligible at ``eligible_at`` can go on, by the cut-off."""
    eligible_on = eligible_at.astimezone(tz).date()
    month, day = (int(part) for part in cutoff.split("-"))
    return eligible_on.year + (1 if eligible_on > dt.date(eligible_on.year, month, day) else 0)


def cutoff_of(year: int, tz: ZoneInfo, cutoff: str) -> dt.datetime:
    """The end of the cut-off day (local) of ``year``'s roll: a charge eligible by then goes
    on that roll, so entering one on it is due by then (the worklist, ``cases.actions``)."""
    from cases.rules.clock import end_of_local_day

    month, day = (int(part) for part in cutoff.split("-"))
    return end_of_local_day(dt.date(year, month, day), tz)


def roll_year(named: int | None, eligible_at: dt.datetime, tz: ZoneInfo, cutoff: str) -> int:
    """The roll a charge goes on: the year its rule named (the charge's ``roll_year``),
    else the first by the cut-off."""
    return named if named is not None else first_roll_year(eligible_at, tz, cutoff)

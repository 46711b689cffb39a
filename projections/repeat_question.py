"""The repeat-offense question a person asks (``abate repeat-offenses``, ``GET
repeat-offenses``): prior violations of a rule family in the look-back window before a
date, counted the way the rule in force then says (by parcel, by party, either, or the
person notified or convicted), with the rule's citation."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from cases.errors import AbateError
from projections.repeat_offenses import RepeatOffenses

if TYPE_CHECKING:
    from cases.rules.catalog import Municipality


class RepeatQuestionError(AbateError):
    """The question does not fit the rule: a parcel where the rule counts the party (or
    the reverse), or a parcel not written COUNTY/NUMBER. ``field`` names what to change."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


def _cli_option(name: str) -> str:
    return f"--{name}"


def repeat_offenses(view: RepeatOffenses, conn: sa.Connection, place: Municipality, *,
                    rule_family: str, parcel: str | None, party: str | None,
                    as_of: dt.date,
                    named: Callable[[str], str] = _cli_option) -> dict[str, Any]:
    """Prior violations as of ``as_of`` (trailing window of the rule in force then; 12
    months where no rule of the family has a repeat clause). ``named`` writes a
    parameter's name as the caller's user types it (``--parcel``, ``parcel``)."""
    rules = [r for r in place.rules if r.family == rule_family]
    in_force = [r for r in rules if r.effective_from <= as_of and r.repeat]
    repeat = max(in_force, key=lambda r: r.effective_from).repeat if in_force else None
    counts = repeat.counts if repeat else "parcel_or_party"
    where = None
    if parcel:
        if counts not in ("parcel", "parcel_or_party"):
            words = " ".join((repeat.counts_text or "").split())
            raise RepeatQuestionError(
                f"{named('parcel')}: a repeat window of the {rule_family} rules counts the "
                f"{counts.replace('_', ' ')}, not the parcel (\"{words}\", "
                f"{repeat.citation}); give {named('party')}", "parcel")
        county, _, number = parcel.partition("/")
        if not number:
            raise RepeatQuestionError(f"{named('parcel')} {parcel!r} must look like COUNTY/NUMBER",
                                      "parcel")
        where = {"county": county, "number": number}
    if party and counts == "parcel":
        raise RepeatQuestionError(f"{named('party')}: a repeat window of the {rule_family} "
                                  f"rules counts the parcel ({repeat.citation}); give "
                                  f"{named('parcel')}", "party")
    from cases.rules.clock import end_of_local_day

    evidence = view.prior_violations(
        conn, municipality=place.municipality, family=rule_family, parcel=where, party=party,
        violation_date=as_of, window_months=repeat.window_months if repeat else 12,
        as_of=end_of_local_day(as_of, ZoneInfo(place.time_zone)), counts=counts)
    return {"municipality": place.municipality, "rule_family": rule_family, "parcel": parcel,
            "party": party, "as_of": as_of.isoformat(), "counts": counts,
            "rule_citation": repeat.citation if repeat else None,
            # Why this window: the rule's repeat clause, or (no clause in force) the trailing
            # 12 months inspectors count by, which is no legal window: the referral packet
            # then says the rule states none.
            "window_basis": (f"the repeat clause of {repeat.citation}" if repeat else
                             f"no {rule_family} rule of {place.municipality} in force on "
                             f"{as_of.isoformat()} states a repeat-offense window: the "
                             "inspectors' trailing 12 months, not an ordinance window"),
            "count": evidence.count,
            "window_start": evidence.window_start.isoformat(),
            "window_end": evidence.window_end.isoformat(), "case_refs": evidence.case_refs}

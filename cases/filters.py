"""The filters a person types to read cases and reports, checked before anything is read.

A filter that can match nothing because no such thing exists (a rule the village does not
have, a parcel number in no county's format, a deadline or action name that is never set,
a county outside the village, a period that ends before it starts) is refused with the
accepted values, never answered with an empty list that reads as "none found". One check
serves both doors: the HTTP API words the name as ``query parameter rule`` (422), the
command line as ``--rule`` (exit status 2): ``named`` writes it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable
from typing import Any, get_args

from cases.action_kinds import ActionKind
from cases.errors import UnknownRuleError, UsageError
from cases.instant_bounds import END, EARLIEST, FIRST_DAY, LAST_DAY
from cases.rules.counties import county_named

Named = Callable[[str], str]


class FilterError(UsageError):
    """A filter that cannot match anything; ``field`` is the parameter's name."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


def cli_option(name: str) -> str:
    """``due_by`` -> ``--due-by``: how the command line names a parameter."""
    return "--" + name.replace("_", "-")


def _one_of(values: Iterable[str]) -> str:
    return ", ".join(values)


def _refuse(named: Named, name: str, why: str) -> FilterError:
    return FilterError(f"{named(name)}: {why}", name)


def one_line(name: str, value: str | None, named: Named = cli_option) -> str | None:
    """Text to search for (an owner, a party) under the one-line character policy: a control
    character would match nothing, or, cut at a NUL by the database, everything."""
    if value is None:
        return None
    from cases.text_policy import check_one_line  # brings pydantic: only when text is given

    try:
        return check_one_line(value)
    except ValueError as exc:
        raise _refuse(named, name, str(exc)) from None


def choice(name: str, value: str | None, accepted: Iterable[str], named: Named = cli_option,
           what: str = "an accepted value") -> str | None:
    """``value`` if it is one of ``accepted`` (``what`` says what they are: "a deadline")."""
    accepted = tuple(accepted)
    if value is not None and value not in accepted:
        raise _refuse(named, name, f"{value!r} is not {what}; give one of: {_one_of(accepted)}")
    return value


def rule_key(place: Any, value: str | None, named: Named = cli_option) -> str | None:
    """A rule of this municipality written ``municipality:section`` (``belleville:9.13``)."""
    if value is None:
        return None
    known = sorted({r.key for r in place.rules})
    municipality, sep, _ = value.partition(":")
    if not sep:
        raise _refuse(named, "rule", f"{value!r} must look like {known[0]!r} "
                                     f"(one of: {_one_of(known)})")
    if municipality != place.municipality:
        raise _refuse(named, "rule", f"{value!r} is not a rule of {place.municipality} "
                                     f"(its rules: {_one_of(known)})")
    return choice("rule", value, known, named, f"a rule of {place.municipality}")


def rule_family(place: Any, value: str | None, named: Named = cli_option) -> str | None:
    """A family of the municipality's rules (``junk``, ``snow``...)."""
    families = sorted({r.family for r in place.rules})
    return choice("rule_family", value, families, named, f"a rule family of {place.municipality}")


def parcel(place: Any, value: str | None, named: Named = cli_option) -> str | None:
    """A parcel written ``COUNTY/NUMBER``: a county of the municipality (as the catalog
    spells it) and a number in that county's format."""
    if value is None:
        return None
    county_name, sep, number = value.partition("/")
    if not sep or not number:
        raise _refuse(named, "parcel", f"{value!r} must look like COUNTY/NUMBER, e.g. "
                                       f"{next(iter(place.counties))}/NUMBER")
    try:
        known = county(place, county_name, lambda _: named("parcel"))
    except FilterError as exc:
        raise FilterError(str(exc), "parcel") from None
    if why := place.parcel_error(known, number):
        raise _refuse(named, "parcel", why)
    return f"{known}/{number}"


def parcel_number(place: Any, value: str | None, named: Named = cli_option) -> str | None:
    """A parcel number in the format of one of the municipality's counties."""
    if value is None:
        return None
    if not any(re.fullmatch(pattern, value) for pattern in place.counties.values()):
        formats = "; ".join(f"{county} County {pattern}"
                            for county, pattern in place.counties.items())
        raise _refuse(named, "parcel", f"{value!r} is not a parcel number of {place.name} "
                                       f"(the formats: {formats})")
    return value


def parcel_part(value: str | None, named: Named = cli_option, name: str = "parcel_part"
                ) -> str | None:
    """Any part of a parcel number (its start, its last digits), to find a parcel by what a
    person remembers of it: one line of text, matched as written (a ``%`` or ``_`` in it is
    no wildcard: the search escapes it). Empty is no filter."""
    if value is None:
        return None
    return one_line(name, value, named).strip() or None


def county(place: Any, value: str | None, named: Named = cli_option) -> str | None:
    """One of the municipality's counties, as the catalog spells it (``dane`` -> ``Dane``)."""
    if value is None:
        return None
    try:
        return county_named(place, value)
    except UnknownRuleError as exc:
        raise _refuse(named, "county", str(exc)) from None


def action(value: str | None, named: Named = cli_option) -> str | None:
    """One of the kinds of action the worklist lists (``serve_notice``...)."""
    return choice("action", value, get_args(ActionKind), named, "an action")


def deadline(place: Any, value: str | None, named: Named = cli_option) -> str | None:
    """A deadline name the municipality's rules can set (``cure``, ``bill_due``...)."""
    from cases.deadlines import deadline_names

    return choice("deadline", value, deadline_names(place.rules), named,
                  f"a deadline of {place.municipality}'s rules")


def day(name: str, value: dt.date | None, named: Named = cli_option) -> dt.date | None:
    """A date within the ones Abate accepts (cases.instants)."""
    if value is not None and not FIRST_DAY <= value <= LAST_DAY:
        raise _refuse(named, name, f"{value} is outside the dates Abate accepts "
                                   f"({FIRST_DAY} to {LAST_DAY})")
    return value


def instant(name: str, value: dt.datetime | None, named: Named = cli_option
            ) -> dt.datetime | None:
    """A time with its UTC offset within the times Abate accepts (cases.instants)."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise _refuse(named, name, f"{value.isoformat()} needs a UTC offset, e.g. -06:00")
    if not EARLIEST <= value < END:
        raise _refuse(named, name, f"{value.isoformat()} is outside the times Abate accepts "
                                   f"({FIRST_DAY} to {LAST_DAY}, UTC)")
    return value


def period(start: tuple[str, Any], end: tuple[str, Any], named: Named = cli_option) -> None:
    """A period (dates or times) whose end is after its start: else it holds nothing."""
    (start_name, start_value), (end_name, end_value) = start, end
    if start_value is not None and end_value is not None and end_value <= start_value:
        raise _refuse(named, end_name, f"{end_value.isoformat()} is not after "
                                       f"{named(start_name)} {start_value.isoformat()}: "
                                       "the period holds nothing")

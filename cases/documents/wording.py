"""How documents word what the rules and the case hold: local dates and times, periods,
methods of service, the ordinance citation, an address broken into envelope lines.

Shared by the builders so a notice, a bill and a packet say the same thing the same way.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from zoneinfo import ZoneInfo

from cases.rules.catalog import NOT_SET, Clock, Rule

METHODS = {
    "personal": "personal delivery",
    "certified_mail": "certified mail",
    "first_class_mail": "first-class mail",
    "posting": "posting on the premises",
    "door_tape": "notice taped to the door",
    "abode": "left at the usual place of abode",
}

STARTS = {
    "observed": "the violation was observed",
    "snow_ended": "the snowfall ended",
    "notice_delivered": "this notice is delivered",
    "bill_issued": "the bill is issued",
    "bill_received": "you receive the bill",
    "incurred": "the cost is incurred",
}


def local_time(value: dt.datetime | str | None, tz: ZoneInfo) -> str:
    """``Tuesday, January 6, 2026, 9:00 AM CST``: the village's time, never UTC."""
    if value is None or value == "":
        return "not recorded"
    instant = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    local = instant.astimezone(tz)
    hour = local.strftime("%I").lstrip("0") or "12"
    return f"{local.strftime('%A, %B')} {local.day}, {local.year}, " \
           f"{hour}:{local.strftime('%M %p %Z')}"


def local_day(value: dt.date | dt.datetime | str | None, tz: ZoneInfo) -> str:
    """``January 6, 2026`` (an instant is taken in the village's zone first)."""
    if value is None or value == "":
        return "not recorded"
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value) if "T" in value else dt.date.fromisoformat(value)
    if isinstance(value, dt.datetime):
        value = value.astimezone(tz).date()
    return day_words(value)


def day_words(day: dt.date) -> str:
    """``January 6, 2026``: a calendar day (no zone: it is already the village's day)."""
    return f"{day.strftime('%B')} {day.day}, {day.year}"


_ISO_DAY = re.compile(r"\b(\d{4}-\d\d-\d\d)\b")


def days_in_words(text: str) -> str:
    """Abate's own wording with its ISO days in words ("10 calendar days from receipt on
    2026-02-19" -> "... on February 19, 2026"); for text Abate wrote, not a person's note."""
    return _ISO_DAY.sub(lambda day: day_words(dt.date.fromisoformat(day.group(1))), text)


def period(clock: Clock | None) -> str:
    if clock is None:
        return NOT_SET
    if clock.period == "stated_in_notice":
        return "the time stated in the notice"
    return f"{clock.period} after {STARTS.get(clock.starts, clock.starts)}"


def ordinance(place_name: str, rule: Rule) -> str:
    """Municipality, section, title and the date the version applied took force: what a court
    or an owner looks the rule up by (the title after a dash: titles carry their own
    parentheses; never the catalog's program key ``belleville:9.13``)."""
    return (f"{place_name}: {rule.citation} — {rule.title} (as in force from "
            f"{day_words(rule.effective_from)})")


def doer(performed_by: str | None) -> str:
    """Who may do the work, as a sentence's object: "the Village", "the Director of Public
    Works", "any Village enforcement official"; the Village where the rule names nobody."""
    if not performed_by:
        return "the Village"
    starts_lower = performed_by[0].islower()
    return performed_by if starts_lower else f"the {performed_by}"


_STATE_ZIP = re.compile(r"^[A-Z]{2}\s+\d{5}(-\d{4})?$")


def addressee(served_on: str, parties: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The party a notice was served on, read from what the officer wrote ("Gary Ruegsegger
    (owner), handed to him at the door" is the owner Gary Ruegsegger), None when it names
    neither party: the envelope window shows a name, never the officer's note."""
    found = [party for party in parties if party and party.get("name")
             and re.match(re.escape(party["name"]) + r"(?:$|[\s,;(])", served_on)]
    return max(found, key=lambda party: len(party["name"]), default=None)


def served_name(served_on: str) -> str:
    """The name in an officer's note of whom they served, without its parenthesis or the
    rest of the note: "Ruth Kubly (keeper, occupant)" -> "Ruth Kubly"."""
    return re.split(r"\s*[(,;]", served_on, maxsplit=1)[0].strip() or served_on


def envelope_lines(name: str, address: str | None, fallback: str) -> list[str]:
    """The recipient's name and address broken at commas, keeping "City, ST 12345" on one
    line as the post office reads it (the window holds five lines)."""
    text = address or fallback
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if len(parts) >= 2 and _STATE_ZIP.match(parts[-1]):
        parts[-2:] = [f"{parts[-2]}, {parts[-1]}"]
    if len(parts) > 4:
        parts = parts[:3] + [", ".join(parts[3:])]
    return [name, *parts]


def under_statute(text: str) -> str:
    """`` under § 66.0627, Wis. Stats.`` for a letter's sentence, or nothing where the texts
    give no statute (a mailed letter never says "not set")."""
    return "" if text == NOT_SET else f" under {text}"


def letterhead(settings: dict[str, str]) -> tuple[str, str, str]:
    return (settings.get("name", NOT_SET), settings.get("address", NOT_SET),
            settings.get("phone", NOT_SET))


def contact(name: str, address: str, phone: str) -> str:
    """Whom to ask, from the letterhead settings the village has set: a mailed letter never
    says "not set", so an unset address or phone is left out rather than printed."""
    return ", ".join([name, *([address] if address != NOT_SET else []),
                      *([f"phone {phone}"] if phone != NOT_SET else [])])


def forfeiture(rule: Rule) -> str | None:
    """The forfeiture a letter warns of: the amounts where the ordinance gives them, else the
    section that provides the penalty without an amount (never an invented one, never "not
    set"); None where the texts name neither."""
    penalty = rule.penalty
    if penalty is None:
        return None
    if NOT_SET not in (penalty.forfeiture_min, penalty.forfeiture_max):
        return f"Forfeiture: {penalty.describe(rule.municipality)}."
    if penalty.provided_by is None:
        return None
    return f"You may be subject to a forfeiture under {penalty.provided_by}."

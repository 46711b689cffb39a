"""A recorded fact's details in words, for the referral packet's chronology.

The packet (``cases.referral``) keeps each fact as the store has it: machine names
(``calendar_day``), ISO instants, nested records (the separate offenses of a citation, the
cost lines of an abatement). A court reads each of them as a sentence part: labels from
``cases.vocabulary``, the village's local time, amounts as $1,234.56, a record as its
fields in words, never a Python dict or list, and never cut short.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from zoneinfo import ZoneInfo

from cases import vocabulary
from cases.documents import wording as say
from cases.localtime import instant_of
from cases.money import dollars
from cases.rules.catalog import NOT_SET

# Fields shown in the entry's own line (position, time, fact, actor), said elsewhere in the
# packet (the case, its municipality and rule, once at its top; a citation's forfeiture, once
# under "Citations and forfeiture"), or that say nothing to a court (hashes, recorded inputs).
LEFT_OUT = {"position", "fact", "occurred_at", "recorded_at", "actor",
            "prev_hash", "hash", "rule", "rule_version", "sha256", "inputs", "municipality",
            "case_ref", "rule_family", "forfeiture", "supersedes_type"}

LABELS = {
    "offense_basis": "separate offenses counted",
    "supersedes": "corrects",
    "repeat_evidence": "prior violations",
    "built_from_version": "built from case version",
    "principal_after": "charge after the decision",
    "stays_charge": "stays the charge",
    "nobody_reachable": "nobody reachable",
    "name": "deadline",
    "bill_to": "bill to",
    "served_on": "served on",
}

AMOUNTS = {"amount", "total", "balance_after", "principal_after", "forfeiture_amount",
           "principal", "paid", "balance"}

_DATE = re.compile(r"^\d{4}-\d\d-\d\d$")
_MACHINE_NAME = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")


def label(key: str) -> str:
    """A field's label: ``mailing_address`` -> "mailing address", ``due_at`` -> "due",
    ``billed_on`` -> "billed"."""
    return LABELS.get(key) or key.removesuffix("_at").removesuffix("_on").replace("_", " ")


def details(entry: dict[str, Any], tz: ZoneInfo) -> list[str]:
    """Each field of a chronology entry as "label: words", in the order recorded."""
    lines = []
    for key, value in entry.items():
        if key in LEFT_OUT or value in (None, "", [], {}):
            continue
        if key == "offense_dates" and entry.get("offenses"):
            continue  # each offense below says its date
        lines.append(f"{label(key)}: {said(key, value, tz)}")
    return lines


def said(key: str, value: Any, tz: ZoneInfo) -> str:
    """One field's value in words."""
    writer = _WRITERS.get(key)
    if writer is not None:
        return writer(value, tz)
    if key in AMOUNTS:
        return dollars(value)
    return words(value, tz)


def words(value: Any, tz: ZoneInfo) -> str:
    """Any recorded value in words: yes/no, local times and days, a record's fields, a list's
    items, a machine name's words."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{label(k)}: {said(k, v, tz)}" for k, v in value.items()
                         if v not in (None, "", [], {}) and k not in ("position",))
    if isinstance(value, (list, tuple)):
        return "; ".join(words(item, tz) for item in value)
    if instant_of(value) is not None:
        return say.local_time(value, tz)
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return say.local_day(value, tz)
    text = str(value)
    if _DATE.match(text):
        return say.local_day(text, tz)
    if _MACHINE_NAME.match(text):
        return text.replace("_", " ")
    return text


def _party(value: Any, tz: ZoneInfo) -> str:
    if isinstance(value, dict) and "name" in value:
        return ", ".join([value["name"], *([value["mailing_address"]]
                                           if value.get("mailing_address") else [])])
    return words(value, tz)


def _parcel(value: Any, tz: ZoneInfo) -> str:
    if isinstance(value, dict) and {"county", "number"} <= set(value):
        return f"{value['county']} County, parcel {value['number']}"
    return words(value, tz)


def _costs(value: Any, tz: ZoneInfo) -> str:
    return "; ".join(f"{cost['item']}: {dollars(cost['amount'])}" if isinstance(cost, dict)
                     else words(cost, tz) for cost in value)


def _offenses(value: Any, tz: ZoneInfo) -> str:
    """``offense 1: April 20, 2026, 1:00 PM to 12:00 AM the next day (CDT)``."""
    said_ = []
    for offense in value:
        start = instant_of(offense.get("from"))
        end = instant_of(offense.get("to"))
        if start is None or end is None:
            said_.append(f"offense {offense.get('number')}: {words(offense.get('date'), tz)}")
            continue
        start, end = start.astimezone(tz), end.astimezone(tz)
        later = {0: "", 1: " the next day"}.get((end.date() - start.date()).days,
                                                f" on {say.local_day(end, tz)}")
        same_zone = start.tzname() == end.tzname()
        said_.append(f"offense {offense['number']}: {say.local_day(start, tz)}, "
                     f"{_clock(start, not same_zone)} to {_clock(end, not same_zone)}{later}"
                     f"{f' ({end.tzname()})' if same_zone else ''}")
    return "; ".join(said_)


def _clock(local: dt.datetime, zone: bool) -> str:
    hour = local.strftime("%I").lstrip("0") or "12"
    return f"{hour}:{local.strftime('%M %p')}" + (f" {local.tzname()}" if zone else "")


def _offense_basis(value: Any, tz: ZoneInfo) -> str:
    """How a citation's separate offenses were counted, from when to when, in the rule's
    words and section."""
    if not isinstance(value, dict):
        return words(value, tz)
    began_by = _start(str(value.get("began_by", "")))
    unit = vocabulary.offense_unit_label(value.get("unit"))
    return (f"by {unit} from {say.local_time(value.get('began_at'), tz)} ({began_by}) to "
            f"{say.local_time(value.get('ended_at'), tz)} ({value.get('ended_by')}): "
            f"{value.get('count')} separate offenses; \"{value.get('text')}\" "
            f"({value.get('citation')})")


def _start(began_by: str) -> str:
    """What a count of offenses started from: "observed", "deadline cure (§ ...)"."""
    if began_by == "observed":
        return "when the violation was observed"
    deadline = vocabulary.deadline_start(began_by)
    if deadline:
        name, citation = deadline
        return f"when the deadline \"{vocabulary.deadline_label(name)}\" ran, {citation}"
    return began_by.replace("_", " ")


def _repeat(value: Any, tz: ZoneInfo) -> str:
    if not isinstance(value, dict):
        return words(value, tz)
    counts = vocabulary.repeat_counts_label(value.get("counts"))
    refs = value.get("case_refs") or []
    return (f"{value.get('count')} from {say.local_day(value.get('window_start'), tz)} to "
            f"{say.local_day(value.get('window_end'), tz)}, counting {counts}"
            + (f" ({', '.join(refs)})" if refs else ""))


def _attempts(value: Any, tz: ZoneInfo) -> str:
    return "; ".join(
        f"{say.METHODS.get(a.get('method'), words(a.get('method'), tz))} by "
        f"{a.get('attempted_by')} on {say.local_time(a.get('at'), tz)}: {a.get('result')}"
        if isinstance(a, dict) else words(a, tz) for a in value)


def _due_basis(value: Any, tz: ZoneInfo) -> str:
    """A bill's due basis; the store's "not set: the ordinance gives no payment period"
    reads "no due date: the ordinance gives no payment period"."""
    text = say.days_in_words(str(value))
    return "no due date" + text[len(NOT_SET):] if text.startswith(NOT_SET) else text


def _document(value: Any, tz: ZoneInfo) -> str:
    return str(value).replace("_", " ")


def _size(value: Any, tz: ZoneInfo) -> str:
    return f"{int(value):,} bytes"


def _supersedes(value: Any, tz: ZoneInfo) -> str:
    return f"fact {value}"


def _corrected_by(value: Any, tz: ZoneInfo) -> str:
    return ", ".join(f"fact {position}" for position in value)


def _changes(value: Any, tz: ZoneInfo) -> str:
    if not isinstance(value, dict):
        return words(value, tz)
    return "; ".join(f"{label(k)} to {said(k, v, tz)}" for k, v in value.items())


_WRITERS = {
    "owner": _party, "responsible": _party, "bill_to": _party,
    "parcel": _parcel,
    "costs": _costs,
    "offenses": _offenses,
    "offense_basis": _offense_basis,
    "repeat_evidence": _repeat,
    "after_attempts": _attempts,
    "due_basis": _due_basis,
    "document": _document,
    "size": _size,
    "supersedes": _supersedes,
    "corrected_by": _corrected_by,
    "changes": _changes,
    "previous": _changes,
    "derived": _changes,
    "name": lambda value, tz: vocabulary.deadline_label(value),
    "method": lambda value, tz: say.METHODS.get(value, words(value, tz)),
    "status": lambda value, tz: vocabulary.status_label(value),
    "charge_type": lambda value, tz: str(value).replace("_", " "),
}

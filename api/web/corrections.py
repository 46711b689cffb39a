"""The case page's ``correct`` form: which recorded fact to correct, which of its fields,
the new value typed as a person types it, and the reason; read back into the journal's
``correct`` command (docs/commands.md, "correct"). The domain decides what may change;
the form offers only the events and fields it allows, and puts each error beside the
field it is about."""

from __future__ import annotations

import datetime as dt
import re
import secrets
from dataclasses import dataclass
from dataclasses import field as default
from typing import Any
from zoneinfo import ZoneInfo

from cases.business_time import INSTANT_FIELDS, correctable_times, kind
from cases.localtime import SkippedLocalTime, typed_instant
from cases.vocabulary import EVENTS, event_label

# The fields a correction may change besides the times (cases.domain's _CORRECTABLE).
FACT_FIELDS = {
    "Opened": ("owner", "responsible", "site_address", "description", "parcel"),
    "NoticeServed": ("served_on",),
    "InspectionRecorded": ("findings", "documents"),
    "PaymentReceived": ("void",),
}
# How each field's new value is typed in the one "New value" box.
HOW = {
    "owner": "name on the first line, mailing address on the next (optional)",
    "responsible": "name on the first line, mailing address on the next (optional)",
    "parcel": "county on the first line, parcel number on the next",
    "documents": "one reference a line",
    "void": "leave empty: the payment is voided",
    "received_on": "a date, YYYY-MM-DD (empty: not known)",
    "board_meeting_on": "a date, YYYY-MM-DD (empty: not known)",
    **{name: "a date and time in the village's time, YYYY-MM-DDTHH:MM"
       for name in INSTANT_FIELDS},
}
MAX_VALUE = 2000  # characters of the new value (the domain checks each field's own limit)


@dataclass
class CorrectForm:
    """The form as shown (and shown again with what was typed and its errors)."""

    targets: list[tuple[int, str, tuple[str, ...]]]  # (position, label, fields)
    at: str
    supersedes: str = ""
    field: str = ""
    value: str = ""
    reason: str = ""
    command: str = "correct"
    command_id: str = default(default_factory=lambda: secrets.token_hex(16))
    errors: dict[str, str] = default(default_factory=dict)

    @property
    def fields(self) -> list[str]:
        return sorted({f for _, _, fs in self.targets for f in fs})

    def how(self) -> list[tuple[str, str]]:
        """How to type each field's new value, the fields typed alike named together."""
        grouped: dict[str, list[str]] = {}
        for name in self.fields:
            if name in HOW:
                grouped.setdefault(HOW[name], []).append(name.replace("_", " "))
        return [(" or ".join(names), text) for text, names in grouped.items()]


def targets(events: list[Any]) -> list[tuple[int, str, tuple[str, ...]]]:
    """The events a correction may supersede, each with the fields it may change."""
    found = []
    for event in events:
        name = kind(event)
        fields = (*FACT_FIELDS.get(name, ()), *sorted(correctable_times(name)))
        if fields:
            found.append((event.originator_version,
                          f"{event.originator_version}. {event_label(name)}", fields))
    return found


def correct_form(events: list[Any], now_local: dt.datetime) -> CorrectForm:
    return CorrectForm(targets(events), now_local.strftime("%Y-%m-%dT%H:%M"))


def read_correction(form: CorrectForm, posted: Any, tz: ZoneInfo) -> dict[str, Any] | None:
    """The ``correct`` command's fields from the posted form, or None with ``form.errors``
    set (beside each field) when the form cannot make a correction."""
    form.at = str(posted.get("at", ""))[:40]
    form.supersedes = str(posted.get("supersedes", ""))[:10]
    form.field = str(posted.get("field", ""))[:40]
    form.value = str(posted.get("value", ""))[:MAX_VALUE + 1]
    form.reason = str(posted.get("reason", ""))
    posted_id = str(posted.get("command_id", ""))
    data: dict[str, Any] = {"reason": form.reason}
    if re.fullmatch(r"[0-9a-f]{32}", posted_id):
        form.command_id = posted_id
        data["id"] = f"web-{posted_id}"
    if form.at.strip():
        try:
            data["at"] = typed_instant(form.at, tz)
        except SkippedLocalTime as exc:
            form.errors["at"] = str(exc)
    target = next((t for t in form.targets if str(t[0]) == form.supersedes), None)
    if target is None:
        form.errors["supersedes"] = "choose the event to correct"
    elif form.field not in target[2]:
        form.errors["field"] = _not_a_field(target, form.field)
    if len(form.value) > MAX_VALUE:
        form.errors["value"] = f"at most {MAX_VALUE} characters"
    if form.errors:
        return None
    try:
        new = _value(form.field, form.value, tz)
    except ValueError as exc:
        form.errors["value"] = str(exc)
        return None
    data["supersedes"] = int(form.supersedes)
    data["changes"] = {form.field: new}
    return data


def _not_a_field(target: tuple[int, str, tuple[str, ...]], field: str) -> str:
    """The chosen event has no such field: which it has, in words."""
    position, label, fields = target
    event = label.partition(". ")[2].lower()
    can = ", ".join(name.replace("_", " ") for name in fields)
    if not field:
        return f"choose the field to correct; on the {event} (event {position}): {can}"
    return (f"the {event} (event {position}) cannot have '{field.replace('_', ' ')}' "
            f"corrected; what can be: {can}")


_EVENT_NAME = re.compile(r"\b(" + "|".join(sorted(EVENTS, key=len, reverse=True)) + r")\b")
_CODE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")


def in_words(detail: str) -> str:
    """A refusal of the domain as the form says it: an event by its label, a field's name
    in words (``cannot correct served_on on Opened`` -> "cannot correct served on on the
    case opened")."""
    said = _EVENT_NAME.sub(lambda m: f"the {event_label(m[1]).lower()}", detail)
    return _CODE.sub(lambda m: m[0].replace("_", " "), said)


def _lines(value: str) -> list[str]:
    return [line.strip() for line in value.splitlines() if line.strip()]


def _value(name: str, value: str, tz: ZoneInfo) -> Any:
    """The new value as the command takes it, from what was typed."""
    lines = _lines(value)
    if name == "void":
        return True
    if name in ("owner", "responsible"):
        if not lines:
            raise ValueError("the name is required (first line)")
        party = {"name": lines[0]}
        if len(lines) > 1:
            party["mailing_address"] = ", ".join(lines[1:])
        return party
    if name == "parcel":
        if len(lines) != 2:
            raise ValueError("two lines: the county, then the parcel number")
        return {"county": lines[0], "number": lines[1]}
    if name == "documents":
        return lines
    if name in ("received_on", "board_meeting_on"):
        return value.strip() or None
    if name in INSTANT_FIELDS:
        if not value.strip():
            raise ValueError("a date and time is required")
        return typed_instant(value, tz)
    if not value.strip():
        raise ValueError("the new value is required")
    return value.strip()


def place_error(detail: str, form: CorrectForm) -> None:
    """A refusal beside the field it is about: the event, the field, the value, the reason
    or the time; what names none of them goes above the form."""
    text = detail.lower()
    if re.search(r"field at\b|\bat:", text) and "changes" not in text:
        key = "at"
    elif "reason" in text:
        key = "reason"
    elif "there is no event" in text or "supersedes" in text:
        key = "supersedes"
    elif "cannot correct" in text or "separate corrections" in text:
        key = "field"
    else:
        key = "value"
    form.errors[key] = in_words(re.sub(r"^field [^\s:]+: ", "", detail))  # it is beside it

"""A command's form on the case page, made from the command's own model (the one the
journal and the API parse with), and a posted form read back into that command's fields.

Each field of the model becomes one labelled control: a choice for a fixed set of
values (a notice's method: only those the case's rule allows), a date-and-time in the
village's time for an instant, a date, a number, an amount, a checkbox, a text or a
multi-line text (with the model's length limit), a few rows for cost lines, one line
per item for a list. The command's errors (``field X: ...``) come back beside X."""

from __future__ import annotations

import datetime as dt
import decimal
import re
import secrets
import types
import typing
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import AwareDatetime, BaseModel

from api.command_bodies import BODIES
from cases.localtime import SkippedLocalTime, typed_instant
from cases.money import dollars
from cases.rules.catalog import Rule

COST_ROWS = 6  # cost lines a form offers (a command takes up to 100; the API takes more)

# An amount as people type it: "$1,200.50", "1200.5", "-120" (thousands separated in
# groups of three, or not at all); anything else goes to the model as typed, which refuses it.
TYPED_AMOUNT = re.compile(r"^(?P<sign>-?)\$?(?P<whole>\d{1,3}(?:,\d{3})+|\d+)(?P<cents>\.\d*)?$")

LABELS = {
    "at": "When it happened (village time)",
    "delivered_at": "Delivered (village time, if later)",
    "served_on": "Served on (person)",
    "cure_days": "Days to cure (only where the rule leaves it to the notice)",
    "attempted_by": "Attempted by",
    "nobody_reachable": "Nobody responsible could be reached",
    "without_notice_reason": "Abated without notice because",
    "received_on": "Bill received on",
    "board_meeting_on": "Board's next regular meeting",
    "tax_year": "Tax year",
    "citation_number": "Citation number",
    "offense_dates": "Offense dates (one a line, YYYY-MM-DD)",
    "documents": "Documents (one reference a line)",
    "forfeiture_amount": "Forfeiture amount",
    "convicted": "Counts as a conviction",
}


@dataclass
class Field:
    name: str
    label: str
    kind: str  # select, datetime, date, number, amount, checkbox, text, textarea, costs, lines
    required: bool
    choices: tuple[str, ...] = ()
    max_length: int | None = None
    value: Any = ""
    # cost lines: the form's row of each line sent to the command (empty rows are left out,
    # so the command's line 2 may be the form's line 3: an error goes beside the form's)
    sent: list[int] = field(default_factory=list)


@dataclass
class Form:
    command: str
    fields: list[Field]
    command_id: str = field(default_factory=lambda: secrets.token_hex(16))
    errors: dict[str, str] = field(default_factory=dict)  # field (or "" for the form)

    def labels(self) -> dict[str, str]:
        """Each field's label (without its hint in brackets), for the errors that name it."""
        return {f.name: f.label.split(" (")[0] for f in self.fields}


def typed_amount(raw: str) -> str:
    """``$1,200.50`` as the model's ``1200.50``: the dollar sign and the thousands
    separators dropped, never a decimal guessed ("1,20" stays as typed and is refused)."""
    found = TYPED_AMOUNT.match(raw.strip())
    if not found:
        return raw
    return f"{found['sign']}{found['whole'].replace(',', '')}{found['cents'] or ''}"


def _unwrap(annotation: Any) -> tuple[Any, list[Any], bool]:
    """(the base type, its metadata, optional?) of a model field's annotation."""
    metadata: list[Any] = []
    optional = False
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation, *more = typing.get_args(annotation)
            metadata.extend(more)
        elif origin in (typing.Union, types.UnionType) and type(None) in typing.get_args(annotation):
            optional = True
            annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        else:
            return annotation, metadata, optional


def _kind(name: str, annotation: Any, metadata: list[Any]) -> tuple[str, tuple[str, ...], int | None]:
    max_length = next((getattr(m, "max_length", None) for m in metadata
                       if getattr(m, "max_length", None)), None)
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return "select", tuple(str(a) for a in typing.get_args(annotation)), None
    if origin is list:
        (item,) = typing.get_args(annotation)
        return ("costs", (), None) if isinstance(item, type) and issubclass(item, BaseModel) \
            else ("lines", (), None)
    if annotation is bool:
        return "checkbox", (), None
    if annotation is AwareDatetime or (isinstance(annotation, type)
                                       and issubclass(annotation, dt.datetime)):
        return "datetime", (), None
    if annotation is dt.date:
        return "date", (), None
    if annotation is int:
        return "number", (), None
    if annotation is decimal.Decimal:
        return "amount", (), None
    free = any("check_free_text" in repr(m) for m in metadata)
    return ("textarea" if free else "text"), (), max_length


def command_form(name: str, rule: Rule, now_local: dt.datetime) -> Form:
    """The empty form of command ``name`` on a case under ``rule``."""
    fields = []
    for field_name, info in BODIES[name].model_fields.items():
        if field_name == "id":  # the form's own command id (a double click records once)
            continue
        annotation, metadata, optional = _unwrap(info.annotation)
        kind, choices, max_length = _kind(field_name, annotation, [*metadata, *info.metadata])
        if field_name == "method" and rule.service is not None:
            choices = tuple(m for m in choices if m in rule.service.methods)
        if field_name == "without_notice_reason":
            allowed = rule.abatement.without_notice_when if rule.abatement else []
            choices = tuple(c for c in choices if c in allowed)
        value = now_local.strftime("%Y-%m-%dT%H:%M") if field_name == "at" else ""
        if kind == "costs":
            value = [{"item": "", "amount": ""} for _ in range(COST_ROWS)]
        fields.append(Field(field_name, LABELS.get(field_name, field_name.replace("_", " ")
                                                   .capitalize()),
                            kind, info.is_required() and not optional, choices, max_length,
                            value))
    return Form(name, fields)


def read_form(form: Form, posted: Any, tz: ZoneInfo) -> dict[str, Any]:
    """The command's fields from a posted form (kept in ``form`` to show them again); a
    value no command could take as meant is put in ``form.errors`` beside its field."""
    data: dict[str, Any] = {}
    for f in form.fields:
        if f.kind == "costs":
            rows = [{"item": str(posted.get(f"costs-{i}-item", "")),
                     "amount": str(posted.get(f"costs-{i}-amount", ""))} for i in range(COST_ROWS)]
            f.value = rows
            f.sent = [i for i, r in enumerate(rows) if r["item"].strip() or r["amount"].strip()]
            data[f.name] = [{"item": rows[i]["item"], "amount": typed_amount(rows[i]["amount"])}
                            for i in f.sent]
            continue
        raw = str(posted.get(f.name, "") or "")
        f.value = raw
        if f.kind == "checkbox":
            f.value = raw == "on"
            if raw == "on":
                data[f.name] = True
            continue
        if not raw.strip():  # left empty: the model says "required" where it is
            continue
        if f.kind == "datetime":
            try:
                data[f.name] = typed_instant(raw, tz)
            except SkippedLocalTime as exc:
                form.errors[f.name] = str(exc)
        elif f.kind == "amount":
            data[f.name] = typed_amount(raw)
        elif f.kind == "lines":
            data[f.name] = [line.strip() for line in raw.splitlines() if line.strip()]
        else:
            data[f.name] = raw
    posted_id = str(posted.get("command_id", ""))
    if re.fullmatch(r"[0-9a-f]{32}", posted_id):
        form.command_id = posted_id
        data["id"] = f"web-{posted_id}"
    return data


_FIELD = re.compile(r"(?:^|; )field ([^\s:]+): ")


def _cost_line_error(form: Form, where: str, message: str) -> tuple[str, str]:
    """The command's ``costs.N.part`` error beside the form's own line (its number as the
    form shows it), a missing part said with the part that was typed ("line 3: enter what
    the $40.00 was for")."""
    _, row, part = where.split(".", 2)
    costs = next((f for f in form.fields if f.kind == "costs"), None)
    line = int(row) if row.isdigit() else 0
    if costs is not None and line < len(costs.sent):
        line = costs.sent[line]
    typed = costs.value[line] if costs is not None and line < len(costs.value) else {}
    item, amount = typed.get("item", "").strip(), typed.get("amount", "").strip()
    if part == "item" and not item and amount:
        message = f"line {line + 1}: enter what the {dollars(typed_amount(amount))} was for"
    elif part == "amount" and not amount and item:
        message = f"line {line + 1}: enter the amount for {item}"
    return f"costs-{line}-{part}", message


def field_errors(detail: str, form: Form) -> dict[str, str]:
    """``field X: ...; field Y: ...`` as errors beside X and Y (``costs.0.amount`` beside
    that cost line's amount); what names no field of the form goes above it."""
    names = {f.name for f in form.fields}
    found: dict[str, str] = {}
    parts = _FIELD.split(detail)
    if len(parts) > 1 and not parts[0].strip():
        for where, message in zip(parts[1::2], parts[2::2]):
            key = where.split(".")[0]
            if key == "costs" and where.count(".") >= 2:
                key, message = _cost_line_error(form, where, message)
            elif key not in names:
                key = ""
            found[key] = (found.get(key, "") + " " + message.strip()).strip()
        return found
    head = detail.split(":", 1)[0].strip()
    if head in names:  # the domain's "amount: ..." and the like
        return {head: detail.split(":", 1)[1].strip()}
    first, _, rest = detail.partition(" ")
    if first in names and first.endswith(("_at", "_on")) and rest:
        # the domain's "delivered_at 2026-03-02 09:30 CST is before ...": by its label
        return {first: f"{form.labels().get(first, first)} {rest}"}
    return {"": detail}

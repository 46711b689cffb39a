"""The command vocabulary: one set of plain-data commands for every entry point.

The journal importer, the CLI and (later) the HTTP API all parse input into
these models and hand them to ``cases.application``. Parsing is strict: an
unknown command, a missing field, an extra field or a wrong type is an error
that names the field.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from cases.errors import InvalidCommandError

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
CaseRef = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/\-]{0,63}$")]
Amount = Union[Decimal, Text]


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    municipality: Annotated[str, StringConstraints(pattern=r"^[a-z]+$")]
    at: AwareDatetime
    actor: Text
    id: Text | None = None


class _CaseCommand(_Command):
    case_ref: CaseRef


class Parcel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    county: Text
    number: Text


class Person(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: Text
    mailing_address: Text | None = None


class CostItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    item: Text
    amount: Amount


class OpenCase(_CaseCommand):
    command: Literal["open_case"]
    rule: Annotated[str, StringConstraints(pattern=r"^[a-z]+:[0-9A-Za-z.\-()]+$")]
    parcel: Parcel
    site_address: Text
    owner: Person
    responsible: Person | None = None
    description: Text
    source: Literal["complaint", "observation"] = "observation"
    snow_ended_at: AwareDatetime | None = None


class RecordInspection(_CaseCommand):
    command: Literal["record_inspection"]
    findings: Text
    documents: list[Text] = []


class ServeNotice(_CaseCommand):
    command: Literal["serve_notice"]
    method: Literal["personal", "certified_mail", "first_class_mail", "posting", "door_tape", "abode"]
    served_on: Text
    delivered_at: AwareDatetime | None = None
    cure_days: int | None = Field(default=None, gt=0)


class DeclareHazard(_CaseCommand):
    command: Literal["declare_hazard"]
    description: Text
    nobody_reachable: bool = False


class RecordCompliance(_CaseCommand):
    command: Literal["record_compliance"]
    notes: str = ""


class RecordAbatement(_CaseCommand):
    command: Literal["record_abatement"]
    costs: list[CostItem] = Field(min_length=1)
    without_notice_reason: Literal["hazard_nobody_reachable", "repeat_offense", "always"] | None = None


class IssueBill(_CaseCommand):
    command: Literal["issue_bill"]
    received_on: dt.date | None = None


class RecordPayment(_CaseCommand):
    command: Literal["record_payment"]
    amount: Amount


class FileAppeal(_CaseCommand):
    command: Literal["file_appeal"]
    grounds: Text
    board_meeting_on: dt.date | None = None  # the deciding body's next regular meeting


class DecideAppeal(_CaseCommand):
    command: Literal["decide_appeal"]
    outcome: Literal["upheld", "denied", "reduced"]
    amount: Amount | None = None


class CertifyCharge(_CaseCommand):
    command: Literal["certify_charge"]
    tax_year: int = Field(ge=2000, le=2200)


class IssueCitation(_CaseCommand):
    command: Literal["issue_citation"]
    citation_number: Text
    offense_dates: list[dt.date] = []


class ReferToAttorney(_CaseCommand):
    command: Literal["refer_to_attorney"]
    reason: Text


class RecordDisposition(_CaseCommand):
    command: Literal["record_disposition"]
    outcome: Text
    forfeiture_amount: Amount | None = None
    notes: str = ""


class CloseCase(_CaseCommand):
    command: Literal["close_case"]
    reason: Text


class ReopenCase(_CaseCommand):
    command: Literal["reopen_case"]
    reason: Text


class CaseFactChanges(BaseModel):
    """The facts a correction may restate, each checked as when first given."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    owner: Person | None = None
    responsible: Person | None = None
    parcel: Parcel | None = None
    site_address: Text | None = None
    description: Text | None = None
    served_on: Text | None = None
    findings: Text | None = None
    documents: list[Text] | None = None
    void: Literal[True] | None = None


class Correct(_CaseCommand):
    command: Literal["correct"]
    supersedes: int = Field(gt=0, description="position (1-based) of the event in the case")
    changes: dict[str, Any]
    reason: Text


class AdvanceClock(_Command):
    """Passes every deadline due up to ``at`` (no case)."""

    command: Literal["advance_clock"]


Command = Annotated[
    Union[
        OpenCase, RecordInspection, ServeNotice, DeclareHazard, RecordCompliance,
        RecordAbatement, IssueBill, RecordPayment, FileAppeal, DecideAppeal, CertifyCharge,
        IssueCitation, ReferToAttorney, RecordDisposition, CloseCase, ReopenCase, Correct,
        AdvanceClock,
    ],
    Field(discriminator="command"),
]

COMMAND_NAMES = sorted(
    m.model_fields["command"].annotation.__args__[0]  # type: ignore[union-attr]
    for m in Command.__origin__.__args__  # type: ignore[attr-defined]
)

_adapter: TypeAdapter[Any] = TypeAdapter(Command)


def parse_command(data: Any) -> Any:
    """A validated command model, or InvalidCommandError naming each bad field."""
    if not isinstance(data, dict):
        raise InvalidCommandError("a command must be a JSON object")
    name = data.get("command")
    if name is None:
        raise InvalidCommandError("field command: missing")
    if name not in COMMAND_NAMES:
        raise InvalidCommandError(
            f"field command: unknown command {name!r} (known: {', '.join(COMMAND_NAMES)})")
    try:
        return _adapter.validate_python(data)
    except ValidationError as exc:
        raise InvalidCommandError(_describe(exc)) from None


def _describe(exc: ValidationError) -> str:
    parts = []
    for item in exc.errors():
        loc = [str(p) for p in item["loc"][1:]]  # drop the discriminator tag
        field = ".".join(loc) or "(command)"
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "not a field of this command"
        parts.append(f"field {field}: {message}")
    return "; ".join(parts)

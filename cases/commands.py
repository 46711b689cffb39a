"""The command vocabulary: one set of plain-data commands for every entry point.

The journal importer, the CLI and (later) the HTTP API all parse input into
these models and hand them to ``cases.application``. Parsing is strict: an
unknown command, a missing field, an extra field or a wrong type is an error
that names the field.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from cases.errors import InvalidCommandError
from cases.instant_bounds import TAX_YEAR_FIRST, TAX_YEAR_LAST
from cases.instants import CalendarDate, Instant
from cases.money import amount_problem
from cases.text_policy import (
    Actor,
    Address,
    CostItemText,
    County,
    DocumentRef,
    FreeText,
    Label,
    Name,
    OptionalFreeText,
    ParcelNumber,
)

CaseRef = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/\-]{0,63}$")]


def _amount(value: Any) -> Decimal:
    """Money as text or a JSON number read as Decimal: finite and of a sane size (the
    domain checks sign, cents and the municipality's ``max_amount``)."""
    problem = amount_problem(value)
    if problem:
        raise ValueError(problem)
    return Decimal(value.strip() if isinstance(value, str) else value)


Amount = Annotated[Decimal, BeforeValidator(_amount)]
MAX_LIST_ITEMS = 100  # documents, cost items, offense dates: a bound on every list
MAX_POSITION = 1_000_000  # an event's position in its case (a bound on input)


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    municipality: Annotated[str, StringConstraints(pattern=r"^[a-z]+$", max_length=32)]
    at: Instant
    actor: Actor
    id: Label | None = None


class _CaseCommand(_Command):
    case_ref: CaseRef


class Parcel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    county: County
    number: ParcelNumber


class Person(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: Name
    mailing_address: Address | None = None


class CostItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    item: CostItemText
    amount: Amount


class OpenCase(_CaseCommand):
    command: Literal["open_case"]
    rule: Annotated[str, StringConstraints(pattern=r"^[a-z]+:[0-9A-Za-z.\-()]+$")]
    parcel: Parcel
    site_address: Address
    owner: Person
    responsible: Person | None = None
    description: FreeText
    source: Literal["complaint", "observation"] = "observation"
    snow_ended_at: Instant | None = None


class RecordInspection(_CaseCommand):
    command: Literal["record_inspection"]
    findings: FreeText
    documents: list[DocumentRef] = Field(default=[], max_length=MAX_LIST_ITEMS)


class ServeNotice(_CaseCommand):
    command: Literal["serve_notice"]
    method: Literal["personal", "certified_mail", "first_class_mail", "posting", "door_tape", "abode"]
    served_on: Name
    delivered_at: Instant | None = None
    cure_days: int | None = Field(default=None, gt=0, le=366)


class RecordServiceAttempt(_CaseCommand):
    """A failed attempt to serve a notice by a primary method (what posting relies on)."""

    command: Literal["record_service_attempt"]
    method: Literal["personal", "certified_mail", "first_class_mail", "posting", "door_tape", "abode"]
    attempted_by: Name  # who tried: the officer, the carrier
    result: FreeText  # what happened: "returned unclaimed", "nobody at the door"


class DeclareHazard(_CaseCommand):
    command: Literal["declare_hazard"]
    description: FreeText
    nobody_reachable: bool = False


class RecordCompliance(_CaseCommand):
    command: Literal["record_compliance"]
    notes: OptionalFreeText = ""


class RecordAbatement(_CaseCommand):
    command: Literal["record_abatement"]
    costs: list[CostItem] = Field(min_length=1, max_length=MAX_LIST_ITEMS)
    without_notice_reason: Literal["hazard_nobody_reachable", "repeat_offense", "always"] | None = None


class IssueBill(_CaseCommand):
    command: Literal["issue_bill"]
    received_on: CalendarDate | None = None


class RecordBondDraw(_CaseCommand):
    """A draw on the bond the rule names for a bill left unpaid (0.00: waived or exhausted)."""

    command: Literal["record_bond_draw"]
    amount: Amount


class RecordPayment(_CaseCommand):
    command: Literal["record_payment"]
    amount: Amount


class FileAppeal(_CaseCommand):
    command: Literal["file_appeal"]
    grounds: FreeText
    board_meeting_on: CalendarDate | None = None  # the deciding body's next regular meeting


class DecideAppeal(_CaseCommand):
    command: Literal["decide_appeal"]
    outcome: Literal["upheld", "denied", "reduced"]
    amount: Amount | None = None


class CertifyCharge(_CaseCommand):
    command: Literal["certify_charge"]
    tax_year: int = Field(ge=TAX_YEAR_FIRST, le=TAX_YEAR_LAST)


class IssueCitation(_CaseCommand):
    command: Literal["issue_citation"]
    citation_number: Label
    offense_dates: list[CalendarDate] = Field(default=[], max_length=366)


class ReferToAttorney(_CaseCommand):
    command: Literal["refer_to_attorney"]
    reason: FreeText


class RecordDisposition(_CaseCommand):
    command: Literal["record_disposition"]
    outcome: Label
    forfeiture_amount: Amount | None = None
    convicted: bool | None = None  # counts as a conviction for repeat windows (§ 9.25(28))
    notes: OptionalFreeText = ""


class CloseCase(_CaseCommand):
    command: Literal["close_case"]
    reason: FreeText


class ReopenCase(_CaseCommand):
    command: Literal["reopen_case"]
    reason: FreeText


class CaseFactChanges(BaseModel):
    """The facts a correction may restate, each checked as when first given: case facts,
    or the business times of an event (which event takes which is the domain's rule)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    at: Instant | None = None
    delivered_at: Instant | None = None
    snow_ended_at: Instant | None = None
    received_on: CalendarDate | None = None
    board_meeting_on: CalendarDate | None = None
    owner: Person | None = None
    responsible: Person | None = None
    parcel: Parcel | None = None
    site_address: Address | None = None
    description: FreeText | None = None
    served_on: Name | None = None
    findings: FreeText | None = None
    documents: list[DocumentRef] | None = Field(default=None, max_length=MAX_LIST_ITEMS)
    void: Literal[True] | None = None


class Correct(_CaseCommand):
    command: Literal["correct"]
    supersedes: int = Field(gt=0, le=MAX_POSITION,
                            description="position (1-based) of the event in the case")
    changes: dict[str, Any]
    reason: FreeText


class IssueNoticeDocument(_CaseCommand):
    """Print the notice of violation of the latest notice served (docs/documents.md)."""

    command: Literal["issue_notice_document"]


class IssueBillDocument(_CaseCommand):
    """Print the bill issued on the case (docs/documents.md)."""

    command: Literal["issue_bill_document"]


class IssueReferralPacket(_CaseCommand):
    """Print the attorney referral packet (docs/documents.md)."""

    command: Literal["issue_referral_packet"]


class AdvanceClock(_Command):
    """Passes every deadline due up to ``at`` (no case)."""

    command: Literal["advance_clock"]


Command = Annotated[
    Union[
        OpenCase, RecordInspection, ServeNotice, RecordServiceAttempt, DeclareHazard,
        RecordCompliance, RecordAbatement, IssueBill, RecordBondDraw, RecordPayment, FileAppeal, DecideAppeal, CertifyCharge,
        IssueCitation, ReferToAttorney, RecordDisposition, CloseCase, ReopenCase, Correct,
        IssueNoticeDocument, IssueBillDocument, IssueReferralPacket, AdvanceClock,
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
        error = InvalidCommandError(_describe(exc))
        # each problem as pydantic gives it (less the command's tag): the pages word them
        error.problems = [{**item, "loc": item["loc"][1:]} for item in exc.errors()]
        raise error from None


def _describe(exc: ValidationError) -> str:
    parts = []
    for item in exc.errors():
        loc = [str(p) for p in item["loc"][1:]]  # drop the discriminator tag
        field = ".".join(loc) or "(command)"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "not a field of this command"
        parts.append(f"field {field}: {message}")
    return "; ".join(parts)

"""How a case records a fact, and the checks every command makes before it decides.

Every event carries the actor, ``occurred_at`` (business time), ``timestamp`` (system time,
shown as recorded_at), the idempotency key of the command that caused it, and its link in
the case's hash chain (``cases.chain``). An event's ``apply_to``, beside the decision that
records it in its stage's module, assigns its own consequences; ``CaseEvent.apply`` adds
what every event changes alike (the last hash, the last fact, the command ids).
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from eventsourcing.domain import Aggregate

from cases import errors
from cases.business_time import is_fact, kind
from cases.chain import content_hash
from cases.domain.values import (
    Abatement,
    Appeal,
    BondDraw,
    Charge,
    Citation,
    Compliance,
    Correction,
    Deadline,
    Disposition,
    Hazard,
    Inspection,
    IssuedDocument,
    LastFact,
    Notice,
    Payment,
    Referral,
    ServiceAttempt,
)
from cases.localtime import table_time

if TYPE_CHECKING:
    from cases.rules.catalog import Rule

CASE_NAMESPACE = uuid.UUID("6f1c7a52-3c1e-4f8e-9b7a-0a1b5c2d3e4f")


def case_id(municipality: str, case_ref: str) -> uuid.UUID:
    """Cases are addressed by municipality and reference; the id is derived."""
    return uuid.uuid5(CASE_NAMESPACE, f"{municipality}:{case_ref}")


def shown(value: dt.datetime | dt.date | None, tz: ZoneInfo | None) -> str:
    """A time in a refusal a person reads: in the village's zone (``2026-03-05 12:00 CST``,
    as tables show it); a date as it is; ISO 8601 only where no zone is known."""
    if value is None:
        return "not recorded"
    if isinstance(value, dt.datetime) and tz is not None:
        return table_time(value, tz)
    return value.isoformat()


@dataclass(frozen=True)
class Stamp:
    """Who records a fact, when it happened, when it is recorded, and the command key."""

    actor: str
    at: dt.datetime  # business time (occurred_at)
    now: dt.datetime  # system time (recorded_at)
    command_id: str | None = None
    tz: ZoneInfo | None = None  # the village's zone: the times a refusal names are shown in it


class CaseState:
    """What a case knows: the attributes its events assign (``Opened`` all of them), which
    every stage reads, as typed frozen values (``cases.domain.values``). Declared here for
    the reader; ``Case`` is composed of the stages."""

    municipality: str
    case_ref: str
    rule: str
    rule_version: int
    rule_family: str
    source: str
    parcel: dict[str, str]
    site_address: str
    owner: dict[str, str]
    responsible: dict[str, str] | None
    description: str
    observed_at: dt.datetime
    snow_ended_at: dt.datetime | None
    status: str
    closed: bool
    close_reason: str | None
    substantiated: bool
    hazard: Hazard | None
    notices: list[Notice]
    service_attempts: list[ServiceAttempt]
    compliances: list[Compliance]
    bond_draws: list[BondDraw]
    inspections: list[Inspection]
    abatements: list[Abatement]
    charge: Charge | None
    payments: list[Payment]
    appeal: Appeal | None
    citations: list[Citation]
    referrals: list[Referral]
    dispositions: list[Disposition]
    corrections: list[Correction]
    documents: list[IssuedDocument]
    deadlines: dict[str, Deadline]
    command_ids: list[str]
    last_hash: str
    last_fact: LastFact


class CaseEvent(Aggregate.Event):
    """What every event of a case carries; each stage's events derive from it. ``TOPIC``
    is the stored topic of ``Case.Event``, which the library's own ``Case.Created`` takes
    too; every recorded event has its own."""

    TOPIC = "abate.case:Case.Event"
    actor: str
    occurred_at: dt.datetime
    command_id: str | None
    prev_hash: str
    hash: str

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.hash:
            object.__setattr__(self, "hash", content_hash(self.TOPIC, vars(self)))

    def apply(self, case: CaseState) -> None:
        self.apply_to(case)
        case.last_hash = self.hash
        if is_fact(self):
            case.last_fact = LastFact(position=self.originator_version, type=kind(self),
                                      at=self.occurred_at)
        if self.command_id:
            case.command_ids.append(self.command_id)

    def apply_to(self, case: CaseState) -> None:
        """Assign this fact's consequences to the case (no decisions here)."""


class Recording(CaseState):
    """The part of ``Case`` that records its events and checks a command first: the case
    open, the fact in business-time order, the rule the case was opened under."""

    def trigger_event(self, event_class: type[Any], **kwargs: Any) -> None:
        """Link every new event into the case's hash chain before it is built."""
        kwargs.setdefault("prev_hash", self.last_hash)
        kwargs.setdefault("hash", "")
        super().trigger_event(event_class, **kwargs)

    def _record(self, event_class: type[Any], stamp: Stamp, **fields: Any) -> None:
        self.trigger_event(event_class, timestamp=stamp.now, actor=stamp.actor,
                           occurred_at=stamp.at, command_id=stamp.command_id, **fields)

    def _check_open(self, stamp: Stamp, after: tuple[str, dt.datetime] | None = None) -> None:
        """An open case, a fact in business-time order; then the deadlines due by the fact's
        time are recorded as passed first, at their own times."""
        if self.closed:
            raise errors.CaseClosedError(
                f"case {self.case_ref} is closed ({self.close_reason}); only reopen_case is allowed")
        if after is not None and after[1] is not None and stamp.at < after[1]:
            raise errors.BusinessTimeOrderError(
                f"at {shown(stamp.at, stamp.tz)} is before {after[0]} at {shown(after[1], stamp.tz)}")
        self._check_business_order(stamp)
        self._pass_deadlines_before(stamp)

    def _check_business_order(self, stamp: Stamp) -> None:
        last = self.last_fact
        if stamp.at < last.at:
            which = f"{last.type}, event {last.position}, at " if last.position else ""
            raise errors.BusinessTimeOrderError(
                f"at {shown(stamp.at, stamp.tz)} is before the last fact recorded on case {self.case_ref} "
                f"({which}{shown(last.at, stamp.tz)}); facts are entered in the order they happened "
                "(correct a wrong time with the correct command)")

    def _check(self, stamp: Stamp, rule: Rule,
               after: tuple[str, dt.datetime] | None = None) -> None:
        if rule.key != self.rule or rule.version != self.rule_version:
            raise errors.CommandRejectedError(
                f"rule {rule.key} v{rule.version} given for a case under {self.rule} "
                f"v{self.rule_version}")
        self._check_open(stamp, after)

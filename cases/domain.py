"""The Case aggregate: one violation, from complaint to close.

Public methods decide (check invariants, compute deadlines and amounts from the
rule version the case was opened under, with ``at`` and ``now`` passed in);
nested events only assign. Replay never recomputes a date or re-runs a rule.

Every event carries the actor, ``occurred_at`` (business time), ``timestamp``
(system time, shown as recorded_at), the idempotency key of the command that
caused it, and its link in the case's hash chain (see ``cases.chain``).

Business time (docs/commands.md, "Business time"): facts are entered in the order
they happened; before a fact at time T is recorded, every automatic deadline of the
case due by T is recorded as passed at its own time (``DeadlinePassed``, actor
``abate-clock``), so a later fact never hides a deadline that had already run. A
wrong business time is corrected by a ``Corrected`` event (``cases.business_time``).
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol
from zoneinfo import ZoneInfo

from eventsourcing.domain import Aggregate

from cases import deadlines as plan
from cases import errors
from cases.business_time import (
    TIME_FIELDS,
    correctable_times,
    effective_fields,
    effective_times,
    facts_in_order,
    is_fact,
    kind,
)
from cases.chain import GENESIS, content_hash
from cases.deadlines import MONEY_DEADLINES
from cases.localtime import table_time
from cases.money import money, parse_amount, to_decimal
from cases.offenses import first_day as offense_first_day
from cases.offenses import offense_periods
from cases.statute import case_charge_not_certifiable, statute_given
from cases.statuses import CASE_STATUSES  # noqa: F401  (re-exported: the domain's statuses)
from cases.tax_year import first_roll_year

# The command side passes each method its rule; replaying a case's events only assigns what
# was recorded, so reading a case (``case show``) does not build the catalog (pydantic, about
# 0.1 s of its start: docs/benchmarks.md).
if TYPE_CHECKING:
    from cases.rules.catalog import Rule

CASE_NAMESPACE = uuid.UUID("6f1c7a52-3c1e-4f8e-9b7a-0a1b5c2d3e4f")
ZERO = Decimal("0.00")
CLOCK_ACTOR = "abate-clock"  # who records a deadline as passed
# A board meeting further ahead than this is a typing error, not a schedule.
MAX_MEETING_AHEAD = dt.timedelta(days=366)


def case_id(municipality: str, case_ref: str) -> uuid.UUID:
    """Cases are addressed by municipality and reference; the id is derived."""
    return uuid.uuid5(CASE_NAMESPACE, f"{municipality}:{case_ref}")


def _shown(value: dt.datetime | dt.date | None, tz: ZoneInfo | None) -> str:
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


@dataclass(frozen=True)
class RepeatEvidence:
    """What a repeat-offense look-up saw; recorded on the decision that used it."""

    count: int
    window_start: dt.date
    window_end: dt.date
    case_refs: list[str]
    counts: str | None = None  # whom the window counted (the rule's repeat.counts)

    def as_dict(self) -> dict[str, Any]:
        found = {
            "count": self.count,
            "window_start": self.window_start,
            "window_end": self.window_end,
            "case_refs": list(self.case_refs),
        }
        if self.counts is not None:
            found["counts"] = self.counts
        return found


class RepeatOffenses(Protocol):
    """The question a repeat-offense decision asks of a read model."""

    def prior_violations(
        self,
        *,
        municipality: str,
        family: str,
        parcel: dict[str, str],
        party: str | None,
        violation_date: dt.date,
        window_months: int,
        exclude_case_ref: str,
        counts: str = "parcel_or_party",
    ) -> RepeatEvidence: ...


class DueDeadlines(Protocol):
    """The question a clock sweep asks of a read model: which cases have a deadline due?"""

    def cases_due(self, *, until: dt.datetime, municipality: str | None = None) -> list[uuid.UUID]: ...


def _set_deadlines(case: "Case", items: list[dict], position: int) -> None:
    """Put deadlines on the case, each remembering the event that set it."""
    for item in items:
        case.deadlines[item["name"]] = {**item, "set_by": position}


class Case(Aggregate):
    """One violation case. Addressed by (municipality, case_ref)."""

    TOPIC = "abate.case:Case"
    # v2: the last fact is remembered with its kind and position (was only its time).
    class_version = 2

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A snapshot taken before v2 knows only the last fact's time."""
        state["last_fact"] = {"position": None, "type": None, "at": state.pop("last_fact_at")}

    class Event(Aggregate.Event):
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

        def apply(self, case: "Case") -> None:
            self.apply_to(case)
            case.last_hash = self.hash
            if is_fact(self):
                case.last_fact = {"position": self.originator_version, "type": kind(self),
                                  "at": self.occurred_at}
            if self.command_id:
                case.command_ids.append(self.command_id)

        def apply_to(self, case: "Case") -> None:
            """Assign this fact's consequences to the case (no decisions here)."""

    class Opened(Event, Aggregate.Created):
        TOPIC = "abate.case:Case.Opened"
        municipality: str
        case_ref: str
        rule: str
        rule_version: int
        rule_family: str
        source: str
        parcel: dict
        site_address: str
        owner: dict
        responsible: dict | None
        description: str
        snow_ended_at: dt.datetime | None
        deadlines: list

        def apply_to(self, case: "Case") -> None:
            case.municipality = self.municipality
            case.case_ref = self.case_ref
            case.rule = self.rule
            case.rule_version = self.rule_version
            case.rule_family = self.rule_family
            case.source = self.source
            case.parcel = dict(self.parcel)
            case.site_address = self.site_address
            case.owner = dict(self.owner)
            case.responsible = dict(self.responsible) if self.responsible else None
            case.description = self.description
            case.observed_at = self.occurred_at
            case.snow_ended_at = self.snow_ended_at
            case.status = "open"
            case.closed = False
            case.substantiated = False
            case.hazard = None
            case.notices = []
            case.service_attempts = []
            case.compliances = []
            case.bond_draws = []
            case.inspections = []
            case.abatements = []
            case.charge = None
            case.payments = []
            case.appeal = None
            case.citations = []
            case.referrals = []
            case.dispositions = []
            case.corrections = []
            case.deadlines = {}
            case.command_ids = []
            case.last_hash = GENESIS
            case.close_reason = None
            _set_deadlines(case, self.deadlines, self.originator_version)

    class InspectionRecorded(Event):
        TOPIC = "abate.case:Case.InspectionRecorded"
        findings: str
        documents: list

        def apply_to(self, case: "Case") -> None:
            case.inspections.append(
                {"at": self.occurred_at, "findings": self.findings, "documents": list(self.documents),
                 "position": self.originator_version})

    class HazardDeclared(Event):
        TOPIC = "abate.case:Case.HazardDeclared"
        description: str
        nobody_reachable: bool
        citation: str

        def apply_to(self, case: "Case") -> None:
            case.hazard = {"at": self.occurred_at, "nobody_reachable": self.nobody_reachable,
                           "description": self.description, "position": self.originator_version}

    class NoticeServed(Event):
        TOPIC = "abate.case:Case.NoticeServed"
        method: str
        served_on: str
        delivered_at: dt.datetime
        hazard: bool
        deadlines: list
        cancels: list
        repeat_evidence: dict | None
        repeat_consequence: str | None
        cure_days: int | None = None  # the time stated in the notice, where the rule leaves it
        # A fallback method (posting, abode): the failed attempts it relied on, and the rule.
        after_attempts: list | None = None
        fallback_citation: str | None = None

        def apply_to(self, case: "Case") -> None:
            notice = {
                "method": self.method, "served_on": self.served_on,
                "served_at": self.occurred_at, "delivered_at": self.delivered_at,
                "hazard": self.hazard, "repeat_evidence": self.repeat_evidence,
                "repeat_consequence": self.repeat_consequence,
                "position": self.originator_version,
            }
            if self.after_attempts is not None:
                notice["after_attempts"] = list(self.after_attempts)
                notice["fallback_citation"] = self.fallback_citation
            case.notices.append(notice)
            case.substantiated = True
            _cancel(case, self.cancels)
            _set_deadlines(case, self.deadlines, self.originator_version)
            if case.status in ("open", "reopened", "cure_period_passed"):
                case.status = "notice_served"

    class ServiceAttempted(Event):
        """An attempt to serve a notice by a primary method that failed (the owner could
        not be found): what a fallback method such as posting relies on."""

        TOPIC = "abate.case:Case.ServiceAttempted"
        method: str
        attempted_by: str
        result: str
        citation: str

        def apply_to(self, case: "Case") -> None:
            case.__dict__.setdefault("service_attempts", []).append({
                "at": self.occurred_at, "method": self.method, "attempted_by": self.attempted_by,
                "result": self.result, "recorded_by": self.actor,
                "position": self.originator_version})

    class ComplianceVerified(Event):
        TOPIC = "abate.case:Case.ComplianceVerified"
        notes: str
        cancels: list

        def apply_to(self, case: "Case") -> None:
            _cancel(case, self.cancels)
            case.__dict__.setdefault("compliances", []).append(
                {"at": self.occurred_at, "position": self.originator_version})
            case.status = "complied"
            case.complied = {"at": self.occurred_at, "position": self.originator_version}

    class DeadlinePassed(Event):
        TOPIC = "abate.case:Case.DeadlinePassed"
        name: str
        due_at: dt.datetime
        consequence: str
        rule: str
        rule_version: int
        citation: str

        def apply_to(self, case: "Case") -> None:
            deadline = case.deadlines[self.name]
            deadline["state"] = "passed"
            deadline["passed_recorded_at"] = self.timestamp
            deadline["passed_by"] = self.originator_version
            if self.name == "cure" and case.status == "notice_served":
                case.status = "cure_period_passed"
            if self.name == "tax_roll_eligible" and case.charge is not None:
                case.charge["tax_roll_eligible"] = True

    class AbatementRecorded(Event):
        TOPIC = "abate.case:Case.AbatementRecorded"
        costs: list
        total: Decimal
        incurred_on: dt.date
        without_notice_reason: str | None
        repeat_evidence: dict | None
        rule: str
        rule_version: int
        citation: str
        charge_due: dict | None
        deadlines: list
        cancels: list

        def apply_to(self, case: "Case") -> None:
            case.abatements.append({
                "at": self.occurred_at, "costs": [dict(c) for c in self.costs],
                "total": self.total, "incurred_on": self.incurred_on,
                "without_notice_reason": self.without_notice_reason,
                "repeat_evidence": self.repeat_evidence, "billed": False,
                "position": self.originator_version,
            })
            case.substantiated = True
            _cancel(case, self.cancels)
            if self.charge_due is not None:
                case.charge = dict(self.charge_due)
            _set_deadlines(case, self.deadlines, self.originator_version)
            case.status = "abated"

    class BillIssued(Event):
        TOPIC = "abate.case:Case.BillIssued"
        amount: Decimal
        bill_to: dict
        billed_on: dt.date
        received_on: dt.date | None
        due_at: dt.datetime | None
        due_basis: str
        rule: str
        rule_version: int
        citation: str
        deadlines: list

        def apply_to(self, case: "Case") -> None:
            for abatement in case.abatements:
                abatement["billed"] = True
            previous = case.charge or {}
            case.charge = {
                **previous,
                "principal": previous.get("principal", ZERO) + self.amount,
                "paid": previous.get("paid", ZERO),
                "billed_at": self.occurred_at,
                "billed_on": self.billed_on,
                "received_on": self.received_on,
                "due_at": self.due_at,
                "due_basis": self.due_basis,
                "bill_to": dict(self.bill_to),
                "incurred_on": previous.get("incurred_on") or case.abatements[-1]["incurred_on"],
                "appeal_state": "none",
                "tax_roll_eligible": previous.get("tax_roll_eligible", False),
                "certified": previous.get("certified"),
            }
            _set_deadlines(case, self.deadlines, self.originator_version)
            case.status = "billed"

    class BondDrawn(Event):
        """A draw on the security the rule names (the performance bond, § 9.24(8)) for an
        unpaid bill; what it does not cover is the charge for the roll of ``tax_year``."""

        TOPIC = "abate.case:Case.BondDrawn"
        amount: Decimal
        balance_after: Decimal
        tax_year: int
        work_completed_on: dt.date
        rule: str
        rule_version: int
        citation: str
        deadlines: list
        cancels: list

        def apply_to(self, case: "Case") -> None:
            charge = case.charge
            charge["paid"] = charge["paid"] + self.amount
            charge["bond_drawn"] = charge.get("bond_drawn", ZERO) + self.amount
            charge["roll_year"] = self.tax_year
            charge["work_completed_on"] = self.work_completed_on
            case.__dict__.setdefault("bond_draws", []).append({
                "at": self.occurred_at, "amount": self.amount,
                "balance_after": self.balance_after, "tax_year": self.tax_year,
                "citation": self.citation, "position": self.originator_version})
            _cancel(case, self.cancels)
            _set_deadlines(case, self.deadlines, self.originator_version)
            if self.balance_after == ZERO:
                case.status = "paid"

    class PaymentReceived(Event):
        TOPIC = "abate.case:Case.PaymentReceived"
        amount: Decimal
        balance_after: Decimal
        after_certification: bool
        cancels: list

        def apply_to(self, case: "Case") -> None:
            case.payments.append({"at": self.occurred_at, "amount": self.amount,
                                  "after_certification": self.after_certification,
                                  "void": False, "version": self.originator_version,
                                  "cancelled": list(self.cancels), "status_before": case.status})
            case.charge["paid"] = case.charge["paid"] + self.amount
            _cancel(case, self.cancels)
            if self.balance_after == ZERO:
                case.status = "paid"

    class AppealFiled(Event):
        TOPIC = "abate.case:Case.AppealFiled"
        grounds: str
        stays_charge: bool
        decision_due: str
        citation: str
        cancels: list
        deadlines: list
        board_meeting_on: dt.date | None = None  # the deciding body's meeting, when known

        def apply_to(self, case: "Case") -> None:
            case.appeal = {"filed_at": self.occurred_at, "grounds": self.grounds,
                           "state": "pending", "stays_charge": self.stays_charge,
                           "decision_due": self.decision_due,
                           "board_meeting_on": self.board_meeting_on,
                           "position": self.originator_version}
            case.charge["appeal_state"] = "pending"
            _cancel(case, self.cancels)
            _set_deadlines(case, self.deadlines, self.originator_version)
            case.status = "appealed"

    class AppealDecided(Event):
        TOPIC = "abate.case:Case.AppealDecided"
        outcome: str
        principal_after: Decimal
        due_at: dt.datetime | None
        citation: str
        deadlines: list
        cancels: list

        def apply_to(self, case: "Case") -> None:
            _cancel(case, self.cancels)
            case.appeal["state"] = self.outcome
            case.appeal["decided_at"] = self.occurred_at
            case.charge["appeal_state"] = self.outcome
            case.charge["principal"] = self.principal_after
            if self.due_at is not None:
                case.charge["due_at"] = self.due_at
                case.charge["due_basis"] = "appeal decided"
            _set_deadlines(case, self.deadlines, self.originator_version)
            balance = case.charge["principal"] - case.charge["paid"]
            case.status = "paid" if balance <= ZERO else "billed"

    class ChargeCertified(Event):
        TOPIC = "abate.case:Case.ChargeCertified"
        tax_year: int
        county: str
        amount: Decimal
        charge_type: str
        statute: str
        rule: str
        rule_version: int

        def apply_to(self, case: "Case") -> None:
            case.charge["certified"] = {
                "tax_year": self.tax_year, "county": self.county, "amount": self.amount,
                "at": self.occurred_at, "by": self.actor,
            }
            case.status = "certified"

    class CitationIssued(Event):
        TOPIC = "abate.case:Case.CitationIssued"
        citation_number: str
        offense_dates: list
        forfeiture: str
        rule: str
        rule_version: int
        # The separate offenses computed from the rule's offense periods (each with its
        # date and times), and what they were counted from and to.
        offenses: list | None = None
        offense_basis: dict | None = None

        def apply_to(self, case: "Case") -> None:
            citation = {"at": self.occurred_at, "number": self.citation_number,
                        "offense_dates": list(self.offense_dates),
                        "forfeiture": self.forfeiture, "position": self.originator_version}
            if self.offense_basis is not None:
                citation["offense_count"] = len(self.offenses or ())
                citation["offenses"] = [dict(o) for o in self.offenses or ()]
                citation["offense_basis"] = dict(self.offense_basis)
            case.citations.append(citation)
            case.substantiated = True
            case.status = "cited"

    class ReferredToAttorney(Event):
        TOPIC = "abate.case:Case.ReferredToAttorney"
        reason: str
        referral_path: str

        def apply_to(self, case: "Case") -> None:
            case.referrals.append({"at": self.occurred_at, "reason": self.reason,
                                   "path": self.referral_path,
                                   "position": self.originator_version})
            case.status = "referred"

    class DispositionRecorded(Event):
        TOPIC = "abate.case:Case.DispositionRecorded"
        outcome: str
        forfeiture_amount: Decimal | None
        notes: str
        convicted: bool | None = None  # a conviction counts for repeat windows (§ 9.25(28))

        def apply_to(self, case: "Case") -> None:
            case.dispositions.append({"at": self.occurred_at, "outcome": self.outcome,
                                      "forfeiture_amount": self.forfeiture_amount,
                                      "convicted": bool(self.convicted),
                                      "notes": self.notes, "position": self.originator_version})

    class Closed(Event):
        TOPIC = "abate.case:Case.Closed"
        reason: str
        cancels: list

        def apply_to(self, case: "Case") -> None:
            _cancel(case, self.cancels)
            case.closed = True
            case.close_reason = self.reason
            case.status = "closed"

    class Reopened(Event):
        TOPIC = "abate.case:Case.Reopened"
        reason: str

        def apply_to(self, case: "Case") -> None:
            case.closed = False
            case.close_reason = None
            case.status = "reopened"

    class DocumentIssued(Event):
        """A document (notice, bill, referral packet) printed from the case: its SHA-256,
        the case version and the inputs it was built from, and the generator that built it,
        so it can be built again and compared (cases/documents/issued.py). It records a
        paper, not a fact: it takes no part in the order of facts."""

        TOPIC = "abate.case:Case.DocumentIssued"
        document: str
        sha256: str
        size: int
        built_from_version: int
        generator: str
        inputs: dict

        def apply_to(self, case: "Case") -> None:
            case.__dict__.setdefault("documents", []).append({
                "position": self.originator_version, "document": self.document,
                "at": self.occurred_at, "sha256": self.sha256,
                "built_from_version": self.built_from_version})

    class Corrected(Event):
        """A fact, or a business time, restated with a reason; the original stays.

        A time correction also carries what it was (``previous``), what follows from the
        new time (``derived``: an incurred date, a bill date and due time) and the
        deadlines recomputed from it with the case's rule version (``deadlines``), all
        decided when the correction was made. Corrections recorded before times could be
        corrected have none of the three."""

        TOPIC = "abate.case:Case.Corrected"
        supersedes: int
        supersedes_type: str
        changes: dict
        reason: str
        previous: dict | None = None
        derived: dict | None = None
        deadlines: list | None = None

        def apply_to(self, case: "Case") -> None:
            entry = {"at": self.occurred_at, "supersedes": self.supersedes,
                     "supersedes_type": self.supersedes_type,
                     "changes": dict(self.changes), "reason": self.reason}
            if self.previous is not None:
                entry["previous"] = dict(self.previous)
            case.corrections.append(entry)
            if self.supersedes_type == "PaymentReceived" and self.changes.get("void"):
                payment = case.payments[case.payment_by_version[self.supersedes]]
                payment["void"] = True
                case.charge["paid"] = case.charge["paid"] - payment["amount"]
                for name in payment["cancelled"]:
                    case.deadlines[name]["state"] = "open"
                if case.status == "paid":
                    case.status = payment["status_before"]
            for name in _CORRECTABLE_CASE_FIELDS:
                if name in self.changes:
                    setattr(case, name, self.changes[name])
            if set(self.changes) & set(TIME_FIELDS):
                _apply_time_correction(case, self)

    # ------------------------------------------------------------------ decisions

    def trigger_event(self, event_class: type[Any], **kwargs: Any) -> None:
        """Link every new event into the case's hash chain before it is built."""
        kwargs.setdefault("prev_hash", self.last_hash)
        kwargs.setdefault("hash", "")
        super().trigger_event(event_class, **kwargs)

    def _record(self, event_class: type[Any], stamp: Stamp, **fields: Any) -> None:
        self.trigger_event(event_class, timestamp=stamp.now, actor=stamp.actor,
                           occurred_at=stamp.at, command_id=stamp.command_id, **fields)

    @classmethod
    def open(cls, stamp: Stamp, *, municipality: str, case_ref: str, rule: Rule, tz: ZoneInfo,
             parcel: dict[str, str], site_address: str, owner: dict[str, str],
             responsible: dict[str, str] | None, description: str, source: str,
             snow_ended_at: dt.datetime | None) -> "Case":
        """Open a case; deadlines that had already run by the opening (the owner's time
        after a snowfall that ended long before) are recorded as passed right after it."""
        if snow_ended_at is not None and snow_ended_at > stamp.at:
            raise errors.BusinessTimeOrderError(
                f"snow_ended_at {_shown(snow_ended_at, tz)} is after the case was opened (at "
                f"{_shown(stamp.at, tz)}): record the end of a snowfall that has already happened")
        deadlines = plan.opening(rule, tz, stamp.at, snow_ended_at)
        case = cls._create(
            cls.Opened, id=case_id(municipality, case_ref), timestamp=stamp.now,
            actor=stamp.actor, occurred_at=stamp.at, command_id=stamp.command_id,
            prev_hash=GENESIS, hash="", municipality=municipality, case_ref=case_ref,
            rule=rule.key, rule_version=rule.version, rule_family=rule.family, source=source,
            parcel=parcel, site_address=site_address, owner=owner, responsible=responsible,
            description=description, snow_ended_at=snow_ended_at, deadlines=deadlines,
        )
        case.pass_due_deadlines(until=stamp.at, now=stamp.now, actor=CLOCK_ACTOR)
        return case

    def record_inspection(self, stamp: Stamp, *, findings: str, documents: list[str]) -> None:
        self._check_open(stamp)
        self._record(self.InspectionRecorded, stamp, findings=findings, documents=documents)

    def declare_hazard(self, stamp: Stamp, rule: Rule, *, description: str,
                       nobody_reachable: bool) -> None:
        self._check(stamp, rule)
        if rule.hazard is None:
            raise errors.NotAllowedByRuleError(f"{rule.key} has no hazard variant ({rule.citation})")
        self._record(self.HazardDeclared, stamp, description=description,
                     nobody_reachable=nobody_reachable, citation=rule.hazard.citation)

    def serve_notice(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, method: str, served_on: str,
                     delivered_at: dt.datetime | None, cure_days: int | None,
                     repeat_evidence: RepeatEvidence | None = None) -> None:
        """Serve a written notice; where the rule escalates repeat offenses, the notice
        records the prior violations it found and the consequence the rule gives."""
        self._check(stamp, rule)
        if rule.service is None:
            raise errors.NotAllowedByRuleError(f"{rule.key} has no notice step ({rule.citation})")
        if method not in rule.service.methods:
            raise errors.NotAllowedByRuleError(
                f"service by {method} is not allowed by {rule.key} (allowed: "
                f"{', '.join(rule.service.methods)}; {rule.service.citation})")
        after_attempts = self._fallback_attempts(rule, method)
        delivered = delivered_at or stamp.at
        self._check_delivery(delivered, served_at=stamp.at, tz=tz)
        hazard = self.hazard is not None
        clock = plan.notice_clock(rule, hazard)
        if cure_days is not None and (clock is None or clock.period != "stated_in_notice"):
            raise errors.NotAllowedByRuleError(
                f"cure_days is only given where the rule leaves the time to the notice; "
                f"{rule.key} sets it ({clock.citation if clock else 'no cure step'})")
        # A notice after the village already abated (e.g. the hazard notice mailed afterwards,
        # § 9.09(2)(b)) informs; it starts no new cure period.
        deadlines = plan.notice(rule, tz, delivered, hazard=hazard,
                                starts_cure=not self.abatements, cure_days=cure_days)
        cancels = [n for n in ("owner_duty", "notice_due", "notice_after_abatement")
                   if self._is_open(n)]
        consequence = None
        if repeat_evidence is not None and repeat_evidence.count >= 1 and rule.repeat:
            consequence = (f"repeat offense ({repeat_evidence.count} prior in "
                           f"{rule.repeat.window_months} months): {rule.repeat.consequence} "
                           f"({rule.repeat.citation})")
        self._record(self.NoticeServed, stamp, method=method, served_on=served_on,
                     delivered_at=delivered, hazard=hazard, deadlines=deadlines,
                     cancels=cancels,
                     repeat_evidence=repeat_evidence.as_dict() if repeat_evidence else None,
                     repeat_consequence=consequence, cure_days=cure_days,
                     after_attempts=after_attempts,
                     fallback_citation=rule.service.fallback.citation if after_attempts else None)

    def _fallback_attempts(self, rule: Rule, method: str) -> list[dict] | None:
        """A fallback method (posting, abode delivery "if the owner ... cannot be found",
        § 11.013(2)) needs a recorded failed attempt by a primary method: the attempts it
        relies on, or None for a primary method."""
        fallback = rule.service.fallback
        if fallback is None or method not in fallback.methods:
            return None
        tried = [a for a in getattr(self, "service_attempts", [])
                 if a["method"] in fallback.after_attempt_by]
        if not tried:
            primary = " or ".join(m.replace("_", " ") for m in fallback.after_attempt_by)
            raise errors.ServiceAttemptRequiredError(
                f"service by {method.replace('_', ' ')} under {rule.key} is allowed only "
                f"\"{' '.join(fallback.text.split())}\" ({fallback.citation}); no attempt to "
                f"serve by {primary} is recorded on case {self.case_ref}: record it first "
                "(record_service_attempt: at, method, attempted_by, result)")
        return [{"position": a["position"], "at": a["at"], "method": a["method"],
                 "attempted_by": a["attempted_by"], "result": a["result"]} for a in tried]

    def record_service_attempt(self, stamp: Stamp, rule: Rule, *, method: str,
                               attempted_by: str, result: str) -> None:
        """A failed attempt to serve by one of the rule's primary methods (the certified
        letter returned unclaimed, nobody at the door)."""
        self._check(stamp, rule)
        service = rule.service
        if service is None:
            raise errors.NotAllowedByRuleError(f"{rule.key} has no notice step ({rule.citation})")
        fallback = service.fallback.methods if service.fallback else []
        primary = [m for m in service.methods if m not in fallback]
        if method not in primary:
            raise errors.NotAllowedByRuleError(
                f"an attempt to serve is recorded for a primary method of {rule.key} "
                f"({', '.join(primary)}; {service.citation}), not {method}")
        self._record(self.ServiceAttempted, stamp, method=method, attempted_by=attempted_by,
                     result=result, citation=service.fallback.citation if service.fallback
                     else service.citation)

    def _check_delivery(self, delivered: dt.datetime, *, served_at: dt.datetime,
                        tz: ZoneInfo | None) -> None:
        if delivered < served_at:
            raise errors.BusinessTimeOrderError(
                f"delivered_at {_shown(delivered, tz)} is before the notice was served (at "
                f"{_shown(served_at, tz)}); a notice is delivered after it is served")
        if delivered < self.observed_at:
            raise errors.BusinessTimeOrderError(
                f"delivered_at {_shown(delivered, tz)} is before case {self.case_ref} was opened "
                f"({_shown(self.observed_at, tz)})")

    def record_compliance(self, stamp: Stamp, *, notes: str) -> None:
        self._check_open(stamp)
        cancels = [name for name, d in self.deadlines.items()
                   if d["state"] == "open" and name not in MONEY_DEADLINES]
        self._record(self.ComplianceVerified, stamp, notes=notes, cancels=cancels)

    def record_abatement(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, costs: list[dict],
                         without_notice_reason: str | None,
                         repeat_evidence: RepeatEvidence | None,
                         max_amount: Decimal | None = None) -> None:
        relies_on_notice = bool(self.notices) and not without_notice_reason
        self._check(stamp, rule, after=("the notice it depends on, served",
                                        self.notices[-1]["served_at"]) if relies_on_notice else None)
        abatement = rule.abatement
        if abatement is None or not abatement.by_village:
            raise errors.NotAllowedByRuleError(
                f"{rule.key} does not provide for abatement by the village ({rule.citation})")
        items, total = _cost_items(costs, max_amount)
        evidence = None
        if without_notice_reason or (not self.notices and abatement.notice_required):
            # Immediate abatement: only where the rule allows it, and it says why.
            evidence = self._check_abatement_without_notice(
                rule, without_notice_reason, repeat_evidence)
        else:
            cure = self.deadlines.get("cure")
            if cure is not None and stamp.at < cure["due_at"]:
                raise errors.CureDeadlineNotPassedError(
                    f"the cure period under {rule.key} runs until {_shown(cure['due_at'], tz)} "
                    f"({cure['citation']}); village abatement is not yet permitted (at "
                    f"{_shown(stamp.at, tz)})")
        incurred_on = stamp.at.astimezone(tz).date()
        charge_due = None
        notice_after = bool(self.hazard and self.hazard["nobody_reachable"] and not self.notices)
        deadlines = plan.abatement(rule, tz, stamp.at, notice_after=notice_after,
                                   eligibility="tax_roll_eligible" not in self.deadlines)
        if rule.tax_roll is not None and rule.billing is None:
            # No bill: the cost itself is the charge (e.g. Mazomanie § 360-9).
            prior = (self.charge or {}).get("principal", ZERO)
            charge_due = {"principal": prior + total, "paid": (self.charge or {}).get("paid", ZERO),
                          "incurred_on": incurred_on, "billed_on": None, "due_at": None,
                          "due_basis": "no bill under this rule", "appeal_state": "none",
                          "tax_roll_eligible": False, "certified": None}
        cancels = [n for n, d in self.deadlines.items()
                   if d["state"] == "open" and n not in MONEY_DEADLINES]
        self._record(self.AbatementRecorded, stamp, costs=items, total=total,
                     incurred_on=incurred_on, without_notice_reason=without_notice_reason,
                     repeat_evidence=evidence, rule=rule.key, rule_version=rule.version,
                     citation=abatement.citation, charge_due=charge_due, deadlines=deadlines,
                     cancels=cancels)

    def _check_abatement_without_notice(self, rule: Rule, reason: str | None,
                                        evidence: RepeatEvidence | None) -> dict | None:
        allowed = rule.abatement.without_notice_when
        if not reason:
            raise errors.NoticeRequiredError(
                f"{rule.key} requires a written notice before village abatement "
                f"({rule.abatement.citation}); serve a notice or give without_notice_reason "
                f"({', '.join(allowed) or 'none allowed by this rule'})")
        if reason not in allowed:
            raise errors.NoticeRequiredError(
                f"{rule.key} does not allow abatement without notice for {reason!r} "
                f"(allowed: {', '.join(allowed) or 'none'}; {rule.abatement.citation})")
        if reason == "hazard_nobody_reachable":
            if not (self.hazard and self.hazard["nobody_reachable"]):
                raise errors.NoticeRequiredError(
                    "abatement without notice for a hazard needs a hazard declared with "
                    "nobody_reachable true")
            return None
        if reason == "repeat_offense":
            if evidence is None or evidence.count < 1:
                seen = "no look-up" if evidence is None else (
                    f"0 prior violations between {evidence.window_start} and {evidence.window_end}")
                raise errors.NoticeRequiredError(
                    f"abatement without notice as a repeat offense under {rule.key} needs a prior "
                    f"substantiated violation in the {rule.repeat.window_months if rule.repeat else 12} "
                    f"months before this one ({seen}; {rule.abatement.citation})")
            return evidence.as_dict()
        return None

    def issue_bill(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *,
                   received_on: dt.date | None) -> None:
        unbilled = [a for a in self.abatements if not a["billed"]]
        self._check(stamp, rule, after=("the abatement it bills, recorded", unbilled[-1]["at"])
                    if unbilled else None)
        if rule.billing is None:
            raise errors.NotAllowedByRuleError(
                f"{rule.key} has no bill: the cost goes on the tax roll ({rule.citation})")
        if not unbilled:
            raise errors.NoAbatementToBillError(
                "there is no recorded (and not yet billed) village abatement to bill")
        amount = money(sum((a["total"] for a in unbilled), ZERO))
        billing = rule.billing
        terms = plan.bill(rule, tz, stamp.at, received_on)
        if received_on is not None and received_on < terms["billed_on"]:
            raise errors.BusinessTimeOrderError(
                f"received_on {received_on} is before the bill date {terms['billed_on']}; a bill "
                "is received after it is issued")
        owner = self.owner if billing.bill_to == "owner" or not self.responsible \
            else self.responsible
        self._record(self.BillIssued, stamp, amount=amount, bill_to=owner,
                     billed_on=terms["billed_on"], received_on=received_on,
                     due_at=terms["due_at"], due_basis=terms["due_basis"],
                     rule=rule.key, rule_version=rule.version, citation=billing.citation,
                     deadlines=terms["deadlines"])

    def record_bond_draw(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *,
                         amount: Decimal | str, max_amount: Decimal | None = None) -> None:
        """Draw on the bond the rule names for a bill left unpaid (§ 9.24(8)); 0.00 where
        the bond was waived or is exhausted. What the bond does not cover becomes eligible
        for the roll of the year in which the work was completed; a bill it covers in full
        never reaches the roll."""
        billed_at = (self.charge or {}).get("billed_at")
        self._check(stamp, rule, after=("the bill it draws for, issued", billed_at)
                    if billed_at else None)
        bond = rule.billing.bond if rule.billing else None
        if bond is None:
            raise errors.NotAllowedByRuleError(
                f"{rule.key} names no bond to draw on ({rule.billing.citation if rule.billing else rule.citation})")
        if billed_at is None:
            raise errors.CommandRejectedError(
                f"the {bond.name} is drawn on for a bill left unpaid: issue the bill first "
                f"(\"billed to the permit holder and may be drawn from the {bond.name} if left "
                f"unpaid\", {bond.citation})")
        if self.charge.get("certified"):
            raise errors.CommandRejectedError(
                f"the charge was already certified for tax year {self.charge['certified']['tax_year']}")
        value = to_decimal(amount, "amount")
        value = money(value) if value == 0 else parse_amount(value, "amount", max_amount)
        balance = self.balance
        if balance <= ZERO:
            raise errors.CommandRejectedError("the bill is paid; there is nothing to draw for")
        if value > balance:
            raise errors.InvalidAmountError(
                f"amount: a draw of {value} exceeds the unpaid balance {balance}")
        after = money(balance - value)
        completed = self.abatements[-1]["at"].astimezone(tz).date()
        deadlines, cancels = [], []
        if after > ZERO and not self._is_open("tax_roll_eligible") \
                and rule.tax_roll is not None:
            deadlines.append(plan.deadline(
                "tax_roll_eligible", stamp.at,
                f"the {bond.name} did not cover {after}: it goes on the {completed.year} tax "
                "roll (the year in which the work was completed)", rule, bond.citation))
        if after == ZERO:
            cancels = [n for n in MONEY_DEADLINES if self._is_open(n)]
        self._record(self.BondDrawn, stamp, amount=value, balance_after=after,
                     tax_year=completed.year, work_completed_on=completed, rule=rule.key,
                     rule_version=rule.version, citation=bond.citation, deadlines=deadlines,
                     cancels=cancels)

    def record_payment(self, stamp: Stamp, *, amount: Decimal | str,
                       max_amount: Decimal | None = None) -> None:
        self._check_open(stamp, after=self._what_is_paid())
        value = parse_amount(amount, "amount", max_amount)
        if self.charge is None or "principal" not in self.charge:
            raise errors.CommandRejectedError("there is no charge on this case to pay")
        balance = self.balance
        if value > balance:
            raise errors.InvalidAmountError(
                f"payment {value} exceeds the balance {balance}")
        after = money(balance - value)
        cancels = []
        if after == ZERO:
            cancels = [n for n in MONEY_DEADLINES if self._is_open(n)]
        self._record(self.PaymentReceived, stamp, amount=value, balance_after=after,
                     after_certification=bool(self.charge.get("certified")), cancels=cancels)

    def _what_is_paid(self) -> tuple[str, dt.datetime] | None:
        if self.charge is None:
            return None
        if self.charge.get("billed_at") is not None:
            return ("the bill it pays, issued", self.charge["billed_at"])
        if self.abatements:
            return ("the abatement whose cost it pays, recorded", self.abatements[-1]["at"])
        return None

    def file_appeal(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, grounds: str,
                    board_meeting_on: dt.date | None = None) -> None:
        """File an appeal; the decision's deadline counts from the deciding body's next
        regular meeting when it is known, else a person must put it on that agenda."""
        billed_at = (self.charge or {}).get("billed_at")
        self._check(stamp, rule, after=("the bill it appeals, issued", billed_at)
                    if billed_at else None)
        appeal = rule.billing.appeal if rule.billing else None
        if appeal is None:
            raise errors.NotAllowedByRuleError(f"{rule.key} has no appeal clause ({rule.citation})")
        if self.charge is None or self.charge.get("billed_on") is None:
            raise errors.CommandRejectedError("an appeal needs an issued bill")
        if self.appeal is not None:
            raise errors.CommandRejectedError(
                f"an appeal was already filed on {_shown(self.appeal['filed_at'], tz)}")
        window = self.deadlines.get("appeal_window")
        if window is None or stamp.at > window["due_at"]:
            end = _shown(window["due_at"], tz) if window else "unknown"
            raise errors.AppealWindowClosedError(
                f"the appeal window under {rule.key} closed at {end} ({appeal.citation}); the "
                f"appeal is filed at {_shown(stamp.at, tz)}")
        cancels = ["appeal_window"]
        if appeal.stays_charge:
            cancels += [n for n in ("bill_due", "tax_roll_eligible") if self._is_open(n)]
        if board_meeting_on is not None:
            _check_meeting(board_meeting_on, stamp.at.astimezone(tz).date())
        deadlines = plan.appeal(rule, tz, stamp.at, board_meeting_on)
        self._record(self.AppealFiled, stamp, grounds=grounds, stays_charge=appeal.stays_charge,
                     decision_due=f"{appeal.decided_by}: {appeal.decision_due}",
                     citation=appeal.citation, cancels=cancels, deadlines=deadlines,
                     board_meeting_on=board_meeting_on)

    def decide_appeal(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, outcome: str,
                      amount: Decimal | str | None, max_amount: Decimal | None = None) -> None:
        pending = self.appeal is not None and self.appeal["state"] == "pending"
        self._check(stamp, rule, after=("the appeal it decides, filed", self.appeal["filed_at"])
                    if pending else None)
        if not pending:
            raise errors.CommandRejectedError("there is no pending appeal to decide")
        principal = self.charge["principal"]
        if outcome == "reduced":
            if amount is None:
                raise errors.InvalidAmountError("a reduced appeal needs the reduced amount")
            principal = parse_amount(amount, "amount", max_amount)
            if principal >= self.charge["principal"]:
                raise errors.InvalidAmountError(
                    f"reduced amount {principal} is not below the charge {self.charge['principal']}")
        elif amount is not None:
            raise errors.InvalidAmountError("amount is only given when the outcome is reduced")
        if outcome == "upheld":
            # The appeal succeeds: the charge is set aside.
            principal = self.charge["paid"]
        terms = plan.decision(rule, tz, stamp.at, still_owed=outcome in ("denied", "reduced")
                              and principal > self.charge["paid"])
        cancels = [n for n in ("appeal_decision", "appeal_hearing") if self._is_open(n)]
        self._record(self.AppealDecided, stamp, outcome=outcome, principal_after=principal,
                     due_at=terms["due_at"], citation=rule.billing.appeal.citation,
                     deadlines=terms["deadlines"], cancels=cancels)

    def certify_charge(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, tax_year: int,
                       cutoff: str) -> None:
        """Certify the unpaid balance to the tax roll of ``tax_year``, under the statute
        the rule names: a rule that leaves it ``not set`` certifies nothing (``cases.statute``).

        ``cutoff`` (MM-DD, a municipal setting) decides the first roll a charge can go on:
        eligible on or before the cut-off, that year's roll; later, next year's.
        """
        self._check(stamp, rule)
        if rule.tax_roll is None or self.charge is None:
            raise errors.NotAllowedByRuleError(f"{rule.key} has no charge for the tax roll")
        if not statute_given(rule):
            raise errors.NotAllowedByRuleError(case_charge_not_certifiable(self.case_ref, rule))
        eligible = self.deadlines.get("tax_roll_eligible")
        if eligible is None or eligible["state"] == "cancelled" or eligible["due_at"] > stamp.at:
            when = (f"until {_shown(eligible['due_at'], tz)}" if eligible and
                    eligible["state"] != "cancelled" else "(no eligibility date: stayed or not due)")
            raise errors.NotAllowedByRuleError(
                f"the charge is not eligible for the tax roll {when}")
        eligible_on = eligible["due_at"].astimezone(tz).date()
        first_year = first_roll_year(eligible["due_at"], tz, cutoff)
        roll_year = self.charge.get("roll_year")
        if roll_year is not None and tax_year != roll_year:
            raise errors.NotAllowedByRuleError(
                f"the charge goes on the roll \"for the year in which the work is completed\" "
                f"({self.charge['work_completed_on']}): {roll_year}, not {tax_year} "
                f"({rule.tax_roll.citation})")
        if roll_year is None and tax_year < first_year:
            raise errors.NotAllowedByRuleError(
                f"the charge became eligible on {eligible_on}, after the {cutoff} cut-off: "
                f"it goes on the {first_year} roll, not {tax_year}")
        if self.charge.get("certified"):
            raise errors.CommandRejectedError(
                f"the charge was already certified for tax year {self.charge['certified']['tax_year']}")
        if self.balance <= ZERO:
            raise errors.CommandRejectedError("the charge is paid; nothing to certify")
        if self.charge.get("appeal_state") == "pending":
            raise errors.CommandRejectedError("a pending appeal stays the charge")
        self._record(self.ChargeCertified, stamp, tax_year=tax_year,
                     county=self.parcel["county"], amount=self.balance,
                     charge_type=rule.tax_roll.charge_type, statute=rule.tax_roll.statute,
                     rule=rule.key, rule_version=rule.version)

    def issue_citation(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, citation_number: str,
                       offense_dates: list[dt.date]) -> None:
        """Cite the violation. Where the rule divides a continuing violation into separate
        offenses, the citation records them, computed from when the violation began (the
        rule's starting point) to when it ended (abatement, compliance) or to the citation;
        dates the officer types must fall within the violation."""
        self._check(stamp, rule)
        periods = rule.penalty.offenses if rule.penalty else None
        began, began_by = self._violation_began(rule)
        ended, ended_by = self._violation_ended(began, stamp.at)
        first_day, last_day = offense_first_day(began, tz), ended.astimezone(tz).date()
        for index, day in enumerate(offense_dates):  # named by its position from 0
            if day < first_day:
                raise errors.OffenseDateError(
                    f"field offense_dates.{index}: {day} is before the violation began "
                    f"({_shown(began.astimezone(tz), tz)}, {began_by}; {rule.key} v{rule.version})")
            if day > last_day:
                raise errors.OffenseDateError(
                    f"field offense_dates.{index}: {day} is after the violation ended "
                    f"({_shown(ended.astimezone(tz), tz)}, {ended_by})")
        forfeiture = (rule.penalty.describe(self.municipality) if rule.penalty
                      else f"no forfeiture stated in {rule.citation}")
        offenses, basis = None, None
        if periods is not None:
            offenses = offense_periods(periods, began, ended, tz)
            basis = {"unit": periods.unit, "began_at": began, "began_by": began_by,
                     "ended_at": ended, "ended_by": ended_by, "count": len(offenses),
                     "text": " ".join(periods.text.split()), "citation": periods.citation,
                     "rule": rule.key, "rule_version": rule.version}
            if rule.penalty.forfeiture_min != "not set":
                forfeiture = f"{forfeiture}, per offense; {len(offenses)} separate offenses"
            else:
                forfeiture = f"{forfeiture}; {len(offenses)} separate offenses"
        self._record(self.CitationIssued, stamp, citation_number=citation_number,
                     offense_dates=[d.isoformat() for d in offense_dates], forfeiture=forfeiture,
                     rule=rule.key, rule_version=rule.version, offenses=offenses,
                     offense_basis=basis)

    def _violation_began(self, rule: Rule) -> tuple[dt.datetime, str]:
        """When the violation began for counting offenses, and why (the rule's start)."""
        periods = rule.penalty.offenses if rule.penalty else None
        if periods is None or periods.starts == "observed":
            return self.observed_at, "observed"
        name = periods.starts.partition(":")[2]
        deadline = self.deadlines.get(name)
        if deadline is None:
            raise errors.NotAllowedByRuleError(
                f"separate offenses under {rule.key} count from the deadline {name} "
                f"({periods.citation}), which case {self.case_ref} does not have")
        return deadline["due_at"], f"deadline {name} ({deadline['citation']})"

    def _violation_ended(self, began: dt.datetime, cited_at: dt.datetime) -> tuple[dt.datetime, str]:
        """The first abatement or compliance after the violation began, else the citation."""
        ends = [(a["at"], "abatement recorded") for a in self.abatements]
        ends += [(c["at"], "compliance verified") for c in getattr(self, "compliances", [])]
        after = sorted((at, why) for at, why in ends if began <= at <= cited_at)
        if after:
            return after[0]
        earlier = [at for at, _ in ends if at < began]
        if earlier:  # ended before it began to count: no offense period
            return max(earlier), "ended before the offense periods began"
        return cited_at, "still going on when cited"

    def open_referral(self) -> dict | None:
        """The latest referral while no disposition has been recorded after it: the
        attorney has the case, so a second referral would only repeat the first."""
        if not self.referrals:
            return None
        latest = self.referrals[-1]
        decided = any(d["position"] > latest["position"] for d in self.dispositions)
        return None if decided else latest

    def refer_to_attorney(self, stamp: Stamp, rule: Rule, *, reason: str) -> None:
        self._check(stamp, rule)
        pending = self.open_referral()
        if pending is not None:
            raise errors.CommandRejectedError(
                f"the case is already referred to the attorney (event {pending['position']}); "
                "a new referral waits for that referral's disposition")
        self._record(self.ReferredToAttorney, stamp, reason=reason,
                     referral_path=rule.referral or "Village Attorney")

    def record_disposition(self, stamp: Stamp, *, outcome: str,
                           forfeiture_amount: Decimal | str | None, notes: str,
                           max_amount: Decimal | None = None,
                           convicted: bool | None = None) -> None:
        self._check_open(stamp)
        value = None if forfeiture_amount is None else parse_amount(
            forfeiture_amount, "forfeiture_amount", max_amount)
        self._record(self.DispositionRecorded, stamp, outcome=outcome, forfeiture_amount=value,
                     notes=notes, convicted=convicted)

    def issue_document(self, stamp: Stamp, *, document: str, sha256: str, size: int,
                       built_from_version: int, generator: str, inputs: dict) -> None:
        """Record a document built from this case at ``built_from_version`` (the caller
        builds it: ``cases.documents``); dated no earlier than the last fact it prints."""
        self._check_business_order(stamp)
        if built_from_version != self.version:
            raise errors.CommandRejectedError(
                f"the document was built from version {built_from_version} of case "
                f"{self.case_ref}, which is at version {self.version}")
        self._record(self.DocumentIssued, stamp, document=document, sha256=sha256, size=size,
                     built_from_version=built_from_version, generator=generator, inputs=inputs)

    def close(self, stamp: Stamp, *, reason: str) -> None:
        self._check_open(stamp)
        cancels = [n for n, d in self.deadlines.items() if d["state"] == "open"]
        self._record(self.Closed, stamp, reason=reason, cancels=cancels)

    def reopen(self, stamp: Stamp, *, reason: str) -> None:
        if not self.closed:
            raise errors.CommandRejectedError("the case is not closed")
        self._check_business_order(stamp)
        self._record(self.Reopened, stamp, reason=reason)

    # ------------------------------------------------------------------ corrections

    def correct(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, events: list[Any],
                supersedes: int, changes: dict[str, Any], reason: str) -> None:
        """Supersede an earlier fact, or its business times, by its position in the case.

        ``events`` are the case's events so far (stored and pending), in order. The
        correction's own ``at`` is when it was made: it takes no part in the order of facts.
        """
        if self.closed:
            raise errors.CaseClosedError(
                f"case {self.case_ref} is closed ({self.close_reason}); only reopen_case is allowed")
        if not reason.strip():
            raise errors.CommandRejectedError("a correction needs a reason")
        target = next((e for e in events if e.originator_version == supersedes), None)
        if target is None:
            raise errors.NothingToCorrectError(
                f"there is no event {supersedes} on this case (it has {self.version})")
        event_kind = kind(target)
        times = {k: v for k, v in changes.items() if k in TIME_FIELDS}
        if times:
            if len(times) != len(changes):
                raise errors.NothingToCorrectError(
                    "correct business times and other facts in separate corrections "
                    f"(times: {', '.join(sorted(times))}; other: "
                    f"{', '.join(sorted(set(changes) - set(times)))})")
            self._correct_times(stamp, rule, tz, events, target, times, reason)
            return
        allowed = _CORRECTABLE.get(event_kind, set())
        unknown = set(changes) - allowed
        if unknown or not changes:
            fields = ", ".join(sorted(allowed | correctable_times(event_kind))) or "none"
            raise errors.NothingToCorrectError(
                f"cannot correct {', '.join(sorted(unknown)) or 'nothing'} on {event_kind} "
                f"(correctable: {fields})")
        if event_kind == "PaymentReceived":
            if changes.get("void") is not True:
                raise errors.NothingToCorrectError("a payment correction is {'void': true}")
            if self.payments[self.payment_by_version[supersedes]]["void"]:
                raise errors.NothingToCorrectError(f"payment (event {supersedes}) is already void")
        self._record(self.Corrected, stamp, supersedes=supersedes, supersedes_type=event_kind,
                     changes=changes, reason=reason)

    def _correct_times(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, events: list[Any],
                       target: Any, times: dict[str, Any], reason: str) -> None:
        """Restate business times; the deadlines counted from them move with them."""
        event_kind, position = kind(target), target.originator_version
        allowed = correctable_times(event_kind)
        if not allowed:
            why = ("a deadline passes at the time its rule gives: correct the fact it counts from"
                   if event_kind == "DeadlinePassed" else "correct the event it corrected instead")
            raise errors.NothingToCorrectError(f"a {event_kind} event has no time to correct; {why}")
        unknown = set(times) - allowed
        if unknown:
            raise errors.NothingToCorrectError(
                f"cannot correct {', '.join(sorted(unknown))} on {event_kind} (its times: "
                f"{', '.join(sorted(allowed))})")
        for name in ("at", "delivered_at"):
            if name in times and times[name] is None:
                raise errors.NothingToCorrectError(f"give the corrected {name}")
        before = effective_fields(target, events)
        if all(before.get(k) == v for k, v in times.items()):
            raise errors.NothingToCorrectError(
                f"{event_kind} (event {position}) already has "
                + ", ".join(f"{k} {_shown(v, tz)}" for k, v in sorted(times.items())))
        after = {**before, **times}
        if "at" in times:
            self._check_fact_order(events, position, event_kind, times["at"], tz)
        self._check_paired_times(event_kind, target, after, tz)
        derived, moved = self._recomputed(stamp, rule, tz, target, before, after)
        self._check_reliance(events, position, moved, times, tz)
        self._record(self.Corrected, stamp, supersedes=position, supersedes_type=event_kind,
                     changes=times, reason=reason,
                     previous={k: before.get(k) for k in times}, derived=derived,
                     deadlines=moved)

    def _check_fact_order(self, events: list[Any], position: int, event_kind: str,
                          new_at: dt.datetime, tz: ZoneInfo) -> None:
        """A corrected fact stays between the facts recorded before and after it."""
        facts = facts_in_order(events)
        index = next(i for i, fact in enumerate(facts) if fact[0] == position)
        if index > 0 and new_at < facts[index - 1][2]:
            other, other_kind, other_at = facts[index - 1]
            raise errors.BusinessTimeOrderError(
                f"the corrected at {_shown(new_at, tz)} of {event_kind} (event {position}) is before "
                f"the fact recorded before it, {other_kind} (event {other}) at {_shown(other_at, tz)}; "
                "a correction keeps the facts in the order they happened")
        if index + 1 < len(facts) and new_at > facts[index + 1][2]:
            other, other_kind, other_at = facts[index + 1]
            raise errors.BusinessTimeOrderError(
                f"the corrected at {_shown(new_at, tz)} of {event_kind} (event {position}) is after "
                f"the fact recorded after it, {other_kind} (event {other}) at {_shown(other_at, tz)}; "
                "a correction keeps the facts in the order they happened")

    def _check_paired_times(self, event_kind: str, target: Any, after: dict[str, Any],
                            tz: ZoneInfo) -> None:
        """Times that belong together keep their order after the correction."""
        at = after["at"]
        position = target.originator_version
        if event_kind == "Opened":
            snow = after.get("snow_ended_at")
            if snow is not None and snow > at:
                raise errors.BusinessTimeOrderError(
                    f"snow_ended_at {_shown(snow, tz)} is after the case was opened (at {_shown(at, tz)})")
            for notice in self.notices:
                if notice["delivered_at"] < at:
                    raise errors.BusinessTimeOrderError(
                        f"the corrected opening {_shown(at, tz)} is after the notice delivered at "
                        f"{_shown(notice['delivered_at'], tz)}; a case is opened before its notices")
        elif event_kind == "NoticeServed":
            self._check_delivery(after["delivered_at"], served_at=at, tz=tz)
        elif event_kind == "BillIssued":
            received, billed_on = after.get("received_on"), at.astimezone(tz).date()
            if received is not None and received < billed_on:
                raise errors.BusinessTimeOrderError(
                    f"received_on {received} is before the bill date {billed_on}")
        elif event_kind == "AppealFiled":
            if after.get("board_meeting_on") is not None:
                _check_meeting(after["board_meeting_on"], at.astimezone(tz).date())
            window = self._set_before("appeal_window", position)
            if window is not None and at > window["due_at"]:
                raise errors.AppealWindowClosedError(
                    f"the corrected filing {_shown(at, tz)} is after the appeal window closed "
                    f"({_shown(window['due_at'], tz)})")
        elif event_kind == "AbatementRecorded":
            cure = self._set_before("cure", position)
            if cure is not None and target.without_notice_reason is None and at < cure["due_at"]:
                raise errors.CureDeadlineNotPassedError(
                    f"the corrected abatement {_shown(at, tz)} is before the cure period ended "
                    f"({_shown(cure['due_at'], tz)}, {cure['citation']})")
        elif event_kind == "ChargeCertified":
            eligible = self._set_before("tax_roll_eligible", position)
            if eligible is not None and at < eligible["due_at"]:
                raise errors.NotAllowedByRuleError(
                    f"the corrected certification {_shown(at, tz)} is before the charge became "
                    f"eligible for the tax roll ({_shown(eligible['due_at'], tz)})")

    def _set_before(self, name: str, position: int) -> dict | None:
        """The deadline ``name`` if an event before ``position`` set it."""
        found = self.deadlines.get(name)
        if found is None or found.get("set_by", 0) >= position:
            return None
        return found

    def _recomputed(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, target: Any,
                    before: dict[str, Any], after: dict[str, Any]) -> tuple[dict, list[dict]]:
        """What follows from the corrected times (dates, due times) and the deadlines that
        count from them, recomputed with the case's rule version.

        A deadline still open moves. One already recorded as passed stays passed when its
        corrected time is not later than the correction (its passing then counts at the
        corrected time); otherwise it had not really run: it is open again and passes at
        its corrected time. A deadline a later fact has replaced or cancelled stays as it is.
        """
        event_kind, position = kind(target), target.originator_version
        original = {d["name"]: d for d in getattr(target, "deadlines", None) or ()}
        derived: dict[str, Any] = {}
        names = set(original)
        fresh: list[dict] = []
        if event_kind == "Opened":
            fresh = plan.opening(rule, tz, after["at"], after.get("snow_ended_at"))
        elif event_kind == "NoticeServed":
            fresh = plan.notice(rule, tz, after["delivered_at"], hazard=target.hazard,
                                starts_cure="cure" in original,
                                cure_days=target.cure_days or _stated_days(target, original, tz))
        elif event_kind == "AbatementRecorded":
            fresh = plan.abatement(rule, tz, after["at"], notice_after=True, eligibility=True)
            derived = {"incurred_on": after["at"].astimezone(tz).date(),
                       "incurred_on_before": before["at"].astimezone(tz).date()}
        elif event_kind == "BillIssued":
            terms = plan.bill(rule, tz, after["at"], after.get("received_on"))
            fresh = terms["deadlines"]
            derived = {k: terms[k] for k in ("billed_on", "due_at", "due_basis")}
        elif event_kind == "AppealFiled":
            if after.get("board_meeting_on") is None and "appeal_decision" in original:
                fresh = [original["appeal_decision"]]  # meeting not known here: stays
            else:
                fresh = plan.appeal(rule, tz, after["at"], after.get("board_meeting_on"))
            names |= {d["name"] for d in fresh}
        elif event_kind == "BondDrawn":  # the roll eligibility it set moves with it
            fresh = [{**d, "due_at": after["at"]} for d in original.values()]
        elif event_kind == "AppealDecided":
            terms = plan.decision(rule, tz, after["at"], still_owed=target.due_at is not None)
            fresh = terms["deadlines"]
            derived = {"due_at": terms["due_at"]} if terms["due_at"] else {}
        derived["at_before"] = before["at"]  # finds the fact's entry in an older state
        by_name = {d["name"]: d for d in fresh}
        moved = []
        for name in sorted(names):
            current = self.deadlines.get(name)
            new = by_name.get(name)
            if current is None:
                if new is not None:  # a deadline the corrected times newly give
                    moved.append({**new, "set_by": position})
                continue
            if not _set_by(current, position, original.get(name)) or current["state"] == "cancelled":
                continue
            if new is None:
                if current["state"] == "open":
                    moved.append({**current, "state": "cancelled"})
                continue
            if new["due_at"] == current["due_at"]:
                continue
            entry = {**new, "set_by": position}
            if current["state"] == "passed":
                if new["due_at"] <= stamp.at:
                    entry.update(state="passed", passed_by=current.get("passed_by"),
                                 passed_recorded_at=current.get("passed_recorded_at"))
                else:
                    entry["voided_passing"] = current.get("passed_by")
            moved.append(entry)
        return derived, moved

    def _check_reliance(self, events: list[Any], position: int, moved: list[dict],
                        times: dict[str, Any], tz: ZoneInfo) -> None:
        """A later recorded fact that relied on a deadline must still come after it (an
        abatement after the cure period, a certification after eligibility) or before it
        (an appeal within its window)."""
        effective = effective_times(events)
        changed = ", ".join(f"{k} {_shown(v, tz)}" for k, v in sorted(times.items()))
        for deadline in moved:
            if deadline["state"] == "cancelled":
                continue
            name, due = deadline["name"], deadline["due_at"]
            for event in events:
                if event.originator_version <= position or not is_fact(event):
                    continue
                at = effective[event.originator_version]
                relied = (
                    (name == "cure" and kind(event) == "AbatementRecorded"
                     and event.without_notice_reason is None and at < due)
                    or (name == "tax_roll_eligible" and kind(event) == "ChargeCertified" and at < due)
                    or (name == "appeal_window" and kind(event) == "AppealFiled" and at > due))
                if relied:
                    raise errors.BusinessTimeOrderError(
                        f"with {changed} the deadline {name} would be {_shown(due, tz)}, but "
                        f"{kind(event)} (event {event.originator_version}) at {_shown(at, tz)} relied "
                        "on the deadline as recorded; correct that fact first, or record what "
                        "really happened")

    def pass_due_deadlines(self, until: dt.datetime, now: dt.datetime, actor: str) -> int:
        """Record every open deadline due by ``until``, each at its true time, in order."""
        if self.closed:
            return 0
        due = sorted((d for d in self.deadlines.values()
                      if d["state"] == "open" and d["due_at"] <= until and not d["needs_person"]),
                     key=lambda d: d["due_at"])
        for deadline in due:
            self._record(self.DeadlinePassed, Stamp(actor=actor, at=deadline["due_at"], now=now),
                         name=deadline["name"], due_at=deadline["due_at"],
                         consequence=deadline["consequence"], rule=deadline["rule"],
                         rule_version=deadline["rule_version"], citation=deadline["citation"])
        return len(due)

    # ------------------------------------------------------------------ views

    @property
    def balance(self) -> Decimal:
        if self.charge is None or "principal" not in self.charge:
            return ZERO
        return money(self.charge["principal"] - self.charge["paid"])

    @property
    def payment_by_version(self) -> dict[int, int]:
        return {p.get("version", -1): i for i, p in enumerate(self.payments)}

    @property
    def counts_as_violation(self) -> bool:
        """Substantiated (notice, abatement or citation) and not closed as unfounded."""
        unfounded = (self.close_reason or "").strip().casefold().startswith("unfounded")
        return self.substantiated and not unfounded

    @property
    def cure_deadline(self) -> dt.datetime | None:
        cure = self.deadlines.get("cure")
        return cure["due_at"] if cure else None

    @property
    def next_deadline(self) -> dict | None:
        pending = [d for d in self.deadlines.values() if d["state"] == "open"]
        return min(pending, key=lambda d: d["due_at"]) if pending else None

    def _is_open(self, name: str) -> bool:
        deadline = self.deadlines.get(name)
        return deadline is not None and deadline["state"] == "open"

    def _check_open(self, stamp: Stamp, after: tuple[str, dt.datetime] | None = None) -> None:
        """An open case, a fact in business-time order; then the deadlines due by the fact's
        time are recorded as passed first, at their own times."""
        if self.closed:
            raise errors.CaseClosedError(
                f"case {self.case_ref} is closed ({self.close_reason}); only reopen_case is allowed")
        if after is not None and after[1] is not None and stamp.at < after[1]:
            raise errors.BusinessTimeOrderError(
                f"at {_shown(stamp.at, stamp.tz)} is before {after[0]} at {_shown(after[1], stamp.tz)}")
        self._check_business_order(stamp)
        self.pass_due_deadlines(until=stamp.at, now=stamp.now, actor=CLOCK_ACTOR)

    def _check_business_order(self, stamp: Stamp) -> None:
        last = self.last_fact
        if stamp.at < last["at"]:
            which = (f"{last['type']}, event {last['position']}, at " if last.get("position")
                     else "")
            raise errors.BusinessTimeOrderError(
                f"at {_shown(stamp.at, stamp.tz)} is before the last fact recorded on case {self.case_ref} "
                f"({which}{_shown(last['at'], stamp.tz)}); facts are entered in the order they happened "
                "(correct a wrong time with the correct command)")

    def _check(self, stamp: Stamp, rule: Rule,
               after: tuple[str, dt.datetime] | None = None) -> None:
        if rule.key != self.rule or rule.version != self.rule_version:
            raise errors.CommandRejectedError(
                f"rule {rule.key} v{rule.version} given for a case under {self.rule} "
                f"v{self.rule_version}")
        self._check_open(stamp, after)


_CORRECTABLE_CASE_FIELDS = ("owner", "responsible", "site_address", "description", "parcel")
_CORRECTABLE = {
    "Opened": set(_CORRECTABLE_CASE_FIELDS),
    "NoticeServed": {"served_on"},
    "InspectionRecorded": {"findings", "documents"},
    "PaymentReceived": {"void"},
}
# Where a fact's business time is kept in the case state: (list or dict attribute, key).
_ENTRY_TIMES = {
    "InspectionRecorded": ("inspections", "at"),
    "ServiceAttempted": ("service_attempts", "at"),
    "ComplianceVerified": ("compliances", "at"),
    "BondDrawn": ("bond_draws", "at"),
    "HazardDeclared": ("hazard", "at"),
    "NoticeServed": ("notices", "served_at"),
    "AbatementRecorded": ("abatements", "at"),
    "PaymentReceived": ("payments", "at"),
    "AppealFiled": ("appeal", "filed_at"),
    "AppealDecided": ("appeal", "decided_at"),
    "CitationIssued": ("citations", "at"),
    "ReferredToAttorney": ("referrals", "at"),
    "DispositionRecorded": ("dispositions", "at"),
}


def _cancel(case: Case, names: list[str]) -> None:
    for name in names:
        if name in case.deadlines:
            case.deadlines[name]["state"] = "cancelled"


def _set_by(current: dict, position: int, original: dict | None) -> bool:
    """Whether the event at ``position`` set the case's current deadline (a state built
    before deadlines remembered it: the deadline still has the time the event gave)."""
    if "set_by" in current:
        return current["set_by"] == position
    return original is not None and current["due_at"] == original["due_at"]


def _stated_days(notice: Any, original: dict[str, dict], tz: ZoneInfo) -> int | None:
    """The cure days a notice stated, from the cure deadline it set (older notices do not
    record them)."""
    cure = original.get("cure")
    if cure is None:
        return None
    days = (cure["due_at"].astimezone(tz).date() - notice.delivered_at.astimezone(tz).date()).days
    return days if days > 0 else None


def _check_meeting(meeting: dt.date, filed_on: dt.date) -> None:
    if meeting < filed_on:
        raise errors.BusinessTimeOrderError(
            f"board_meeting_on {meeting} is before the appeal was filed ({filed_on})")
    if meeting > filed_on + MAX_MEETING_AHEAD:
        raise errors.BusinessTimeOrderError(
            f"board_meeting_on {meeting} is more than a year after the appeal was filed "
            f"({filed_on}); give the deciding body's next regular meeting")


def _entry_of(case: Case, event_kind: str, position: int, previous_at: Any) -> dict | None:
    """The state entry a fact made (by its position; by its time in a state built before
    entries remembered their position)."""
    where = _ENTRY_TIMES.get(event_kind)
    if where is None:
        return None
    attribute, key = where
    held = getattr(case, attribute, None)
    if held is None:
        return None
    entries = held if isinstance(held, list) else [held]
    for entry in entries:
        if entry.get("position", entry.get("version")) == position:
            return entry
    return next((e for e in entries if e.get(key) == previous_at), None)


def _apply_time_correction(case: Case, event: Any) -> None:
    """Assign corrected business times, what was derived from them, and moved deadlines."""
    event_kind, position = event.supersedes_type, event.supersedes
    changes, derived = event.changes, event.derived or {}
    at = changes.get("at")
    if event_kind == "Opened":
        if at is not None:
            case.observed_at = at
        if "snow_ended_at" in changes:
            case.snow_ended_at = changes["snow_ended_at"]
    entry = _entry_of(case, event_kind, position, derived.get("at_before"))
    if entry is not None:
        if at is not None:
            entry[_ENTRY_TIMES[event_kind][1]] = at
        if "delivered_at" in changes:
            entry["delivered_at"] = changes["delivered_at"]
        if "board_meeting_on" in changes:
            entry["board_meeting_on"] = changes["board_meeting_on"]
        if "incurred_on" in derived:
            entry["incurred_on"] = derived["incurred_on"]
    charge = case.charge
    if charge is not None:
        if "incurred_on" in derived and charge.get("incurred_on") == derived["incurred_on_before"]:
            charge["incurred_on"] = derived["incurred_on"]
        if event_kind == "BillIssued" and charge.get("billed_at") in (None, derived.get("at_before")):
            if at is not None:
                charge["billed_at"] = at
            if "received_on" in changes:
                charge["received_on"] = changes["received_on"]
            charge.update({k: v for k, v in derived.items() if k in ("billed_on", "due_at", "due_basis")})
        if event_kind == "AppealDecided" and "due_at" in derived \
                and charge.get("due_basis") == "appeal decided":
            charge["due_at"] = derived["due_at"]
        if event_kind == "ChargeCertified" and at is not None and charge.get("certified"):
            charge["certified"]["at"] = at
    if at is not None and case.last_fact.get("position") == position:
        case.last_fact = {**case.last_fact, "at": at}
    for moved in event.deadlines or ():
        case.deadlines[moved["name"]] = dict(moved)
        if moved["name"] == "cure" and moved["state"] == "open" \
                and case.status == "cure_period_passed":
            case.status = "notice_served"
        if moved["name"] == "tax_roll_eligible" and charge is not None:
            charge["tax_roll_eligible"] = moved["state"] == "passed"


def _cost_items(costs: list[dict], max_amount: Decimal | None = None) -> tuple[list[dict], Decimal]:
    if not costs:
        raise errors.InvalidAmountError("costs must list at least one {item, amount}")
    items = []
    for index, cost in enumerate(costs):  # a list item named by its position from 0
        item = str(cost.get("item", "")).strip()
        if not item:
            raise errors.InvalidAmountError(f"field costs.{index}.item: the item is empty")
        items.append({"item": item, "amount": parse_amount(cost.get("amount"),
                                                            f"costs.{index}.amount", max_amount)})
    return items, money(sum((i["amount"] for i in items), ZERO))

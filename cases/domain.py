"""The Case aggregate: one violation, from complaint to close.

Public methods decide (check invariants, compute deadlines and amounts from the
rule version the case was opened under, with ``at`` and ``now`` passed in);
nested events only assign. Replay never recomputes a date or re-runs a rule.

Every event carries the actor, ``occurred_at`` (business time), ``timestamp``
(system time, shown as recorded_at), the idempotency key of the command that
caused it, and its link in the case's hash chain (see ``cases.chain``).
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from eventsourcing.domain import Aggregate

from cases import errors
from cases.chain import GENESIS, content_hash
from cases.money import money, parse_amount
from cases.rules.catalog import Clock, Period, Rule
from cases.rules.clock import deadline_after, end_of_local_day

CASE_NAMESPACE = uuid.UUID("6f1c7a52-3c1e-4f8e-9b7a-0a1b5c2d3e4f")
ZERO = Decimal("0.00")


def case_id(municipality: str, case_ref: str) -> uuid.UUID:
    """Cases are addressed by municipality and reference; the id is derived."""
    return uuid.uuid5(CASE_NAMESPACE, f"{municipality}:{case_ref}")


@dataclass(frozen=True)
class Stamp:
    """Who records a fact, when it happened, when it is recorded, and the command key."""

    actor: str
    at: dt.datetime  # business time (occurred_at)
    now: dt.datetime  # system time (recorded_at)
    command_id: str | None = None


@dataclass(frozen=True)
class RepeatEvidence:
    """What a repeat-offense look-up saw; recorded on the decision that used it."""

    count: int
    window_start: dt.date
    window_end: dt.date
    case_refs: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "window_start": self.window_start,
            "window_end": self.window_end,
            "case_refs": list(self.case_refs),
        }


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
    ) -> RepeatEvidence: ...


class DueDeadlines(Protocol):
    """The question a clock sweep asks of a read model: which cases have a deadline due?"""

    def cases_due(self, *, until: dt.datetime, municipality: str | None = None) -> list[uuid.UUID]: ...


def _deadline(name: str, due_at: dt.datetime, consequence: str, rule: Rule, citation: str,
              *, needs_person: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "due_at": due_at,
        "consequence": consequence,
        "rule": rule.key,
        "rule_version": rule.version,
        "citation": citation,
        "needs_person": needs_person,
        "state": "open",
    }


class Case(Aggregate):
    """One violation case. Addressed by (municipality, case_ref)."""

    TOPIC = "abate.case:Case"

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
            if not isinstance(self, Case.DeadlinePassed):
                case.last_fact_at = self.occurred_at
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
            for item in self.deadlines:
                case.deadlines[item["name"]] = dict(item)

    class InspectionRecorded(Event):
        TOPIC = "abate.case:Case.InspectionRecorded"
        findings: str
        documents: list

        def apply_to(self, case: "Case") -> None:
            case.inspections.append(
                {"at": self.occurred_at, "findings": self.findings, "documents": list(self.documents)}
            )

    class HazardDeclared(Event):
        TOPIC = "abate.case:Case.HazardDeclared"
        description: str
        nobody_reachable: bool
        citation: str

        def apply_to(self, case: "Case") -> None:
            case.hazard = {"at": self.occurred_at, "nobody_reachable": self.nobody_reachable,
                           "description": self.description}

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

        def apply_to(self, case: "Case") -> None:
            case.notices.append({
                "method": self.method, "served_on": self.served_on,
                "served_at": self.occurred_at, "delivered_at": self.delivered_at,
                "hazard": self.hazard, "repeat_evidence": self.repeat_evidence,
                "repeat_consequence": self.repeat_consequence,
            })
            case.substantiated = True
            _cancel(case, self.cancels)
            for item in self.deadlines:
                case.deadlines[item["name"]] = dict(item)
            if case.status in ("open", "reopened", "cure_period_passed"):
                case.status = "notice_served"

    class ComplianceVerified(Event):
        TOPIC = "abate.case:Case.ComplianceVerified"
        notes: str
        cancels: list

        def apply_to(self, case: "Case") -> None:
            _cancel(case, self.cancels)
            case.status = "complied"

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
            })
            case.substantiated = True
            _cancel(case, self.cancels)
            if self.charge_due is not None:
                case.charge = dict(self.charge_due)
            for item in self.deadlines:
                case.deadlines[item["name"]] = dict(item)
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
            for item in self.deadlines:
                case.deadlines[item["name"]] = dict(item)
            case.status = "billed"

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

        def apply_to(self, case: "Case") -> None:
            case.appeal = {"filed_at": self.occurred_at, "grounds": self.grounds,
                           "state": "pending", "stays_charge": self.stays_charge,
                           "decision_due": self.decision_due}
            case.charge["appeal_state"] = "pending"
            _cancel(case, self.cancels)
            for item in self.deadlines:
                case.deadlines[item["name"]] = dict(item)
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
            for item in self.deadlines:
                case.deadlines[item["name"]] = dict(item)
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

        def apply_to(self, case: "Case") -> None:
            case.citations.append({"at": self.occurred_at, "number": self.citation_number,
                                   "offense_dates": list(self.offense_dates),
                                   "forfeiture": self.forfeiture})
            case.substantiated = True
            case.status = "cited"

    class ReferredToAttorney(Event):
        TOPIC = "abate.case:Case.ReferredToAttorney"
        reason: str
        referral_path: str

        def apply_to(self, case: "Case") -> None:
            case.referrals.append({"at": self.occurred_at, "reason": self.reason,
                                   "path": self.referral_path})
            case.status = "referred"

    class DispositionRecorded(Event):
        TOPIC = "abate.case:Case.DispositionRecorded"
        outcome: str
        forfeiture_amount: Decimal | None
        notes: str

        def apply_to(self, case: "Case") -> None:
            case.dispositions.append({"at": self.occurred_at, "outcome": self.outcome,
                                      "forfeiture_amount": self.forfeiture_amount,
                                      "notes": self.notes})

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

    class Corrected(Event):
        TOPIC = "abate.case:Case.Corrected"
        supersedes: int
        supersedes_type: str
        changes: dict
        reason: str

        def apply_to(self, case: "Case") -> None:
            case.corrections.append({"at": self.occurred_at, "supersedes": self.supersedes,
                                     "supersedes_type": self.supersedes_type,
                                     "changes": dict(self.changes), "reason": self.reason})
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
        deadlines = []
        anchors = {"observed": stamp.at, "snow_ended": snow_ended_at or stamp.at}
        if rule.owner_duty is not None and rule.owner_duty.starts in anchors:
            due = _clock_deadline(rule.owner_duty, anchors[rule.owner_duty.starts], tz)
            deadlines.append(_deadline("owner_duty", due, "owner's time to comply has run",
                                       rule, rule.owner_duty.citation))
        deadlines += _escalations(rule, anchors, tz)
        return cls._create(
            cls.Opened, id=case_id(municipality, case_ref), timestamp=stamp.now,
            actor=stamp.actor, occurred_at=stamp.at, command_id=stamp.command_id,
            prev_hash=GENESIS, hash="", municipality=municipality, case_ref=case_ref,
            rule=rule.key, rule_version=rule.version, rule_family=rule.family, source=source,
            parcel=parcel, site_address=site_address, owner=owner, responsible=responsible,
            description=description, snow_ended_at=snow_ended_at, deadlines=deadlines,
        )

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
        delivered = delivered_at or stamp.at
        if delivered < stamp.at - dt.timedelta(days=365):
            raise errors.CommandRejectedError("delivered_at is more than a year before service")
        hazard = self.hazard is not None
        clock = rule.hazard.cure if (hazard and rule.hazard) else rule.cure
        if cure_days is not None and (clock is None or clock.period != "stated_in_notice"):
            raise errors.NotAllowedByRuleError(
                f"cure_days is only given where the rule leaves the time to the notice; "
                f"{rule.key} sets it ({clock.citation if clock else 'no cure step'})")
        deadlines = []
        # A notice after the village already abated (e.g. the hazard notice mailed afterwards,
        # § 9.09(2)(b)) informs; it starts no new cure period.
        if clock is not None and not self.abatements:
            due = _clock_deadline(clock, delivered, tz, stated_days=cure_days)
            consequence = rule.cure_expiry_consequence or "cure period has run"
            deadlines.append(_deadline("cure", due, consequence, rule, clock.citation))
        anchors = {"notice_delivered": delivered}
        deadlines += _escalations(rule, anchors, tz)
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
                     repeat_consequence=consequence)

    def record_compliance(self, stamp: Stamp, *, notes: str) -> None:
        self._check_open(stamp)
        cancels = [name for name, d in self.deadlines.items()
                   if d["state"] == "open" and name not in _MONEY_DEADLINES]
        self._record(self.ComplianceVerified, stamp, notes=notes, cancels=cancels)

    def record_abatement(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, costs: list[dict],
                         without_notice_reason: str | None,
                         repeat_evidence: RepeatEvidence | None) -> None:
        self._check(stamp, rule)
        abatement = rule.abatement
        if abatement is None or not abatement.by_village:
            raise errors.NotAllowedByRuleError(
                f"{rule.key} does not provide for abatement by the village ({rule.citation})")
        items, total = _cost_items(costs)
        evidence = None
        if without_notice_reason or (not self.notices and abatement.notice_required):
            # Immediate abatement: only where the rule allows it, and it says why.
            evidence = self._check_abatement_without_notice(
                rule, without_notice_reason, repeat_evidence)
        else:
            cure = self.deadlines.get("cure")
            if cure is not None and stamp.at < cure["due_at"]:
                raise errors.CureDeadlineNotPassedError(
                    f"the cure period under {rule.key} runs until {cure['due_at'].isoformat()} "
                    f"({cure['citation']}); village abatement is not yet permitted")
        incurred_on = stamp.at.astimezone(tz).date()
        deadlines = []
        charge_due = None
        if self.hazard and self.hazard["nobody_reachable"] and not self.notices and rule.hazard \
                and rule.hazard.notice_after_abatement:
            deadlines.append(_deadline("notice_after_abatement", stamp.at,
                                       rule.hazard.notice_after_abatement, rule,
                                       rule.hazard.citation, needs_person=True))
        tax_roll = rule.tax_roll
        if tax_roll is not None and rule.billing is None:
            # No bill: the cost itself is the charge (e.g. Mazomanie § 360-9).
            prior = (self.charge or {}).get("principal", ZERO)
            charge_due = {"principal": prior + total, "paid": (self.charge or {}).get("paid", ZERO),
                          "incurred_on": incurred_on, "billed_on": None, "due_at": None,
                          "due_basis": "no bill under this rule", "appeal_state": "none",
                          "tax_roll_eligible": False, "certified": None}
        if tax_roll is not None and tax_roll.trigger in ("unpaid_after_incurred", "next_annual_roll",
                                                         "year_work_completed"):
            start = stamp.at
            if tax_roll.trigger == "unpaid_after_incurred":
                due = deadline_after(start, tax_roll.period, tz)
            else:
                due = stamp.at
            if "tax_roll_eligible" not in self.deadlines:
                deadlines.append(_deadline("tax_roll_eligible", due,
                                           "unpaid charge eligible for the tax roll", rule,
                                           tax_roll.citation))
        cancels = [n for n, d in self.deadlines.items()
                   if d["state"] == "open" and n not in _MONEY_DEADLINES]
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
        self._check(stamp, rule)
        if rule.billing is None:
            raise errors.NotAllowedByRuleError(
                f"{rule.key} has no bill: the cost goes on the tax roll ({rule.citation})")
        unbilled = [a for a in self.abatements if not a["billed"]]
        if not unbilled:
            raise errors.NoAbatementToBillError(
                "there is no recorded (and not yet billed) village abatement to bill")
        amount = money(sum((a["total"] for a in unbilled), ZERO))
        billing = rule.billing
        billed_on = stamp.at.astimezone(tz).date()
        due_at = None
        due_basis = "not set: the ordinance gives no payment period"
        deadlines = []
        if billing.due != "not set":
            if billing.due.starts == "bill_received":
                start_day = received_on or billed_on
                start = dt.datetime.combine(start_day, dt.time(12), tzinfo=tz)
                due_basis = (f"{billing.due.period} from receipt on {start_day}"
                             + ("" if received_on else " (receipt not recorded: bill date used)"))
            else:
                start = stamp.at
                due_basis = f"{billing.due.period} from billing on {billed_on}"
            due_at = _clock_deadline(billing.due, start, tz)
            deadlines.append(_deadline("bill_due", due_at, "bill delinquent", rule,
                                       billing.due.citation))
        if billing.appeal is not None:
            window_end = _clock_deadline(billing.appeal.window, stamp.at, tz)
            deadlines.append(_deadline("appeal_window", window_end, "appeal window closed", rule,
                                       billing.appeal.citation))
        tax_roll = rule.tax_roll
        if tax_roll is not None and tax_roll.trigger == "unpaid_after_billing":
            due = deadline_after(stamp.at, tax_roll.period, tz)
            deadlines.append(_deadline("tax_roll_eligible", due,
                                       "unpaid charge eligible for the tax roll", rule,
                                       tax_roll.citation))
        elif tax_roll is not None and tax_roll.trigger == "lien_when_unpaid":
            # No period stated: the unpaid charge is a lien from its due date, or from billing.
            deadlines.append(_deadline("tax_roll_eligible", due_at or stamp.at,
                                       "unpaid charge is a lien for the tax bill", rule,
                                       tax_roll.citation))
        owner = self.owner if billing.bill_to == "owner" or not self.responsible \
            else self.responsible
        self._record(self.BillIssued, stamp, amount=amount, bill_to=owner, billed_on=billed_on,
                     received_on=received_on, due_at=due_at, due_basis=due_basis,
                     rule=rule.key, rule_version=rule.version, citation=billing.citation,
                     deadlines=deadlines)

    def record_payment(self, stamp: Stamp, *, amount: Decimal | str) -> None:
        self._check_open(stamp)
        value = parse_amount(amount, "amount")
        if self.charge is None or "principal" not in self.charge:
            raise errors.CommandRejectedError("there is no charge on this case to pay")
        balance = self.balance
        if value > balance:
            raise errors.InvalidAmountError(
                f"payment {value} exceeds the balance {balance}")
        after = money(balance - value)
        cancels = []
        if after == ZERO:
            cancels = [n for n in _MONEY_DEADLINES if self._is_open(n)]
        self._record(self.PaymentReceived, stamp, amount=value, balance_after=after,
                     after_certification=bool(self.charge.get("certified")), cancels=cancels)

    def file_appeal(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, grounds: str,
                    board_meeting_on: dt.date | None = None) -> None:
        """File an appeal; the decision's deadline counts from the deciding body's next
        regular meeting when it is known, else a person must put it on that agenda."""
        self._check(stamp, rule)
        appeal = rule.billing.appeal if rule.billing else None
        if appeal is None:
            raise errors.NotAllowedByRuleError(f"{rule.key} has no appeal clause ({rule.citation})")
        if self.charge is None or self.charge.get("billed_on") is None:
            raise errors.CommandRejectedError("an appeal needs an issued bill")
        if self.appeal is not None:
            raise errors.CommandRejectedError(
                f"an appeal was already filed on {self.appeal['filed_at'].isoformat()}")
        window = self.deadlines.get("appeal_window")
        if window is None or stamp.at > window["due_at"]:
            end = window["due_at"].isoformat() if window else "unknown"
            raise errors.AppealWindowClosedError(
                f"the appeal window under {rule.key} closed at {end} ({appeal.citation})")
        cancels = ["appeal_window"]
        if appeal.stays_charge:
            cancels += [n for n in ("bill_due", "tax_roll_eligible") if self._is_open(n)]
        if board_meeting_on is not None and appeal.decision_after_meeting is not None:
            if board_meeting_on < stamp.at.astimezone(tz).date():
                raise errors.CommandRejectedError(
                    f"board_meeting_on {board_meeting_on} is before the appeal was filed")
            meeting = end_of_local_day(board_meeting_on, tz)
            due = deadline_after(meeting, appeal.decision_after_meeting, tz)
            deadlines = [_deadline("appeal_decision", due,
                                   f"appeal decision overdue ({appeal.decided_by}: "
                                   f"{appeal.decision_due})", rule, appeal.citation)]
        else:
            deadlines = [_deadline("appeal_hearing", stamp.at,
                                   f"put the appeal on the agenda of the {appeal.decided_by}'s "
                                   "next regular meeting", rule, appeal.citation,
                                   needs_person=True)]
        self._record(self.AppealFiled, stamp, grounds=grounds, stays_charge=appeal.stays_charge,
                     decision_due=f"{appeal.decided_by}: {appeal.decision_due}",
                     citation=appeal.citation, cancels=cancels, deadlines=deadlines)

    def decide_appeal(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, outcome: str,
                      amount: Decimal | str | None) -> None:
        self._check(stamp, rule)
        if self.appeal is None or self.appeal["state"] != "pending":
            raise errors.CommandRejectedError("there is no pending appeal to decide")
        appeal = rule.billing.appeal
        principal = self.charge["principal"]
        if outcome == "reduced":
            if amount is None:
                raise errors.InvalidAmountError("a reduced appeal needs the reduced amount")
            principal = parse_amount(amount, "amount")
            if principal >= self.charge["principal"]:
                raise errors.InvalidAmountError(
                    f"reduced amount {principal} is not below the charge {self.charge['principal']}")
        elif amount is not None:
            raise errors.InvalidAmountError("amount is only given when the outcome is reduced")
        if outcome == "upheld":
            # The appeal succeeds: the charge is set aside.
            principal = self.charge["paid"]
        due_at = None
        deadlines = []
        if outcome in ("denied", "reduced") and principal > self.charge["paid"]:
            due_at = deadline_after(stamp.at, appeal.due_after_denial, tz)
            deadlines.append(_deadline("bill_due", due_at, "bill delinquent", rule, appeal.citation))
            if rule.tax_roll is not None:
                deadlines.append(_deadline("tax_roll_eligible", due_at,
                                           "unpaid charge eligible for the tax roll",
                                           rule, appeal.citation))
        cancels = [n for n in ("appeal_decision", "appeal_hearing") if self._is_open(n)]
        self._record(self.AppealDecided, stamp, outcome=outcome, principal_after=principal,
                     due_at=due_at, citation=appeal.citation, deadlines=deadlines,
                     cancels=cancels)

    def certify_charge(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, tax_year: int,
                       cutoff: str) -> None:
        """Certify the unpaid balance to the tax roll of ``tax_year``.

        ``cutoff`` (MM-DD, a municipal setting) decides the first roll a charge can go on:
        eligible on or before the cut-off, that year's roll; later, next year's.
        """
        self._check(stamp, rule)
        if rule.tax_roll is None or self.charge is None:
            raise errors.NotAllowedByRuleError(f"{rule.key} has no charge for the tax roll")
        eligible = self.deadlines.get("tax_roll_eligible")
        if eligible is None or eligible["state"] == "cancelled" or eligible["due_at"] > stamp.at:
            when = (f"until {eligible['due_at'].isoformat()}" if eligible and
                    eligible["state"] != "cancelled" else "(no eligibility date: stayed or not due)")
            raise errors.NotAllowedByRuleError(
                f"the charge is not eligible for the tax roll {when}")
        eligible_on = eligible["due_at"].astimezone(tz).date()
        month, day = (int(part) for part in cutoff.split("-"))
        first_year = eligible_on.year + (1 if eligible_on > dt.date(eligible_on.year, month, day) else 0)
        if tax_year < first_year:
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

    def issue_citation(self, stamp: Stamp, rule: Rule, *, citation_number: str,
                       offense_dates: list[str]) -> None:
        self._check(stamp, rule)
        forfeiture = (rule.penalty.describe(self.municipality) if rule.penalty
                      else f"no forfeiture stated in {rule.citation}")
        self._record(self.CitationIssued, stamp, citation_number=citation_number,
                     offense_dates=offense_dates, forfeiture=forfeiture, rule=rule.key,
                     rule_version=rule.version)

    def refer_to_attorney(self, stamp: Stamp, rule: Rule, *, reason: str) -> None:
        self._check(stamp, rule)
        self._record(self.ReferredToAttorney, stamp, reason=reason,
                     referral_path=rule.referral or "Village Attorney")

    def record_disposition(self, stamp: Stamp, *, outcome: str,
                           forfeiture_amount: Decimal | str | None, notes: str) -> None:
        self._check_open(stamp)
        value = None if forfeiture_amount is None else parse_amount(forfeiture_amount,
                                                                    "forfeiture_amount")
        self._record(self.DispositionRecorded, stamp, outcome=outcome, forfeiture_amount=value,
                     notes=notes)

    def close(self, stamp: Stamp, *, reason: str) -> None:
        self._check_open(stamp)
        cancels = [n for n, d in self.deadlines.items() if d["state"] == "open"]
        self._record(self.Closed, stamp, reason=reason, cancels=cancels)

    def reopen(self, stamp: Stamp, *, reason: str) -> None:
        if not self.closed:
            raise errors.CommandRejectedError("the case is not closed")
        self._check_business_order(stamp)
        self._record(self.Reopened, stamp, reason=reason)

    def correct(self, stamp: Stamp, *, event_types: dict[int, str], supersedes: int,
                changes: dict[str, Any], reason: str) -> None:
        """Supersede an earlier fact (by its position in the case) with a reason."""
        self._check_open(stamp)
        if not reason.strip():
            raise errors.CommandRejectedError("a correction needs a reason")
        kind = event_types.get(supersedes)
        if kind is None:
            raise errors.NothingToCorrectError(
                f"there is no event {supersedes} on this case (it has {self.version})")
        allowed = _CORRECTABLE.get(kind)
        if not allowed:
            raise errors.NothingToCorrectError(
                f"a {kind} event cannot be corrected by field; record the fact that supersedes it")
        unknown = set(changes) - allowed
        if unknown or not changes:
            raise errors.NothingToCorrectError(
                f"cannot correct {', '.join(sorted(unknown)) or 'nothing'} on {kind} "
                f"(correctable: {', '.join(sorted(allowed))})")
        if kind == "PaymentReceived":
            if changes.get("void") is not True:
                raise errors.NothingToCorrectError("a payment correction is {'void': true}")
            if self.payments[self.payment_by_version[supersedes]]["void"]:
                raise errors.NothingToCorrectError(f"payment (event {supersedes}) is already void")
        self._record(self.Corrected, stamp, supersedes=supersedes, supersedes_type=kind,
                     changes=changes, reason=reason)

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

    def _check_open(self, stamp: Stamp) -> None:
        if self.closed:
            raise errors.CaseClosedError(
                f"case {self.case_ref} is closed ({self.close_reason}); only reopen_case is allowed")
        self._check_business_order(stamp)

    def _check_business_order(self, stamp: Stamp) -> None:
        if stamp.at < self.last_fact_at:
            raise errors.CommandRejectedError(
                f"at {stamp.at.isoformat()} is before the last fact recorded on case "
                f"{self.case_ref} ({self.last_fact_at.isoformat()}); facts are entered in the "
                "order they happened")

    def _check(self, stamp: Stamp, rule: Rule) -> None:
        self._check_open(stamp)
        if rule.key != self.rule or rule.version != self.rule_version:
            raise errors.CommandRejectedError(
                f"rule {rule.key} v{rule.version} given for a case under {self.rule} "
                f"v{self.rule_version}")


_MONEY_DEADLINES = ("bill_due", "tax_roll_eligible", "appeal_window")
_CORRECTABLE_CASE_FIELDS = ("owner", "responsible", "site_address", "description", "parcel")
_CORRECTABLE = {
    "Opened": set(_CORRECTABLE_CASE_FIELDS),
    "NoticeServed": {"served_on"},
    "InspectionRecorded": {"findings", "documents"},
    "PaymentReceived": {"void"},
}


def _cancel(case: Case, names: list[str]) -> None:
    for name in names:
        if name in case.deadlines:
            case.deadlines[name]["state"] = "cancelled"


def _clock_deadline(clock: Clock, start: dt.datetime, tz: ZoneInfo,
                    stated_days: int | None = None) -> dt.datetime:
    period = clock.period
    if period == "stated_in_notice":
        if not stated_days or stated_days < 1:
            raise errors.CommandRejectedError(
                f"this rule's cure time is stated in the notice ({clock.citation}): give cure_days")
        period = Period(amount=stated_days, unit="calendar_days")
    return deadline_after(start, period, tz)


def _escalations(rule: Rule, anchors: dict[str, dt.datetime], tz: ZoneInfo) -> list[dict]:
    found = []
    for step in rule.escalations:
        if step.starts in anchors:
            due = deadline_after(anchors[step.starts], step.after, tz)
            found.append(_deadline(step.name, due, step.consequence, rule, step.citation,
                                   needs_person=step.needs_person))
    return found


def _cost_items(costs: list[dict]) -> tuple[list[dict], Decimal]:
    if not costs:
        raise errors.InvalidAmountError("costs must list at least one {item, amount}")
    items = []
    for index, cost in enumerate(costs, start=1):
        item = str(cost.get("item", "")).strip()
        if not item:
            raise errors.InvalidAmountError(f"costs[{index}].item is empty")
        items.append({"item": item, "amount": parse_amount(cost.get("amount"),
                                                            f"costs[{index}].amount")})
    return items, money(sum((i["amount"] for i in items), ZERO))

"""Intake and notice: a case opened, inspected, a hazard declared, a notice served (after
failed attempts where the rule allows a fallback method), compliance verified, closed and
reopened. Each command's decision is followed by its event and how the event applies.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Self

from eventsourcing.domain import Aggregate

from cases import deadlines as plan
from cases import errors
from cases.chain import GENESIS
from cases.deadlines import MONEY_DEADLINES
from cases.domain.clock import cancel_deadlines, set_deadlines
from cases.domain.questions import RepeatEvidence
from cases.domain.recording import CaseEvent, CaseState, Stamp, case_id, shown
from cases.domain.values import Compliance, Hazard, Inspection, Notice, ServiceAttempt

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from cases.rules.catalog import Rule


class IntakeAndNotice:
    """From the complaint to the notice and its outcome."""

    @classmethod
    def open(cls, stamp: Stamp, *, municipality: str, case_ref: str, rule: Rule, tz: ZoneInfo,
             parcel: dict[str, str], site_address: str, owner: dict[str, str],
             responsible: dict[str, str] | None, description: str, source: str,
             snow_ended_at: dt.datetime | None) -> Self:
        """Open a case; deadlines that had already run by the opening (the owner's time
        after a snowfall that ended long before) are recorded as passed right after it."""
        if snow_ended_at is not None and snow_ended_at > stamp.at:
            raise errors.BusinessTimeOrderError(
                f"snow_ended_at {shown(snow_ended_at, tz)} is after the case was opened (at "
                f"{shown(stamp.at, tz)}): record the end of a snowfall that has already happened")
        deadlines = plan.opening(rule, tz, stamp.at, snow_ended_at)
        case = cls._create(
            cls.Opened, id=case_id(municipality, case_ref), timestamp=stamp.now,
            actor=stamp.actor, occurred_at=stamp.at, command_id=stamp.command_id,
            prev_hash=GENESIS, hash="", municipality=municipality, case_ref=case_ref,
            rule=rule.key, rule_version=rule.version, rule_family=rule.family, source=source,
            parcel=parcel, site_address=site_address, owner=owner, responsible=responsible,
            description=description, snow_ended_at=snow_ended_at, deadlines=deadlines,
        )
        case._pass_deadlines_before(stamp)
        return case

    class Opened(CaseEvent, Aggregate.Created):
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

        def apply_to(self, case: CaseState) -> None:
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
            case.documents = []
            case.deadlines = {}
            case.command_ids = []
            case.last_hash = GENESIS
            case.close_reason = None
            set_deadlines(case, self.deadlines, self.originator_version)

    def record_inspection(self, stamp: Stamp, *, findings: str, documents: list[str]) -> None:
        self._check_open(stamp)
        self._record(self.InspectionRecorded, stamp, findings=findings, documents=documents)

    class InspectionRecorded(CaseEvent):
        TOPIC = "abate.case:Case.InspectionRecorded"
        findings: str
        documents: list

        def apply_to(self, case: CaseState) -> None:
            case.inspections.append(Inspection(
                at=self.occurred_at, findings=self.findings, documents=tuple(self.documents),
                position=self.originator_version))

    def declare_hazard(self, stamp: Stamp, rule: Rule, *, description: str,
                       nobody_reachable: bool) -> None:
        self._check(stamp, rule)
        if rule.hazard is None:
            raise errors.NotAllowedByRuleError(f"{rule.key} has no hazard variant ({rule.citation})")
        self._record(self.HazardDeclared, stamp, description=description,
                     nobody_reachable=nobody_reachable, citation=rule.hazard.citation)

    class HazardDeclared(CaseEvent):
        TOPIC = "abate.case:Case.HazardDeclared"
        description: str
        nobody_reachable: bool
        citation: str

        def apply_to(self, case: CaseState) -> None:
            case.hazard = Hazard(at=self.occurred_at, nobody_reachable=self.nobody_reachable,
                                 description=self.description, position=self.originator_version)

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

    class ServiceAttempted(CaseEvent):
        """An attempt to serve a notice by a primary method that failed (the owner could
        not be found): what a fallback method such as posting relies on."""

        TOPIC = "abate.case:Case.ServiceAttempted"
        method: str
        attempted_by: str
        result: str
        citation: str

        def apply_to(self, case: CaseState) -> None:
            case.service_attempts.append(ServiceAttempt(
                at=self.occurred_at, method=self.method, attempted_by=self.attempted_by,
                result=self.result, recorded_by=self.actor, position=self.originator_version))

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
        tried = [a for a in self.service_attempts if a.method in fallback.after_attempt_by]
        if not tried:
            primary = " or ".join(m.replace("_", " ") for m in fallback.after_attempt_by)
            raise errors.ServiceAttemptRequiredError(
                f"service by {method.replace('_', ' ')} under {rule.key} is allowed only "
                f"\"{' '.join(fallback.text.split())}\" ({fallback.citation}); no attempt to "
                f"serve by {primary} is recorded on case {self.case_ref}: record it first "
                "(record_service_attempt: at, method, attempted_by, result)")
        return [{"position": a.position, "at": a.at, "method": a.method,
                 "attempted_by": a.attempted_by, "result": a.result} for a in tried]

    def _check_delivery(self, delivered: dt.datetime, *, served_at: dt.datetime,
                        tz: ZoneInfo | None) -> None:
        if delivered < served_at:
            raise errors.BusinessTimeOrderError(
                f"delivered_at {shown(delivered, tz)} is before the notice was served (at "
                f"{shown(served_at, tz)}); a notice is delivered after it is served")
        if delivered < self.observed_at:
            raise errors.BusinessTimeOrderError(
                f"delivered_at {shown(delivered, tz)} is before case {self.case_ref} was opened "
                f"({shown(self.observed_at, tz)})")

    class NoticeServed(CaseEvent):
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

        def apply_to(self, case: CaseState) -> None:
            relied = self.after_attempts
            case.notices.append(Notice(
                method=self.method, served_on=self.served_on, served_at=self.occurred_at,
                delivered_at=self.delivered_at, hazard=self.hazard,
                repeat_evidence=(None if self.repeat_evidence is None
                                 else RepeatEvidence.from_dict(self.repeat_evidence)),
                repeat_consequence=self.repeat_consequence, position=self.originator_version,
                after_attempts=(None if relied is None
                                else tuple(ServiceAttempt.from_dict(a) for a in relied)),
                fallback_citation=self.fallback_citation if relied is not None else None))
            case.substantiated = True
            cancel_deadlines(case, self.cancels)
            set_deadlines(case, self.deadlines, self.originator_version)
            if case.status in ("open", "reopened", "cure_period_passed"):
                case.status = "notice_served"

    def record_compliance(self, stamp: Stamp, *, notes: str) -> None:
        self._check_open(stamp)
        cancels = [name for name, d in self.deadlines.items()
                   if d.is_open and name not in MONEY_DEADLINES]
        self._record(self.ComplianceVerified, stamp, notes=notes, cancels=cancels)

    class ComplianceVerified(CaseEvent):
        TOPIC = "abate.case:Case.ComplianceVerified"
        notes: str
        cancels: list

        def apply_to(self, case: CaseState) -> None:
            cancel_deadlines(case, self.cancels)
            case.compliances.append(Compliance(at=self.occurred_at,
                                               position=self.originator_version))
            case.status = "complied"

    def close(self, stamp: Stamp, *, reason: str) -> None:
        self._check_open(stamp)
        cancels = [n for n, d in self.deadlines.items() if d.is_open]
        self._record(self.Closed, stamp, reason=reason, cancels=cancels)

    class Closed(CaseEvent):
        TOPIC = "abate.case:Case.Closed"
        reason: str
        cancels: list

        def apply_to(self, case: CaseState) -> None:
            cancel_deadlines(case, self.cancels)
            case.closed = True
            case.close_reason = self.reason
            case.status = "closed"

    def reopen(self, stamp: Stamp, *, reason: str) -> None:
        if not self.closed:
            raise errors.CommandRejectedError("the case is not closed")
        self._check_business_order(stamp)
        self._record(self.Reopened, stamp, reason=reason)

    class Reopened(CaseEvent):
        TOPIC = "abate.case:Case.Reopened"
        reason: str

        def apply_to(self, case: CaseState) -> None:
            case.closed = False
            case.close_reason = None
            case.status = "reopened"

    @property
    def counts_as_violation(self) -> bool:
        """Substantiated (notice, abatement or citation) and not closed as unfounded."""
        unfounded = (self.close_reason or "").strip().casefold().startswith("unfounded")
        return self.substantiated and not unfounded

"""Citations and court: the violation cited (with the separate offenses the rule counts),
referred to the attorney, and the court's disposition. Each command's decision is
followed by its event and how the event applies.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import TYPE_CHECKING

from cases import errors
from cases.domain.recording import CaseEvent, CaseState, Stamp, shown
from cases.domain.values import Citation, Disposition, Referral
from cases.money import parse_amount
from cases.offenses import first_day as offense_first_day
from cases.offenses import offense_periods

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from cases.rules.catalog import Rule


class CitationsAndCourt:
    """The case in court."""

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
                    f"({shown(began.astimezone(tz), tz)}, {began_by}; {rule.key} v{rule.version})")
            if day > last_day:
                raise errors.OffenseDateError(
                    f"field offense_dates.{index}: {day} is after the violation ended "
                    f"({shown(ended.astimezone(tz), tz)}, {ended_by})")
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
        return deadline.due_at, f"deadline {name} ({deadline.citation})"

    def _violation_ended(self, began: dt.datetime, cited_at: dt.datetime) -> tuple[dt.datetime, str]:
        """The first abatement or compliance after the violation began, else the citation."""
        ends = [(a.at, "abatement recorded") for a in self.abatements]
        ends += [(c.at, "compliance verified") for c in self.compliances]
        after = sorted((at, why) for at, why in ends if began <= at <= cited_at)
        if after:
            return after[0]
        earlier = [at for at, _ in ends if at < began]
        if earlier:  # ended before it began to count: no offense period
            return max(earlier), "ended before the offense periods began"
        return cited_at, "still going on when cited"

    class CitationIssued(CaseEvent):
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

        def apply_to(self, case: CaseState) -> None:
            counted = self.offense_basis is not None
            case.citations.append(Citation(
                at=self.occurred_at, number=self.citation_number,
                offense_dates=tuple(self.offense_dates), forfeiture=self.forfeiture,
                position=self.originator_version,
                offense_count=len(self.offenses or ()) if counted else None,
                offenses=tuple(dict(o) for o in self.offenses or ()) if counted else None,
                offense_basis=dict(self.offense_basis) if counted else None))
            case.substantiated = True
            case.status = "cited"

    def open_referral(self) -> Referral | None:
        """The latest referral while no disposition has been recorded after it: the
        attorney has the case, so a second referral would only repeat the first."""
        if not self.referrals:
            return None
        latest = self.referrals[-1]
        decided = any(d.position > latest.position for d in self.dispositions)
        return None if decided else latest

    def refer_to_attorney(self, stamp: Stamp, rule: Rule, *, reason: str) -> None:
        self._check(stamp, rule)
        pending = self.open_referral()
        if pending is not None:
            raise errors.CommandRejectedError(
                f"the case is already referred to the attorney (event {pending.position}); "
                "a new referral waits for that referral's disposition")
        self._record(self.ReferredToAttorney, stamp, reason=reason,
                     referral_path=rule.referral or "Village Attorney")

    class ReferredToAttorney(CaseEvent):
        TOPIC = "abate.case:Case.ReferredToAttorney"
        reason: str
        referral_path: str

        def apply_to(self, case: CaseState) -> None:
            case.referrals.append(Referral(at=self.occurred_at, reason=self.reason,
                                           path=self.referral_path,
                                           position=self.originator_version))
            case.status = "referred"

    def record_disposition(self, stamp: Stamp, *, outcome: str,
                           forfeiture_amount: Decimal | str | None, notes: str,
                           max_amount: Decimal | None = None,
                           convicted: bool | None = None) -> None:
        self._check_open(stamp)
        value = None if forfeiture_amount is None else parse_amount(
            forfeiture_amount, "forfeiture_amount", max_amount)
        self._record(self.DispositionRecorded, stamp, outcome=outcome, forfeiture_amount=value,
                     notes=notes, convicted=convicted)

    class DispositionRecorded(CaseEvent):
        TOPIC = "abate.case:Case.DispositionRecorded"
        outcome: str
        forfeiture_amount: Decimal | None
        notes: str
        convicted: bool | None = None  # a conviction counts for repeat windows (§ 9.25(28))

        def apply_to(self, case: CaseState) -> None:
            case.dispositions.append(Disposition(
                at=self.occurred_at, outcome=self.outcome,
                forfeiture_amount=self.forfeiture_amount, convicted=bool(self.convicted),
                notes=self.notes, position=self.originator_version))

"""Appeals and the tax roll: an appeal of the bill (within its window, decided by the body
the rule names) and the unpaid charge certified to a year's tax roll. Each command's
decision is followed by its event and how the event applies.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import TYPE_CHECKING

from cases import deadlines as plan
from cases import errors
from cases.domain.clock import cancel_deadlines, set_deadlines
from cases.domain.recording import CaseEvent, CaseState, Stamp, shown
from cases.domain.values import Appeal, Certification, replace
from cases.money import ZERO, parse_amount
from cases.statute import case_charge_not_certifiable, statute_given
from cases.tax_year import first_roll_year

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from cases.rules.catalog import Rule

# A board meeting further ahead than this is a typing error, not a schedule.
MAX_MEETING_AHEAD = dt.timedelta(days=366)


class AppealsAndTaxRoll:
    """The charge contested, decided, and put on the tax roll."""

    def file_appeal(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, grounds: str,
                    board_meeting_on: dt.date | None = None) -> None:
        """File an appeal; the decision's deadline counts from the deciding body's next
        regular meeting when it is known, else a person must put it on that agenda."""
        billed_at = self.charge.billed_at if self.charge else None
        self._check(stamp, rule, after=("the bill it appeals, issued", billed_at)
                    if billed_at else None)
        appeal = rule.billing.appeal if rule.billing else None
        if appeal is None:
            raise errors.NotAllowedByRuleError(f"{rule.key} has no appeal clause ({rule.citation})")
        if self.charge is None or self.charge.billed_on is None:
            raise errors.CommandRejectedError("an appeal needs an issued bill")
        if self.appeal is not None:
            raise errors.CommandRejectedError(
                f"an appeal was already filed on {shown(self.appeal.filed_at, tz)}")
        window = self.deadlines.get("appeal_window")
        if window is None or stamp.at > window.due_at:
            end = shown(window.due_at, tz) if window else "unknown"
            raise errors.AppealWindowClosedError(
                f"the appeal window under {rule.key} closed at {end} ({appeal.citation}); the "
                f"appeal is filed at {shown(stamp.at, tz)}")
        cancels = ["appeal_window"]
        if appeal.stays_charge:
            cancels += [n for n in ("bill_due", "tax_roll_eligible") if self._is_open(n)]
        if board_meeting_on is not None:
            check_meeting(board_meeting_on, stamp.at.astimezone(tz).date())
        deadlines = plan.appeal(rule, tz, stamp.at, board_meeting_on)
        self._record(self.AppealFiled, stamp, grounds=grounds, stays_charge=appeal.stays_charge,
                     decision_due=f"{appeal.decided_by}: {appeal.decision_due}",
                     citation=appeal.citation, cancels=cancels, deadlines=deadlines,
                     board_meeting_on=board_meeting_on)

    class AppealFiled(CaseEvent):
        TOPIC = "abate.case:Case.AppealFiled"
        grounds: str
        stays_charge: bool
        decision_due: str
        citation: str
        cancels: list
        deadlines: list
        board_meeting_on: dt.date | None = None  # the deciding body's meeting, when known

        def apply_to(self, case: CaseState) -> None:
            case.appeal = Appeal(filed_at=self.occurred_at, grounds=self.grounds,
                                 state="pending", stays_charge=self.stays_charge,
                                 decision_due=self.decision_due,
                                 board_meeting_on=self.board_meeting_on,
                                 position=self.originator_version)
            case.charge = replace(case.charge, appeal_state="pending")
            cancel_deadlines(case, self.cancels)
            set_deadlines(case, self.deadlines, self.originator_version)
            case.status = "appealed"

    def decide_appeal(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, outcome: str,
                      amount: Decimal | str | None, max_amount: Decimal | None = None) -> None:
        pending = self.appeal is not None and self.appeal.state == "pending"
        self._check(stamp, rule, after=("the appeal it decides, filed", self.appeal.filed_at)
                    if pending else None)
        if not pending:
            raise errors.CommandRejectedError("there is no pending appeal to decide")
        principal = self.charge.principal
        if outcome == "reduced":
            if amount is None:
                raise errors.InvalidAmountError("a reduced appeal needs the reduced amount")
            principal = parse_amount(amount, "amount", max_amount)
            if principal >= self.charge.principal:
                raise errors.InvalidAmountError(
                    f"reduced amount {principal} is not below the charge {self.charge.principal}")
        elif amount is not None:
            raise errors.InvalidAmountError("amount is only given when the outcome is reduced")
        if outcome == "upheld":
            # The appeal succeeds: the charge is set aside.
            principal = self.charge.paid
        terms = plan.decision(rule, tz, stamp.at, still_owed=outcome in ("denied", "reduced")
                              and principal > self.charge.paid)
        cancels = [n for n in ("appeal_decision", "appeal_hearing") if self._is_open(n)]
        self._record(self.AppealDecided, stamp, outcome=outcome, principal_after=principal,
                     due_at=terms["due_at"], citation=rule.billing.appeal.citation,
                     deadlines=terms["deadlines"], cancels=cancels)

    class AppealDecided(CaseEvent):
        TOPIC = "abate.case:Case.AppealDecided"
        outcome: str
        principal_after: Decimal
        due_at: dt.datetime | None
        citation: str
        deadlines: list
        cancels: list

        def apply_to(self, case: CaseState) -> None:
            cancel_deadlines(case, self.cancels)
            case.appeal = replace(case.appeal, state=self.outcome, decided_at=self.occurred_at)
            charge = replace(case.charge, appeal_state=self.outcome,
                             principal=self.principal_after)
            if self.due_at is not None:
                charge = replace(charge, due_at=self.due_at, due_basis="appeal decided")
            case.charge = charge
            set_deadlines(case, self.deadlines, self.originator_version)
            case.status = "paid" if charge.balance <= ZERO else "billed"

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
        if eligible is None or eligible.state == "cancelled" or eligible.due_at > stamp.at:
            when = (f"until {shown(eligible.due_at, tz)}" if eligible and
                    eligible.state != "cancelled" else "(no eligibility date: stayed or not due)")
            raise errors.NotAllowedByRuleError(
                f"the charge is not eligible for the tax roll {when}")
        eligible_on = eligible.due_at.astimezone(tz).date()
        first_year = first_roll_year(eligible.due_at, tz, cutoff)
        roll_year = self.charge.roll_year
        if roll_year is not None and tax_year != roll_year:
            raise errors.NotAllowedByRuleError(
                f"the charge goes on the roll \"for the year in which the work is completed\" "
                f"({self.charge.work_completed_on}): {roll_year}, not {tax_year} "
                f"({rule.tax_roll.citation})")
        if roll_year is None and tax_year < first_year:
            raise errors.NotAllowedByRuleError(
                f"the charge became eligible on {eligible_on}, after the {cutoff} cut-off: "
                f"it goes on the {first_year} roll, not {tax_year}")
        if self.charge.certified:
            raise errors.CommandRejectedError(
                f"the charge was already certified for tax year {self.charge.certified.tax_year}")
        if self.balance <= ZERO:
            raise errors.CommandRejectedError("the charge is paid; nothing to certify")
        if self.charge.appeal_state == "pending":
            raise errors.CommandRejectedError("a pending appeal stays the charge")
        self._record(self.ChargeCertified, stamp, tax_year=tax_year,
                     county=self.parcel["county"], amount=self.balance,
                     charge_type=rule.tax_roll.charge_type, statute=rule.tax_roll.statute,
                     rule=rule.key, rule_version=rule.version)

    class ChargeCertified(CaseEvent):
        TOPIC = "abate.case:Case.ChargeCertified"
        tax_year: int
        county: str
        amount: Decimal
        charge_type: str
        statute: str
        rule: str
        rule_version: int

        def apply_to(self, case: CaseState) -> None:
            case.charge = replace(case.charge, certified=Certification(
                tax_year=self.tax_year, county=self.county, amount=self.amount,
                at=self.occurred_at, by=self.actor))
            case.status = "certified"


def check_meeting(meeting: dt.date, filed_on: dt.date) -> None:
    if meeting < filed_on:
        raise errors.BusinessTimeOrderError(
            f"board_meeting_on {meeting} is before the appeal was filed ({filed_on})")
    if meeting > filed_on + MAX_MEETING_AHEAD:
        raise errors.BusinessTimeOrderError(
            f"board_meeting_on {meeting} is more than a year after the appeal was filed "
            f"({filed_on}); give the deciding body's next regular meeting")

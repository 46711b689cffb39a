"""Abatement and billing: the village's abatement and its costs (after the cure period, or
without notice where the rule allows it), the bill, a draw on a bond, payments and the
balance. Each command's decision is followed by its event and how the event applies.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import TYPE_CHECKING

from cases import deadlines as plan
from cases import errors
from cases.deadlines import MONEY_DEADLINES
from cases.domain.clock import cancel_deadlines, set_deadlines
from cases.domain.questions import RepeatEvidence
from cases.domain.recording import CaseEvent, CaseState, Stamp, shown
from cases.domain.values import Abatement, BondDraw, Charge, Cost, Payment, replace
from cases.money import ZERO, money, parse_amount, to_decimal

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from cases.rules.catalog import Rule


class AbatementAndBilling:
    """What the village did, what it costs, and what has been paid."""

    def record_abatement(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, costs: list[dict],
                         without_notice_reason: str | None,
                         repeat_evidence: RepeatEvidence | None,
                         max_amount: Decimal | None = None) -> None:
        relies_on_notice = bool(self.notices) and not without_notice_reason
        self._check(stamp, rule, after=("the notice it depends on, served",
                                        self.notices[-1].served_at) if relies_on_notice else None)
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
            if cure is not None and stamp.at < cure.due_at:
                raise errors.CureDeadlineNotPassedError(
                    f"the cure period under {rule.key} runs until {shown(cure.due_at, tz)} "
                    f"({cure.citation}); village abatement is not yet permitted (at "
                    f"{shown(stamp.at, tz)})")
        incurred_on = stamp.at.astimezone(tz).date()
        charge_due = None
        notice_after = bool(self.hazard and self.hazard.nobody_reachable and not self.notices)
        deadlines = plan.abatement(rule, tz, stamp.at, notice_after=notice_after,
                                   eligibility="tax_roll_eligible" not in self.deadlines)
        if rule.tax_roll is not None and rule.billing is None:
            # No bill: the cost itself is the charge (e.g. Mazomanie § 360-9).
            prior, paid = (self.charge.principal, self.charge.paid) if self.charge else (ZERO, ZERO)
            charge_due = {"principal": prior + total, "paid": paid,
                          "incurred_on": incurred_on, "billed_on": None, "due_at": None,
                          "due_basis": "no bill under this rule", "appeal_state": "none",
                          "tax_roll_eligible": False, "certified": None}
        cancels = [n for n, d in self.deadlines.items() if d.is_open and n not in MONEY_DEADLINES]
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
            if not (self.hazard and self.hazard.nobody_reachable):
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

    class AbatementRecorded(CaseEvent):
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

        def apply_to(self, case: CaseState) -> None:
            case.abatements.append(Abatement(
                at=self.occurred_at, costs=tuple(Cost.from_dict(c) for c in self.costs),
                total=self.total, incurred_on=self.incurred_on,
                without_notice_reason=self.without_notice_reason,
                repeat_evidence=(None if self.repeat_evidence is None
                                 else RepeatEvidence.from_dict(self.repeat_evidence)),
                billed=False, position=self.originator_version))
            case.substantiated = True
            cancel_deadlines(case, self.cancels)
            if self.charge_due is not None:
                case.charge = Charge.from_dict(self.charge_due)
            set_deadlines(case, self.deadlines, self.originator_version)
            case.status = "abated"

    def issue_bill(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *,
                   received_on: dt.date | None) -> None:
        unbilled = [a for a in self.abatements if not a.billed]
        self._check(stamp, rule, after=("the abatement it bills, recorded", unbilled[-1].at)
                    if unbilled else None)
        if rule.billing is None:
            raise errors.NotAllowedByRuleError(
                f"{rule.key} has no bill: the cost goes on the tax roll ({rule.citation})")
        if not unbilled:
            raise errors.NoAbatementToBillError(
                "there is no recorded (and not yet billed) village abatement to bill")
        amount = money(sum((a.total for a in unbilled), ZERO))
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

    class BillIssued(CaseEvent):
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

        def apply_to(self, case: CaseState) -> None:
            case.abatements[:] = [replace(a, billed=True) for a in case.abatements]
            previous = case.charge or Charge(principal=ZERO, paid=ZERO, incurred_on=None,
                                             billed_on=None, due_at=None, due_basis="")
            case.charge = replace(
                previous, principal=previous.principal + self.amount,
                billed_at=self.occurred_at, billed_on=self.billed_on,
                received_on=self.received_on, due_at=self.due_at, due_basis=self.due_basis,
                bill_to=dict(self.bill_to),
                incurred_on=previous.incurred_on or case.abatements[-1].incurred_on,
                appeal_state="none")
            set_deadlines(case, self.deadlines, self.originator_version)
            case.status = "billed"

    def record_bond_draw(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *,
                         amount: Decimal | str, max_amount: Decimal | None = None) -> None:
        """Draw on the bond the rule names for a bill left unpaid (§ 9.24(8)); 0.00 where
        the bond was waived or is exhausted. What the bond does not cover becomes eligible
        for the roll of the year in which the work was completed; a bill it covers in full
        never reaches the roll."""
        billed_at = self.charge.billed_at if self.charge else None
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
        if self.charge.certified:
            raise errors.CommandRejectedError(
                f"the charge was already certified for tax year {self.charge.certified.tax_year}")
        value = to_decimal(amount, "amount")
        value = money(value) if value == 0 else parse_amount(value, "amount", max_amount)
        balance = self.balance
        if balance <= ZERO:
            raise errors.CommandRejectedError("the bill is paid; there is nothing to draw for")
        if value > balance:
            raise errors.InvalidAmountError(
                f"amount: a draw of {value} exceeds the unpaid balance {balance}")
        after = money(balance - value)
        completed = self.abatements[-1].at.astimezone(tz).date()
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

    class BondDrawn(CaseEvent):
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

        def apply_to(self, case: CaseState) -> None:
            charge = case.charge
            case.charge = replace(charge, paid=charge.paid + self.amount,
                                  bond_drawn=(charge.bond_drawn or ZERO) + self.amount,
                                  roll_year=self.tax_year,
                                  work_completed_on=self.work_completed_on)
            case.bond_draws.append(BondDraw(
                at=self.occurred_at, amount=self.amount, balance_after=self.balance_after,
                tax_year=self.tax_year, citation=self.citation, position=self.originator_version))
            cancel_deadlines(case, self.cancels)
            set_deadlines(case, self.deadlines, self.originator_version)
            if self.balance_after == ZERO:
                case.status = "paid"

    def record_payment(self, stamp: Stamp, *, amount: Decimal | str,
                       max_amount: Decimal | None = None) -> None:
        self._check_open(stamp, after=self._what_is_paid())
        value = parse_amount(amount, "amount", max_amount)
        if self.charge is None:
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
                     after_certification=bool(self.charge.certified), cancels=cancels)

    def _what_is_paid(self) -> tuple[str, dt.datetime] | None:
        if self.charge is None:
            return None
        if self.charge.billed_at is not None:
            return ("the bill it pays, issued", self.charge.billed_at)
        if self.abatements:
            return ("the abatement whose cost it pays, recorded", self.abatements[-1].at)
        return None

    class PaymentReceived(CaseEvent):
        TOPIC = "abate.case:Case.PaymentReceived"
        amount: Decimal
        balance_after: Decimal
        after_certification: bool
        cancels: list

        def apply_to(self, case: CaseState) -> None:
            case.payments.append(Payment(
                at=self.occurred_at, amount=self.amount,
                after_certification=self.after_certification, void=False,
                position=self.originator_version, cancelled=tuple(self.cancels),
                status_before=case.status))
            case.charge = replace(case.charge, paid=case.charge.paid + self.amount)
            cancel_deadlines(case, self.cancels)
            if self.balance_after == ZERO:
                case.status = "paid"

    @property
    def balance(self) -> Decimal:
        if self.charge is None:
            return ZERO
        return money(self.charge.balance)

    @property
    def payment_by_version(self) -> dict[int, int]:
        """Where each payment is in ``payments``, by the position of its event."""
        return {p.position: i for i, p in enumerate(self.payments)}


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

"""The bill for the Village's abatement costs: the cost lines, the due date and what it
counts from, the appeal the rule gives (by when, or that its time has ended), and the
tax-roll warning with its statute.

From the case as it stood when the bill document was issued (the ``BillIssued`` event's
amount, party, due time and basis; the abatements' cost lines) and the case's rule version.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from cases import errors
from cases.documents import wording as say
from cases.documents.pdf import INCH, Page
from cases.domain.values import Certification, Charge
from cases.money import dollars
from cases.rules.catalog import NOT_SET, Rule


def issued_bill(case: Any) -> Charge:
    charge = case.charge
    if charge is None or charge.billed_on is None:
        raise errors.CommandRejectedError(
            f"case {case.case_ref} has no bill issued: record issue_bill first (the document "
            "prints that bill: its amount, party and due date)")
    return charge


def build_bill(case: Any, rule: Rule, settings: dict[str, str], issued_at: dt.datetime,
               tz: ZoneInfo) -> bytes:
    charge = issued_bill(case)
    name, address, phone = say.letterhead(settings)
    bill_to = charge.bill_to or case.owner
    page = Page(title=f"Bill, case {case.case_ref}", author=name, dated=issued_at,
                footer=f"{name} · bill · case {case.case_ref}")
    page.letterhead(name, address, phone)
    page.ln(3)
    page.paragraph(say.local_day(issued_at, tz))
    page.window_address(say.envelope_lines(bill_to["name"], bill_to.get("mailing_address"),
                                           case.site_address))

    page.heading("BILL FOR ABATEMENT COSTS", 15)
    page.field("Case:", case.case_ref)
    page.field("Property:", f"{case.site_address} (parcel {case.parcel['number']}, "
                            f"{case.parcel['county']} County)")
    page.field("Ordinance:", say.ordinance(name, rule))
    page.field("Billed under:", rule.billing.citation if rule.billing else rule.citation)
    page.field("Bill date:", say.local_day(charge.billed_on, tz))

    page.heading("Costs")
    rows = []
    for abatement in case.abatements:
        if not abatement.billed:
            continue
        for cost in abatement.costs:
            rows.append((say.local_day(abatement.incurred_on, tz), cost.item,
                         dollars(cost.amount)))
    rows.append(("", "Total billed", dollars(charge.principal)))
    if charge.paid:
        rows.append(("", "Paid so far", dollars(charge.paid)))
    rows.append(("", "Balance due", dollars(case.balance)))
    page.ruled_table(("Date of work", "Item", "Amount"), rows,
                     (1.4 * INCH, 3.9 * INCH, 1.2 * INCH), ("LEFT", "LEFT", "RIGHT"), size=10)

    page.heading("When it is due")
    if charge.due_at is not None:
        page.paragraph(f"Due by: {say.local_time(charge.due_at, tz)}", bold=True, size=12)
        page.paragraph(f"({say.days_in_words(str(charge.due_basis))}; "
                       f"{_due_citation(rule)})")
    else:  # a mailed bill never says "not set": the ordinance gives no due date
        page.paragraph(f"{_due_citation(rule)} sets no due date for this bill.", bold=True)

    tax_roll = rule.tax_roll
    certified = charge.certified
    if tax_roll is not None and certified:
        page.heading("Certified to the tax roll")
        page.paragraph(_certified(case, tax_roll, certified, tz), bold=True)
    elif tax_roll is not None:
        page.heading("If this bill is not paid")
        verb = "will" if tax_roll.mandatory else "may"
        eligible = case.deadlines.get("tax_roll_eligible")
        when = (f" from {say.local_day(eligible.due_at, tz)}"
                if eligible and eligible.state != "cancelled" else "")
        page.paragraph(
            f"The unpaid amount {verb} be entered on the property tax roll{when} as a "
            f"{tax_roll.charge_type.replace('_', ' ')} against parcel "
            f"{case.parcel['number']}{say.under_statute(tax_roll.statute)}"
            f"{'' if tax_roll.entered_by == NOT_SET else ', entered by the ' + tax_roll.entered_by}"
            f" ({tax_roll.citation}).", bold=True)
    if tax_roll is not None and tax_roll.interest_rate != "not set":
        page.paragraph(f"Interest: {tax_roll.interest_rate} a year ({tax_roll.citation}).")
    bond = rule.billing.bond if rule.billing else None
    if bond is not None:
        page.paragraph(f"An unpaid bill may be drawn from the {bond.name} ({bond.citation}).")

    appeal = rule.billing.appeal if rule.billing else None
    if appeal is not None:
        page.heading("Your right to appeal")
        page.paragraph(_appeal_words(case, appeal, issued_at, tz))
    page.ln(4)
    page.paragraph(f"Pay to or ask: {say.contact(name, address, phone)}. Write the case "
                   f"number {case.case_ref} with your payment.", size=9.5)
    return page.output_bytes()


def _appeal_words(case: Any, appeal: Any, issued_at: dt.datetime, tz: ZoneInfo) -> str:
    """The appeal as it stands when this bill is printed: with the day the window closes,
    or that it has closed (a copy printed later must not offer the ordinance's ten days
    again), or the appeal already filed and how it was decided."""
    filed = case.appeal
    if filed is not None:
        said = f"An appeal of this charge was filed on {say.local_day(filed.filed_at, tz)}"
        if filed.state == "pending":
            return (f"{said}; the {appeal.decided_by} decides ({appeal.decision_due}). "
                    f"({appeal.citation})")
        return (f"{said} and decided on {say.local_day(filed.decided_at, tz)}: "
                f"{str(filed.state).replace('_', ' ')}. ({appeal.citation})")
    window = case.deadlines.get("appeal_window")
    if window is not None and window.state != "cancelled" and window.due_at < issued_at:
        return (f"The time to appeal this charge to the {appeal.to} "
                f"({say.period(appeal.window)}) ended {say.local_time(window.due_at, tz)}. "
                f"({appeal.citation})")
    by = (f", that is by {say.local_time(window.due_at, tz)}"
          if window is not None and window.is_open else "")
    return (f"You may appeal this charge to the {appeal.to} within {say.period(appeal.window)}"
            f"{by}; the {appeal.decided_by} decides ({appeal.decision_due}). "
            f"{'An appeal stays the charge until it is decided. ' if appeal.stays_charge else ''}"
            f"({appeal.citation})")


def _certified(case: Any, tax_roll: Any, certified: Certification, tz: ZoneInfo) -> str:
    """What became of the unpaid amount once it was certified: a bill issued afterwards says
    on which roll and when, never that it "will be entered"."""
    return (f"The unpaid amount of {dollars(certified.amount)} was certified on "
            f"{say.local_day(certified.at, tz)} to the {certified.tax_year} property tax "
            f"roll of {certified.county} County as a "
            f"{tax_roll.charge_type.replace('_', ' ')} against parcel {case.parcel['number']}"
            f"{say.under_statute(tax_roll.statute)} ({tax_roll.citation}).")


def _due_citation(rule: Rule) -> str:
    due = rule.billing.due if rule.billing else None
    return due.citation if due is not None and due != "not set" else (
        rule.billing.citation if rule.billing else rule.citation)

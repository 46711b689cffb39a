"""The notice of violation, as served: one letter per notice recorded on a case.

Everything on it comes from the case as it stood when the document was issued (the
notice's own event: method, person served, delivery, the deadlines it set) and from the
rule version the case was opened under (citation, consequences, appeal); nothing is
computed again. A rule that gives no appeal shows no appeal section.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from cases import errors
from cases.documents import wording as say
from cases.documents.pdf import Page
from cases.domain.values import Deadline, Notice
from cases.rules.catalog import Rule


def served_notice(case: Any) -> Notice:
    """The latest notice served on the case (the one a notice document prints)."""
    notices = case.notices
    if not notices:
        raise errors.CommandRejectedError(
            f"case {case.case_ref} has no notice served: record serve_notice first (the "
            "document states how and when it was served, and the deadline it set)")
    return notices[-1]


def _recipient(case: Any, notice: Notice) -> list[str]:
    """The person served, by name only, at their mailing address (the officer's note of
    whom they served, "Gary Ruegsegger (owner)", names the party; it is not an address)."""
    party = say.addressee(notice.served_on, [case.owner, case.responsible])
    if party is not None:
        return say.envelope_lines(party["name"], party.get("mailing_address"),
                                  case.site_address)
    mailing = (case.responsible or case.owner or {}).get("mailing_address")
    return say.envelope_lines(say.served_name(notice.served_on), mailing, case.site_address)


def build_notice(case: Any, rule: Rule, settings: dict[str, str], issued_at: dt.datetime,
                 tz: ZoneInfo) -> bytes:
    notice = served_notice(case)
    name, address, phone = say.letterhead(settings)
    page = Page(title=f"Notice of violation, case {case.case_ref}", author=name,
                dated=issued_at, footer=f"{name} · notice of violation · case {case.case_ref}")
    page.letterhead(name, address, phone)
    page.ln(3)
    page.paragraph(say.local_day(issued_at, tz))
    page.window_address(_recipient(case, notice))

    page.heading("NOTICE OF VIOLATION" + (" (HAZARD)" if notice.hazard else ""), 15)
    page.field("Case:", case.case_ref)
    page.field("Property:", f"{case.site_address} (parcel {case.parcel['number']}, "
                            f"{case.parcel['county']} County)")
    page.field("Ordinance:", say.ordinance(name, rule))
    page.field("Violation found:", case.description)
    page.field("Observed:", say.local_time(case.observed_at, tz))

    page.heading("What you must do")
    cure = _deadline_set_by(case, notice.position, "cure")
    page.paragraph(f"Correct the condition described above, as {rule.citation} requires.")
    if cure is not None:
        page.paragraph(f"Deadline: {say.local_time(cure.due_at, tz)}", bold=True, size=12)
        page.paragraph(f"That is {_cure_period(rule, notice, cure, tz)} ({cure.citation}).")
    else:
        page.paragraph("This notice starts no period to correct the condition: the Village "
                       "has already abated it (the notice informs you of that).")

    page.heading("What happens if it is not done")
    for line in _consequences(case, rule, cure):
        page.paragraph(f"•  {line}")
    if notice.repeat_consequence:
        page.paragraph(f"•  This is a {notice.repeat_consequence}.")

    appeal = rule.billing.appeal if rule.billing else None
    if appeal is not None:
        page.heading("Your right to appeal")
        page.paragraph(
            f"A charge for work the Village does may be appealed to the {appeal.to} within "
            f"{say.period(appeal.window)}; it is decided by the {appeal.decided_by} "
            f"({appeal.decision_due}). "
            f"{'An appeal stays the charge until it is decided. ' if appeal.stays_charge else ''}"
            f"({appeal.citation})")

    with page.offset_rendering() as trial:  # the closing block stays together: never a
        _how_served(trial, rule, notice, name, address, phone, tz)  # line alone overleaf
    if trial.page_break_triggered:
        page.add_page()
    _how_served(page, rule, notice, name, address, phone, tz)
    return page.output_bytes()


def _how_served(page: Page, rule: Rule, notice: Notice, name: str, address: str,
                phone: str, tz: ZoneInfo) -> None:
    page.heading("How this notice was served")
    page.field("Served on:", notice.served_on)
    page.field("Served:", f"{say.METHODS.get(notice.method, notice.method)}, "
                          f"{say.local_time(notice.served_at, tz)}")
    page.field("Delivered:", say.local_time(notice.delivered_at, tz))
    for attempt in notice.after_attempts or ():
        page.field("After attempt:", f"{say.METHODS.get(attempt.method, attempt.method)} "
                                     f"by {attempt.attempted_by} on "
                                     f"{say.local_time(attempt.at, tz)}: {attempt.result}")
    if notice.fallback_citation:
        page.field("Allowed by:", notice.fallback_citation)
    if rule.service is not None:
        page.field("Service rule:", rule.service.citation)
    page.ln(2)
    page.paragraph(f"Questions: {say.contact(name, address, phone)}.", size=9.5)


def _cure_period(rule: Rule, notice: Notice, cure: Deadline, tz: ZoneInfo) -> str:
    """The rule's period, or where the rule leaves it to the notice, the days this one gave."""
    clock = rule.hazard.cure if notice.hazard and rule.hazard is not None else rule.cure
    if clock is not None and clock.period == "stated_in_notice":
        days = (cure.due_at.astimezone(tz).date()
                - notice.delivered_at.astimezone(tz).date()).days
        return f"{days} calendar days after this notice was delivered, the time this notice gives"
    return say.period(clock)


def _deadline_set_by(case: Any, position: int | None, name: str) -> Deadline | None:
    deadline = case.deadlines.get(name)
    if deadline is None or (deadline.set_by is not None and deadline.set_by != position):
        return None
    return deadline


def _consequences(case: Any, rule: Rule, cure: Deadline | None) -> list[str]:
    found = []
    if cure is not None:
        found.append(f"When the deadline passes: {' '.join(cure.consequence.split())} "
                     f"({cure.citation}).")
    abatement = rule.abatement
    if abatement is not None and abatement.by_village:
        found.append(f"The work may be done by {say.doer(abatement.performed_by)} and its "
                     f"cost charged to you ({abatement.citation}).")
    if rule.tax_roll is not None:
        verb = "will" if rule.tax_roll.mandatory else "may"
        found.append(f"A cost left unpaid {verb} be entered on the tax roll against the "
                     f"property as a {rule.tax_roll.charge_type.replace('_', ' ')}"
                     f"{say.under_statute(rule.tax_roll.statute)} ({rule.tax_roll.citation}).")
    warning = say.forfeiture(rule)
    if warning is not None:
        found.append(warning)
    for step in rule.escalations:
        if not step.needs_person:
            found.append(f"{str(step.after)} after {say.STARTS.get(step.starts, step.starts)}: "
                         f"{' '.join(step.consequence.split())} ({step.citation}).")
    return found or [f"{rule.citation} states no further consequence."]

"""The deadlines each kind of fact sets, computed from its rule version and its times.

One pure function per fact that sets deadlines. The aggregate calls them when the fact
is recorded, and again when a correction changes a time the deadlines count from, so a
corrected deadline is computed exactly as the original was (same rule version, same
code). Each deadline carries its rule, rule version and citation.

The rules catalog's classes are named for type checking only (``Period`` is built where a
notice states the cure time): the domain imports this module, and reading a case computes
no deadline, so it does not build the catalog (docs/benchmarks.md).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from cases import errors
from cases.rules.clock import deadline_after, end_of_local_day

if TYPE_CHECKING:
    from cases.rules.catalog import Clock, Rule

# Deadlines about money: a compliance or an abatement does not cancel them.
MONEY_DEADLINES = ("bill_due", "tax_roll_eligible", "appeal_window")

# The name of every deadline the functions below set (a rule's escalation steps add their
# own names, ``deadline_names``): what a worklist may be filtered by.
DEADLINE_NAMES = ("owner_duty", "cure", "notice_after_abatement", "bill_due", "appeal_window",
                  "tax_roll_eligible", "appeal_hearing", "appeal_decision")


def deadline_names(rules: Any) -> tuple[str, ...]:
    """Every deadline name the ``rules`` can set: the fixed ones and their escalation steps."""
    steps = sorted({step.name for rule in rules for step in rule.escalations})
    return DEADLINE_NAMES + tuple(s for s in steps if s not in DEADLINE_NAMES)


def deadline(name: str, due_at: dt.datetime, consequence: str, rule: Rule, citation: str,
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


def clock_deadline(clock: Clock, start: dt.datetime, tz: ZoneInfo,
                   stated_days: int | None = None) -> dt.datetime:
    period = clock.period
    if period == "stated_in_notice":
        from cases.rules.catalog import Period

        if not stated_days or stated_days < 1:
            raise errors.CommandRejectedError(
                f"this rule's cure time is stated in the notice ({clock.citation}): give cure_days")
        period = Period(amount=stated_days, unit="calendar_days")
    return deadline_after(start, period, tz)


def escalations(rule: Rule, anchors: dict[str, dt.datetime], tz: ZoneInfo) -> list[dict]:
    found = []
    for step in rule.escalations:
        if step.starts in anchors:
            due = deadline_after(anchors[step.starts], step.after, tz)
            found.append(deadline(step.name, due, step.consequence, rule, step.citation,
                                  needs_person=step.needs_person))
    return found


def opening(rule: Rule, tz: ZoneInfo, observed: dt.datetime,
            snow_ended: dt.datetime | None) -> list[dict]:
    """The owner's own time and the steps that count from the observation or the snowfall."""
    anchors = {"observed": observed, "snow_ended": snow_ended or observed}
    found = []
    if rule.owner_duty is not None and rule.owner_duty.starts in anchors:
        due = clock_deadline(rule.owner_duty, anchors[rule.owner_duty.starts], tz)
        found.append(deadline("owner_duty", due, "owner's time to comply has run", rule,
                              rule.owner_duty.citation))
    return found + escalations(rule, anchors, tz)


def notice_clock(rule: Rule, hazard: bool) -> Clock | None:
    return rule.hazard.cure if (hazard and rule.hazard) else rule.cure


def notice(rule: Rule, tz: ZoneInfo, delivered: dt.datetime, *, hazard: bool,
           starts_cure: bool, cure_days: int | None) -> list[dict]:
    """The cure period from delivery (the hazard period after a declared hazard) and the
    steps that count from delivery. A notice that only informs starts no cure period."""
    clock = notice_clock(rule, hazard)
    found = []
    if clock is not None and starts_cure:
        due = clock_deadline(clock, delivered, tz, stated_days=cure_days)
        found.append(deadline("cure", due, rule.cure_expiry_consequence or "cure period has run",
                              rule, clock.citation))
    return found + escalations(rule, {"notice_delivered": delivered}, tz)


def abatement(rule: Rule, tz: ZoneInfo, at: dt.datetime, *, notice_after: bool,
              eligibility: bool) -> list[dict]:
    """The notice a person must mail after a hazard abatement, and the tax-roll
    eligibility of rules that count it from the cost (or list the cost at once). Where a
    bond is drawn on first (§ 9.24(8)), the draw decides what becomes eligible."""
    found = []
    if notice_after and rule.hazard and rule.hazard.notice_after_abatement:
        found.append(deadline("notice_after_abatement", at, rule.hazard.notice_after_abatement,
                              rule, rule.hazard.citation, needs_person=True))
    tax_roll = rule.tax_roll
    bond_first = rule.billing is not None and rule.billing.bond is not None
    if eligibility and tax_roll is not None and not bond_first and tax_roll.trigger in (
            "unpaid_after_incurred", "next_annual_roll", "year_work_completed"):
        due = (deadline_after(at, tax_roll.period, tz)
               if tax_roll.trigger == "unpaid_after_incurred" else at)
        found.append(deadline("tax_roll_eligible", due, "unpaid charge eligible for the tax roll",
                              rule, tax_roll.citation))
    return found


def bill(rule: Rule, tz: ZoneInfo, at: dt.datetime,
         received_on: dt.date | None) -> dict[str, Any]:
    """A bill's date, due time and basis, and the deadlines it sets."""
    billing = rule.billing
    billed_on = at.astimezone(tz).date()
    due_at = None
    due_basis = "not set: the ordinance gives no payment period"
    found = []
    if billing.due != "not set":
        if billing.due.starts == "bill_received":
            start_day = received_on or billed_on
            start = dt.datetime.combine(start_day, dt.time(12), tzinfo=tz)
            due_basis = (f"{billing.due.period} from receipt on {start_day}"
                         + ("" if received_on else " (receipt not recorded: bill date used)"))
        else:
            start = at
            due_basis = f"{billing.due.period} from billing on {billed_on}"
        due_at = clock_deadline(billing.due, start, tz)
        found.append(deadline("bill_due", due_at, "bill delinquent", rule, billing.due.citation))
    if billing.appeal is not None:
        window_end = clock_deadline(billing.appeal.window, at, tz)
        found.append(deadline("appeal_window", window_end, "appeal window closed", rule,
                              billing.appeal.citation))
    tax_roll = rule.tax_roll
    if tax_roll is not None and tax_roll.trigger == "unpaid_after_billing":
        found.append(deadline("tax_roll_eligible", deadline_after(at, tax_roll.period, tz),
                              "unpaid charge eligible for the tax roll", rule, tax_roll.citation))
    elif tax_roll is not None and tax_roll.trigger == "lien_when_unpaid":
        # No period stated: the unpaid charge is a lien from its due date, or from billing.
        found.append(deadline("tax_roll_eligible", due_at or at,
                              "unpaid charge is a lien for the tax bill", rule, tax_roll.citation))
    return {"billed_on": billed_on, "due_at": due_at, "due_basis": due_basis, "deadlines": found}


def appeal(rule: Rule, tz: ZoneInfo, at: dt.datetime,
           board_meeting_on: dt.date | None) -> list[dict]:
    """The decision's deadline from the deciding body's meeting when it is known, else the
    hearing a person must put on that body's agenda."""
    terms = rule.billing.appeal
    if board_meeting_on is not None and terms.decision_after_meeting is not None:
        meeting = end_of_local_day(board_meeting_on, tz)
        due = deadline_after(meeting, terms.decision_after_meeting, tz)
        return [deadline("appeal_decision", due,
                         f"appeal decision overdue ({terms.decided_by}: {terms.decision_due})",
                         rule, terms.citation)]
    return [deadline("appeal_hearing", at,
                     f"put the appeal on the agenda of the {terms.decided_by}'s next regular "
                     "meeting", rule, terms.citation, needs_person=True)]


def decision(rule: Rule, tz: ZoneInfo, at: dt.datetime, *, still_owed: bool) -> dict[str, Any]:
    """After a denied or reduced appeal with something still owed: due again, and eligible
    for the tax roll, the rule's period after the decision."""
    if not still_owed:
        return {"due_at": None, "deadlines": []}
    terms = rule.billing.appeal
    due_at = deadline_after(at, terms.due_after_denial, tz)
    found = [deadline("bill_due", due_at, "bill delinquent", rule, terms.citation)]
    if rule.tax_roll is not None:
        found.append(deadline("tax_roll_eligible", due_at, "unpaid charge eligible for the tax roll",
                              rule, terms.citation))
    return {"due_at": due_at, "deadlines": found}

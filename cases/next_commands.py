"""Which commands may come next on a case: the ones its state and its rule allow.

The case page offers a form for each of these (and only these) that the user's role may
record; the domain still decides every command itself (a form is an offer, not a
permission). A pure function of the case state and its rule version, like
``cases.actions``: a notice only where the rule has a notice step, an abatement only
where the village abates, a bill only for an unbilled abatement, a bond draw only where
the rule names a bond, a certification only for an unpaid, uncontested charge whose rule
names the statute it is certified under (the worklist's tax-roll action says why when the
rule does not). Given ``now``, an appeal only while its window is open and a certification
only once the charge is eligible, as the domain decides them; ``withheld`` says why not.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from cases.rules.catalog import Rule
from cases.statute import case_charge_not_certifiable, statute_given

# The order a page shows them in: roughly the order of a case's life.
ORDER = ("record_inspection", "serve_notice", "record_service_attempt", "declare_hazard",
         "record_compliance", "record_abatement", "issue_bill", "record_payment",
         "record_bond_draw", "file_appeal", "decide_appeal", "certify_charge",
         "issue_citation", "refer_to_attorney", "record_disposition", "close_case",
         "reopen_case")


def _appeal_window_open(case: Any, now: dt.datetime | None) -> bool:
    window = case.deadlines.get("appeal_window")
    return window is not None and window.is_open and (now is None or now <= window.due_at)


def _eligible(case: Any, now: dt.datetime | None) -> bool:
    eligible = case.deadlines.get("tax_roll_eligible")
    return eligible is not None and eligible.state != "cancelled" and (
        now is None or eligible.due_at <= now)


def next_commands(case: Any, rule: Rule, now: dt.datetime | None = None) -> list[str]:
    """The commands the case's state and rule allow now, in ``ORDER`` (without ``now``, the
    appeal window and the tax-roll eligibility date are not looked at)."""
    if case.closed:
        return ["reopen_case"]
    allowed = {"record_inspection", "close_case", "issue_citation"}
    if case.open_referral() is None:  # one referral at a time (a disposition ends it)
        allowed.add("refer_to_attorney")
    charge = case.charge
    billed = charge is not None
    certified = billed and charge.certified is not None
    appeal = case.appeal
    pending_appeal = appeal is not None and appeal.state == "pending"
    unpaid = billed and case.balance > 0
    if rule.service is not None and not billed:
        allowed |= {"serve_notice", "record_service_attempt"}
    if rule.hazard is not None and case.hazard is None and not billed:
        allowed.add("declare_hazard")
    if not billed and case.status in ("open", "reopened", "notice_served",
                                      "cure_period_passed"):
        allowed.add("record_compliance")
    if rule.abatement is not None and rule.abatement.by_village and not certified:
        allowed.add("record_abatement")
    if rule.billing is not None and any(not a.billed for a in case.abatements):
        allowed.add("issue_bill")
    if unpaid:
        allowed.add("record_payment")
        if rule.billing is not None and rule.billing.bond is not None and not certified:
            allowed.add("record_bond_draw")
        if appeal is None and not certified and rule.billing is not None \
                and rule.billing.appeal is not None and _appeal_window_open(case, now):
            allowed.add("file_appeal")
        if statute_given(rule) and not certified and not pending_appeal \
                and _eligible(case, now):
            allowed.add("certify_charge")
    if pending_appeal:
        allowed.add("decide_appeal")
    if case.citations or case.referrals:
        allowed.add("record_disposition")
    return [name for name in ORDER if name in allowed]


def withheld(case: Any, rule: Rule, now: dt.datetime | None = None) -> dict[str, Any]:
    """Commands the case's state would allow but its rule version or the time does not,
    each with why, so a page can say why no form is offered: certifying a charge whose rule
    leaves the statute ``not set`` (the domain's refusal text), or one not yet eligible (the
    date it becomes eligible); an appeal whose window has closed (when it closed)."""
    charge = case.charge
    if case.closed or charge is None or charge.certified or case.balance <= 0:
        return {}
    found: dict[str, Any] = {}
    pending_appeal = case.appeal is not None and case.appeal.state == "pending"
    if rule.tax_roll is not None and not statute_given(rule):
        found["certify_charge"] = case_charge_not_certifiable(case.case_ref, rule)
    elif rule.tax_roll is not None and not pending_appeal and now is not None \
            and not _eligible(case, now):
        eligible = case.deadlines.get("tax_roll_eligible")
        if eligible is not None and eligible.state != "cancelled":
            found["certify_charge"] = {"eligible_at": eligible.due_at}
    window = case.deadlines.get("appeal_window")
    if (case.appeal is None and rule.billing is not None and rule.billing.appeal is not None
            and window is not None and not _appeal_window_open(case, now)
            and window.state != "cancelled"):
        found["file_appeal"] = {"closed_at": window.due_at,
                                "citation": rule.billing.appeal.citation}
    return found

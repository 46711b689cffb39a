"""What a person must do next on a case, who, and the rule that says so.

A pure function of the case's state and its rule version (the worklist view calls it
after every change), so an action appears when the state calls for it and disappears
when the fact that performs it is recorded: a notice served, an inspection or a
compliance after the cure period, an abatement, a bill, an appeal decided, a
certification (or the charge paid). Who acts is the office the rule names
(``acted_by``, the abating office, the tax-roll officer, the appeal body); where the
ordinance names none, ``by`` is ``not set`` and says so. Amounts read as people read them
($1,234.56, ``cases.money.dollars``); the tax-roll action names the roll's year and county
and is due by that roll's cut-off. A charge whose statute is not set is no one's to enter:
the village attorney must name the statute first (``name_statute``, which has no due time:
``cases.action_kinds.UNDATED``; its ``due_at`` is when the charge became eligible).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from cases.money import dollars, money
from cases.rules.catalog import NOT_SET, Rule
from cases.statute import statute_given
from cases.tax_year import cutoff_of, roll_year

# Who verifies compliance is not an ordinance value: it is the inspector's part of the
# case (DOMAIN.md, "the people"), so the worklist says that it is Abate's reading.
INSPECTOR = "inspector"
INSPECTOR_BASIS = "not named by the ordinance: the inspector records inspections (Abate's reading)"
# Naming the statute a charge is certified under is a new version of the rule, which the
# village attorney gives (cases/statute.py, docs/rules.md): not an ordinance duty.
ATTORNEY = "village attorney"
ATTORNEY_BASIS = ("not an ordinance duty: the rule leaves the statute not set, and the village "
                  "attorney names it in a new version of the rule (Abate's reading)")


class Place(Protocol):
    """What the actions need of the case's municipality (``catalog.Municipality``)."""

    time_zone: str
    certification_cutoff: str  # MM-DD: which year's roll an eligible charge goes on


def pending_actions(case: Any, rule: Rule, place: Place) -> list[dict[str, Any]]:
    """Every action the case's state calls for, earliest first."""
    if case.closed:
        return []
    found = [*_notices(case, rule), *_after_cure(case, rule), *_hazard_abatement(case, rule),
             *_bill(case, rule), *_appeal(case, rule), *_tax_roll(case, rule, place)]
    return sorted(found, key=lambda a: (a["due_at"], a["action"]))


def _action(kind: str, due_at: dt.datetime, what: str, rule: Rule, citation: str,
            by: tuple[str, str]) -> dict[str, Any]:
    return {"action": kind, "due_at": due_at, "what": what, "by": by[0], "by_citation": by[1],
            "rule": rule.key, "rule_version": rule.version, "citation": citation}


def _who(rule: Rule, kind: str, by: str | None = None, citation: str | None = None) -> tuple[str, str]:
    """(office, where the rule names it): ``acted_by`` first, else the rule's own field."""
    actor = rule.acted_by.get(kind)
    if actor is not None:
        return actor.by, actor.citation
    if by and by != NOT_SET:
        return by, citation or rule.citation
    return NOT_SET, f"no officer named in {citation or rule.citation}"


def _after(entry: Any, position: int | None) -> bool:
    return (entry.position or 0) > (position or 0)


def _complied_since(case: Any, position: int | None) -> bool:
    if not case.compliances:  # none, or a state from before compliances were remembered
        return case.status == "complied"
    return (case.compliances[-1].position or 0) > (position or 0)


def _notices(case: Any, rule: Rule) -> list[dict]:
    found = []
    after_abatement = case.deadlines.get("notice_after_abatement")
    if after_abatement is not None and after_abatement.is_open:
        performed_by = rule.abatement.performed_by if rule.abatement else None
        found.append(_action(
            "notice_after_abatement", after_abatement.due_at,
            f"send {after_abatement.consequence}", rule, after_abatement.citation,
            _who(rule, "notice_after_abatement", performed_by, after_abatement.citation)))
    due = _notice_due(case, rule)
    if due is not None:
        at, what, citation = due
        found.append(_action("serve_notice", at, what, rule, citation,
                             _who(rule, "serve_notice", None, citation)))
    return found


def _notice_due(case: Any, rule: Rule) -> tuple[dt.datetime, str, str] | None:
    """When the written notice that starts the owner's cure period is due, if it is."""
    if rule.service is None or (rule.cure is None and rule.hazard is None):
        return None
    if case.notices or case.abatements or _complied_since(case, 0):
        return None
    hazard = case.hazard
    if hazard is not None and rule.hazard is not None:
        fallback = rule.hazard.when_nobody_reachable
        if hazard.nobody_reachable and fallback == "immediate_abatement":
            return None  # the village abates first, then mails the notice
        how = (" (nobody there: attach it to the front door)"
               if hazard.nobody_reachable and fallback == "door_tape_notice" else "")
        return (hazard.at, f"serve the hazard notice ({rule.hazard.cure.period} to remove)"
                f"{how}", rule.hazard.citation)
    step = case.deadlines.get("notice_due")
    if step is not None:  # a notice step of its own (e.g. § 9.09(2)(a)1, § 9.15)
        if not step.is_open:
            return None
        return step.due_at, f"serve the notice: {step.consequence}", step.citation
    owner = case.deadlines.get("owner_duty")
    if owner is not None:  # the owner's own time first (e.g. § 360-10A)
        if owner.state != "passed":
            return None
        return owner.due_at, "serve the written notice: the owner's own time has run", \
            rule.service.citation
    return case.observed_at, "serve the written notice that starts the cure period", \
        rule.service.citation


def _after_cure(case: Any, rule: Rule) -> list[dict]:
    """After the cure period ran: verify compliance, and abate where the village does."""
    cure = case.deadlines.get("cure")
    if cure is None or cure.state != "passed" or _complied_since(case, cure.set_by):
        return []
    if any(_after(a, cure.set_by) for a in case.abatements):
        return []
    found = []
    if not any(i.at >= cure.due_at for i in case.inspections):
        found.append(_action("reinspect", cure.due_at,
                             "re-inspect: verify compliance now that the cure period has run",
                             rule, cure.citation, (INSPECTOR, INSPECTOR_BASIS)))
    abatement = rule.abatement
    if abatement is not None and abatement.by_village:
        found.append(_action(
            "abate", cure.due_at,
            rule.cure_expiry_consequence or "village abatement permitted", rule,
            abatement.citation, _who(rule, "abate", abatement.performed_by, abatement.citation)))
    return found


def _hazard_abatement(case: Any, rule: Rule) -> list[dict]:
    """A hazard with nobody to receive the notice, where the rule says: abate at once."""
    hazard = case.hazard
    if (hazard is None or not hazard.nobody_reachable or rule.hazard is None
            or rule.hazard.when_nobody_reachable != "immediate_abatement"
            or rule.abatement is None or not rule.abatement.by_village):
        return []
    position = hazard.position
    if any(_after(a, position) for a in case.abatements) or _complied_since(case, position) \
            or any(_after(n, position) for n in case.notices):
        return []
    return [_action("abate", hazard.at,
                    "abate immediately: a hazard and nobody available to receive the notice",
                    rule, rule.hazard.citation,
                    _who(rule, "abate", rule.abatement.performed_by, rule.hazard.citation))]


def _bill(case: Any, rule: Rule) -> list[dict]:
    unbilled = [a for a in case.abatements if not a.billed]
    if rule.billing is None or not unbilled:
        return []
    total = money(sum((a.total for a in unbilled), Decimal("0.00")))
    return [_action("issue_bill", unbilled[-1].at,
                    f"bill the abatement cost ({dollars(total)}) to the {rule.billing.bill_to.replace('_', ' ')}",
                    rule, rule.billing.citation,
                    _who(rule, "issue_bill", None, rule.billing.citation))]


def _appeal(case: Any, rule: Rule) -> list[dict]:
    appeal = case.appeal
    terms = rule.billing.appeal if rule.billing else None
    if appeal is None or appeal.state != "pending" or terms is None:
        return []
    due, what = appeal.filed_at, f"decide the appeal ({appeal.decision_due})"
    for name in ("appeal_decision", "appeal_hearing"):
        step = case.deadlines.get(name)
        if step is not None and step.is_open:
            due = step.due_at
            if name == "appeal_hearing":
                what = f"{step.consequence}, then decide it ({terms.decision_due})"
            break
    return [_action("decide_appeal", due, what, rule, terms.citation,
                    _who(rule, "decide_appeal", terms.decided_by, terms.citation))]


def _tax_roll(case: Any, rule: Rule, place: Place) -> list[dict]:
    """Enter an eligible unpaid charge on its roll, due by that roll's cut-off (before it,
    nothing is late); a charge whose statute is not set cannot be certified at all, so
    the action is the attorney's, to name the statute (``name_statute``, no due time)."""
    tax_roll, charge = rule.tax_roll, case.charge
    eligible = case.deadlines.get("tax_roll_eligible")
    if tax_roll is None or charge is None or eligible is None:
        return []
    balance = charge.balance
    if (eligible.state != "passed" or charge.certified or balance <= 0
            or charge.appeal_state == "pending"):
        return []
    tz = ZoneInfo(place.time_zone)
    year = roll_year(charge.roll_year, eligible.due_at, tz, place.certification_cutoff)
    roll = f"the {year} tax roll ({case.parcel['county']} County)"
    charge_type = tax_roll.charge_type.replace('_', ' ')
    if not statute_given(rule):
        return [_action("name_statute", eligible.due_at,
                        f"name the statute under which the unpaid {dollars(balance)} can go on "
                        f"{roll} as a {charge_type}: the ordinance names none, so it cannot "
                        "be certified until then",
                        rule, tax_roll.citation, (ATTORNEY, ATTORNEY_BASIS))]
    verb = "enter" if tax_roll.mandatory else "may enter"
    due = max(eligible.due_at, cutoff_of(year, tz, place.certification_cutoff))
    return [_action("enter_tax_roll", due, f"{verb} the unpaid {dollars(balance)} on {roll} as a "
                                           f"{charge_type}, {tax_roll.statute}",
                    rule, tax_roll.citation,
                    _who(rule, "enter_tax_roll", tax_roll.entered_by, tax_roll.citation))]

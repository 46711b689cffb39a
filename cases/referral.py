"""The attorney's referral packet: one case, everything a prosecution needs, from its events.

The parties, the parcel and site; the ordinance the case was opened under (municipality,
section, rule version and where its words are); every fact in the order it happened;
each deadline and whether it was met; prior violations in the rule's look-back window;
the citations with their separate offenses; and the forfeiture range, or "not set" where
the ordinance texts give no amount (never an invented one). Nothing is recomputed: the
facts are the stored events, replayed (``cases.history``), and the deadlines are the ones
the events set, with the rule, version and citation each carried.

Times are instants here; the caller shows them in the village's zone (``localized``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from dateutil.relativedelta import relativedelta

from cases.business_time import effective_times, kind
from cases.domain import Case, RepeatOffenses
from cases.history import case_at, describe_event, plain
from cases.localtime import local_date
from cases.repeat_scan import party_of
from cases.rules.catalog import NOT_SET, Catalog, Rule
from cases.store import CaseStore

# Facts of an event the packet leaves out: what it decided for the machinery (the
# deadlines it set or cancelled are in ``deadlines``; the charge in ``money``).
_MACHINERY = ("deadlines", "cancels", "charge_due")

# Facts that end a deadline without doing what it asked: it is "cancelled", not "met".
_CANCELLING = {"Closed": "case closed", "AppealFiled": "stayed by the appeal",
               "Corrected": "voided by a correction"}


def referral_packet(store: CaseStore, catalog: Catalog, municipality: str, case_ref: str, *,
                    prior: RepeatOffenses, now: dt.datetime) -> dict[str, Any]:
    """The packet of one case, JSON-ready (CaseNotFoundError when there is none)."""
    case, events = case_at(store, municipality, case_ref)
    place = catalog.municipality(municipality)
    rule = catalog.rule_version(case.rule, case.rule_version)
    return packet_from(case, events, place.name, rule,
                       prior_violations(store, case, rule, place.time_zone, prior), now)


def packet_from(case: Case, events: list[Any], municipality_name: str, rule: Rule,
                prior: dict[str, Any], now: dt.datetime) -> dict[str, Any]:
    """The packet from a case and its events, with its prior violations already found (the
    packet document records them, so it can be built again exactly)."""
    times = effective_times(events)
    return plain({
        "packet": "attorney referral",
        "generated_at": now,
        "municipality": case.municipality,
        "case_ref": case.case_ref,
        "status": case.status,
        "observed_at": case.observed_at,
        "description": case.description,
        "source": case.source,
        "parties": {"owner": case.owner, "responsible": case.responsible,
                    "bill_to": case.charge.bill_to if case.charge else None},
        "parcel": case.parcel,
        "site_address": case.site_address,
        "ordinance": ordinance_cited(municipality_name, rule),
        "chronology": chronology(events, times),
        "deadlines": deadline_outcomes(events, times, now),
        "money": money(case),
        "prior_violations": prior,
        "citations": case.citations,
        "referrals": case.referrals,
        "dispositions": case.dispositions,
        "forfeiture": forfeiture(rule),
        "last_hash": case.last_hash,
    })


def ordinance_cited(municipality_name: str, rule: Rule) -> dict[str, Any]:
    return {
        "municipality": rule.municipality,
        "municipality_name": municipality_name,
        "rule": rule.key,
        "section": rule.id,
        "rule_version": rule.version,
        "effective_from": rule.effective_from,
        "title": rule.title,
        "citation": rule.citation,
        "text_reference": {
            "citation": rule.citation,
            "catalog": f"cases/rules/{rule.municipality}.yaml",
            "rules_page": "docs/rules.md",
            "command": f"abate rules show {rule.key}",
        },
        "enforcement": rule.referral or "not stated",
    }


def chronology(events: list[Any], times: dict[int, dt.datetime | None]) -> list[dict[str, Any]]:
    """Every fact, in the order it happened (``occurred_at``: its business time as any
    correction left it, then position); a fact a correction restated names that correction."""
    corrected_by: dict[int, list[int]] = {}
    for event in events:
        if kind(event) == "Corrected":
            corrected_by.setdefault(event.supersedes, []).append(event.originator_version)
    entries = []
    for event in events:
        described = describe_event(event, times.get(event.originator_version))
        facts = {k: v for k, v in described["facts"].items() if k not in _MACHINERY}
        entry = {"position": described["position"], "fact": described["type"],
                 "occurred_at": times.get(event.originator_version) or event.occurred_at,
                 "recorded_at": event.timestamp, "actor": event.actor, **facts}
        if event.originator_version in corrected_by:
            entry["corrected_by"] = corrected_by[event.originator_version]
        entries.append(entry)
    entries.sort(key=lambda e: (e["occurred_at"], e["position"]))
    return entries


def deadline_outcomes(events: list[Any], times: dict[int, dt.datetime | None],
                      now: dt.datetime) -> list[dict[str, Any]]:
    """Each deadline the case ever had, and how it ended: ``met`` (a fact ended it by its
    due time: compliance, abatement, payment, a notice...), ``met_late`` (a fact did it
    after its due time, before the clock recorded it passed; ``late_by_minutes``),
    ``missed`` (it ran first),
    ``cancelled`` (closed, stayed by an appeal, voided), ``replaced`` (set again by a later
    fact) or ``open`` (``overdue`` when its time is past but the clock has not recorded it
    yet). Found by replaying the events and watching each deadline's state."""
    found: dict[tuple[str, int | None], dict[str, Any]] = {}
    case: Case | None = None
    for event in events:
        before = ({name: (d.set_by, d.state) for name, d in case.deadlines.items()}
                  if case is not None else {})
        if case is None:
            if kind(event) != "Opened":
                continue
            case = event.mutate(None)
        else:
            if kind(event) == "DeadlinePassed" and event.name not in case.deadlines:
                continue
            event.apply(case)
            case.version = event.originator_version
        at = times.get(event.originator_version) or event.occurred_at
        ended_by = {"fact": kind(event), "position": event.originator_version, "ended_at": at}
        for name, deadline in case.deadlines.items():
            key = (name, deadline.set_by)
            entry = found.setdefault(key, {"name": name, "set_by": key[1], "outcome": "open"})
            entry.update(due_at=deadline.due_at, consequence=deadline.consequence,
                         rule=deadline.rule, rule_version=deadline.rule_version,
                         citation=deadline.citation)
            was = before.get(name)
            if was is not None and was[0] != key[1]:  # set again: the earlier one is replaced
                _end(found.get((name, was[0])), "replaced", ended_by)
            elif was is not None and was[1] == deadline.state:
                continue
            if deadline.state == "passed":
                _end(entry, "missed", ended_by)
                entry["missed_at"] = deadline.due_at
            elif deadline.state == "cancelled" and kind(event) in _CANCELLING:
                _end(entry, "cancelled", ended_by, _CANCELLING[kind(event)])
            elif deadline.state == "cancelled":
                # done, by its due time or after it (a deadline that needs a person is never
                # passed by the clock: a notice served late is late, not cancelled)
                _end(entry, "met" if at <= deadline.due_at else "met_late", ended_by)
            elif deadline.is_open and entry["outcome"] != "open":
                entry.update(outcome="open", reopened_by=ended_by)  # a voided payment
    for entry in found.values():
        if entry["outcome"] == "open":
            entry["overdue"] = entry["due_at"] <= now
    return sorted(found.values(), key=lambda d: (d["due_at"], d["name"]))


def _end(entry: dict[str, Any] | None, outcome: str, ended_by: dict[str, Any],
         why: str | None = None) -> None:
    if entry is None or entry["outcome"] not in ("open",):
        return  # a missed deadline stays missed whatever ends it later
    entry["outcome"] = outcome
    entry["ended_by"] = {**ended_by, **({"why": why} if why else {})}
    if outcome in ("met", "met_late"):
        entry["met_at"] = ended_by["ended_at"]
    if outcome == "met_late":
        late = ended_by["ended_at"] - entry["due_at"]
        entry["late_by_minutes"] = -(-late // dt.timedelta(minutes=1))  # rounded up


def outcome_words(deadline: dict[str, Any]) -> str:
    """``met late (4 h 35 min)``, ``cancelled (case closed)``, ``open (overdue)``, ``missed``:
    a deadline's outcome in words, the same in the packet and on the case page."""
    if deadline["outcome"] == "met_late":
        hours, minutes = divmod(deadline["late_by_minutes"], 60)
        return f"met late ({hours} h {minutes} min)" if hours else f"met late ({minutes} min)"
    why = (deadline.get("ended_by") or {}).get("why")
    return deadline["outcome"] + (f" ({why})" if why else "") \
        + (" (overdue)" if deadline.get("overdue") else "")


def money(case: Case) -> dict[str, Any]:
    charge = case.charge
    return {"principal": charge.principal if charge else None,
            "paid": charge.paid if charge else None,
            "balance": case.balance, "due_at": charge.due_at if charge else None,
            "due_basis": charge.due_basis if charge else None,
            "appeal_state": charge.appeal_state if charge else None,
            "certified": charge.certified if charge else None,
            "abatement_costs": [{"abated_at": a.at, "incurred_on": a.incurred_on,
                                 "costs": a.costs, "total": a.total}
                                for a in case.abatements],
            "payments": case.payments}


def prior_violations(store: CaseStore, case: Case, rule: Rule, zone: str,
                     prior: RepeatOffenses) -> dict[str, Any]:
    """Substantiated violations of the same family in the rule's look-back window before
    this one (the repeat-offense reading the notices use), each with its case reference."""
    if rule.repeat is None:
        return {"window_months": NOT_SET, "counts": None, "citation": None,
                "why": f"{rule.key} v{rule.version} states no repeat-offense window",
                "count": 0, "cases": []}
    violation_date = local_date(case.observed_at, zone)
    evidence = prior.prior_violations(
        municipality=case.municipality, family=case.rule_family, parcel=case.parcel,
        party=party_of(case), violation_date=violation_date,
        window_months=rule.repeat.window_months, exclude_case_ref=case.case_ref,
        counts=rule.repeat.counts)
    cases = []
    for ref in evidence.case_refs:
        earlier, _ = case_at(store, case.municipality, ref)
        cases.append({"case_ref": ref, "observed_at": earlier.observed_at,
                      "rule": earlier.rule, "rule_version": earlier.rule_version,
                      "status": earlier.status, "parcel": earlier.parcel,
                      "site_address": earlier.site_address,
                      "citations": [c.number for c in earlier.citations]})
    return plain({"window_months": rule.repeat.window_months,
            "window_start_on": violation_date - relativedelta(months=rule.repeat.window_months),
            "window_end_on": violation_date, "counts": rule.repeat.counts,
            "consequence": " ".join(rule.repeat.consequence.split()),
            "citation": rule.repeat.citation, "count": evidence.count, "cases": cases})


def forfeiture(rule: Rule) -> dict[str, Any]:
    """The rule's forfeiture range as the catalog gives it; "not set" where the texts do not;
    and the section of the village's code that provides the penalty, where the texts name it."""
    penalty = rule.penalty
    if penalty is None:
        return {"min": NOT_SET, "max": NOT_SET,
                "range": f"no forfeiture stated in {rule.citation}", "source": rule.citation,
                "separate_offense": None, "provided_by": None}
    return {"min": str(penalty.forfeiture_min), "max": str(penalty.forfeiture_max),
            "range": penalty.describe(rule.municipality), "source": penalty.source,
            "separate_offense": penalty.separate_offense, "provided_by": penalty.provided_by}



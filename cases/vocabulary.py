"""The plain-English name of every event type, case status, deadline and rule Abate records.

The names kept in the store (``NoticeServed``, ``cure_period_passed``, ``bill_due``) are
for programs and auditors; a person reads these labels. One table each, here, so the web
pages, the documents and the command line's tables say the same thing the same way; no
imports, so any layer may use it. A name without a label (a deadline a future rule adds)
reads as its words, never as nothing.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

EVENTS = {
    "Opened": "Case opened",
    "InspectionRecorded": "Inspection recorded",
    "HazardDeclared": "Hazard declared",
    "NoticeServed": "Notice served",
    "ServiceAttempted": "Service attempted",
    "ComplianceVerified": "Compliance verified",
    "DeadlinePassed": "Deadline passed",
    "AbatementRecorded": "Abatement recorded",
    "BillIssued": "Bill issued",
    "BondDrawn": "Bond drawn on",
    "PaymentReceived": "Payment received",
    "AppealFiled": "Appeal filed",
    "AppealDecided": "Appeal decided",
    "ChargeCertified": "Charge certified to the tax roll",
    "CitationIssued": "Citation issued",
    "ReferredToAttorney": "Referred to the village attorney",
    "DispositionRecorded": "Court disposition recorded",
    "Closed": "Case closed",
    "Reopened": "Case reopened",
    "DocumentIssued": "Document issued",
    "Corrected": "Correction",
}

STATUSES = {
    "open": "Open",
    "notice_served": "Notice served",
    "complied": "Complied",
    "cure_period_passed": "Cure period passed",
    "abated": "Abated by the village",
    "billed": "Billed",
    "paid": "Paid",
    "appealed": "Under appeal",
    "certified": "Certified to the tax roll",
    "cited": "Citation issued",
    "referred": "Referred to the village attorney",
    "closed": "Closed",
    "reopened": "Reopened",
}

DEADLINES = {
    "owner_duty": "Owner's time to comply",
    "cure": "Cure period",
    "notice_after_abatement": "Notice due after the abatement",
    "bill_due": "Bill due",
    "appeal_window": "Time to appeal",
    "tax_roll_eligible": "Eligible for the tax roll",
    "appeal_hearing": "Appeal to put on an agenda",
    "appeal_decision": "Appeal decision due",
    "notice_due": "Notice due",
    "forfeiture_period_started": "Forfeiture period begins",
}

# How a continuing violation divides into separate offenses (a rule's ``offenses.unit``).
OFFENSE_UNITS = {"calendar_day": "calendar day", "24_hours": "24-hour period"}

# Whom a rule's repeat-offense window counts (``repeat.counts``), after "counting".
REPEAT_COUNTS = {
    "parcel": "violations on the same parcel",
    "responsible_party": "violations by the same responsible party",
    "parcel_or_party": "violations on the same parcel or by the same party",
    "person_notified_or_convicted": "the same person notified or convicted before",
}


def _said(table: dict[str, str], name: object) -> str:
    text = str(name or "")
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text).replace("_", " ")
    return table.get(text) or words.capitalize()


def event_label(name: object) -> str:
    """``NoticeServed`` -> "Notice served"."""
    return _said(EVENTS, name)


def status_label(name: object) -> str:
    """``cure_period_passed`` -> "Cure period passed"."""
    return _said(STATUSES, name)


# How the domain records that a count of separate offenses began at a deadline
# (``Case`` in cases/domain/): "deadline cure (Belleville Code § ...)".
_DEADLINE_START = re.compile(r"^deadline ([a-z_]+) \((.*)\)$")


def deadline_start(began_by: str) -> tuple[str, str] | None:
    """(deadline name, citation) of an offense count that began at a deadline, else None."""
    found = _DEADLINE_START.match(began_by)
    return (found[1], found[2]) if found else None


def deadline_label(name: object) -> str:
    """``tax_roll_eligible`` -> "Eligible for the tax roll"."""
    return _said(DEADLINES, name)


def offense_unit_label(name: object) -> str:
    """``24_hours`` -> "24-hour period"."""
    return OFFENSE_UNITS.get(str(name), str(name).replace("_", " "))


def repeat_counts_label(name: object) -> str:
    """``parcel_or_party`` -> "violations on the same parcel or by the same party"."""
    return REPEAT_COUNTS.get(str(name), str(name).replace("_", " "))


def rule_label(rule: Any) -> str:
    """A rule as people look it up: its section and title ("§ 9.13 Snow and ice removal")."""
    return f"§ {rule.id} {rule.title}"


def section_order(section: str) -> tuple[tuple[int, Any], ...]:
    """A section number as people read it, to sort by: "9.07" before "10.11" before "13",
    "360-8" before "360-10". After a dot the digits are a decimal part (§ 9.07 before § 9.1,
    § 11.013 before § 11.02); other numbers are whole; words come after numbers."""
    order: list[tuple[int, Any]] = []
    for match in re.finditer(r"(\.?)(\d+)|[A-Za-z]+", section):
        if match.group(2) is None:
            order.append((1, match.group(0).lower()))
        elif match.group(1) and order:
            order.append((0, Decimal(f"0.{match.group(2)}")))
        else:
            order.append((0, Decimal(match.group(2))))
    return tuple(order)


def rule_labels(rules: Any) -> dict[tuple[str, int], str]:
    """Each rule version's label by (key, version): a page names a case's rule by it, the
    version beside it, rather than by the key ``belleville:9.09``."""
    return {(rule.key, rule.version): rule_label(rule) for rule in rules}

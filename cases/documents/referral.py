"""The attorney referral packet as a document: the referral endpoint's packet
(``cases.referral.packet_from``) printed for the file and the court.

The packet's prior violations are found when the document is issued and recorded with it
(other cases change later), and its "now" is the document's date, so the same recorded
inputs always print the same packet.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from cases.documents import wording as say
from cases.documents.pdf import INCH, Page
from cases.referral import packet_from
from cases.rules.catalog import Rule

# Facts of the chronology that are shown in its own columns (or say nothing to a court).
_SHOWN = {"position", "fact", "occurred_at", "recorded_at", "actor", "corrected_by",
          "prev_hash", "hash", "rule", "rule_version", "sha256", "inputs"}


def build_referral(case: Any, events: list[Any], rule: Rule, settings: dict[str, str],
                   prior: dict[str, Any], issued_at: dt.datetime, tz: ZoneInfo) -> bytes:
    packet = packet_from(case, events, settings["name"], rule, prior, issued_at)
    name, address, phone = say.letterhead(settings)
    page = Page(title=f"Attorney referral packet, case {case.case_ref}", author=name,
                dated=issued_at, footer=f"{name} · referral packet · case {case.case_ref}")
    page.letterhead(name, address, phone)
    page.ln(3)
    page.heading(f"ATTORNEY REFERRAL PACKET: case {case.case_ref}", 15)
    page.field("Prepared:", say.local_time(issued_at, tz))
    page.field("Status:", packet["status"])
    page.field("Ordinance:", say.ordinance(name, rule))
    page.field("Enforcement:", packet["ordinance"]["enforcement"])
    page.field("Property:", f"{packet['site_address']} (parcel {packet['parcel']['number']}, "
                            f"{packet['parcel']['county']} County)")
    page.field("Violation:", packet["description"])
    page.field("Observed:", f"{say.local_time(packet['observed_at'], tz)} "
                            f"({packet['source']})")

    page.heading("Parties")
    for role, party in packet["parties"].items():
        if party:
            page.field(f"{role.replace('_', ' ').capitalize()}:",
                       f"{party['name']}, {party.get('mailing_address') or 'no mailing address'}")

    page.heading("Chronology (village time)")
    rows = [(str(e["position"]), say.local_time(e["occurred_at"], tz), e["fact"], e["actor"],
             _facts(e)) for e in packet["chronology"]]
    page.ruled_table(("#", "When", "Fact", "By", "Details"), rows,
               (0.35 * INCH, 1.6 * INCH, 1.2 * INCH, 0.9 * INCH, 2.7 * INCH), size=8)

    page.heading("Deadlines")
    rows = [(d["name"], say.local_time(d["due_at"], tz),
             _outcome(d), d["citation"])
            for d in packet["deadlines"]]
    page.ruled_table(("Deadline", "Due", "Outcome", "Rule"), rows,
               (1.4 * INCH, 1.9 * INCH, 1.1 * INCH, 2.35 * INCH), size=8.5)

    page.heading("Money")
    owed = packet["money"]
    page.field("Charged:", say.money(owed["principal"]))
    page.field("Paid:", say.money(owed["paid"]))
    page.field("Balance:", say.money(owed["balance"]))
    if owed.get("certified"):
        page.field("Certified:", f"tax year {owed['certified']['tax_year']}, "
                                 f"{say.money(owed['certified']['amount'])}")

    page.heading("Prior violations")
    found = packet["prior_violations"]
    if found.get("citation") is None:
        page.paragraph(found.get("why") or "no repeat-offense window")
    else:
        page.paragraph(f"{found['count']} in the {found['window_months']} months before this "
                       f"violation ({found['window_start_on']} to {found['window_end_on']}; "
                       f"{found['citation']}).")
        for earlier in found["cases"]:
            page.paragraph(f"•  {earlier['case_ref']}: {earlier['rule']} v"
                           f"{earlier['rule_version']}, observed "
                           f"{say.local_day(earlier['observed_at'], tz)}, {earlier['status']}")

    page.heading("Citations and forfeiture")
    for citation in packet["citations"]:
        count = f", {citation['offense_count']} separate offenses" \
            if citation.get("offense_count") is not None else ""
        page.paragraph(f"•  Citation {citation['number']}, {say.local_day(citation['at'], tz)}"
                       f"{count}: {citation['forfeiture']}")
    page.field("Forfeiture:", packet["forfeiture"]["range"])
    if packet["forfeiture"].get("provided_by"):
        page.field("Provided by:", packet["forfeiture"]["provided_by"])
    for outcome in packet["dispositions"]:
        page.paragraph(f"•  Disposition {say.local_day(outcome['at'], tz)}: "
                       f"{outcome['outcome']}")
    page.ln(3)
    page.paragraph(f"Case record digest (the last event's hash): {packet['last_hash']}",
                   size=8.5)
    return page.output_bytes()


def _facts(entry: dict[str, Any]) -> str:
    parts = []
    for key, value in entry.items():
        if key in _SHOWN or value in (None, "", [], {}):
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k}: {v}" for k, v in value.items() if v not in (None, ""))
        elif isinstance(value, list):
            value = "; ".join(str(v) for v in value)
        parts.append(f"{key.replace('_', ' ')}: {value}")
    text = "; ".join(parts)
    return text if len(text) <= 400 else text[:397] + "..."


def _outcome(deadline: dict[str, Any]) -> str:
    """``met late (4 h 35 min)``, ``open (overdue)``, ``missed``: the outcome in words."""
    if deadline["outcome"] == "met_late":
        hours, minutes = divmod(deadline["late_by_minutes"], 60)
        return f"met late ({hours} h {minutes} min)" if hours else f"met late ({minutes} min)"
    return deadline["outcome"] + (" (overdue)" if deadline.get("overdue") else "")

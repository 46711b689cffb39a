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

from cases import vocabulary
from cases.documents import facts
from cases.documents import wording as say
from cases.documents.pdf import INCH, Page
from cases.money import dollars
from cases.referral import outcome_words, packet_from
from cases.rules.catalog import NOT_SET, Rule


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
    page.field("Status:", vocabulary.status_label(packet["status"]))
    page.field("Ordinance:", say.ordinance(name, rule))
    page.field("Enforcement:", packet["ordinance"]["enforcement"])
    page.field("Property:", f"{packet['site_address']} (parcel {packet['parcel']['number']}, "
                            f"{packet['parcel']['county']} County)")
    page.field("Violation:", packet["description"])
    page.field("Observed:", f"{say.local_time(packet['observed_at'], tz)} "
                            f"({facts.words(packet['source'], tz)})")

    page.heading("Parties")
    for role, party in packet["parties"].items():
        if party:
            page.field(f"{role.replace('_', ' ').capitalize()}:",
                       f"{party['name']}, {party.get('mailing_address') or 'no mailing address'}")

    page.heading("Chronology (village time)")
    for entry in packet["chronology"]:
        lines = facts.details(entry, tz)
        if len(lines) <= 12:  # a fact that fits a page starts on the page it ends on
            with page.offset_rendering() as trial:
                _fact(trial, entry, lines, tz)
            if trial.page_break_triggered:
                page.add_page()
        _fact(page, entry, lines, tz)

    page.heading("Deadlines")
    rows = [(vocabulary.deadline_label(d["name"]), say.local_time(d["due_at"], tz),
             outcome_words(d), d["citation"])
            for d in packet["deadlines"]]
    if rows:
        page.ruled_table(("Deadline", "Due", "Outcome", "Rule"), rows,
                         (1.4 * INCH, 1.9 * INCH, 1.1 * INCH, 2.35 * INCH), size=8.5)
    else:
        page.paragraph("No deadlines.")

    page.heading("Money")
    owed = packet["money"]
    charged = owed["principal"] not in (None, "")
    page.field("Charged:", dollars(owed["principal"]) if charged else "none")
    page.field("Paid:", dollars(owed["paid"] or "0.00"))
    page.field("Balance:", dollars(owed["balance"]))
    if owed.get("certified"):
        page.field("Certified:", f"tax year {owed['certified']['tax_year']}, "
                                 f"{dollars(owed['certified']['amount'])}")

    page.heading("Prior violations")
    found = packet["prior_violations"]
    if found.get("citation") is None:
        page.paragraph(f"{rule.citation} ({rule.title}) states no repeat-offense window: no "
                       "earlier violation is counted.")
    else:
        page.paragraph(f"{found['count']} in the {found['window_months']} months before this "
                       f"violation ({say.local_day(found['window_start_on'], tz)} to "
                       f"{say.local_day(found['window_end_on'], tz)}, counting "
                       f"{vocabulary.repeat_counts_label(found['counts'])}; "
                       f"{found['citation']}).")
        for earlier in found["cases"]:
            page.paragraph(f"•  {earlier['case_ref']}: {_rule_named(earlier['rule'], rule)}, "
                           f"observed {say.local_day(earlier['observed_at'], tz)}, "
                           f"{vocabulary.status_label(earlier['status']).lower()}")

    page.heading("Citations and forfeiture")
    for citation in packet["citations"]:
        count = f", {citation['offense_count']} separate offenses" \
            if citation.get("offense_count") is not None else ""
        page.paragraph(f"•  Citation {citation['number']}, "
                       f"{say.local_day(citation['at'], tz)}{count}")
    page.field("Forfeiture:", _forfeiture(rule))
    for outcome in packet["dispositions"]:
        page.paragraph(f"•  Disposition {say.local_day(outcome['at'], tz)}: "
                       f"{outcome['outcome']}")
    page.ln(3)
    page.paragraph(f"Case record digest (the last event's hash): {packet['last_hash']}",
                   size=8.5)
    return page.output_bytes()


def _fact(page: Any, entry: dict[str, Any], lines: list[str], tz: ZoneInfo) -> None:
    """One fact of the chronology: when, what and by whom, then each detail in words."""
    page.paragraph(f"{entry['position']}.  {say.local_time(entry['occurred_at'], tz)}: "
                   f"{vocabulary.event_label(entry['fact'])}, by {entry['actor']}",
                   bold=True, size=9, after=0.3)
    for line in lines:
        page.paragraph(line, size=8.5, indent=6, after=0.3)
    page.ln(1.2)


def _rule_named(key: str, rule: Rule) -> str:
    """An earlier case's rule by its section (and title, where it is this case's rule), not
    by the catalog's key ``belleville:9.13``."""
    if key == rule.key:
        return vocabulary.rule_label(rule)
    return f"§ {key.partition(':')[2] or key}"


def _forfeiture(rule: Rule) -> str:
    """The forfeiture the ordinance provides, once: its amounts where the texts give them,
    else the section that provides the penalty (never "not set", never an invented amount)."""
    penalty = rule.penalty
    if penalty is None:
        return f"none stated in {rule.citation}"
    per_offense = ", per offense" if penalty.offenses is not None else ""
    if NOT_SET not in (penalty.forfeiture_min, penalty.forfeiture_max):
        return penalty.describe(rule.municipality) + per_offense
    if penalty.provided_by is not None:
        return (f"a forfeiture under {penalty.provided_by}{per_offense}; the ordinance texts "
                "state no amount")
    return f"the ordinance texts state no amount ({penalty.source})"

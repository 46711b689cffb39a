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
from cases.documents import wording as say
from cases.documents.pdf import FONT, INCH, Page
from cases.localtime import instant_of
from cases.referral import outcome_words, packet_from
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
    page.field("Status:", vocabulary.status_label(packet["status"]))
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
    page.set_font(FONT, "", 8)
    by_width = 1.0 * INCH - 2 * page.c_margin
    rows = [(str(e["position"]), say.local_time(e["occurred_at"], tz),
             vocabulary.event_label(e["fact"]), _wrapped_at_dots(page, e["actor"], by_width),
             _facts(e, tz)) for e in packet["chronology"]]
    page.ruled_table(("#", "When", "Fact", "By", "Details"), rows,
               (0.35 * INCH, 1.6 * INCH, 1.2 * INCH, 1.0 * INCH, 2.6 * INCH), size=8)

    page.heading("Deadlines")
    rows = [(vocabulary.deadline_label(d["name"]), say.local_time(d["due_at"], tz),
             outcome_words(d), d["citation"])
            for d in packet["deadlines"]]
    page.ruled_table(("Deadline", "Due", "Outcome", "Rule"), rows,
               (1.4 * INCH, 1.9 * INCH, 1.1 * INCH, 2.35 * INCH), size=8.5)

    page.heading("Money")
    owed = packet["money"]
    charged = owed["principal"] not in (None, "")
    page.field("Charged:", say.money(owed["principal"]) if charged else "none")
    page.field("Paid:", say.money(owed["paid"] or "0.00"))
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


def _wrapped_at_dots(page: Page, name: str, width: float) -> str:
    """A user name ("demo.belleville.inspector") broken onto lines at its dots where it is
    wider than its column, never mid-word (the table would split it anywhere)."""
    lines = [""]
    for part in (p + "." for p in str(name).split(".")):
        if lines[-1] and page.get_string_width(lines[-1] + part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)[:-1]


def _said(key: str, value: Any, tz: ZoneInfo) -> str:
    """One value as a person reads it: times in the village's zone, yes/no, labels for the
    names the store keeps (a deadline, an event, a status)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if instant_of(value) is not None:
        return say.local_time(value, tz)
    if key == "name":  # a fact's own name field is the deadline it is about
        return vocabulary.deadline_label(value)
    if key == "method":
        return say.METHODS.get(value, str(value))
    if key == "status":
        return vocabulary.status_label(value)
    if key == "document":  # the kind of document issued: notice_of_violation
        return str(value).replace("_", " ")
    return str(value)


def _facts(entry: dict[str, Any], tz: ZoneInfo) -> str:
    parts = []
    for key, value in entry.items():
        if key in _SHOWN or value in (None, "", [], {}):
            continue
        if key == "parcel" and isinstance(value, dict) and {"county", "number"} <= set(value):
            value = f"{value['county']} County {value['number']}"
        elif isinstance(value, dict):
            value = ", ".join(f"{_label(k)}: {_said('', v, tz)}" for k, v in value.items()
                              if v not in (None, ""))
        elif isinstance(value, list):
            value = "; ".join(_said(key, v, tz) for v in value)
        else:
            value = _said(key, value, tz)
        parts.append(f"{_label(key)}: {value}")
    text = "; ".join(parts)
    return text if len(text) <= 400 else text[:397] + "..."


def _label(key: str) -> str:
    """A field's label: ``mailing_address`` -> "mailing address", ``due_at`` -> "due"."""
    return key.removesuffix("_at").replace("_", " ")

"""Which documents a case can be issued, what each is built from, and building one again
from what its ``DocumentIssued`` event recorded.

A document is built from the case as it stood at one version (``built_from_version``), the
rule version the case was opened under, and the inputs recorded beside the digest: the
village's letterhead settings as they were, and for a referral packet the prior violations
found then. Rebuilding replays the case to that version and builds again with the recorded
inputs and the issue time; the same generator gives the same bytes, which the recorded
SHA-256 confirms (an auditor's check that the letter mailed is the letter on record).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from cases import errors
from cases.business_time import kind
from cases.documents.bill import build_bill, issued_bill
from cases.documents.notice import build_notice, served_notice
from cases.documents.pdf import GENERATOR, sha256
from cases.documents.referral import build_referral
from cases.history import replay
from cases.rules.catalog import NOT_SET, Municipality, Rule

# The journal command that issues each kind of document.
COMMANDS = {
    "issue_notice_document": "notice_of_violation",
    "issue_bill_document": "bill",
    "issue_referral_packet": "referral_packet",
}
KINDS = tuple(COMMANDS.values())
FILE_NAMES = {"notice_of_violation": "notice", "bill": "bill",
              "referral_packet": "referral-packet"}


def letterhead(place: Municipality) -> dict[str, str]:
    """The village settings a letterhead prints, recorded with each document ("not set"
    until the village sets them; the letter then leaves that line out)."""
    return {"name": place.name, "address": place.address or NOT_SET,
            "phone": place.phone or NOT_SET}


def unset_letterhead(place: Municipality) -> list[str]:
    """The letterhead settings the village has not set yet (a letter leaves them out; the
    case page says so beside its issue buttons, so the clerk knows before mailing)."""
    return [key for key, value in letterhead(place).items() if value == NOT_SET]


def check_ready(document: str, case: Any) -> None:
    """Refuse a document the case has nothing for yet (a notice before one is served)."""
    if document == "notice_of_violation":
        served_notice(case)
    elif document == "bill":
        issued_bill(case)


def build(document: str, case: Any, events: list[Any], rule: Rule, inputs: dict[str, Any],
          issued_at: dt.datetime, tz: ZoneInfo) -> bytes:
    """The document's bytes: pure, the same for the same arguments."""
    settings = inputs["settings"]
    if document == "notice_of_violation":
        return build_notice(case, rule, settings, issued_at, tz)
    if document == "bill":
        return build_bill(case, rule, settings, issued_at, tz)
    if document == "referral_packet":
        return build_referral(case, events, rule, settings, inputs["prior_violations"],
                              issued_at, tz)
    raise errors.InvalidCommandError(f"unknown document {document!r} (known: {', '.join(KINDS)})")


@dataclass(frozen=True)
class Rebuilt:
    """A recorded document built again, and whether it is the one recorded."""

    content: bytes
    sha256: str
    recorded_sha256: str
    generator: str
    recorded_generator: str
    document: str
    position: int
    case_ref: str

    @property
    def matches(self) -> bool:
        return self.sha256 == self.recorded_sha256

    def file_name(self) -> str:
        return f"{self.case_ref.replace('/', '-')}-{FILE_NAMES[self.document]}-{self.position}.pdf"


def issued_documents(events: list[Any]) -> list[dict[str, Any]]:
    """Every document recorded on a case, in the order issued."""
    return [describe(e) for e in events if kind(e) == "DocumentIssued"]


def describe(event: Any) -> dict[str, Any]:
    return {"position": event.originator_version, "document": event.document,
            "issued_at": event.occurred_at, "recorded_at": event.timestamp,
            "actor": event.actor, "sha256": event.sha256, "size": event.size,
            "built_from_version": event.built_from_version, "generator": event.generator}


def rebuild(events: list[Any], position: int, rule_for: Any, zone: str) -> Rebuilt:
    """Build the document recorded at ``position`` again from its recorded inputs.
    ``rule_for(rule_key, version)`` looks up the rule version (the catalog's)."""
    found = next((e for e in events if e.originator_version == position), None)
    if found is None or kind(found) != "DocumentIssued":
        documents = [str(e.originator_version) for e in events if kind(e) == "DocumentIssued"]
        raise errors.CaseNotFoundError(
            f"no document at position {position} of this case (documents at: "
            f"{', '.join(documents) or 'none'})")
    upto = [e for e in events if e.originator_version <= found.built_from_version]
    case = replay(upto)
    rule = rule_for(case.rule, case.rule_version)
    content = build(found.document, case, upto, rule, found.inputs, found.occurred_at,
                    ZoneInfo(zone))
    return Rebuilt(content=content, sha256=sha256(content), recorded_sha256=found.sha256,
                   generator=GENERATOR, recorded_generator=found.generator,
                   document=found.document, position=position, case_ref=case.case_ref)

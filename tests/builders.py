"""Small builders for journal lines, so tests read like the case they describe."""

from __future__ import annotations

import json
from typing import Any

DANE_PARCEL = {"county": "Dane", "number": "0509-123-4567-0"}
GREEN_PARCEL = {"county": "Green", "number": "23002 0100.0000"}
OWNER = {"name": "Ann Owner", "mailing_address": "12 Vine St, Belleville WI 53508"}


class CaseLines:
    """Journal lines for one case: ``lines.cmd("serve_notice", at, method=...)``."""

    def __init__(self, municipality: str, case_ref: str, actor: str = "inspector"):
        self.municipality = municipality
        self.case_ref = case_ref
        self.actor = actor

    def cmd(self, command: str, at: str, **fields: Any) -> dict[str, Any]:
        return {"command": command, "municipality": self.municipality,
                "case_ref": self.case_ref, "at": at, "actor": self.actor, **fields}

    def open(self, rule: str, at: str, parcel: dict | None = None, **fields: Any) -> dict[str, Any]:
        return self.cmd("open_case", at, rule=rule, parcel=parcel or DANE_PARCEL,
                        site_address=fields.pop("site_address", "12 Vine St"),
                        owner=fields.pop("owner", OWNER),
                        description=fields.pop("description", "violation observed"), **fields)


def clock(municipality: str, at: str) -> dict[str, Any]:
    return {"command": "advance_clock", "municipality": municipality, "at": at, "actor": "clock"}


def as_lines(*commands: dict[str, Any]) -> list[str]:
    return [json.dumps(c) for c in commands]


def hedge_through_bill(case: CaseLines, parcel: dict | None = None) -> list[dict[str, Any]]:
    """A Belleville § 9.07 case (a hedge trimmed by the village, billed): a special tax whose
    statute the ordinance does not name ("as provided by the state statutes"), so the rule
    leaves it not set and the charge cannot be certified."""
    return [
        case.open("belleville:9.07", "2026-05-01T10:00:00-05:00", parcel=parcel),
        case.cmd("serve_notice", "2026-05-01T11:00:00-05:00", method="personal", served_on="O"),
        case.cmd("record_abatement", "2026-05-04T10:00:00-05:00",
                 costs=[{"item": "removal", "amount": "75.00"}]),
        case.cmd("issue_bill", "2026-05-04T15:00:00-05:00", received_on="2026-05-05"),
    ]


def dumping_through_bill(case: CaseLines, cost_items: list[dict] | None = None) -> list[dict[str, Any]]:
    """A Belleville § 9.13 case: notice, 72 h cure passed by the clock, abatement, bill."""
    return [
        case.open("belleville:9.13", "2026-03-02T09:00:00-06:00"),
        case.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal", served_on="Ann"),
        clock("belleville", "2026-03-06T00:00:00-06:00"),
        case.cmd("record_abatement", "2026-03-06T09:00:00-06:00",
                 costs=cost_items or [{"item": "crew", "amount": "150.00"}]),
        case.cmd("issue_bill", "2026-03-09T09:00:00-05:00"),
    ]


def grading_through_bill(case: CaseLines) -> list[dict[str, Any]]:
    """A Belleville § 9.24 grading case billed to the permittee (Builder Co), not the lot's
    owner; the ordinance gives its bill no due date."""
    return [
        case.open("belleville:9.24", "2026-06-01T10:00:00-05:00", owner={"name": "Lot Buyer"},
                  responsible={"name": "Builder Co", "mailing_address": "1 Yard Rd"}),
        case.cmd("serve_notice", "2026-06-01T11:00:00-05:00", method="certified_mail",
                 served_on="Builder Co"),
        case.cmd("record_abatement", "2026-07-10T10:00:00-05:00",
                 costs=[{"item": "regrading", "amount": "900.00"}]),
        case.cmd("issue_bill", "2026-07-11T10:00:00-05:00"),
    ]

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

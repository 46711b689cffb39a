"""The tax-roll files handed to the county: a plain CSV of charges and its summary.

The CSV holds one row per charge and nothing else (no comment or totals line), so any CSV
reader and the county's software take it as it is. What a person checks the list against
(how many charges, the sums per charge type and statute, who certified it and when, the
CSV's SHA-256) is in the summary, a JSON file written beside the CSV (``X.csv`` ->
``X.summary.json``). The municipality column carries the village's name as the county knows
it (``Village of Belleville``, from the rules catalog), not Abate's code for it.

A certification's seal (id, position, digest) is added by passing ``seal``: the CSV then
ends with the columns ``seal_id, seal_position, seal_digest`` and the summary with ``seal``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from cases.localtime import localized
from cases.rules.catalog import Municipality
from projections.csv_cells import SafeCsvWriter
from projections.tax_roll import CSV_COLUMNS

SUMMARY_FORMAT = "abate-tax-roll-summary/1"
SEAL_COLUMNS = ["seal_id", "seal_position", "seal_digest"]
# Written by Abate itself: plain numbers are left as numbers (see projections.csv_cells).
NUMERIC_COLUMNS = {"tax_year", "principal", "interest", "total", "rule_version", "seal_position"}
_MONEY = ("principal", "interest", "total")


def summary_path(csv_path: str) -> str:
    """``dane-2026.csv`` -> ``dane-2026.summary.json`` (any other name gets the suffix added)."""
    stem = csv_path[:-4] if csv_path.lower().endswith(".csv") else csv_path
    return f"{stem}.summary.json"


def csv_columns(seal: Mapping[str, Any] | None = None) -> list[str]:
    return CSV_COLUMNS + (SEAL_COLUMNS if seal else [])


def csv_text(charges: list[dict[str, Any]], place: Municipality,
             seal: Mapping[str, Any] | None = None) -> str:
    """The CSV: a header and one row per charge, every cell safe to open in a spreadsheet."""
    out = io.StringIO()
    writer = SafeCsvWriter(out, csv_columns(seal), numeric=NUMERIC_COLUMNS)
    writer.writeheader()
    extra = {"seal_id": seal["id"], "seal_position": seal["position"],
             "seal_digest": seal["digest"]} if seal else {}
    for charge in charges:
        writer.writerow({**charge, "municipality": place.name, **extra})
    return out.getvalue()


def encoded(text: str, excel: bool) -> bytes:
    """UTF-8; with ``excel`` a byte-order mark first, so Excel on Windows reads ``§`` right."""
    return text.encode("utf-8-sig" if excel else "utf-8")


def _sums(charges: list[dict[str, Any]]) -> dict[str, Any]:
    sums: dict[str, Any] = {"charges": len(charges)}
    for field in _MONEY:
        values = [Decimal(c[field]) for c in charges if c[field] != ""]
        # Interest stays null while no rule of the list sets a rate (the ordinances state none).
        sums[field] = str(sum(values, Decimal("0.00"))) if values or field != "interest" else None
    return sums


def summary(charges: list[dict[str, Any]], place: Municipality, *, tax_year: int,
            county: str | None, as_of: dt.date, known_at: dt.datetime | None,
            certified: bool, produced_at: dt.datetime, csv_bytes: bytes | None = None,
            csv_file: str | None = None, excel: bool = False, newly_certified: int | None = None,
            seal: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What the list adds up to, per charge type and statute and per county, and who
    certified it when; times in the municipality's zone (``*_at`` with ``*_at_utc``)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    counties: dict[str, list[dict[str, Any]]] = {}
    for charge in charges:
        groups.setdefault((charge["charge_type"], charge["statute"]), []).append(charge)
        counties.setdefault(charge["county"], []).append(charge)
    done = [c for c in charges if c.get("certified")]
    times = sorted(c["certified_at"] for c in done if c.get("certified_at"))
    data: dict[str, Any] = {
        "format": SUMMARY_FORMAT,
        "list": "certified" if certified else "export",
        "municipality": place.municipality,
        "municipality_name": place.name,
        "county": county,
        "tax_year": tax_year,
        "as_of": as_of.isoformat(),
        "known_at": known_at,
        "produced_at": produced_at,
        **_sums(charges),
        "by_charge_type": [{"charge_type": t, "statute": s, **_sums(rows)}
                           for (t, s), rows in sorted(groups.items())],
        "by_county": [{"county": name, **_sums(rows)} for name, rows in sorted(counties.items())],
        "certification": {
            "certified_charges": len(done),
            "newly_certified": newly_certified,
            "certified_by": sorted({c["certified_by"] for c in done if c.get("certified_by")}),
            "first_certified_at": times[0] if times else None,
            "last_certified_at": times[-1] if times else None,
        },
        "csv": None if csv_bytes is None else {
            "file": csv_file, "rows": len(charges), "columns": csv_columns(seal),
            "encoding": "utf-8 with byte-order mark (--excel)" if excel else "utf-8",
            "sha256": hashlib.sha256(csv_bytes).hexdigest(),
        },
        "seal": dict(seal) if seal else None,
    }
    return localized(data, place.time_zone)

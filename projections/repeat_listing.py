"""Repeat offenders at a glance: the parcels and parties with at least so many
substantiated violations in the trailing 12 months before a date, per rule family, and
how many were left out below that count (so a threshold hides nothing silently).

The inspectors' overview, not a legal count: a rule's own repeat clause (its window, whom
it counts) is answered per question by ``repeat_question``. Read from the repeat-offenses
view as known at the end of the date (substantiated by then, not closed as unfounded by
then), on the date each violation was observed (local)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

import sqlalchemy as sa
from dateutil.relativedelta import relativedelta

from projections.database import utc
from projections.repeat_offenses import RepeatOffenses

TRAILING_MONTHS = 12


def repeat_listing(view: RepeatOffenses, conn: sa.Connection, *, municipality: str,
                   as_of: dt.date, known_by: dt.datetime, at_least: int = 1) -> dict[str, Any]:
    """Parcels and parties with ``at_least`` violations, with their counts (most first), in
    the window ``(as_of - 12 months, as_of]``; ``known_by`` is the end of ``as_of`` (local).
    ``parcels_left_out`` / ``parties_left_out`` count those with fewer."""
    start = as_of - relativedelta(months=TRAILING_MONTHS)
    rows = view.rows.c
    known = utc(known_by)
    query = sa.select(rows.case_ref, rows.rule_family, rows.county, rows.parcel_number,
                      rows.party, rows.party_name, rows.observed_on).where(
        rows.municipality == municipality, rows.observed_on > start.isoformat(),
        rows.observed_on <= as_of.isoformat(), rows.substantiated_at.is_not(None),
        rows.substantiated_at <= known,
        sa.or_(rows.unfounded_at.is_(None), rows.unfounded_at > known))
    parcels: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    parties: dict[tuple[str, str], list[str]] = defaultdict(list)
    # a party is grouped by its compared key and named as its latest case writes it
    names: dict[tuple[str, str], tuple[str, str, str]] = {}
    for row in conn.execute(query):
        parcels[(row.county, row.parcel_number, row.rule_family)].append(row.case_ref)
        if row.party:
            key = (row.party, row.rule_family)
            parties[key].append(row.case_ref)
            latest = (row.observed_on, row.case_ref, row.party_name or row.party)
            names[key] = max(names.get(key, latest), latest)

    def ordered(found: dict[tuple[str, ...], list[str]], names: tuple[str, ...]
                ) -> list[dict[str, Any]]:
        listed = [{**dict(zip(names, key)), "count": len(refs), "case_refs": sorted(refs)}
                  for key, refs in found.items() if len(refs) >= at_least]
        return sorted(listed, key=lambda item: (-item["count"], *(item[n] for n in names)))

    shown_parcels = ordered(parcels, ("county", "parcel_number", "rule_family"))
    shown_parties = [{**item, "party_name": names[(item["party"], item["rule_family"])][2]}
                     for item in ordered(parties, ("party", "rule_family"))]
    return {"municipality": municipality, "as_of": as_of.isoformat(),
            "window_start": start.isoformat(), "window_months": TRAILING_MONTHS,
            "at_least": at_least,
            "parcels": shown_parcels, "parcels_left_out": len(parcels) - len(shown_parcels),
            "parties": shown_parties, "parties_left_out": len(parties) - len(shown_parties)}

"""Repeat offenders at a glance: the parcels and parties with at least so many
substantiated violations in the trailing 12 months before a date, per rule family, and
how many were left out below that count (so a threshold hides nothing silently).

The inspectors' overview, not a legal count: a rule's own repeat clause (its window, whom
it counts) is answered per question by ``repeat_question``. Read from the repeat-offenses
view as known at the end of the date (substantiated by then, not closed as unfounded by
then), on the date each violation was observed (local).

Grouped and counted by the database, a page of parcels and a page of parties at a time
(``limit`` from each one's offset), each with the whole count: the listing's size and time
do not grow with the village's year of cases, only with the page shown."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from dateutil.relativedelta import relativedelta

from projections.database import utc
from projections.paging import DEFAULT_LIMIT, Page, read_page
from projections.repeat_offenses import RepeatOffenses

TRAILING_MONTHS = 12
PARCEL_KEYS = ("county", "parcel_number", "rule_family")
PARTY_KEYS = ("party", "rule_family")


def repeat_listing(view: RepeatOffenses, conn: sa.Connection, *, municipality: str,
                   as_of: dt.date, known_by: dt.datetime, at_least: int = 1,
                   limit: int = DEFAULT_LIMIT, parcels_offset: int = 0,
                   parties_offset: int = 0) -> dict[str, Any]:
    """Parcels and parties with ``at_least`` violations, with their counts (most first), in
    the window ``(as_of - 12 months, as_of]``; ``known_by`` is the end of ``as_of`` (local).
    A page of each (``limit`` from its offset) and its total; ``parcels_left_out`` /
    ``parties_left_out`` count those with fewer."""
    start = as_of - relativedelta(months=TRAILING_MONTHS)
    rows = view.rows.c
    known = utc(known_by)
    window = [rows.municipality == municipality, rows.observed_on > start.isoformat(),
              rows.observed_on <= as_of.isoformat(), rows.substantiated_at.is_not(None),
              rows.substantiated_at <= known,
              sa.or_(rows.unfounded_at.is_(None), rows.unfounded_at > known)]
    parcels = _groups(conn, view, window, PARCEL_KEYS, at_least, limit, parcels_offset)
    parties = _groups(conn, view, [*window, rows.party != ""], PARTY_KEYS, at_least, limit,
                      parties_offset)
    named = _latest_names(conn, view, window, parties.page.rows)
    shown_parties = [{**item, "party_name": named[(item["party"], item["rule_family"])]}
                     for item in parties.page.rows]
    return {"municipality": municipality, "as_of": as_of.isoformat(),
            "window_start": start.isoformat(), "window_months": TRAILING_MONTHS,
            "at_least": at_least, "limit": limit,
            "parcels": parcels.page.rows, "parcels_total": parcels.page.total,
            "parcels_offset": parcels_offset, "parcels_left_out": parcels.left_out,
            "parties": shown_parties, "parties_total": parties.page.total,
            "parties_offset": parties_offset, "parties_left_out": parties.left_out}


@dataclass(frozen=True)
class _Grouped:
    page: Page  # the groups with enough violations, a page of them
    left_out: int  # groups with fewer


def _groups(conn: sa.Connection, view: RepeatOffenses, window: list[Any],
            keys: tuple[str, ...], at_least: int, limit: int, offset: int) -> _Grouped:
    """A page of the groups (by ``keys``) with ``at_least`` violations, most first, each
    with its count and its cases; and how many groups have fewer."""
    columns = [view.rows.c[key] for key in keys]
    count = sa.func.count().label("violations")
    grouped = sa.select(*columns, count).where(*window).group_by(*columns)
    every = conn.execute(sa.select(sa.func.count()).select_from(grouped.subquery())
                         ).scalar_one()
    page = read_page(conn, grouped.having(count >= at_least), [count.desc(), *columns],
                     limit=limit, offset=offset)
    refs = _case_refs(conn, view, window, keys, [tuple(r[k] for k in keys) for r in page.rows])
    shown = [{**{k: r[k] for k in keys}, "count": r["violations"],
              "case_refs": sorted(refs[tuple(r[k] for k in keys)])} for r in page.rows]
    return _Grouped(Page(shown, page.total, limit, offset), every - page.total)


def _case_refs(conn: sa.Connection, view: RepeatOffenses, window: list[Any],
               keys: tuple[str, ...], groups: list[tuple[str, ...]]
               ) -> dict[tuple[str, ...], list[str]]:
    """The case references of each of ``groups`` (a page's) in the window."""
    found: dict[tuple[str, ...], list[str]] = {group: [] for group in groups}
    if not groups:
        return found
    columns = [view.rows.c[key] for key in keys]
    query = sa.select(*columns, view.rows.c.case_ref).where(
        *window, sa.tuple_(*columns).in_(groups))
    for row in conn.execute(query):
        found[tuple(row[:-1])].append(row.case_ref)
    return found


def _latest_names(conn: sa.Connection, view: RepeatOffenses, window: list[Any],
                  parties: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """Each party of a page named as its latest case in the window writes it (a party is
    grouped by its compared key: spaces and capitals do not count)."""
    rows = view.rows.c
    keys = [(p["party"], p["rule_family"]) for p in parties]
    latest: dict[tuple[str, str], tuple[str, str, str]] = {}
    if keys:
        query = sa.select(rows.party, rows.rule_family, rows.observed_on, rows.case_ref,
                          rows.party_name).where(
            *window, sa.tuple_(rows.party, rows.rule_family).in_(keys))
        for row in conn.execute(query):
            key = (row.party, row.rule_family)
            seen = (row.observed_on, row.case_ref, row.party_name or row.party)
            latest[key] = max(latest.get(key, seen), seen)
    return {key: named[2] for key, named in latest.items()}

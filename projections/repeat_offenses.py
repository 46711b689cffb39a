"""Repeat offenses: prior substantiated violations per rule family, by parcel and by
responsible party, answerable as of any date.

Readings (DOMAIN.md): a violation counts from the date it was observed, once
substantiated (notice served, abatement or citation recorded); a case closed as
unfounded never counts; the window is the N months before the new violation's
date. "As of" a date D means: what had been substantiated, and not closed as
unfounded, by D. ``observed_on`` is the local date in the municipality's zone (v2; v1
stored the date of the offset the time was typed with).

Whom a window counts is each rule's ``repeat.counts`` (parcel, responsible party, either,
or the person notified or convicted). For the last, a case counts by the date its person
was first notified (notice or citation, ``notified_on``) or convicted (``convicted_on``),
not by the violation's date (v3).
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from cases.localtime import local_date, zone
from cases.repeat_scan import normalise_name
from projections.database import day, insert_rows, utc
from projections.view import View

if TYPE_CHECKING:
    from cases.domain import Case, RepeatEvidence

SUBSTANTIATING = {"NoticeServed", "AbatementRecorded", "CitationIssued"}
NOTIFYING = {"NoticeServed", "CitationIssued"}  # the person is told of the violation
# The only events whose rows ``on_event`` writes or changes.
CHANGING = {"Opened", *SUBSTANTIATING, "DispositionRecorded", "Closed", "Reopened", "Corrected"}


class RepeatOffenses(View):
    name = "repeat_offenses"
    title = "repeat offenses (prior violations)"
    # v2: local observed_on; v3: notified_on and convicted_on; v4: party_name
    definition_version = 4

    def define_tables(self) -> None:
        self.rows = self.table(
            "rows",
            sa.Column("case_id", sa.String(36), primary_key=True),
            sa.Column("municipality", sa.String(32), nullable=False),
            sa.Column("case_ref", sa.String(64), nullable=False),
            sa.Column("rule_family", sa.String(32), nullable=False),
            sa.Column("county", sa.String(32), nullable=False),
            sa.Column("parcel_number", sa.String(64), nullable=False),
            sa.Column("party", sa.String(200), nullable=False),  # the key compared
            sa.Column("party_name", sa.String(200), nullable=False),  # as it was written
            sa.Column("observed_on", sa.String(10), nullable=False),
            sa.Column("substantiated_at", sa.String(40)),
            sa.Column("unfounded_at", sa.String(40)),
            sa.Column("notified_on", sa.String(10)),  # first notice or citation, local date
            sa.Column("notified_at", sa.String(40)),
            sa.Column("convicted_on", sa.String(10)),  # first conviction, local date
            sa.Column("convicted_at", sa.String(40)),
            sa.Index(f"abate_repeat_parcel_g{self.generation}", "county", "parcel_number",
                     "rule_family"),
            sa.Index(f"abate_repeat_party_g{self.generation}", "party", "rule_family"),
        )

    def begin_page(self) -> None:
        self._new: dict[str, dict[str, Any]] = {}  # rows of cases opened in this page
        self._changed: dict[str, dict[str, Any]] = {}  # column changes of earlier cases

    def listens_to(self, event_class: type) -> bool:
        return event_class.__name__ in CHANGING

    def on_event(self, conn: sa.Connection, case: Case, event: Any) -> None:
        """Collect this event's effect; written once per page (on_page_end)."""
        kind = type(event).__name__
        if kind == "Opened":
            key = str(event.originator_id)
            self._new[key] = {
                "case_id": key, "municipality": case.municipality, "case_ref": case.case_ref,
                "rule_family": case.rule_family, "county": case.parcel["county"],
                "parcel_number": case.parcel["number"], "party": party_of(case),
                "party_name": party_name(case),
                "observed_on": observed_on(case), "substantiated_at": None,
                "unfounded_at": None, "notified_on": None, "notified_at": None,
                "convicted_on": None, "convicted_at": None}
            return
        change: dict[str, Any] = {}
        if kind in SUBSTANTIATING:
            change["substantiated_at"] = utc(event.occurred_at)  # the first one counts
            if kind in NOTIFYING:
                change["notified_on"] = local_day(case, event.occurred_at)
                change["notified_at"] = utc(event.occurred_at)
        elif kind == "DispositionRecorded" and getattr(event, "convicted", None):
            change["convicted_on"] = local_day(case, event.occurred_at)
            change["convicted_at"] = utc(event.occurred_at)
        elif kind == "Closed" and not case.counts_as_violation and case.substantiated:
            change["unfounded_at"] = utc(event.occurred_at)
        elif kind == "Reopened":
            change["unfounded_at"] = None
        elif kind == "Corrected" and {"parcel", "owner", "responsible"} & set(event.changes):
            change.update(county=case.parcel["county"], parcel_number=case.parcel["number"],
                          party=party_of(case), party_name=party_name(case))
        elif kind == "Corrected" and event.supersedes_type == "Opened" and "at" in event.changes:
            change["observed_on"] = observed_on(case)
        if not change:
            return
        key = str(event.originator_id)
        row = self._new.get(key) or self._changed.setdefault(key, {})
        for first, day_column in (("substantiated_at", None), ("notified_at", "notified_on"),
                                  ("convicted_at", "convicted_on")):
            if first in change and row.get(first) is not None:  # the first one counts
                del change[first]
                change.pop(day_column, None)
        row.update(change)

    def on_page_end(self, conn: sa.Connection, cases: dict[Any, Case], opened: set[Any]) -> None:
        if self._new:
            insert_rows(conn, self.rows, self.fit(self.rows, list(self._new.values())))
        by_columns: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for key, change in self._changed.items():
            by_columns.setdefault(tuple(sorted(change)), []).append({"key": key, **change})
        for columns, params in by_columns.items():
            conn.execute(self._update(columns), self.fit(self.rows, params))

    def _update(self, columns: tuple[str, ...]) -> sa.Update:
        """One statement for every case whose page changed these columns (executemany)."""
        c = self.rows.c
        values = {name: sa.bindparam(name) for name in columns}
        for name in ("substantiated_at", "notified_at", "notified_on", "convicted_at",
                     "convicted_on"):  # an earlier page's first one stands
            if name in values:
                values[name] = sa.func.coalesce(getattr(c, name), sa.bindparam(name))
        return self.rows.update().where(c.case_id == sa.bindparam("key")).values(values)

    def prior_violations(self, conn: sa.Connection, *, municipality: str, family: str,
                         parcel: dict[str, str] | None, party: str | None,
                         violation_date: dt.date, window_months: int,
                         exclude_case_ref: str | None = None,
                         as_of: dt.datetime | None = None,
                         counts: str = "parcel_or_party") -> RepeatEvidence:
        """Prior violations in the ``window_months`` before ``violation_date``, counted by
        the rule's ``counts`` setting (see the module docstring)."""
        from dateutil.relativedelta import relativedelta

        from cases.domain import RepeatEvidence

        window_start = violation_date - relativedelta(months=window_months)
        known_by = utc(as_of) if as_of else None
        rows = self.rows.c
        matches = []
        if parcel and counts in ("parcel", "parcel_or_party"):
            matches.append(sa.and_(rows.county == parcel["county"],
                                   rows.parcel_number == parcel["number"]))
        if party and normalise_name(party) and counts != "parcel":
            matches.append(rows.party == normalise_name(party))
        if not matches:
            return RepeatEvidence(0, window_start, violation_date, [], counts=counts)
        start, end = window_start.isoformat(), violation_date.isoformat()
        if counts == "person_notified_or_convicted":
            dated = []
            for on, at in ((rows.notified_on, rows.notified_at),
                           (rows.convicted_on, rows.convicted_at)):
                known = [at <= known_by] if known_by else []
                dated.append(sa.and_(on >= start, on < end, *known))
            in_window = sa.or_(*dated)
        else:
            in_window = sa.and_(rows.observed_on >= start, rows.observed_on < end)
        query = sa.select(rows.case_ref).where(
            rows.municipality == municipality, rows.rule_family == family, in_window,
            rows.substantiated_at.is_not(None), sa.or_(*matches))
        if exclude_case_ref:
            query = query.where(rows.case_ref != exclude_case_ref)
        if known_by:
            query = query.where(rows.substantiated_at <= known_by,
                                sa.or_(rows.unfounded_at.is_(None), rows.unfounded_at > known_by))
        else:
            query = query.where(rows.unfounded_at.is_(None))
        refs = sorted(r.case_ref for r in conn.execute(query))
        return RepeatEvidence(len(refs), window_start, violation_date, refs, counts=counts)


def observed_on(case: Case) -> str:
    """The violation's local date where the case is (never the date of the offset typed)."""
    return day(local_date(case.observed_at, _time_zone(case.municipality)))


def local_day(case: Case, at: dt.datetime) -> str:
    return day(local_date(at, _time_zone(case.municipality)))


@cache
def _time_zone(municipality: str) -> ZoneInfo:
    """The municipality's zone (asked for every case opened: memoized, as the catalog is)."""
    from cases.rules.catalog import default_catalog

    return zone(default_catalog().municipality(municipality).time_zone)


def party_of(case: Case) -> str:
    return normalise_name((case.responsible or case.owner or {}).get("name"))


def party_name(case: Case) -> str:
    """The party as the case names it (``Jordan Accola``, not the key ``jordan accola``):
    what a page shows; ``party_of`` is what is compared."""
    return " ".join(str((case.responsible or case.owner or {}).get("name") or "").split())

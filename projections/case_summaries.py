"""Case summaries: list and search cases (status, parcel, owner, rule, next deadline,
balance) without loading aggregates."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from projections.database import utc
from projections.paging import Page, read_page
from projections.view import View

if TYPE_CHECKING:
    from cases.domain import Case


class CaseSummaries(View):
    name = "case_summaries"
    title = "case summaries (the case lists and search)"

    def define_tables(self) -> None:
        self.rows = self.table(
            "rows",
            sa.Column("case_id", sa.String(36), primary_key=True),
            sa.Column("municipality", sa.String(32), nullable=False),
            sa.Column("case_ref", sa.String(64), nullable=False),
            sa.Column("rule", sa.String(64), nullable=False),
            sa.Column("rule_version", sa.Integer, nullable=False),
            sa.Column("rule_family", sa.String(32), nullable=False),
            sa.Column("status", sa.String(32), nullable=False),
            sa.Column("county", sa.String(32), nullable=False),
            sa.Column("parcel_number", sa.String(64), nullable=False),
            sa.Column("owner_name", sa.String(200), nullable=False),
            sa.Column("site_address", sa.String(300), nullable=False),
            sa.Column("observed_at", sa.String(40), nullable=False),
            sa.Column("next_deadline", sa.String(64)),
            sa.Column("next_deadline_at", sa.String(40)),
            sa.Column("balance", sa.String(24), nullable=False),
            sa.Column("closed", sa.Boolean, nullable=False),
            sa.Column("version", sa.Integer, nullable=False),
            # A page of a village's cases in case order reads this index in order: no sort
            # of every case of the village for each page.
            sa.Index(f"abate_case_summaries_place_ref_g{self.generation}",
                     "municipality", "case_ref"),
        )

    def on_page_end(self, conn: sa.Connection, cases: dict[Any, Case], opened: set[Any]) -> None:
        self.replace_rows(conn, self.rows, cases, opened,
                          [summary_row(k, c) for k, c in cases.items()])

    def search(self, conn: sa.Connection, *, municipality: str, **filters: Any
               ) -> list[dict[str, Any]]:
        """Every case that matches every filter given (``matching``), in case order: for
        the demo's summary; people's lists read a ``page``."""
        query = self.matching(municipality, **filters).order_by(self.rows.c.case_ref)
        rows = conn.execute(query).mappings().all()
        return [{k: v for k, v in row.items() if k not in ("case_id", "version")} for row in rows]

    def page(self, conn: sa.Connection, *, municipality: str, limit: int, offset: int = 0,
             **filters: Any) -> Page:
        """A page of the cases that match every filter given, in case order, and how many
        match in all."""
        def shape(row: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in row.items() if k not in ("case_id", "version")}

        return read_page(conn, self.matching(municipality, **filters), (self.rows.c.case_ref,),
                         limit=limit, offset=offset, shape=shape)

    def matching(self, municipality: str, *, status: str | None = None,
                 parcel: str | None = None, parcel_part: str | None = None,
                 owner: str | None = None, rule: str | None = None,
                 observed_from: dt.datetime | None = None,
                 observed_before: dt.datetime | None = None) -> sa.Select:
        """The rows that match every filter given. ``parcel`` is a whole parcel number,
        ``parcel_part`` any part of one and ``owner`` any part of the name (its ``%`` and
        ``_`` match themselves: escaped, not wildcards); ``observed_from``/``observed_before``
        bound when the violation was observed (the case page list's dates)."""
        rows = self.rows.c
        query = sa.select(self.rows).where(rows.municipality == municipality)
        if observed_from is not None:
            query = query.where(rows.observed_at >= utc(observed_from))
        if observed_before is not None:
            query = query.where(rows.observed_at < utc(observed_before))
        if status:
            query = query.where(rows.status == status)
        if parcel:
            query = query.where(rows.parcel_number == parcel)
        if parcel_part:
            query = query.where(sa.func.lower(rows.parcel_number).contains(
                parcel_part.lower(), autoescape=True))
        if owner:
            query = query.where(sa.func.lower(rows.owner_name).contains(owner.lower(),
                                                                        autoescape=True))
        if rule:
            query = query.where(rows.rule == rule)
        return query


def summary_row(key: Any, case: Case) -> dict[str, Any]:
    nxt = case.next_deadline
    return {
        "case_id": str(key), "municipality": case.municipality, "case_ref": case.case_ref,
        "rule": case.rule, "rule_version": case.rule_version, "rule_family": case.rule_family,
        "status": case.status, "county": case.parcel["county"],
        "parcel_number": case.parcel["number"], "owner_name": case.owner["name"],
        "site_address": case.site_address, "observed_at": utc(case.observed_at),
        "next_deadline": nxt.name if nxt else None,
        "next_deadline_at": utc(nxt.due_at) if nxt else None,
        "balance": str(case.balance), "closed": case.closed, "version": case.version,
    }

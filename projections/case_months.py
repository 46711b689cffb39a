"""When each case was opened and closed (local dates), for the charts of cases opened
and closed per month per rule family (api/web/charts.py).

A row per case: its rule family, the local date its violation was observed (the case's
opening date; a correction of that time moves it) and the local date it was closed
(cleared again when it is reopened, set again when it closes again)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from projections.database import insert_rows
from projections.repeat_offenses import local_day, observed_on
from projections.view import View

if TYPE_CHECKING:  # read-only commands import the views without the domain
    from cases.domain import Case

# The only events whose rows ``on_event`` writes or changes.
CHANGING = {"Opened", "Closed", "Reopened", "Corrected"}


class CaseMonths(View):
    name = "case_months"
    title = "case months (the charts of cases opened and closed)"
    definition_version = 1

    def define_tables(self) -> None:
        self.rows = self.table(
            "rows",
            sa.Column("case_id", sa.String(36), primary_key=True),
            sa.Column("municipality", sa.String(32), nullable=False),
            sa.Column("rule_family", sa.String(32), nullable=False),
            sa.Column("opened_on", sa.String(10), nullable=False),
            sa.Column("closed_on", sa.String(10)),
            sa.Index(f"abate_case_months_place_g{self.generation}", "municipality"),
        )

    def begin_page(self) -> None:
        self._new: dict[str, dict[str, Any]] = {}
        self._changed: dict[str, dict[str, Any]] = {}

    def listens_to(self, event_class: type) -> bool:
        return event_class.__name__ in CHANGING

    def on_event(self, conn: sa.Connection, case: Case, event: Any) -> None:
        kind = type(event).__name__
        if kind == "Opened":
            key = str(event.originator_id)
            self._new[key] = {"case_id": key, "municipality": case.municipality,
                              "rule_family": case.rule_family,
                              "opened_on": observed_on(case), "closed_on": None}
            return
        if kind == "Closed":
            change = {"closed_on": local_day(case, event.occurred_at)}
        elif kind == "Reopened":
            change = {"closed_on": None}
        elif kind == "Corrected" and event.supersedes_type == "Opened" and "at" in event.changes:
            change = {"opened_on": observed_on(case)}
        else:
            return  # most events: no id text made for them
        key = str(event.originator_id)
        (self._new.get(key) or self._changed.setdefault(key, {})).update(change)

    def on_page_end(self, conn: sa.Connection, cases: dict[Any, Case], opened: set[Any]) -> None:
        if self._new:
            insert_rows(conn, self.rows, self.fit(self.rows, list(self._new.values())))
        c = self.rows.c
        for key, change in self._changed.items():
            conn.execute(self.rows.update().where(c.case_id == key).values(change))

    def per_month(self, conn: sa.Connection, *, municipality: str, first_month: str,
                  last_month: str) -> dict[str, Counter[tuple[str, str]]]:
        """``{"opened": Counter({(month, family): n}), "closed": ...}`` for the months
        ``first_month`` to ``last_month`` (``YYYY-MM``, both included)."""
        c = self.rows.c
        found: dict[str, Counter[tuple[str, str]]] = {"opened": Counter(), "closed": Counter()}
        start, end = f"{first_month}-01", f"{last_month}-32"  # text order: the whole month
        for what, column in (("opened", c.opened_on), ("closed", c.closed_on)):
            month = sa.func.substr(column, 1, 7)
            query = (sa.select(month, c.rule_family, sa.func.count())
                     .where(c.municipality == municipality, column >= start, column < end)
                     .group_by(month, c.rule_family))
            for month_text, family, count in conn.execute(query):
                found[what][(month_text, family)] = count
        return found

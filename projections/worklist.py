"""The worklist: every open deadline (cure, bill due, appeal window, tax-roll
eligibility, escalations, notices a person must serve) with what happens when it
passes, and every action a person must take now (``cases.actions``: who, by when,
and the rule that says so). The scheduler sweeps the deadlines; people read both."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from cases.action_kinds import UNDATED
from cases.deadline_recorded import names_set
from projections.database import utc
from projections.paging import MAX_LIMIT, Page, read_page
from projections.view import View

if TYPE_CHECKING:
    from cases.domain import Case
    from cases.rules.catalog import Municipality, Rule


class Worklist(View):
    name = "worklist"
    title = "worklist (deadlines and actions due)"
    # v2: amounts in action texts as $1,234.56; the tax-roll action names its roll's year
    # and county. A store written by v1 holds the old texts, so it is rebuilt (View).
    # v3: a deadline row says when its due time was recorded (``set_recorded_at``); the
    # tax-roll action is due at its roll's certification cut-off, and one whose statute is
    # not named is the attorney's (``cases.actions``).
    definition_version = 4

    def define_tables(self) -> None:
        self.rows = self.table(
            "rows",
            sa.Column("case_id", sa.String(36), nullable=False, index=True),
            sa.Column("municipality", sa.String(32), nullable=False),
            sa.Column("case_ref", sa.String(64), nullable=False),
            sa.Column("deadline", sa.String(64), nullable=False),
            sa.Column("due_at", sa.String(40), nullable=False),
            sa.Column("consequence", sa.Text, nullable=False),
            sa.Column("needs_person", sa.Boolean, nullable=False),
            sa.Column("rule", sa.String(64), nullable=False),
            sa.Column("rule_version", sa.Integer, nullable=False),
            sa.Column("citation", sa.Text, nullable=False),
            sa.Column("site_address", sa.String(300), nullable=False),
            # when the event that set (or the correction that moved) the due time was
            # recorded: a sweep is late only counting from it (api/web/awaiting_sweep.py)
            sa.Column("set_recorded_at", sa.String(40)),
            sa.Index(f"abate_worklist_due_g{self.generation}", "due_at"),
            # the page's order: a year's deadlines share a due time (5,000 at 10,000 cases),
            # and an index on (place, time) left them to sort for every page (2 ms)
            sa.Index(f"abate_worklist_order_g{self.generation}",
                     "municipality", "due_at", "case_ref", "deadline"),
        )
        self.actions = self.table(
            "actions",
            sa.Column("case_id", sa.String(36), nullable=False, index=True),
            sa.Column("municipality", sa.String(32), nullable=False),
            sa.Column("case_ref", sa.String(64), nullable=False),
            sa.Column("action", sa.String(32), nullable=False),
            sa.Column("due_at", sa.String(40), nullable=False),
            sa.Column("what", sa.Text, nullable=False),
            sa.Column("by", sa.Text, nullable=False),
            sa.Column("by_citation", sa.Text, nullable=False),
            sa.Column("rule", sa.String(64), nullable=False),
            sa.Column("rule_version", sa.Integer, nullable=False),
            sa.Column("citation", sa.Text, nullable=False),
            sa.Column("site_address", sa.String(300), nullable=False),
            # The page's order, but for ``what`` (ties there are one case's few actions):
            # many actions share a due time (a year's tax-roll entries), and an index on the
            # time alone left every one of them to sort for each page (37 ms at 25,000).
            sa.Index(f"abate_worklist_actions_order_g{self.generation}",
                     "municipality", "due_at", "case_ref", "action"),
        )

    def begin_page(self) -> None:
        self._recorded: dict[str, dict[str, str]] = {}

    def on_event(self, conn: sa.Connection, case: Case, event: Any) -> None:
        """Note when each deadline this event set or moved was recorded."""
        names = names_set(event)
        if names:  # most events set none
            noted = self._recorded.setdefault(str(event.originator_id), {})
            noted.update(dict.fromkeys(names, utc(event.timestamp)))

    def _set_recorded(self, conn: sa.Connection, cases: dict[Any, Case], opened: set[Any]
                      ) -> dict[tuple[str, str], str | None]:
        """(case id, deadline) -> when its due time was recorded: this page's events, else
        what the rows about to be replaced say."""
        earlier = [str(k) for k in cases if k not in opened]
        found: dict[tuple[str, str], str | None] = {}
        if earlier:
            query = sa.select(self.rows.c.case_id, self.rows.c.deadline,
                              self.rows.c.set_recorded_at).where(self.rows.c.case_id.in_(earlier))
            found = {(r.case_id, r.deadline): r.set_recorded_at for r in conn.execute(query)}
        for case_id, names in getattr(self, "_recorded", {}).items():
            found.update({(case_id, name): at for name, at in names.items()})
        return found

    def on_page_end(self, conn: sa.Connection, cases: dict[Any, Case], opened: set[Any]) -> None:
        recorded = self._set_recorded(conn, cases, opened)
        ids = {key: str(key) for key in cases}  # each case's id text, made once
        rows = [
            {"case_id": ids[key], "municipality": case.municipality, "case_ref": case.case_ref,
             "deadline": d.name, "due_at": utc(d.due_at), "consequence": d.consequence,
             "needs_person": d.needs_person, "rule": d.rule,
             "rule_version": d.rule_version, "citation": d.citation,
             "site_address": case.site_address,
             "set_recorded_at": recorded.get((ids[key], d.name))}
            for key, case in cases.items() if not case.closed
            for d in case.deadlines.values() if d.is_open
        ]
        self.replace_rows(conn, self.rows, cases, opened, rows)
        from cases.actions import pending_actions  # the rules catalog: not for a read

        actions = [
            {"case_id": ids[key], "municipality": case.municipality, "case_ref": case.case_ref,
             **action, "due_at": utc(action["due_at"]), "site_address": case.site_address}
            for key, case in cases.items()
            for action in pending_actions(case, _rule(case.rule, case.rule_version),
                                          _municipality(case.municipality))
        ]
        self.replace_rows(conn, self.actions, cases, opened, actions)

    def due(self, conn: sa.Connection, *, until: dt.datetime, municipality: str | None = None,
            automatic_only: bool = False) -> list[dict[str, Any]]:
        """Open deadlines due by ``until`` (what a sweep must record), earliest first."""
        query = sa.select(self.rows).where(self.rows.c.due_at <= utc(until))
        if municipality:
            query = query.where(self.rows.c.municipality == municipality)
        if automatic_only:
            query = query.where(self.rows.c.needs_person.is_(False))
        return [dict(r) for r in conn.execute(query.order_by(self.rows.c.due_at)).mappings()]

    def deadline_page(self, conn: sa.Connection, *, municipality: str, as_of: dt.datetime,
                      overdue_only: bool = False, due_by: dt.datetime | None = None,
                      deadline: str | None = None, sweepable_only: bool = False,
                      limit: int = MAX_LIMIT, offset: int = 0) -> Page:
        """Open deadlines, earliest first: those overdue at ``as_of`` only, due by
        ``due_by``, of one name, or (``sweepable_only``) the scheduler's to record and due."""
        rows = self.rows.c
        cutoff = utc(as_of)  # one text for every row: stored times are UTC texts
        query = sa.select(self.rows).where(rows.municipality == municipality)
        if overdue_only or sweepable_only:
            query = query.where(rows.due_at < cutoff if overdue_only else rows.due_at <= cutoff)
        if sweepable_only:
            query = query.where(rows.needs_person.is_(False))
        if due_by is not None:
            query = query.where(rows.due_at <= utc(due_by))
        if deadline is not None:
            query = query.where(rows.deadline == deadline)

        def shape(row: dict[str, Any]) -> dict[str, Any]:
            del row["case_id"]
            row["overdue"] = row["due_at"] < cutoff
            return row

        return read_page(conn, query, (rows.due_at, rows.case_ref, rows.deadline),
                         limit=limit, offset=offset, shape=shape)

    def action_page(self, conn: sa.Connection, *, municipality: str, as_of: dt.datetime,
                    overdue_only: bool = False, due_from: dt.datetime | None = None,
                    due_by: dt.datetime | None = None, kinds: Iterable[str] | None = None,
                    limit: int = MAX_LIMIT, offset: int = 0) -> Page:
        """What people must do, due first: each with who acts and the rule that says so.
        An action with no due time (``UNDATED``) is never overdue, nor due by a time."""
        table = self.actions
        cutoff = utc(as_of)
        query = sa.select(table).where(table.c.municipality == municipality)
        if overdue_only or due_from is not None or due_by is not None:
            query = query.where(table.c.action.not_in(UNDATED))
        if overdue_only:
            query = query.where(table.c.due_at < cutoff)
        if due_from is not None:
            query = query.where(table.c.due_at >= utc(due_from))
        if due_by is not None:
            query = query.where(table.c.due_at <= utc(due_by))
        if kinds is not None:
            query = query.where(table.c.action.in_(list(kinds)))

        def shape(row: dict[str, Any]) -> dict[str, Any]:
            del row["case_id"]
            row["overdue"] = row["due_at"] < cutoff and row["action"] not in UNDATED
            return row

        order = (table.c.due_at, table.c.case_ref, table.c.action, table.c.what)
        return read_page(conn, query, order, limit=limit, offset=offset, shape=shape)


@cache
def _rule(key: str, version: int) -> Rule:
    from cases.rules.catalog import default_catalog

    return default_catalog().rule_version(key, version)


@cache
def _municipality(name: str) -> Municipality:
    from cases.rules.catalog import default_catalog

    return default_catalog().municipality(name)

"""The worklist a person reads (``abate worklist``, ``GET worklist``): the actions due,
each with who acts and the rule that says so, and the open deadlines with what happens
when each passes; earliest first, as of a moment, optionally only what is overdue; in
pages (projections.paging)."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from projections.paging import DEFAULT_LIMIT
from projections.worklist import Worklist


def worklist_moment(as_of: dt.date | None, tz: ZoneInfo, now: dt.datetime) -> dt.datetime:
    """What "as of" means for a worklist: the end of that local day, else now (the
    holiday calendar behind the clock is imported only then)."""
    from cases.rules.clock import end_of_local_day

    return end_of_local_day(as_of, tz) if as_of else now


def worklist(view: Worklist, conn: sa.Connection, *, municipality: str, as_of: dt.datetime,
             overdue_only: bool = False, due_by: dt.datetime | None = None,
             action: str | None = None, deadline: str | None = None,
             limit: int = DEFAULT_LIMIT, offset: int = 0) -> dict[str, Any]:
    """One page of actions and of open deadlines (times in UTC: the caller shows them in
    local time), both from ``offset``, at most ``limit`` each, with each list's total;
    ``next_offset`` is where the next page starts while either list has more.
    ``due_by`` keeps what is due by then (an action with no due time is not); ``action``
    keeps only the actions of that kind (``serve_notice``...) and ``deadline`` only the
    deadlines of that name (``cure``...)."""
    actions = view.action_page(conn, municipality=municipality, as_of=as_of,
                               overdue_only=overdue_only, due_by=due_by,
                               kinds=None if action is None else (action,),
                               limit=limit, offset=offset)
    deadlines = view.deadline_page(conn, municipality=municipality, as_of=as_of,
                                   overdue_only=overdue_only, due_by=due_by,
                                   deadline=deadline, limit=limit, offset=offset)
    following = [n for n in (actions.next_offset, deadlines.next_offset) if n is not None]
    return {"municipality": municipality, "as_of": as_of.isoformat(),
            "overdue_only": overdue_only, "actions": actions.rows,
            "deadlines": deadlines.rows, "actions_total": actions.total,
            "deadlines_total": deadlines.total, "limit": limit, "offset": offset,
            "next_offset": min(following) if following else None}

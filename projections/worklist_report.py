"""The worklist a person reads (``abate worklist``, ``GET worklist``): the actions due,
each with who acts and the rule that says so, and the open deadlines with what happens
when each passes; earliest first, as of a moment, optionally only what is overdue."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from cases.action_kinds import UNDATED
from projections.database import utc
from projections.worklist import Worklist


def worklist_moment(as_of: dt.date | None, tz: ZoneInfo, now: dt.datetime) -> dt.datetime:
    """What "as of" means for a worklist: the end of that local day, else now (the
    holiday calendar behind the clock is imported only then)."""
    from cases.rules.clock import end_of_local_day

    return end_of_local_day(as_of, tz) if as_of else now


def worklist(view: Worklist, conn: sa.Connection, *, municipality: str, as_of: dt.datetime,
             overdue_only: bool = False, due_by: dt.datetime | None = None,
             action: str | None = None, deadline: str | None = None) -> dict[str, Any]:
    """Actions and open deadlines (times in UTC: the caller shows them in local time).
    ``due_by`` keeps what is due by then (an action with no due time is not); ``action`` keeps only the actions of that kind
    (``serve_notice``...) and ``deadline`` only the deadlines of that name (``cure``...)."""
    deadlines = view.listing(conn, municipality=municipality, as_of=as_of,
                             overdue_only=overdue_only)
    actions = view.action_listing(conn, municipality=municipality, as_of=as_of,
                                  overdue_only=overdue_only)
    if due_by is not None:
        until = utc(due_by)
        deadlines = [d for d in deadlines if d["due_at"] <= until]
        actions = [a for a in actions if a["due_at"] <= until and a["action"] not in UNDATED]
    if action is not None:
        actions = [a for a in actions if a["action"] == action]
    if deadline is not None:
        deadlines = [d for d in deadlines if d["deadline"] == deadline]
    return {"municipality": municipality, "as_of": as_of.isoformat(),
            "overdue_only": overdue_only, "actions": actions, "deadlines": deadlines}

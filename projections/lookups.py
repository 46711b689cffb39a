"""Answers to the questions ``cases/`` asks of read models (see cases.domain.RepeatOffenses).

Each answer first catches the view up to the latest event, so a decision never
relies on a stale count.
"""

from __future__ import annotations

import datetime as dt
from uuid import UUID

from cases.domain import RepeatEvidence
from projections.repeat_offenses import RepeatOffenses
from projections.runner import ViewRunner
from projections.worklist import Worklist


class ProjectedRepeatOffenses:
    def __init__(self, runner: ViewRunner):
        self.runner = runner

    def prior_violations(self, *, municipality: str, family: str, parcel: dict[str, str],
                         party: str | None, violation_date: dt.date, window_months: int,
                         exclude_case_ref: str, counts: str = "parcel_or_party") -> RepeatEvidence:
        self.runner.catch_up()  # all views: they share each page
        view = self.runner.active(RepeatOffenses.name)
        with self.runner.engine.connect() as conn:
            return view.prior_violations(conn, municipality=municipality, family=family,
                                         parcel=parcel, party=party,
                                         violation_date=violation_date,
                                         window_months=window_months,
                                         exclude_case_ref=exclude_case_ref, counts=counts)


class ProjectedDueDeadlines:
    """Which cases have an automatic deadline due: from the worklist view, caught up."""

    def __init__(self, runner: ViewRunner):
        self.runner = runner

    def cases_due(self, *, until: dt.datetime, municipality: str | None = None) -> list[UUID]:
        self.runner.catch_up()
        view = self.runner.active(Worklist.name)
        with self.runner.engine.connect() as conn:
            rows = view.due(conn, until=until, municipality=municipality, automatic_only=True)
        return list(dict.fromkeys(UUID(r["case_id"]) for r in rows))

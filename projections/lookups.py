"""Answers to the questions ``cases/`` asks of read models (see cases.domain.RepeatOffenses).

Each answer first catches the view up to the latest event, so a decision never
relies on a stale count. Inside ``settled()`` (a journal import, whose own decisions
are saved only at its end) the views are caught up once, on entry.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

from cases.domain import RepeatEvidence
from projections.repeat_offenses import RepeatOffenses
from projections.runner import ViewRunner
from projections.worklist import Worklist


class _CaughtUp:
    """Catches the views up before each answer, or once for a settled stretch."""

    def __init__(self, runner: ViewRunner):
        self.runner = runner
        self._settled_views: dict[str, object] | None = None

    @contextmanager
    def settled(self) -> Iterator[None]:
        self.runner.catch_up()
        self._settled_views = {}
        try:
            yield
        finally:
            self._settled_views = None

    def _view(self, name: str):  # noqa: ANN202 - a View subclass
        if self._settled_views is None:
            self.runner.catch_up()  # all views: they share each page
            return self.runner.active(name)
        if name not in self._settled_views:
            self._settled_views[name] = self.runner.active(name)
        return self._settled_views[name]


class ProjectedRepeatOffenses(_CaughtUp):
    def prior_violations(self, *, municipality: str, family: str, parcel: dict[str, str],
                         party: str | None, violation_date: dt.date, window_months: int,
                         exclude_case_ref: str, counts: str = "parcel_or_party") -> RepeatEvidence:
        view = self._view(RepeatOffenses.name)
        with self.runner.engine.connect() as conn:
            return view.prior_violations(conn, municipality=municipality, family=family,
                                         parcel=parcel, party=party,
                                         violation_date=violation_date,
                                         window_months=window_months,
                                         exclude_case_ref=exclude_case_ref, counts=counts)


class ProjectedDueDeadlines(_CaughtUp):
    """Which cases have an automatic deadline due: from the worklist view, caught up."""

    def cases_due(self, *, until: dt.datetime, municipality: str | None = None) -> list[UUID]:
        view = self._view(Worklist.name)
        with self.runner.engine.connect() as conn:
            rows = view.due(conn, until=until, municipality=municipality, automatic_only=True)
        return list(dict.fromkeys(UUID(r["case_id"]) for r in rows))

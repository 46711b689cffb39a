"""What the routes use, built once per app: the store, the views, the case service, the
accounts. Routes receive it through a typed dependency (``api.deps``), never a global."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from api.accounts import Accounts
from api.settings import ApiSettings
from cases.application import CaseService, Outcome
from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.lookups import ProjectedDueDeadlines, ProjectedRepeatOffenses
from projections.runner import ViewRunner


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


@dataclass
class Services:
    settings: ApiSettings
    store: CaseStore
    runner: ViewRunner
    cases: CaseService
    accounts: Accounts
    clock: Callable[[], dt.datetime] = utc_now
    # One catch-up or command at a time in this process: the runner's case-state cache
    # is not shared safely between threads, and a command's repeat-offense and due-
    # deadline look-ups catch the views up (another process doing so is safe: tracking).
    _one_at_a_time: threading.RLock = field(default_factory=threading.RLock)

    @classmethod
    def build(cls, settings: ApiSettings) -> "Services":
        base = settings.base
        store = CaseStore(settings.database_url, extra_env=base.store_env())
        try:
            runner = ViewRunner(store, ALL_VIEWS)
            service = CaseService(store, repeat_offenses=ProjectedRepeatOffenses(runner),
                                  due_deadlines=ProjectedDueDeadlines(runner),
                                  future_tolerance=base.future_tolerance,
                                  journal_max_line_bytes=base.journal_max_line_bytes,
                                  journal_max_depth=base.journal_max_depth)
            accounts = Accounts(runner.engine, settings.database_url, store.schema)
        except BaseException:
            store.close()
            raise
        return cls(settings, store, runner, service, accounts)

    def catch_up(self, *views: str) -> None:
        """Bring the named views (all when none) to the end of the log: a read after a
        command sees that command."""
        with self._one_at_a_time:
            self.runner.catch_up(list(views) or None)

    def exclusive(self) -> threading.RLock:
        """Held by a route that catches up, decides and records in one stretch (a
        certification, a journal): one such stretch or command at a time in this process."""
        return self._one_at_a_time

    def handle(self, command: Any) -> Outcome:
        """Run one command (one transaction) at the real clock."""
        with self._one_at_a_time:
            return self.cases.handle(command, self.clock())

    def head(self) -> int:
        return self.store.recorder.max_notification_id() or 0

    def close(self) -> None:
        self.runner.close()
        self.store.close()

"""What the routes use, built once per app: the store, the views, the case service, the
accounts. Routes receive it through a typed dependency (``api.deps``), never a global."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from api.access_log import AccessLog
from api.access_log_writer import AccessLogWriter
from api.accounts import Accounts
from api.idempotency import IdempotencyKeys
from api.settings import ApiSettings
from cases.application import CaseService, Outcome
from cases.referral import referral_packet
from cases.store import CaseStore
from projections import tracking
from projections.bootstrap import wire
from projections.database import records_engine
from projections.lookups import ProjectedRepeatOffenses
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
    access_log: AccessLog
    idempotency: IdempotencyKeys
    # Accounts, the access log, idempotency answers and the session secret: not derived from
    # the events, so committed with full durability (``records_engine``), unlike the views.
    records: sa.Engine
    clock: Callable[[], dt.datetime] = utc_now
    # One catch-up or command at a time in this process: the runner's case-state cache
    # is not shared safely between threads, and a command's repeat-offense and due-
    # deadline look-ups catch the views up (another process doing so is safe: tracking).
    _one_at_a_time: threading.RLock = field(default_factory=threading.RLock)
    # Rows of the access log, queued by each request and committed a batch at a time.
    access_log_writer: AccessLogWriter = field(init=False)

    def __post_init__(self) -> None:
        self.access_log_writer = AccessLogWriter(self.access_log)

    @classmethod
    def build(cls, settings: ApiSettings) -> "Services":
        wired = wire(settings.base, settings.database_url)
        store, runner, service = wired.store, wired.runner, wired.service
        try:
            records = records_engine(settings.database_url, store.schema)
            accounts = Accounts(records, settings.database_url, store.schema)
            access_log = AccessLog(records, settings.database_url, store.schema)
            keys = IdempotencyKeys(records, settings.database_url, store.schema,
                                   keep=dt.timedelta(hours=settings.idempotency_keep_hours))
        except BaseException:
            wired.close()
            raise
        return cls(settings, store, runner, service, accounts, access_log, keys, records)

    def catch_up(self, *views: str) -> None:
        """Bring the named views (all when none) to the end of the log: a read after a
        command sees that command. Most reads find them current: that look takes no lock,
        so reads do not queue behind a command or each other to learn it."""
        names = list(views) or None
        if not self.runner.behind(names):
            return
        with self._one_at_a_time:
            self.runner.catch_up(names)

    def exclusive(self) -> threading.RLock:
        """Held by a route that catches up, decides and records in one stretch (a
        certification, a journal): one such stretch or command at a time in this process."""
        return self._one_at_a_time

    def handle(self, command: Any, expected_version: int | None = None) -> Outcome:
        """Run one command (one transaction) at the real clock; with ``expected_version``
        only on the case at that version (else ``StaleVersionError``)."""
        with self._one_at_a_time:
            return self.cases.handle(command, self.clock(), expected_version=expected_version)

    def views_position(self, views: tuple[str, ...]) -> int:
        """How far the least advanced of ``views`` has applied the log."""
        with self.runner.engine.connect() as conn:
            return min(g.position for g in tracking.active_generations(conn, list(views)))

    def referral(self, municipality: str, case_ref: str) -> dict[str, Any]:
        """The attorney's packet, its prior violations from the repeat-offense view."""
        with self._one_at_a_time:
            return referral_packet(self.store, self.cases.catalog, municipality, case_ref,
                                   prior=ProjectedRepeatOffenses(self.runner), now=self.clock())

    def head(self) -> int:
        return self.store.recorder.max_notification_id() or 0

    def drop_connections(self) -> None:
        """Close every pooled connection of this app to PostgreSQL (new ones are opened when
        needed): when the store could not be reached, those made before are suspect, and the
        first request once it is back must not meet one of them (api.errors.store_unavailable).
        SQLite's are files, not connections across a network (and ``memory://``'s single
        connection is the database itself)."""
        if not self.settings.database_url.startswith("postgresql"):
            return
        self.store.drop_connections()
        self.runner.engine.dispose()
        self.records.dispose()

    def close(self) -> None:
        self.access_log_writer.close()
        self.runner.close()
        self.records.dispose()
        self.store.close()

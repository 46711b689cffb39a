"""The deadline engine: what a sweep needs (a store, the views, the case service), opened
once, and the APScheduler job that sweeps now and then every ``ABATE_SWEEP_SECONDS``.

The scheduler process (``scheduler/__main__.py``) runs it in the foreground; ``abate serve``
on the embedded SQLite store runs it in the background, beside the API in one process.
"""

from __future__ import annotations

import datetime as dt
import threading
from zoneinfo import ZoneInfo

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.triggers.interval import IntervalTrigger

from cases.application import SCHEDULER_ACTOR
from cases.seals import seal_store
from cases.settings import Settings
from projections.bootstrap import wire
from scheduler.jobs import SweepSummary, sweep_deadlines

JOB_ID = "sweep_deadlines"


class DeadlineEngine:
    """One store, its views and a case service, for sweeping deadlines."""

    def __init__(self, settings: Settings, database_url: str, municipality: str | None = None):
        self.settings = settings
        self.municipality = municipality
        # Set once a sweep has ended (recorded, or failed and logged): ``abate serve`` waits
        # for its first one before its banner, so the banner comes after start-up's lines.
        self.swept = threading.Event()
        # Set when the process is asked to stop: a sweep under way ends after its batch.
        self.stopping = threading.Event()
        self.wired = wire(settings, database_url)
        self.store, self.runner, self.service = (self.wired.store, self.wired.runner,
                                                 self.wired.service)

    def sweep(self, until: dt.datetime | None = None) -> SweepSummary:
        """Record every deadline due by ``until`` (default now) and seal what was recorded
        (keeps the unsealed tail small, docs/operations.md). A sweep stopped part-way does
        not seal: a store's first seal covers every event, and a stop must not wait for it;
        the next sweep seals."""
        now = dt.datetime.now(dt.timezone.utc)  # recorded time: always the real clock
        try:
            summary = sweep_deadlines(self.service, now, until=until or now,
                                      municipality=self.municipality, stop=self.stopping)
            if summary.events_recorded and not self.stopping.is_set():
                seal_store(self.store, actor=SCHEDULER_ACTOR, reason="automatic: deadline sweep")
            return summary
        finally:
            self.swept.set()

    def schedule_on(self, scheduler: BaseScheduler) -> None:
        """Sweep at once (catch-up after downtime), then every ``sweep_seconds``."""
        zone = ZoneInfo(self.settings.time_zone)
        scheduler.add_job(self.sweep, IntervalTrigger(seconds=self.settings.sweep_seconds),
                          id=JOB_ID, max_instances=1, coalesce=True,
                          next_run_time=dt.datetime.now(zone))

    def stop(self, scheduler: BaseScheduler) -> None:
        """Stop sweeping: a sweep under way ends after its batch, then the jobs stop."""
        self.stopping.set()
        if scheduler.running:
            scheduler.shutdown(wait=True)

    def close(self) -> None:
        self.wired.close()


def start_in_background(engine: DeadlineEngine) -> BackgroundScheduler:
    """The engine's sweeps on a thread of this process; ``shutdown()`` waits for a sweep
    under way to finish."""
    scheduler = BackgroundScheduler(timezone=ZoneInfo(engine.settings.time_zone))
    engine.schedule_on(scheduler)
    scheduler.start()
    return scheduler

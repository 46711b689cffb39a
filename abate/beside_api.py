"""The deadline scheduler and the view runner beside the API, in the serving process.

On the embedded SQLite store one ``abate serve`` is the whole service: the scheduler sweeps
deadlines on an APScheduler thread and the view runner follows the log on a thread of its
own, each with its own store connection, exactly as their own processes would
(``abate scheduler``, ``abate projections run``; docs/operations.md). Both start before the
API answers and stop after it has stopped: a sweep under way finishes, then the stores close.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import structlog

from cases.settings import Settings
from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.runner import ViewRunner
from scheduler.engine import DeadlineEngine, start_in_background

log = structlog.get_logger("abate.serve")

VIEW_POLL_SECONDS = 1.0


@contextmanager
def scheduler_beside(settings: Settings, database_url: str) -> Iterator[DeadlineEngine]:
    engine = DeadlineEngine(settings, database_url)
    try:
        scheduler = start_in_background(engine)
        log.info("scheduler_started", every_seconds=settings.sweep_seconds, in_process=True)
        try:
            yield engine
        finally:
            scheduler.shutdown(wait=True)
            log.info("scheduler_stopped", in_process=True)
    finally:
        engine.close()


@contextmanager
def view_runner_beside(settings: Settings, database_url: str,
                       poll_seconds: float = VIEW_POLL_SECONDS) -> Iterator[ViewRunner]:
    store = CaseStore(database_url, extra_env=settings.store_env())
    try:
        runner = ViewRunner(store, ALL_VIEWS, schema=settings.database_schema)
        stop = threading.Event()
        thread = threading.Thread(target=_follow, args=(runner, stop, poll_seconds),
                                  name="abate-views", daemon=True)
        thread.start()
        try:
            yield runner
        finally:
            stop.set()
            thread.join()
            runner.close()
    finally:
        store.close()


def _follow(runner: ViewRunner, stop: threading.Event, poll_seconds: float) -> None:
    """Follow the log until stopped; a failure is logged and retried, never lost silently."""
    while not stop.is_set():
        try:
            runner.follow(stop, poll_seconds=poll_seconds)
        except Exception as exc:  # noqa: BLE001 - a thread has nobody to raise to: log, retry
            log.error("view_runner_failed", error=type(exc).__name__, detail=str(exc)[:300])
            stop.wait(poll_seconds * 5)


@contextmanager
def beside_api(settings: Settings, database_url: str, scheduler: bool,
               views: bool) -> Iterator[None]:
    """Start what is asked for beside the API; stop it, in reverse order, on the way out."""
    with ExitStack() as stack:
        if views:
            stack.enter_context(view_runner_beside(settings, database_url))
        if scheduler:
            stack.enter_context(scheduler_beside(settings, database_url))
        yield

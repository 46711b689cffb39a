"""The deadline scheduler and the view runner beside the API, in the serving process.

On the embedded SQLite store one ``abate serve`` is the whole service: the scheduler sweeps
deadlines on an APScheduler thread and the view runner follows the log on a thread of its
own, each with its own store connection, exactly as their own processes would
(``abate scheduler``, ``abate projections run``; docs/operations.md). Both start before the
API answers and stop after it has stopped: a sweep or a catch-up under way ends after its
batch (the next start goes on from there), then the stores close.
Each says when its start-up is over (the first sweep ended, the views caught up), so that
``abate serve`` prints its banner after their start-up lines, not among them (``Started``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

import structlog

from cases.settings import Settings
from projections.bootstrap import open_store, open_views
from projections.runner import ViewRunner
from scheduler.engine import DeadlineEngine, start_in_background

log = structlog.get_logger("abate.serve")

VIEW_POLL_SECONDS = 1.0
# How long a banner waits for start-up to end: a long catch-up (a view rebuilt after an
# upgrade, many deadlines swept after downtime) must not keep the URL off the screen.
START_UP_WAIT_SECONDS = 60.0


@dataclass
class Started:
    """One event per thing started beside the API, set once its start-up has been logged."""

    done: list[threading.Event] = field(default_factory=list)

    def then(self, announce: Callable[[], None],
             wait_seconds: float = START_UP_WAIT_SECONDS) -> None:
        """Call ``announce`` once every start-up is over (or ``wait_seconds`` have gone by),
        on a thread of its own: the server answers meanwhile."""
        def when_started() -> None:
            until = time.monotonic() + wait_seconds
            for event in self.done:
                event.wait(max(0.0, until - time.monotonic()))
            announce()

        threading.Thread(target=when_started, name="abate-banner", daemon=True).start()


@contextmanager
def scheduler_beside(settings: Settings, database_url: str,
                     started: Started | None = None) -> Iterator[DeadlineEngine]:
    engine = DeadlineEngine(settings, database_url)
    try:
        scheduler = start_in_background(engine)
        log.info("scheduler_started", every_seconds=settings.sweep_seconds, in_process=True)
        if started is not None:
            started.done.append(engine.swept)  # its first sweep, at once (catch-up)
        try:
            yield engine
        finally:
            engine.stop(scheduler)
            log.info("scheduler_stopped", in_process=True)
    finally:
        engine.close()


@contextmanager
def view_runner_beside(settings: Settings, database_url: str,
                       poll_seconds: float = VIEW_POLL_SECONDS,
                       started: Started | None = None) -> Iterator[ViewRunner]:
    store = open_store(settings, database_url)
    try:
        runner = open_views(store)
        stop, following = threading.Event(), threading.Event()
        if started is not None:
            started.done.append(following)
        thread = threading.Thread(target=_follow, args=(runner, stop, poll_seconds, following),
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


def _follow(runner: ViewRunner, stop: threading.Event, poll_seconds: float,
            following: threading.Event) -> None:
    """Follow the log until stopped; a failure is logged and retried, never lost silently.
    ``following`` is set once caught up, or once a failure is logged (start-up is over)."""
    while not stop.is_set():
        try:
            runner.follow(stop, poll_seconds=poll_seconds, on_following=following.set)
        except Exception as exc:  # noqa: BLE001 - a thread has nobody to raise to: log, retry
            log.error("view_runner_failed", error=type(exc).__name__, detail=str(exc)[:300])
            following.set()
            stop.wait(poll_seconds * 5)


@contextmanager
def beside_api(settings: Settings, database_url: str, scheduler: bool,
               views: bool) -> Iterator[Started]:
    """Start what is asked for beside the API; stop it, in reverse order, on the way out."""
    started = Started()
    with ExitStack() as stack:
        if views:
            stack.enter_context(view_runner_beside(settings, database_url, started=started))
        if scheduler:
            stack.enter_context(scheduler_beside(settings, database_url, started=started))
        yield started

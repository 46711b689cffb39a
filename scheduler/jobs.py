"""Scheduler jobs: plain functions taking ``now``, idempotent, one summary log line each.

``sweep_deadlines`` is the deadline engine. It asks the worklist view which cases
have a deadline due by ``now`` (so its cost grows with the deadlines due, not
with the open cases) and records each as ``DeadlinePassed`` at the deadline's
own time, with ``now`` as the recorded time, through ``CaseService.advance_clock``
(the same code as the journal's ``advance_clock``). After downtime the first
sweep therefore records every missed deadline, in order, each at its true time.

Several schedulers may run against one database: two sweeps that pass the same
deadline both try to append the next event to the case; the unique (case,
position) constraint lets one win and the other gets ConcurrentChangeError,
reloads, finds the deadline already passed and records nothing. Each deadline is
recorded exactly once.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import asdict, dataclass

import structlog

from cases.application import SCHEDULER_ACTOR, CaseService, UnitOfWork
from cases.errors import ConcurrentChangeError

log = structlog.get_logger("abate.scheduler")

MAX_ATTEMPTS = 10


@dataclass
class SweepSummary:
    now: str
    deadlines_passed: int = 0
    events_recorded: int = 0
    conflicts_retried: int = 0
    seconds: float = 0.0


def sweep_deadlines(service: CaseService, now: dt.datetime, *, municipality: str | None = None,
                    actor: str = SCHEDULER_ACTOR) -> SweepSummary:
    """Record every automatic deadline due by ``now``; safe to run twice or in parallel."""
    started = time.perf_counter()
    summary = SweepSummary(now=now.isoformat())
    for attempt in range(1, MAX_ATTEMPTS + 1):
        uow = UnitOfWork(service.store)
        passed = service.advance_clock(uow, until=now, now=now, actor=actor,
                                       municipality=municipality)
        try:
            summary.events_recorded = uow.commit()
        except ConcurrentChangeError:
            summary.conflicts_retried += 1
            if attempt == MAX_ATTEMPTS:
                raise
            time.sleep(0.05 * attempt)  # another instance is sweeping: let it finish, reload
            continue
        summary.deadlines_passed = passed
        break
    summary.seconds = round(time.perf_counter() - started, 3)
    log.info("deadline_sweep", **asdict(summary))
    return summary

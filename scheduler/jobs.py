"""Scheduler jobs: plain functions taking ``now``, idempotent, one summary log line each.

``sweep_deadlines`` is the deadline engine. It asks the worklist view which cases
have a deadline due by ``until`` (so its cost grows with the deadlines due, not
with the open cases) and records each as ``DeadlinePassed`` at the deadline's
own time, with ``now`` as the recorded time. After downtime the first sweep
therefore records every missed deadline, in order, each at its true time.

It records case by case, a few cases per transaction: a clerk recording a command
on one of those cases meanwhile (or a second scheduler) makes only that batch
conflict. A batch that conflicted is retried one case at a time, each case
reloaded and passed again, at most ``ATTEMPTS_PER_CASE`` times; a case that still
conflicts is logged and left for the next sweep, and the sweep goes on. The unique
(case, position) constraint lets exactly one writer append each event, so each
deadline is recorded exactly once: a reloaded case whose deadline another writer
already passed has nothing left to record.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import asdict, dataclass
from uuid import UUID

import structlog

from cases.application import SCHEDULER_ACTOR, CaseService, UnitOfWork
from cases.errors import ConcurrentChangeError

log = structlog.get_logger("abate.scheduler")

BATCH_CASES = 20  # cases per transaction while nothing conflicts
ATTEMPTS_PER_CASE = 5


@dataclass
class SweepSummary:
    now: str
    cases: int = 0  # cases with a deadline due that the sweep looked at
    deadlines_passed: int = 0
    events_recorded: int = 0
    conflicts_retried: int = 0
    cases_given_up: int = 0
    cases_left: int = 0  # due cases left for the next sweep because a stop was asked for
    seconds: float = 0.0


def sweep_deadlines(service: CaseService, now: dt.datetime, *, municipality: str | None = None,
                    actor: str = SCHEDULER_ACTOR, until: dt.datetime | None = None,
                    batch_cases: int = BATCH_CASES,
                    stop: threading.Event | None = None) -> SweepSummary:
    """Record every automatic deadline due by ``until`` (default ``now``); ``now`` is the
    recorded time. Safe to run twice, in parallel, and beside clerks. Once ``stop`` is set
    the sweep ends after the batch under way: the next sweep records what is left, each
    deadline still at its own time, so a process asked to stop does so at once."""
    started = time.perf_counter()
    until = now if until is None else until
    service.check_clock(until, now)
    summary = SweepSummary(now=now.isoformat())
    due = service.cases_due(until, municipality)
    summary.cases = len(due)
    for start in range(0, len(due), batch_cases):
        if stop is not None and stop.is_set():
            summary.cases_left = len(due) - start
            break
        batch = due[start:start + batch_cases]
        try:
            passed, recorded = _pass(service, batch, until, now, actor, municipality)
        except ConcurrentChangeError:
            summary.conflicts_retried += 1
            for key in batch:
                _pass_one_case(service, key, until, now, actor, municipality, summary)
            continue
        summary.deadlines_passed += passed
        summary.events_recorded += recorded
    summary.seconds = round(time.perf_counter() - started, 3)
    log.info("deadline_sweep", **asdict(summary))
    return summary


def _pass(service: CaseService, keys: list[UUID], until: dt.datetime, now: dt.datetime,
          actor: str, municipality: str | None) -> tuple[int, int]:
    """Pass the due deadlines of these cases, freshly loaded, in one transaction."""
    uow = UnitOfWork(service.store)
    uow.load_many(keys)
    passed = 0
    for key in keys:
        case = uow.load(key)
        if municipality and case.municipality != municipality:
            continue
        passed += case.pass_due_deadlines(until=until, now=now, actor=actor)
    return passed, uow.commit()


def _pass_one_case(service: CaseService, key: UUID, until: dt.datetime, now: dt.datetime,
                   actor: str, municipality: str | None, summary: SweepSummary) -> None:
    for attempt in range(1, ATTEMPTS_PER_CASE + 1):
        try:
            passed, recorded = _pass(service, [key], until, now, actor, municipality)
        except ConcurrentChangeError:
            summary.conflicts_retried += 1
            time.sleep(0.01 * attempt)  # another writer is on this case: let it finish
            continue
        summary.deadlines_passed += passed
        summary.events_recorded += recorded
        return
    summary.cases_given_up += 1
    log.warning("deadline_sweep_case_given_up", case_id=str(key), attempts=ATTEMPTS_PER_CASE)

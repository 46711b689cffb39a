"""Benchmark of the deadline sweep (not a test): its time must grow with the deadlines due,
not with the open cases.

Builds N open Belleville § 9.13 cases, each with a served notice whose 72-hour cure
deadline is still open; 100 of them fall due by T1 and 10,000 by T2. Then it times
``sweep_deadlines`` at T1 (100 due) and at T2 (the next 9,900), beside the same sweeps
on a store with far fewer open cases, and prints the figures.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import time
from pathlib import Path

from cases.application import CaseService, Outcome, UnitOfWork
from cases.commands import parse_command
from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.lookups import ProjectedDueDeadlines, ProjectedRepeatOffenses
from projections.runner import ViewRunner
from scheduler.jobs import sweep_deadlines

CHICAGO = dt.timezone(dt.timedelta(hours=-6))
NOW = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
DELIVERY_EARLY = dt.datetime(2026, 2, 2, 10, tzinfo=CHICAGO)   # cure due 2026-02-05 10:00
DELIVERY_MIDDLE = dt.datetime(2026, 2, 9, 10, tzinfo=CHICAGO)  # cure due 2026-02-12 10:00
DELIVERY_LATE = dt.datetime(2026, 11, 1, 10, tzinfo=CHICAGO)   # cure due 2026-11-04
T1 = dt.datetime(2026, 2, 6, tzinfo=CHICAGO)
T2 = dt.datetime(2026, 2, 13, tzinfo=CHICAGO)


def _case_commands(number: int, delivered: dt.datetime) -> list[dict]:
    ref = f"SW-{number:06d}"
    base = {"municipality": "belleville", "case_ref": ref, "actor": "bench"}
    return [
        {**base, "command": "open_case", "at": (delivered - dt.timedelta(hours=1)).isoformat(),
         "rule": "belleville:9.13",
         "parcel": {"county": "Dane", "number": f"0509-{number // 10000:03d}-{number % 10000:04d}-0"},
         "site_address": "1 Main St", "owner": {"name": f"Owner {number}"},
         "description": "tires"},
        {**base, "command": "serve_notice", "at": delivered.isoformat(), "method": "personal",
         "served_on": "owner"},
    ]


def build(service: CaseService, open_cases: int, early: int, middle: int,
          batch: int = 200) -> float:
    """Record the cases in batches of ``batch`` per transaction; returns seconds."""
    store = service.store
    started = time.perf_counter()
    for start in range(0, open_cases, batch):
        uow = UnitOfWork(store)
        outcome = Outcome()
        for number in range(start, min(start + batch, open_cases)):
            delivered = (DELIVERY_EARLY if number < early else
                         DELIVERY_MIDDLE if number < early + middle else DELIVERY_LATE)
            for data in _case_commands(number, delivered):
                service.execute(parse_command(data), NOW, uow, outcome)
        uow.commit()
    return time.perf_counter() - started


def measure(url: str, open_cases: int, extra_env: dict | None = None) -> dict:
    store = CaseStore(url, extra_env=extra_env)
    runner = ViewRunner(store, ALL_VIEWS)
    try:
        service = CaseService(store, repeat_offenses=ProjectedRepeatOffenses(runner),
                              due_deadlines=ProjectedDueDeadlines(runner))
        built = build(service, open_cases, early=100, middle=9_900)
        started = time.perf_counter()
        runner.catch_up()
        caught_up = time.perf_counter() - started
        first = sweep_deadlines(service, T1)
        runner.catch_up()  # what `abate projections run` does between sweeps
        cpu_started = time.process_time()
        second = sweep_deadlines(service, T2)
        return {"open": open_cases, "build_s": built, "catch_up_s": caught_up,
                "sweep_100_s": first.seconds, "passed_100": first.deadlines_passed,
                "sweep_9900_s": second.seconds, "passed_9900": second.deadlines_passed,
                # this process only: on a shared disk the wall time is mostly fsync waits
                "sweep_9900_cpu_s": time.process_time() - cpu_started}
    finally:
        runner.close()
        store.close()


def run_sweep_benchmark(sizes: list[int]) -> None:
    print("Deadline sweep: open cases vs deadlines due (SQLite, one process)")
    print(f"{'open cases':>10}  {'build s':>8}  {'views s':>8}  {'100 due: s':>10}  "
          f"{'9,900 due: s':>12}  {'cpu s':>6}  {'due/s':>6}  {'due/s cpu':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            url = f"sqlite:///{Path(folder) / f'sweep-{size}.sqlite3'}"
            row = measure(url, size)
            expected = (min(100, size), min(9_900, max(size - 100, 0)))
            if (row["passed_100"], row["passed_9900"]) != expected:
                raise RuntimeError(f"sweep recorded {row}, expected {expected}")
            passed = row["passed_9900"]
            print(f"{size:>10,}  {row['build_s']:>8.1f}  {row['catch_up_s']:>8.1f}  "
                  f"{row['sweep_100_s']:>10.3f}  {row['sweep_9900_s']:>12.2f}  "
                  f"{row['sweep_9900_cpu_s']:>6.2f}  {_rate(passed, row['sweep_9900_s']):>6}  "
                  f"{_rate(passed, row['sweep_9900_cpu_s']):>9}", flush=True)


def _rate(deadlines: int, seconds: float) -> str:
    """Deadlines a second, or a dash when there were none to time."""
    return f"{deadlines / seconds:,.0f}" if deadlines and seconds > 0 else "-"

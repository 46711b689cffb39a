"""Benchmark (not a test): how long ``abate serve`` takes to stop on SIGTERM while its first
deadline sweep is under way, beside the same server stopped with nothing to do.

Abate side: N open Belleville § 9.13 cases whose cure deadlines are all due (bench.sweep's
cases), served by the installed ``abate serve`` on SQLite as an operator starts it (the
scheduler and the view runner in the same process); SIGTERM once it answers /health and
its first sweep has been under way for a second. Bare side: the same command on an empty
store, stopped the same way: what any stop costs (uvicorn's shutdown, the stores closed).
The sweep stops after its batch; what is left is recorded by the next sweep.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from bench.served import Server
from bench.sweep import build
from cases.application import CaseService
from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.lookups import ProjectedDueDeadlines, ProjectedRepeatOffenses
from projections.runner import ViewRunner

SWEEP_UNDER_WAY_SECONDS = 1.0
LOGS = {"ABATE_LOG_LEVEL": "info", "ABATE_LOG_FORMAT": "json"}


def _filled(url: str, cases: int) -> None:
    store = CaseStore(url)
    runner = ViewRunner(store, ALL_VIEWS)
    try:
        service = CaseService(store, repeat_offenses=ProjectedRepeatOffenses(runner),
                              due_deadlines=ProjectedDueDeadlines(runner))
        build(service, cases, early=cases, middle=0)
        runner.catch_up()
    finally:
        runner.close()
        store.close()


def _stopped(url: str, log: Path) -> dict:
    """Serve, SIGTERM a second into the first sweep, and time the stop."""
    server = Server(url, {}, 1, log, options=(), extra_env=LOGS)
    time.sleep(SWEEP_UNDER_WAY_SECONDS)
    started = time.monotonic()
    server.process.terminate()
    server.process.wait(timeout=600)
    stop_seconds = time.monotonic() - started
    server.stop(grace=1)
    sweeps = [line for line in map(_fields, log.read_text().splitlines())
              if line.get("event") == "deadline_sweep"]
    first = sweeps[0] if sweeps else {}
    return {"stop_s": stop_seconds, "exit": server.process.returncode,
            "due": first.get("cases", 0), "left": first.get("cases_left", 0)}


def _fields(line: str) -> dict:
    try:
        fields = json.loads(line)
    except ValueError:
        return {}
    return fields if isinstance(fields, dict) else {}


def run_stop_benchmark(sizes: list[int]) -> None:
    print("Stop on SIGTERM during the first deadline sweep (abate serve, SQLite, one process)")
    print(f"{'open cases':>10}  {'due':>7}  {'left for next':>13}  {'stop s':>7}  "
          f"{'empty store stop s':>18}  {'exit':>4}")
    with tempfile.TemporaryDirectory() as folder:
        empty_url = f"sqlite:///{Path(folder) / 'empty.sqlite3'}"
        for size in sizes:
            url = f"sqlite:///{Path(folder) / f'stop-{size}.sqlite3'}"
            _filled(url, size)
            busy = _stopped(url, Path(folder) / f"stop-{size}.log")
            bare = _stopped(empty_url, Path(folder) / f"empty-{size}.log")
            print(f"{size:>10,}  {busy['due']:>7,}  {busy['left']:>13,}  "
                  f"{busy['stop_s']:>7.2f}  {bare['stop_s']:>18.2f}  {busy['exit']:>4}",
                  flush=True)

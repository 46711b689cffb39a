"""Benchmark (not a test): ``abate import`` of a large generated journal, beside a bare
eventsourcing application writing the same number of aggregates and events.

Each side runs in its own child process, started by a small measuring process that
reports the wall-clock time and the child's peak resident memory (``ru_maxrss`` of
``resource.getrusage(RUSAGE_CHILDREN)``: the whole process, interpreter and libraries
included, not a tracemalloc count of Python objects).

- Abate: the installed ``abate import FILE`` on a fresh database, as a user runs it
  (views caught up once at the start, every command checked, events staged, one final
  ``INSERT ... SELECT``); the time the final move held the write lock is read from its
  ``journal_staged_events_saved`` log line.
- Bare: ``BareApp`` (abate.bench) saving as many ``BareCase`` aggregates, with as many
  events in all, through the same persistence module and URL, 1,000 aggregates per
  ``save()`` (one transaction each): the fastest correct way to write those events with
  the library alone. It checks nothing, reads nothing, and is not all or nothing.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from abate.journal_generator import write_journal

LINES_PER_CASE = 5.2  # the generated mix (abate.journal_generator): 52 lines per 10 cases
BARE_BATCH = 1_000


def measured(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run ``command`` in a measuring child; its seconds, peak RSS (MB), output."""
    done = subprocess.run([sys.executable, "-m", "abate.bench_journal", "measure", *command],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed: {done.stderr[-2000:]}")
    report = json.loads(done.stdout.splitlines()[-1])
    if report["returncode"] != 0:
        raise RuntimeError(f"{command[:3]} exited {report['returncode']}: {report['stderr'][-2000:]}")
    return report


def _measure(command: list[str]) -> None:
    started = time.perf_counter()
    child = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KB on Linux
    print(json.dumps({"seconds": seconds, "peak_mb": peak_kb / 1024,
                      "returncode": child.returncode, "stdout": child.stdout,
                      "stderr": child.stderr}))


def _bare(url: str, schema: str, cases: int, events: int) -> None:
    from abate.bench_bare import BareCase, bare_app, close

    app = bare_app(url, {"SQLALCHEMY_SCHEMA": schema} if schema != "-" else {})
    steps, extra = divmod(events - cases, cases)
    saved = 0
    try:
        for start in range(0, cases, BARE_BATCH):
            batch = []
            for i in range(start, min(start + BARE_BATCH, cases)):
                case = BareCase(ref=f"J-{i}")
                for step in range(steps + (1 if i < extra else 0)):
                    case.step(f"step {step}")
                batch.append(case)
            saved += len(app.save(*batch))
    finally:
        close(app)
    print(json.dumps({"events": saved}))


def journal_rows(backend: Any, lines: int, directory: str) -> list[tuple]:
    """One Abate row and one bare row for a journal of about ``lines`` lines."""
    path = Path(directory) / f"journal-{lines}.jsonl"
    cases = max(1, round(lines / LINES_PER_CASE))
    written = write_journal(str(path), cases)
    url, extra = backend.fresh(f"journal_{lines}")
    env = {**os.environ, "ABATE_DATABASE_URL": url, "ABATE_LOG_FORMAT": "console"}
    if extra.get("SQLALCHEMY_SCHEMA"):
        env["ABATE_DATABASE_SCHEMA"] = extra["SQLALCHEMY_SCHEMA"]
    abate = str(Path(sys.executable).with_name("abate"))
    print(f"[{backend.name}] abate import of {written:,} lines ...", flush=True)
    ours = measured([abate, "import", str(path)], env)
    summary = json.loads(ours["stdout"])
    lock = re.search(r"journal_staged_events_saved.*?seconds=([0-9.]+)", ours["stderr"])
    backend.discard(f"journal_{lines}")
    events = summary["events_recorded"]
    url, extra = backend.fresh(f"bare_{lines}")
    print(f"[{backend.name}] bare: {cases:,} aggregates, {events:,} events ...", flush=True)
    bare = measured([sys.executable, "-m", "abate.bench_journal", "bare", url,
                     extra.get("SQLALCHEMY_SCHEMA", "-"), str(cases), str(events)], os.environ)
    backend.discard(f"bare_{lines}")
    path.unlink()
    return [
        (backend.name, "abate import", written, events, f"{ours['seconds']:.1f}",
         f"{written / ours['seconds']:,.0f}", f"{events / ours['seconds']:,.0f}",
         f"{ours['peak_mb']:,.0f}", lock.group(1) if lock else "-"),
        (backend.name, f"bare, {BARE_BATCH} aggr./save", "-", events, f"{bare['seconds']:.1f}",
         "-", f"{events / bare['seconds']:,.0f}", f"{bare['peak_mb']:,.0f}", "-"),
    ]


JOURNAL_COLUMNS = ("backend", "what", "lines", "events", "seconds", "lines/s", "events/s",
                   "peak MB", "lock s")


def main(argv: list[str]) -> None:
    if argv[0] == "measure":
        _measure(argv[1:])
    elif argv[0] == "bare":
        _bare(argv[1], argv[2], int(argv[3]), int(argv[4]))
    else:  # pragma: no cover
        raise SystemExit("usage: python -m abate.bench_journal measure CMD... | bare URL SCHEMA CASES EVENTS")


if __name__ == "__main__":
    main(sys.argv[1:])


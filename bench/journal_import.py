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
- Bare: ``BareApp`` (bench.bare) saving as many ``BareCase`` aggregates, with as many
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

from bench.journal_generator import write_journal

LINES_PER_CASE = 5.2  # the generated mix (bench.journal_generator): 52 lines per 10 cases
BARE_BATCH = 1_000
# The checkout holding this package: the children run ``python -m bench.journal_import``
# from it, as bench/ is not installed (it is found beside the product, not in site-packages).
CHECKOUT = Path(__file__).resolve().parent.parent


def measured(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run ``command`` in a measuring child; its seconds, peak RSS (MB), output."""
    done = subprocess.run([sys.executable, "-m", "bench.journal_import", "measure", *command],
                          env=env, capture_output=True, text=True, cwd=CHECKOUT)
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
    from bench.bare import BareCase, bare_app, close

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
    bare = measured([sys.executable, "-m", "bench.journal_import", "bare", url,
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


def _per_command(path: str) -> None:
    """Each line of the journal as its own command (``CaseService.handle``: one transaction,
    the views caught up before each look-up), as the HTTP API and the scheduler apply them."""
    import datetime as dt

    from projections.bootstrap import case_service, open_views
    from cases.commands import parse_command
    from cases.settings import Settings
    from cases.store import CaseStore

    settings = Settings.from_env()
    store = CaseStore(settings.database_url_for(None), extra_env=settings.store_env())
    runner = open_views(store)
    events = lines = 0
    try:
        service = case_service(settings, store, runner)
        now = dt.datetime.now(dt.timezone.utc)
        with open(path, encoding="utf-8") as journal:
            for line in journal:
                events += service.handle(parse_command(json.loads(line)), now).events_recorded
                lines += 1
    finally:
        runner.close()
        store.close()
    print(json.dumps({"lines": lines, "events": events}))


def scaling_rows(backend: Any, case_counts: tuple[int, ...], per_command_cases: int | None,
                 directory: str) -> list[tuple]:
    """``abate import`` of the generated journal at each number of cases (time and peak
    memory, and each size's time against the size before it), and at ``per_command_cases``
    the same journal applied one command at a time."""
    rows = []
    previous: tuple[int, float] | None = None
    abate = str(Path(sys.executable).with_name("abate"))
    for cases in sorted(set(case_counts) | ({per_command_cases} - {None})):
        path = Path(directory) / f"scaling-{cases}.jsonl"
        written = write_journal(str(path), cases)
        url, extra = backend.fresh(f"scaling_{cases}")
        env = {**os.environ, "ABATE_DATABASE_URL": url, "ABATE_LOG_FORMAT": "console"}
        if extra.get("SQLALCHEMY_SCHEMA"):
            env["ABATE_DATABASE_SCHEMA"] = extra["SQLALCHEMY_SCHEMA"]
        print(f"[{backend.name}] abate import, {cases:,} cases ...", flush=True)
        ours = measured([abate, "import", str(path)], env)
        backend.discard(f"scaling_{cases}")
        events = json.loads(ours["stdout"])["events_recorded"]
        if cases in case_counts:
            growth = "-"
            if previous is not None:
                growth = (f"{ours['seconds'] / previous[1]:.1f}x time for "
                          f"{cases / previous[0]:.0f}x cases")
            previous = (cases, ours["seconds"])
            rows.append((backend.name, "abate import", cases, written, events,
                         f"{ours['seconds']:.1f}", f"{events / ours['seconds']:,.0f}",
                         f"{ours['peak_mb']:,.0f}", growth))
        if cases == per_command_cases:
            url, extra = backend.fresh(f"per_command_{cases}")
            env["ABATE_DATABASE_URL"] = url
            if extra.get("SQLALCHEMY_SCHEMA"):
                env["ABATE_DATABASE_SCHEMA"] = extra["SQLALCHEMY_SCHEMA"]
            print(f"[{backend.name}] one command at a time, {cases:,} cases ...", flush=True)
            single = measured([sys.executable, "-m", "bench.journal_import", "per-command",
                               str(path)], env)
            backend.discard(f"per_command_{cases}")
            single_events = json.loads(single["stdout"].splitlines()[-1])["events"]
            rate = single_events / single["seconds"]
            rows.append((backend.name, "one command a time", cases, written, single_events,
                         f"{single['seconds']:.1f}", f"{rate:,.0f}", f"{single['peak_mb']:,.0f}",
                         f"import {events / ours['seconds'] / rate:.1f}x its rate"))
        path.unlink()
    return rows


SCALING_COLUMNS = ("backend", "what", "cases", "lines", "events", "seconds", "events/s",
                   "peak MB", "against the row before")


def main(argv: list[str]) -> None:
    if argv[0] == "measure":
        _measure(argv[1:])
    elif argv[0] == "bare":
        _bare(argv[1], argv[2], int(argv[3]), int(argv[4]))
    elif argv[0] == "per-command":
        _per_command(argv[1])
    else:  # pragma: no cover
        raise SystemExit("usage: python -m bench.journal_import measure CMD... | bare URL SCHEMA "
                         "CASES EVENTS | per-command JOURNAL")


if __name__ == "__main__":
    main(sys.argv[1:])


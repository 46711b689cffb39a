"""Sections 1 to 5 of ``python -m bench`` (and the runner of every section here): throughput
and load-time figures, printed for people to read.

Why: Abate adds a command layer (pydantic parsing, rule look-ups, deadline
arithmetic, a SHA-256 hash chain, rich events) on top of the eventsourcing
library. These figures say what that layer costs, measured against the library
itself doing the same database work, and whether snapshots keep long cases
cheap to load. This is a benchmark, not a test: nothing here asserts on time.

What is measured, on SQLite (a temporary file) and, when a URL is given, on
PostgreSQL (a fresh schema per store, dropped at the end):

1. Full-lifecycle cases per second through ``CaseService.handle``, one command
   and one transaction at a time, the way users call it: open_case,
   serve_notice, record_abatement (after the 72 h cure), issue_bill,
   record_payment (in full), close_case under ``belleville:9.13``.
2. The bare library doing the same database work: one plain ``Aggregate`` per
   case, the same six events, and the same reads and writes (look the case up
   before creating it, reload it before each later event, one transaction per
   save), with the same persistence module and URL style. The ratio abate/bare
   is the share of the library's throughput that Abate keeps (target >= 0.8, wall and CPU).
   Two diagnostics are printed beside it: the ratio on this process's CPU time
   (steadier than wall-clock time on a shared disk), and Abate with snapshots
   off, because a snapshotting store looks for a snapshot on every load, an
   extra query (and transaction) that the bare application does not make.
3. The time to load one case of ``long_case_events`` events from a store with
   snapshots (every 100 events) and from one without (full replay). The case
   is built in batched transactions; snapshots are taken as versions reach
   multiples of 100, and the benchmark checks that they exist.
4. Projection catch-up: every view of ``ALL_VIEWS``, one at a time, from
   position 0 over a log of ``catch_up_cases`` generated cases (about 5.5
   events per case), in events per second. Beside it, in the same run and
   taking turns, the bare read of the same log: a Core select in pages of 500
   (``CaseStore.log_page``, case ids as stored) plus the runner's own decoder
   (``EventDecoder``) for each row, with the runner's garbage-collector setting: the least
   any projection must do. Each view's rate over the bare rate is printed (target >= 0.5),
   and so is the rate of every view together, which is what ``ViewRunner.rebuild()`` does (reading the same pages of 500, applying ten at
   a time in one transaction, as a catch-up does too): each view alone reads the log on its own.
   ``--catch-up-pairs`` sets the pairs per pass, ``--catch-up-together`` times only every
   view together (for 100,000 cases). The log is written through the journal import.
5. Tax-roll exports at ``tax_roll_sizes`` cases. The data is written in bulk
   (journal imports of 10,000 cases), every view is caught up once from 0
   (timed: the catch-up figure at scale), and then ``TaxRoll.charges`` is timed
   for exports that list a few charges and for one that lists many. The number
   of events stored, the number of charges listed and the export time are
   printed side by side. The number of charges each export must list is known
   from the case mix, and the run checks it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import sqlalchemy as sa
from eventsourcing.application import AggregateNotFoundError

from bench.bare import BareApp, BareCase, bare_app, close
from cases.application import CaseService, Outcome, UnitOfWork
from cases.commands import parse_command
from cases.domain import case_id
from cases.repeat_scan import ScanRepeatOffenses
from cases.settings import Settings
from cases.store import SNAPSHOT_INTERVAL, CaseStore
from projections import ALL_VIEWS, TaxRoll
from projections.bootstrap import case_service
from projections.event_decoding import EventDecoder
from projections.runner import PAGES_PER_BATCH, ViewRunner, old_objects_left_alone
from projections.view import View

NOW = dt.datetime(2026, 4, 1, 12, 0, tzinfo=dt.timezone.utc)  # system time of every command
MUNICIPALITY = "belleville"
OPENED_AT = dt.datetime.fromisoformat("2026-03-02T09:00:00-06:00")
WARMUP_CASES = 10  # per store, not timed: imports, first connection, WAL mode, caches
CHUNK_CASES = 20  # Abate and bare take turns, this many cases at a time
LOAD_REPEATS = 5
LONG_CASE_BATCH = 500  # events per transaction while building the long case

OPEN_CASE = {
    "command": "open_case", "at": OPENED_AT.isoformat(), "rule": "belleville:9.13",
    "parcel": {"county": "Dane", "number": "0509-123-4567-0"}, "site_address": "1 Main St",
    "owner": {"name": "Ann Owner", "mailing_address": "1 Main St"}, "description": "tires",
}
LIFECYCLE = (
    OPEN_CASE,
    {"command": "serve_notice", "method": "personal", "served_on": "Ann Owner",
     "at": "2026-03-02T10:00:00-06:00"},
    {"command": "record_abatement", "at": "2026-03-06T09:00:00-06:00",  # cure ran out 03-05 10:00
     "costs": [{"item": "crew", "amount": "150.00"}]},
    {"command": "issue_bill", "at": "2026-03-09T09:00:00-05:00"},
    {"command": "record_payment", "amount": "150.00", "at": "2026-03-20T09:00:00-05:00"},
    {"command": "close_case", "reason": "paid", "at": "2026-03-21T09:00:00-05:00"},
)


# ---------------------------------------------------------------- backends


class Backend(Protocol):
    name: str

    def fresh(self, label: str) -> tuple[str, dict[str, str]]:
        """(database URL, extra env) of a new, empty place for one store."""

    def discard(self, label: str) -> None:
        """Delete that place now (large data sets), rather than at the end."""


class SQLiteBackend:
    name = "SQLite"

    def __init__(self, directory: str):
        self.directory = directory

    def fresh(self, label: str) -> tuple[str, dict[str, str]]:
        return f"sqlite:///{self.directory}/{label}.sqlite3", {}

    def discard(self, label: str) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            path = f"{self.directory}/{label}.sqlite3{suffix}"
            if os.path.exists(path):
                os.remove(path)


class PostgresBackend:
    """One fresh schema per store (SQLALCHEMY_SCHEMA); every schema is dropped at the end."""

    name = "PostgreSQL"

    def __init__(self, url: str):
        self.url = url
        self.run = f"abate_bench_{uuid.uuid4().hex[:8]}"
        self.engine = sa.create_engine(url)
        self.schemas: list[str] = []
        print(f"PostgreSQL: {self.engine.url.render_as_string(hide_password=True)}, "
              f"schemas {self.run}_* (dropped at the end)", flush=True)

    def fresh(self, label: str) -> tuple[str, dict[str, str]]:
        schema = f"{self.run}_{label}"
        with self.engine.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        self.schemas.append(schema)
        return self.url, {"SQLALCHEMY_SCHEMA": schema}

    def discard(self, label: str) -> None:
        schema = f"{self.run}_{label}"
        with self.engine.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        self.schemas.remove(schema)

    def drop(self) -> None:
        with self.engine.begin() as conn:
            for schema in self.schemas:
                conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        self.engine.dispose()


def resolve_postgres_url(postgres_url: str | None) -> str | None:
    """The given URL, else ABATE_BENCH_POSTGRES_URL, else ABATE_TEST_DATABASE_URL."""
    url = (postgres_url or os.environ.get("ABATE_BENCH_POSTGRES_URL")
           or os.environ.get("ABATE_TEST_DATABASE_URL"))
    if url and url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]  # the driver Abate installs
    return url or None


@contextmanager
def backends(postgres_url: str | None, sqlite: bool = True) -> Iterator[list[Backend]]:
    with tempfile.TemporaryDirectory(prefix="abate-bench-") as directory:
        found: list[Backend] = [SQLiteBackend(directory)] if sqlite else []
        postgres = PostgresBackend(postgres_url) if postgres_url else None
        if postgres:
            found.append(postgres)
        try:
            yield found
        finally:
            if postgres:
                postgres.drop()


# ---------------------------------------------------------------- 1. Abate lifecycles


@dataclass
class Run:
    """Cases, events, wall-clock and CPU seconds summed over the timed chunks of one side."""

    label: str
    cases: int = 0
    events: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process only (not the PostgreSQL server)

    @property
    def cases_per_second(self) -> float:
        return self.cases / self.seconds

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds

    @property
    def cpu_ms_per_case(self) -> float:
        return self.cpu_seconds / self.cases * 1000

    def time(self, lifecycle: Callable[[str], int], refs: list[str]) -> float:
        """Run these cases, add them to the totals, and return their cases per second."""
        start, cpu_start = time.perf_counter(), time.process_time()
        events = sum(lifecycle(ref) for ref in refs)
        seconds = time.perf_counter() - start
        self.cpu_seconds += time.process_time() - cpu_start
        self.seconds += seconds
        self.cases += len(refs)
        self.events += events
        return len(refs) / seconds


def lifecycle_events(service: CaseService, ref: str) -> list[int]:
    """One case from open to close, one command (and transaction) at a time; the events
    each command recorded (a command may record a deadline that passed before its fact)."""
    recorded = []
    for fields in LIFECYCLE:
        command = parse_command({"municipality": MUNICIPALITY, "case_ref": ref,
                                 "actor": "bench", **fields})
        recorded.append(service.handle(command, NOW).events_recorded)
    return recorded


def abate_lifecycle(service: CaseService, ref: str) -> int:
    return sum(lifecycle_events(service, ref))


# ---------------------------------------------------------------- 2. the bare library


def bare_lifecycle(app: BareApp, shape: list[int], ref: str) -> int:
    """The same reads and writes as ``abate_lifecycle``, without Abate's layer: each save
    holds as many events as Abate's command recorded (``shape``, from ``lifecycle_events``)."""
    key = BareCase.create_id(ref)
    try:
        app.repository.get(key)  # open_case looks for an existing case first
        raise RuntimeError(f"bare case {ref} already exists")
    except AggregateNotFoundError:
        pass
    events = len(app.save(BareCase(ref=ref)))
    for fields, recorded in zip(LIFECYCLE[1:], shape[1:]):
        case = app.repository.get(key)
        for _ in range(recorded):
            case.step(fields["command"])
        events += len(app.save(case))
    return events


# ---------------------------------------------------------------- 1 and 2 side by side


@dataclass
class Comparison:
    abate: Run  # the CaseStore as configured (snapshots every 100 events)
    abate_no_snapshots: Run  # diagnostic: the same without the snapshot look-up per load
    bare: Run
    chunk_ratios: list[float]  # abate/bare cases per second, chunk by chunk

    def ratio(self, run: Run) -> float:
        return run.cases_per_second / self.bare.cases_per_second

    @property
    def cpu_ratio(self) -> float:
        return self.bare.cpu_ms_per_case / self.abate.cpu_ms_per_case


def compare_lifecycles(backend: Backend, cases: int) -> Comparison:
    """Abate and the bare library in turns, a chunk of cases at a time.

    Taking turns (rather than all of one, then all of the other), and rotating
    who goes first, lets background load and the disk's fsync latency, which
    drift over a run on a shared machine, weigh on every side alike.
    """
    url, env_store = backend.fresh("abate")
    store = CaseStore(url, extra_env=env_store)
    url, env_unsnapped = backend.fresh("abate_nosnap")
    unsnapped = CaseStore(url, snapshots=False, extra_env=env_unsnapped)
    runners = []
    app = bare_app(*backend.fresh("bare"))
    try:
        abate = Run("Abate CaseService.handle")
        unsnapped_run = Run("  same, snapshots off")
        bare = Run("bare eventsourcing")
        runners = [ViewRunner(store, ALL_VIEWS, schema=view_schema(env_store)),
                   ViewRunner(unsnapped, ALL_VIEWS, schema=view_schema(env_unsnapped))]
        service = case_service(Settings.from_env(), store, runners[0])
        shape = lifecycle_events(service, "SHAPE-0")  # the events of each command, for bare
        sides = [(abate, partial(abate_lifecycle, service)),
                 (unsnapped_run, partial(abate_lifecycle,
                                         case_service(Settings.from_env(), unsnapped, runners[1]))),
                 (bare, partial(bare_lifecycle, app, shape))]
        for _, lifecycle in sides:
            for i in range(WARMUP_CASES):
                lifecycle(f"WARM-{i}")
        ratios = []
        for chunk, first in enumerate(range(0, cases, CHUNK_CASES)):
            refs = [f"BENCH-{i}" for i in range(first, min(first + CHUNK_CASES, cases))]
            turn = chunk % len(sides)
            rates = {run.label: run.time(lifecycle, refs)
                     for run, lifecycle in sides[turn:] + sides[:turn]}
            ratios.append(rates[abate.label] / rates[bare.label])
        return Comparison(abate, unsnapped_run, bare, ratios)
    finally:
        for runner in runners:
            runner.close()
        for application in (store, unsnapped, app):
            close(application)


# ---------------------------------------------------------------- 3. loading a long case


@dataclass
class Load:
    label: str
    median_ms: float
    from_snapshot: int | None  # version of the snapshot used, if any
    replayed: int  # events applied after it


def build_long_case(store: CaseStore, events: int) -> uuid.UUID:
    """One case with ``events`` events: open, then inspections in batched transactions."""
    service = CaseService(store)
    service.handle(parse_command({**OPEN_CASE, "municipality": MUNICIPALITY,
                                  "case_ref": "LONG-1", "actor": "bench"}), NOW)
    written = 1
    while written < events:
        batch = min(LONG_CASE_BATCH, events - written)
        uow, outcome = UnitOfWork(store), Outcome()
        for n in range(written, written + batch):
            command = parse_command({
                "command": "record_inspection", "municipality": MUNICIPALITY,
                "case_ref": "LONG-1", "actor": "bench", "findings": f"still there ({n})",
                "at": (OPENED_AT + dt.timedelta(minutes=n)).isoformat()})
            service.execute(command, NOW, uow, outcome)
        written += uow.commit()  # snapshots are taken here, at every 100th version
    return case_id(MUNICIPALITY, "LONG-1")


def median_load_ms(store: CaseStore, key: uuid.UUID, expected_version: int) -> float:
    store.get_case(key)  # warm-up
    times = []
    for _ in range(LOAD_REPEATS):
        start = time.perf_counter()
        case = store.get_case(key)
        times.append(time.perf_counter() - start)
        if case.version != expected_version:
            raise RuntimeError(f"loaded version {case.version}, expected {expected_version}")
    return statistics.median(times) * 1000


def time_long_case_loads(url: str, env: dict[str, str], events: int) -> list[Load]:
    """Build the case once (with snapshots), then load it with and without them."""
    with_snapshots = CaseStore(url, extra_env=env)
    without = None
    try:
        key = build_long_case(with_snapshots, events)
        snapshots = with_snapshots.snapshots
        latest = list(snapshots.get(key, desc=True, limit=1)) if snapshots else []
        if events >= SNAPSHOT_INTERVAL and not latest:
            raise RuntimeError("the snapshotting store recorded no snapshot")
        snapshot_version = latest[0].originator_version if latest else None
        loads = [Load(f"every {SNAPSHOT_INTERVAL}", median_load_ms(with_snapshots, key, events),
                      snapshot_version, events - (snapshot_version or 0))]
        without = CaseStore(url, snapshots=False, extra_env=env)
        if without.snapshots is not None:
            raise RuntimeError("the store without snapshots still reads snapshots")
        loads.append(Load("none", median_load_ms(without, key, events), None, events))
        return loads
    finally:
        close(with_snapshots)
        if without is not None:
            close(without)


# ---------------------------------------------------------------- 4-5. data for the read models

# The case mix of the projection and tax-roll figures, all under belleville:9.13
# (dumping; the charge is eligible 30 days after billing, § 9.13(4)):
# - EARLY_UNPAID cases on Green County parcels, billed in January and never paid
#   (eligible 2026-02-11): the few charges an export lists;
# - one case in UNPAID_EVERY (Dane County), billed 2026-03-09 and never paid
#   (eligible 2026-04-08): the many charges;
# - every other case billed 2026-03-09 too, but paid in full only on 2026-05-20 and closed:
#   listed as of dates from 2026-04-08 to 2026-05-19, never since (what a past list reads).
EARLY_UNPAID = 10
UNPAID_EVERY = 4
IMPORT_CASES = 10_000  # cases per journal import while generating data
VIEW_PAGE = 500  # ViewRunner page size, and the page of the bare log read
CATCH_UP_REPEATS = 3  # pairs (bare read, then the view) per view; median ratio, best time
EXPORT_REPEATS = 3  # per export; the median is kept
EXPORT_NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)  # after every case

JANUARY = ("2026-01-05T09:00:00-06:00", "2026-01-05T10:00:00-06:00",
           "2026-01-09T09:00:00-06:00", "2026-01-12T09:00:00-06:00")
MARCH = tuple(c["at"] for c in LIFECYCLE)  # open ... close, as in the lifecycle benchmark
PAID_LATE = ("2026-05-20T09:00:00-05:00", "2026-05-20T10:00:00-05:00")  # payment, close


def case_commands(i: int) -> list[dict[str, Any]]:
    """The journal of case ``i`` of a generated data set (see the case mix above)."""
    ref = f"TR-{i}"
    if i < EARLY_UNPAID:
        parcel = {"county": "Green", "number": f"23002 {i % 10000:04d}.0000"}
        times, paid = JANUARY, False
    else:
        parcel = {"county": "Dane", "number": f"0509-{i // 10000 % 1000:03d}-{i % 10000:04d}-0"}
        times, paid = MARCH, i % UNPAID_EVERY != 0
    base = {"municipality": MUNICIPALITY, "case_ref": ref, "actor": "bench"}
    steps = [{**OPEN_CASE, "at": times[0], "parcel": parcel, "site_address": f"{i} Main St",
              "owner": {"name": f"Owner {i}", "mailing_address": f"{i} Main St"}},
             {**LIFECYCLE[1], "at": times[1]},
             {**LIFECYCLE[2], "at": times[2]},
             {**LIFECYCLE[3], "at": times[3]}]
    if paid:
        steps += [{**LIFECYCLE[4], "at": PAID_LATE[0]}, {**LIFECYCLE[5], "at": PAID_LATE[1]}]
    return [{**base, **step} for step in steps]


def generate_cases(store: CaseStore, cases: int, progress: str = "") -> int:
    """Record ``cases`` cases through the journal import, IMPORT_CASES cases per journal;
    returns the events recorded.

    The import is the batched path (``CaseService.import_journal``): one query per chunk of
    lines learns which cases exist, so opening a new case costs no failed look-up (that was
    about 40 % of writing the data one unit of work at a time), and on a SQL store the
    events are staged and moved into the log by one insert per journal. § 9.13 has a
    repeat-offense escalation, so every serve_notice asks whether the parcel or the party
    has prior violations; every generated case has its own parcel and owner, so the answer
    for saved cases is always "none", and the service is given a scan over no saved cases
    (the journal's own cases are still answered from its batch index, as always).
    """
    service = CaseService(store, repeat_offenses=ScanRepeatOffenses(tuple))
    events = 0
    for first in range(0, cases, IMPORT_CASES):
        lines = (json.dumps(fields) for i in range(first, min(first + IMPORT_CASES, cases))
                 for fields in case_commands(i))
        events += service.import_journal(lines, EXPORT_NOW).events_recorded
        if progress:
            print(f"{progress} {min(first + IMPORT_CASES, cases)} cases, {events} events",
                  flush=True)
    return events


def view_schema(env: dict[str, str]) -> str | None:
    """The PostgreSQL schema of a store (ViewRunner puts the views beside the events)."""
    return env.get("SQLALCHEMY_SCHEMA")


# ---------------------------------------------------------------- 4. projection catch-up


@dataclass
class Timing:
    """Events handled, wall-clock and CPU seconds (this process) of one measured pass."""

    label: str
    events: int
    seconds: float
    cpu_seconds: float

    @property
    def rate(self) -> float:
        return self.events / self.seconds

    @property
    def cpu_rate(self) -> float:
        return self.events / self.cpu_seconds


def timed(label: str, work: Callable[[], int]) -> Timing:
    start, cpu_start = time.perf_counter(), time.process_time()
    events = work()
    return Timing(label, events, time.perf_counter() - start, time.process_time() - cpu_start)


def bare_read(store: CaseStore, page: int = VIEW_PAGE) -> int:
    """The least any projection does, done the fastest honest way: read the log in pages
    with a SQLAlchemy Core select (``CaseStore.log_page``, case ids as stored) and decode
    every event into a domain event with the decoder the view runner uses
    (``EventDecoder``, faster than the library's mapper), with the garbage collector set as
    the runner sets it (what survives a page is frozen), so neither side carries a handicap."""
    events, start = 0, 1
    decode = EventDecoder(store.mapper)
    with old_objects_left_alone() as between_pages:
        while True:
            between_pages()
            batch = store.log_page(start, page, ids_as_stored=True)
            if not batch:
                return events
            decoded = [decode(row) for row in batch]
            events += len(decoded)
            start = batch[-1].id + 1


def time_rebuild(runner: ViewRunner, *names: str, label: str | None = None) -> Timing:
    """Views from position 0 (new generations, sharing pages): the whole ``rebuild``, from
    creating the new generations to switching readers to them and dropping the old ones."""
    events = 0

    def progress(n: int) -> None:
        nonlocal events
        events += n

    start, cpu_start = time.perf_counter(), time.process_time()
    runner.rebuild(*names, progress=progress)
    return Timing(label or names[0], events, time.perf_counter() - start,
                  time.process_time() - cpu_start)


def best(timings: list[Timing]) -> Timing:
    return min(timings, key=lambda t: t.seconds)


@dataclass
class CatchUp:
    events: int
    bare: Timing  # best of the bare reads
    views: list[Timing]  # best per view alone, then every view together ("all views")
    ratios: dict[str, list[float]]  # per view: view rate / bare rate of each (bare, view) pair
    cpu_ratios: dict[str, list[float]]  # the same on this process's CPU time


class Floor(View):
    """A view that writes nothing: rebuilt alone, what every catch-up of views costs before any
    view's own work (the read, the decoding, each case's state after each event, the page
    loop, the positions' commits, making and switching a generation)."""

    name = "bench_floor"

    def define_tables(self) -> None:
        self.table("rows", sa.Column("case_id", sa.String(36), primary_key=True))


CATCH_UP_PASSES = ("each", "together", "breakdown")


def catch_up_passes(kind: str) -> list[tuple[tuple[str, ...], str]]:
    """(views rebuilt together, label) of each timed pass: ``each`` view alone and all
    together; all ``together`` only; or the ``breakdown`` of all together: all, all but
    each one (the difference is that view's whole cost, rows written included), and the
    floor (``Floor``)."""
    every = tuple(cls.name for cls in ALL_VIEWS)
    together = [(every, "all views")]
    if kind == "each":
        return [((name,), name) for name in every] + together
    if kind == "together":
        return together
    return together + [(tuple(n for n in every if n != name), f"all but {name}")
                       for name in every] + [((Floor.name,), "floor: no view rows")]


def measure_catch_up(store: CaseStore, schema: str | None, repeats: int,
                     passes: str = "each") -> CatchUp:
    """The ``catch_up_passes`` of ``passes`` from position 0, each right after a bare read of
    the same log, so both sides of a ratio see the same disk and heap state."""
    views = (*ALL_VIEWS, Floor) if passes == "breakdown" else ALL_VIEWS
    runner = ViewRunner(store, views, schema=schema, page_size=VIEW_PAGE)
    try:
        bare_read(store)  # warm-up: first connection, page cache
        timed_passes = catch_up_passes(passes)
        bares: list[Timing] = []
        timings: dict[str, list[Timing]] = {label: [] for _, label in timed_passes}
        ratios: dict[str, list[float]] = {label: [] for _, label in timed_passes}
        cpu_ratios: dict[str, list[float]] = {label: [] for _, label in timed_passes}
        for _ in range(repeats):
            for names, label in timed_passes:
                bare = timed("bare read", partial(bare_read, store))
                view = time_rebuild(runner, *names, label=label)
                bares.append(bare)
                timings[label].append(view)
                ratios[label].append(view.rate / bare.rate)
                cpu_ratios[label].append(view.cpu_rate / bare.cpu_rate)
        events = bares[0].events
        best_views = [best(t) for t in timings.values()]
        for view in best_views:
            if view.events != events:
                raise RuntimeError(f"{view.label} applied {view.events} events of {events}")
        return CatchUp(events, best(bares), best_views, ratios, cpu_ratios)
    finally:
        runner.close()


def catch_up_figures(backend: Backend, cases: int, repeats: int,
                     passes: str = "each") -> tuple[int, float, CatchUp]:
    """A fresh store of ``cases`` generated cases; (events, seconds to write, catch-up)."""
    url, env = backend.fresh("catchup")
    store = CaseStore(url, extra_env=env)
    try:
        start = time.perf_counter()
        events = generate_cases(store, cases,
                                progress=f"[{backend.name}]  " if cases > IMPORT_CASES else "")
        written = time.perf_counter() - start
        return events, written, measure_catch_up(store, view_schema(env), repeats, passes)
    finally:
        close(store)
        backend.discard("catchup")


def profile_catch_up(backend: Backend, cases: int, top: int = 25) -> None:
    """cProfile of each view's catch-up over a fresh log (printed, cumulative and own time)."""
    import cProfile
    import pstats

    url, env = backend.fresh("profile")
    store = CaseStore(url, extra_env=env)
    runner = None
    try:
        generate_cases(store, cases)
        runner = ViewRunner(store, ALL_VIEWS, schema=view_schema(env), page_size=VIEW_PAGE)
        for name in [None, *(cls.name for cls in ALL_VIEWS)]:
            profiler = cProfile.Profile()
            profiler.enable()
            if name is None:
                bare_read(store)
            else:
                runner.rebuild(name)
            profiler.disable()
            print(f"\n---- [{backend.name}] cProfile: {name or 'bare read'} ----")
            stats = pstats.Stats(profiler).strip_dirs()
            stats.sort_stats("cumulative").print_stats(top)
            stats.sort_stats("tottime").print_stats(top)
    finally:
        if runner is not None:
            runner.close()
        close(store)
        backend.discard("profile")


# ---------------------------------------------------------------- 5. tax-roll exports at scale


@dataclass
class Export:
    label: str
    listed: int
    median_ms: float


@dataclass
class TaxRollSize:
    cases: int
    events: int
    versions: int  # rows in the tax-roll versions table (what an export's query ranks)
    written_seconds: float
    catch_up: Timing  # every view together from position 0, once (as catch_up() runs them)
    bare: Timing  # one bare read of the same log
    exports: list[Export]
    full_list: list[tuple]  # bench.export: the full list, in-process and through abate


EXPORTS = (  # label, charges() arguments beside municipality and tax_year 2026
    ("few: county Green", {"as_of": dt.date(2026, 11, 15), "county": "Green"}),
    ("few: as of 2026-03-01", {"as_of": dt.date(2026, 3, 1)}),
    ("many: as of 2026-11-15", {"as_of": dt.date(2026, 11, 15)}),
    ("all: as of 2026-05-01", {"as_of": dt.date(2026, 5, 1)}),  # 3 in 4 paid since
)


def expected_listed(cases: int) -> dict[str, int]:
    early = min(cases, EARLY_UNPAID)
    late = sum(1 for i in range(EARLY_UNPAID, cases) if i % UNPAID_EVERY == 0)
    return {EXPORTS[0][0]: early, EXPORTS[1][0]: early, EXPORTS[2][0]: early + late,
            EXPORTS[3][0]: cases}


def time_export(runner: ViewRunner, arguments: dict[str, Any]) -> tuple[int, float]:
    view = runner.active(TaxRoll.name)
    times, listed = [], 0
    for _ in range(EXPORT_REPEATS + 1):  # the first is a warm-up
        start = time.perf_counter()
        with runner.engine.connect() as conn:
            rows = view.charges(conn, municipality=MUNICIPALITY, tax_year=2026, **arguments)
        times.append(time.perf_counter() - start)
        listed = len(rows)
    return listed, statistics.median(times[1:]) * 1000


def tax_roll_size(backend: Backend, cases: int) -> TaxRollSize:
    label = f"taxroll{cases}"
    url, env = backend.fresh(label)
    store = CaseStore(url, extra_env=env)
    runner = None
    try:
        start = time.perf_counter()
        events = generate_cases(store, cases, progress=f"[{backend.name}]  ")
        written = time.perf_counter() - start
        print(f"[{backend.name}]   {events} events written in {written:.0f} s; "
              "catching up all views ...", flush=True)
        runner = ViewRunner(store, ALL_VIEWS, schema=view_schema(env), page_size=VIEW_PAGE)
        caught_up = timed("all views", runner.catch_up)
        if caught_up.events != events:
            raise RuntimeError(f"the views applied {caught_up.events} of {events} events")
        # A clerk exports days after the data arrived, when autovacuum has analyzed the
        # tables; a rebuild analyzes them itself. Do the same before timing exports.
        runner.active(TaxRoll.name).analyze(runner.engine)
        bare = timed("bare read", partial(bare_read, store))
        view = runner.active(TaxRoll.name)
        with runner.engine.connect() as conn:
            versions = conn.execute(sa.select(sa.func.count()).select_from(view.versions)).scalar()
        expected = expected_listed(cases)
        exports = []
        for name, arguments in EXPORTS:
            listed, ms = time_export(runner, arguments)
            if listed != expected[name]:
                raise RuntimeError(f"export {name!r} listed {listed}, expected {expected[name]}")
            exports.append(Export(name, listed, ms))
        from bench.export import export_rows

        full = export_rows(backend.name, url, env, runner, MUNICIPALITY, 2026, EXPORTS[3][1]["as_of"])
        return TaxRollSize(cases, events, versions, written, caught_up, bare, exports, full)
    finally:
        if runner is not None:
            runner.close()
        close(store)
        backend.discard(label)


# ---------------------------------------------------------------- report


def print_table(rows: list[tuple[Any, ...]], header: tuple[str, ...], text_columns: int) -> None:
    """Text columns left-aligned, figures right-aligned."""
    cells = [tuple(str(v) for v in row) for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for row in cells:
        print("  ".join(v.ljust(w) if i < text_columns else v.rjust(w)
                        for i, (v, w) in enumerate(zip(row, widths))))


def lifecycle_rows(backend: Backend, result: Comparison) -> tuple[list[tuple], tuple]:
    rows = [(backend.name, run.label, run.cases, run.events, f"{run.seconds:.2f}",
             f"{run.cases_per_second:.1f}", f"{run.events_per_second:.0f}",
             f"{run.cpu_ms_per_case:.1f}")
            for run in (result.abate, result.abate_no_snapshots, result.bare)]
    chunks = result.chunk_ratios
    ratio = (backend.name, f"{result.ratio(result.abate):.2f}",
             f"{statistics.median(chunks):.2f} ({min(chunks):.2f}-{max(chunks):.2f})",
             f"{result.cpu_ratio:.2f}", f"{result.ratio(result.abate_no_snapshots):.2f}")
    return rows, ratio


def load_rows(backend: Backend, loads: list[Load], events: int) -> list[tuple]:
    return [(backend.name, load.label, events,
             f"v{load.from_snapshot}" if load.from_snapshot else "-", load.replayed,
             f"{load.median_ms:.1f}") for load in loads]


def catch_up_rows(backend: Backend, result: CatchUp) -> list[tuple]:
    bare = result.bare
    rows = [(backend.name, bare.label, bare.events, f"{bare.seconds:.2f}", f"{bare.rate:.0f}",
             f"{bare.cpu_seconds:.2f}", "1.00", "", "1.00")]
    for t in result.views:
        ratios = result.ratios[t.label]
        rows.append((backend.name, t.label, t.events, f"{t.seconds:.2f}", f"{t.rate:.0f}",
                     f"{t.cpu_seconds:.2f}", f"{statistics.median(ratios):.2f}",
                     f"{min(ratios):.2f}-{max(ratios):.2f}",
                     f"{statistics.median(result.cpu_ratios[t.label]):.2f}"))
    return rows


def breakdown_lines(backend: Backend, result: CatchUp) -> list[str]:
    """What the breakdown passes say, in bare reads of CPU time (each pass's CPU time over
    the bare read's just before it, median of the pairs: best times of separate passes
    drift with the run, pairs do not): each view's whole cost (all views less all but it),
    the floor, and how much the views may cost together for all views to reach 0.5."""
    cpu = {label: 1 / statistics.median(ratios) for label, ratios in result.cpu_ratios.items()}
    every, floor = cpu["all views"], cpu["floor: no view rows"]
    costs = ", ".join(f"{label.removeprefix('all but ')} {every - share:.2f}"
                      for label, share in cpu.items() if label.startswith("all but "))
    return [f"   [{backend.name}] in bare reads of CPU time: all views {every:.2f}, the floor "
            f"(no view rows) {floor:.2f}, so the {len(ALL_VIEWS)} views' own Python and writes "
            f"{every - floor:.2f}; each view's (all views less all but it): {costs}; "
            f"0.5 of the bare rate is 2.00, leaving the views {2 - floor:.2f} above the floor"]


def tax_roll_rows(backend: Backend, size: TaxRollSize) -> tuple[tuple, list[tuple], list[tuple]]:
    total = size.catch_up
    scale = (backend.name, size.cases, size.events, f"{size.written_seconds:.0f}",
             f"{size.events / size.written_seconds:.0f}", f"{size.bare.rate:.0f}",
             f"{total.seconds:.1f}", f"{total.rate:.0f}", f"{total.rate / size.bare.rate:.2f}")
    exports = [(backend.name, e.label, size.cases, size.events, size.versions, e.listed,
                f"{e.median_ms:.1f}") for e in size.exports]
    return scale, exports, size.full_list


SECTIONS = ("lifecycle", "long-case", "catch-up", "tax-roll", "journal", "import-scaling")


def run_benchmarks(cases: int = 300, long_case_events: int = 5000,
                   postgres_url: str | None = None, catch_up_cases: int = 5000,
                   catch_up_pairs: int = CATCH_UP_REPEATS, catch_up_passes: str = "each",
                   tax_roll_sizes: tuple[int, ...] = (1000, 10000),
                   only: tuple[str, ...] = SECTIONS, profile: bool = False,
                   sqlite: bool = True, journal_lines: tuple[int, ...] = (5_000,),
                   scaling_cases: tuple[int, ...] = (100, 1_000),
                   per_command_cases: int | None = 100) -> None:
    """Run the benchmarks on SQLite (and PostgreSQL when a URL is known) and print figures.

    ``only`` picks sections (default all); ``profile`` prints a cProfile of each
    view's catch-up over ``catch_up_cases`` cases after the figures; ``sqlite=False``
    runs on PostgreSQL only. ``catch_up_pairs`` (bare read, view) pairs are timed per
    catch-up pass; ``catch_up_passes`` says which passes (``catch_up_passes()``): ``together``
    times only all views together (the pass the target is about), so that 100,000 cases fit
    in minutes; ``breakdown`` shows what each view and the floor under them cost.
    """
    if cases < 1 or long_case_events < 1 or catch_up_cases < 1 or catch_up_pairs < 1:
        raise ValueError("cases, long_case_events, catch_up_cases and catch_up_pairs must be "
                         "at least 1")
    if any(size < 1 for size in tax_roll_sizes):
        raise ValueError("every tax-roll size must be at least 1")
    unknown = set(only) - set(SECTIONS)
    if unknown:
        raise ValueError(f"unknown sections {sorted(unknown)} (known: {', '.join(SECTIONS)})")
    postgres_url = resolve_postgres_url(postgres_url)
    if not sqlite and not postgres_url:
        raise ValueError("without SQLite, a PostgreSQL URL is needed")
    throughput: list[tuple] = []
    ratios: list[tuple] = []
    loads: list[tuple] = []
    catch_ups: list[tuple] = []
    breakdowns: list[str] = []
    written: list[str] = []
    scales: list[tuple] = []
    exports: list[tuple] = []
    full_lists: list[tuple] = []
    journals: list[tuple] = []
    scaling: list[tuple] = []
    with backends(postgres_url, sqlite=sqlite) as found:
        for backend in found:
            if "lifecycle" in only:
                print(f"[{backend.name}] {cases} lifecycles on each side, in turns ...", flush=True)
                rows, ratio = lifecycle_rows(backend, compare_lifecycles(backend, cases))
                throughput += rows
                ratios.append(ratio)
            if "long-case" in only:
                print(f"[{backend.name}] one case of {long_case_events} events ...", flush=True)
                loads += load_rows(backend, time_long_case_loads(*backend.fresh("long"),
                                                                 long_case_events),
                                   long_case_events)
            if "catch-up" in only:
                print(f"[{backend.name}] projection catch-up over {catch_up_cases} cases ...",
                      flush=True)
                events, seconds, result = catch_up_figures(backend, catch_up_cases,
                                                           catch_up_pairs, catch_up_passes)
                catch_ups += catch_up_rows(backend, result)
                if catch_up_passes == "breakdown":
                    breakdowns += breakdown_lines(backend, result)
                written.append(f"{backend.name}: {events} events in {seconds:.1f} s "
                               f"({events / seconds:.0f} events/s)")
            if "tax-roll" in only:
                for size in tax_roll_sizes:
                    print(f"[{backend.name}] tax roll: {size} cases ...", flush=True)
                    scale, rows, full = tax_roll_rows(backend, tax_roll_size(backend, size))
                    scales.append(scale)
                    exports += rows
                    full_lists += full
            if "journal" in only:
                from bench.journal_import import journal_rows

                with tempfile.TemporaryDirectory(prefix="abate-journal-") as directory:
                    for size in journal_lines:
                        journals += journal_rows(backend, size, directory)
            if "import-scaling" in only:
                from bench.journal_import import scaling_rows

                with tempfile.TemporaryDirectory(prefix="abate-scaling-") as directory:
                    scaling += scaling_rows(backend, scaling_cases, per_command_cases, directory)
            if profile:
                profile_catch_up(backend, catch_up_cases)
    if throughput:
        print()
        print(f"1-2. Full lifecycle: {len(LIFECYCLE)} commands per case, one transaction each "
              f"({WARMUP_CASES} warm-up cases per side not timed; cpu = this process only)")
        print_table(throughput, ("backend", "what", "cases", "events", "seconds", "cases/s",
                                 "events/s", "cpu ms/case"), text_columns=2)
        print()
        print("Abate/bare (target: >= 0.8 on wall and on CPU time); chunks: per "
              f"{CHUNK_CASES}-case turn, "
              "median (min-max)")
        print_table(ratios, ("backend", "abate/bare", "chunks", "on cpu time",
                             "snapshots off/bare"), text_columns=1)
    if loads:
        print()
        print(f"3. Loading one case of {long_case_events} events (median of {LOAD_REPEATS} loads)")
        print_table(loads, ("backend", "snapshots", "events", "snapshot", "replayed", "ms"),
                    text_columns=2)
    if catch_ups:
        print()
        print(f"4. Projection catch-up from position 0 over {catch_up_cases} cases, pages of "
              f"{VIEW_PAGE}, best of {catch_up_pairs} (view/bare target printed: >= 0.5)")
        print(f"   vs bare = median over {catch_up_pairs} pairs of (bare read, then the view) "
              "of view events/s / bare events/s, with its range; on cpu = the same on CPU time")
        print("   bare read = Core select (CaseStore.log_page) + the runner's EventDecoder "
              "(projections/event_decoding.py), gc frozen between pages as the runner does: "
              "the least any view does; a view pass is the whole rebuild")
        print("   each view alone reads the log itself; all views = every view together, sharing "
              "each page, as ViewRunner.rebuild() runs them (it reads pages of "
              f"{VIEW_PAGE} and applies {PAGES_PER_BATCH} at a time, in one transaction)")
        print_table(catch_ups, ("backend", "what", "events", "seconds", "events/s", "cpu s",
                                "vs bare", "range", "on cpu"), text_columns=2)
        print("   data written through the journal import (CaseService.import_journal), "
              f"{IMPORT_CASES} cases per journal: " + "; ".join(written))
        for line in breakdowns:
            print(line)
    if scales:
        print()
        print(f"5. Tax roll at scale: journal imports of {IMPORT_CASES} cases, then every view "
              "caught up once from position 0")
        print_table(scales, ("backend", "cases", "events", "write s", "write ev/s",
                             "bare read ev/s", "catch-up s", "catch-up ev/s", "vs bare"),
                    text_columns=1)
        print()
        print(f"   exports (TaxRoll.charges, belleville, tax year 2026; median of "
              f"{EXPORT_REPEATS}); versions = rows of the tax-roll versions table")
        print_table(exports, ("backend", "export", "cases", "events", "versions", "listed", "ms"),
                    text_columns=2)
        from bench.export import EXPORT_COLUMNS, REPEATS

        print()
        print(f"6. The full list (all: as of 2026-05-01), streamed; median and min of {REPEATS}; "
              "vs bare = time / the bare read's; peak MB = growth of this process's peak "
              "(in-process) or the child's peak (abate)")
        print_table(full_lists, EXPORT_COLUMNS, text_columns=2)
    if journals:
        from bench.journal_import import BARE_BATCH, JOURNAL_COLUMNS

        print()
        print("7. Journal import (abate import FILE in a child process, fresh database) beside a "
              f"bare eventsourcing app saving as many aggregates and events, {BARE_BATCH} per "
              "save; peak MB = ru_maxrss of the child; lock s = the final move's transaction")
        print_table(journals, JOURNAL_COLUMNS, text_columns=2)
    if scaling:
        from bench.journal_import import SCALING_COLUMNS

        print()
        print("8. Import scaling: abate import of the generated journal at each number of cases "
              "(target: 10x the cases costs <= 11x the time), and the same journal one command "
              "at a time (CaseService.handle, one transaction each; target: import >= 5x its "
              "rate)")
        print_table(scaling, SCALING_COLUMNS, text_columns=2)
    if not postgres_url:
        print("\n(PostgreSQL skipped: give --postgres-url or set ABATE_BENCH_POSTGRES_URL)")

"""Benchmark (not a test): the HTTP API under a bounded load, beside the same operations
called in this process without HTTP. The ratio is what HTTP and the API layer cost.

Operations (belleville, a store of ``cases`` generated cases, bench.sections.generate_cases):

- case read: ``GET /api/v1/belleville/cases/{ref}``, a different case each time;
- case list: ``GET /api/v1/belleville/cases?limit=50`` (the case-summaries view);
- worklist: ``GET /api/v1/belleville/worklist?limit=50`` (a page of actions and deadlines);
- tax-roll export: ``GET /api/v1/belleville/tax-roll?tax_year=2026&county=Dane&as_of=...
  &format=json`` (the list and its totals);
- command: ``POST /api/v1/belleville/cases`` opening a new case (one transaction, the
  repeat-offense question, the case read back), with a new case reference each time.

Server side: the installed ``abate serve`` in a child process on 127.0.0.1, without the
scheduler, one worker on SQLite and ``--workers N`` on PostgreSQL; its views caught up
before timing. Client side: this process, ``concurrency`` threads, each with one keep-alive
connection (``http.client`` from the standard library, the lightest client there is) sending
its share of ``requests`` one after the other, so at most ``concurrency`` requests are in
flight. A latency runs from sending a request to having read its whole answer; requests per
second = requests / the wall-clock time of the run. A few requests of each kind are sent
first and not timed.

In-process side: the work each route does, on a ``Services`` built as the app builds it, on
the same store, one call at a time, while the server waits: ``read_case`` (the case
replayed, as the route shows it); the case-summaries view caught up and searched; the
worklist view caught up and a page of it read, in local times; the
tax-roll view caught up, its charges read one by one with their totals taken on the way
and the summary made, as the route streams them; ``Services.handle`` of the parsed
``open_case`` and the case read back. No HTTP, no JSON, no token look-up, no role or village
check, no request validation, no access-log row.
"""

from __future__ import annotations

import datetime as dt
import http.client
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

from bench.sections import MUNICIPALITY, OPEN_CASE, Backend
from bench.served import (TOKEN_USER, Server, on_each_backend, process_cpu_seconds, server_env,
                          store_with_token)
from abate.reports import counted
from cases.localtime import localized
from cases.rules.catalog import default_catalog
from projections import CaseSummaries, TaxRoll, Worklist
from projections.tax_roll_file import ListTotals, summary
from projections.worklist_report import worklist

WARMUP_REQUESTS = 10  # per operation and side, not timed
ROUNDS = 5  # turns taken by the two sides, per operation
TAX_ROLL_QUERY = {"tax_year": 2026, "county": "Dane", "as_of": dt.date(2026, 11, 15)}


@dataclass
class Measured:
    requests: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)  # seconds, one per request
    cpu_seconds: float | None = 0.0  # the serving process(es); None where /proc is missing

    @property
    def per_second(self) -> float:
        return self.requests / self.seconds

    @property
    def cpu_ms(self) -> float | None:
        return None if self.cpu_seconds is None else self.cpu_seconds / self.requests * 1000

    def add(self, other: "Measured") -> None:
        self.requests += other.requests
        self.seconds += other.seconds
        self.latencies += other.latencies
        self.cpu_seconds = (None if self.cpu_seconds is None or other.cpu_seconds is None
                            else self.cpu_seconds + other.cpu_seconds)

    def percentile(self, p: int) -> float:
        """The p-th percentile in ms (statistics.quantiles, inclusive method)."""
        cuts = statistics.quantiles(self.latencies, n=100, method="inclusive")
        return cuts[p - 1] * 1000


@dataclass(frozen=True)
class Operation:
    name: str
    method: str
    path: Callable[[int], str]  # request n -> path
    body: Callable[[int], bytes | None]
    in_process: Callable[[Any, Any, int], Any]  # (services, user, n) -> the route's result


# ---------------------------------------------------------------- the operations


def _case_ref(cases: int) -> Callable[[int], str]:
    return lambda n: f"TR-{n * 7919 % cases}"  # spread over the store, not one hot case


def _new_case(prefix: str) -> Callable[[int], dict[str, Any]]:
    def body(n: int) -> dict[str, Any]:
        fields = {k: v for k, v in OPEN_CASE.items() if k != "command"}
        return {**fields, "case_ref": f"{prefix}-{n}",
                "parcel": {"county": "Dane", "number": f"0509-{n // 10000 % 1000:03d}-"
                                                      f"{n % 10000:04d}-9"},
                "owner": {"name": f"Bench Owner {prefix} {n}", "mailing_address": "1 Main St"}}
    return body


def operations(cases: int) -> list[Operation]:
    """The five operations: each as a request, and as the work its route does, in process."""
    from api.routes.cases import read_case
    from cases.commands import parse_command

    ref = _case_ref(cases)
    http_case, local_case = _new_case("HB"), _new_case("IB")
    query = "&".join(f"{k}={v}" for k, v in TAX_ROLL_QUERY.items())
    place = default_catalog().municipality(MUNICIPALITY)
    zone = place.time_zone

    def case_list(svc: Any, user: Any, n: int) -> Any:
        svc.catch_up(CaseSummaries.name)
        with svc.runner.engine.connect() as conn:
            found = svc.runner.active(CaseSummaries.name).page(
                conn, municipality=MUNICIPALITY, limit=50)
        return localized(found.rows, zone), found.total

    def worklist_page(svc: Any, user: Any, n: int) -> Any:
        svc.catch_up(Worklist.name)
        with svc.runner.engine.connect() as conn:
            found = worklist(svc.runner.active(Worklist.name), conn, municipality=MUNICIPALITY,
                             as_of=svc.clock(), limit=50)
        return localized(found, zone)

    def tax_roll(svc: Any, user: Any, n: int) -> Any:
        svc.catch_up(TaxRoll.name)
        totals = ListTotals()
        with svc.runner.engine.connect() as conn:
            rows = [localized(charge, zone) for charge in totals.counted(
                svc.runner.active(TaxRoll.name).iter_charges(
                    conn, municipality=MUNICIPALITY, **TAX_ROLL_QUERY))]
        return rows, summary(totals, place, **TAX_ROLL_QUERY, known_at=None, certified=False,
                             produced_at=svc.clock())

    def command(svc: Any, user: Any, n: int) -> Any:
        svc.handle(parse_command({**local_case(n), "command": "open_case",
                                  "municipality": MUNICIPALITY, "actor": user.name}))
        return read_case(svc, MUNICIPALITY, f"IB-{n}")  # the answer shows the case

    base = f"/api/v1/{MUNICIPALITY}"
    return [
        Operation("case read", "GET", lambda n: f"{base}/cases/{ref(n)}", lambda n: None,
                  lambda svc, user, n: read_case(svc, MUNICIPALITY, ref(n))),
        Operation("case list (50)", "GET", lambda n: f"{base}/cases?limit=50", lambda n: None,
                  case_list),
        Operation("worklist (50)", "GET", lambda n: f"{base}/worklist?limit=50",
                  lambda n: None, worklist_page),
        Operation("tax-roll export", "GET", lambda n: f"{base}/tax-roll?{query}&format=json",
                  lambda n: None, tax_roll),
        Operation("command (open_case)", "POST", lambda n: f"{base}/cases",
                  lambda n: json.dumps(http_case(n)).encode(), command),
    ]


# ---------------------------------------------------------------- the two sides


def measure_in_process(svc: Any, user: Any, operation: Operation, numbers: Iterator[int],
                       requests: int) -> Measured:
    latencies = []
    cpu, started = time.process_time(), time.perf_counter()
    for _ in range(requests):
        t = time.perf_counter()
        operation.in_process(svc, user, next(numbers))
        latencies.append(time.perf_counter() - t)
    return Measured(requests, time.perf_counter() - started, latencies,
                    time.process_time() - cpu)


def measure_http(server: "Server", token: str, operation: Operation, numbers: Iterator[int],
                 requests: int, concurrency: int, warm_up: bool = False) -> Measured:
    """``requests`` requests from ``concurrency`` threads, one keep-alive connection each."""
    port = server.port
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    lock = threading.Lock()
    latencies: list[float] = []
    failures: list[str] = []

    def client(share: int, timed: bool) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        mine = []
        try:
            for _ in range(share):
                n = next(numbers)
                t = time.perf_counter()
                conn.request(operation.method, operation.path(n), operation.body(n), headers)
                answer = conn.getresponse()
                answer.read()
                mine.append(time.perf_counter() - t)
                if answer.status >= 300:
                    failures.append(f"{operation.method} {operation.path(n)}: {answer.status}")
        finally:
            conn.close()
        if timed:
            with lock:
                latencies.extend(mine)

    if warm_up:
        client(requests, timed=False)
        return Measured()
    shares = [requests // concurrency + (i < requests % concurrency) for i in range(concurrency)]
    threads = [threading.Thread(target=client, args=(share, True)) for share in shares]
    cpu, started = process_cpu_seconds(server.process.pid), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    after = process_cpu_seconds(server.process.pid)
    if failures:
        raise RuntimeError(f"{len(failures)} requests failed, first: {failures[0]}")
    return Measured(requests, seconds, latencies,
                    None if cpu is None or after is None else after - cpu)


# ---------------------------------------------------------------- one backend


@dataclass
class Row:
    backend: str
    workers: int
    operation: str
    local: Measured
    remote: Measured


def measure_backend(backend: Backend, cases: int, requests: int, concurrency: int,
                    workers: int) -> list[Row]:
    from api.services import Services
    from api.settings import ApiSettings

    label = f"http{cases}"
    url, env = backend.fresh(label)
    try:
        print(f"[{backend.name}] HTTP: {counted(cases, 'case')} ...", flush=True)
        token = store_with_token(url, env, cases)
        ops = operations(cases)
        svc = Services.build(ApiSettings.from_env(server_env(url, env)))
        rows = []
        try:
            user = svc.accounts.get(TOKEN_USER)
            with tempfile.NamedTemporaryFile(prefix="abate-serve-", suffix=".log") as log:
                server = Server(url, env, workers, Path(log.name))
                try:
                    for op in ops:
                        print(f"[{backend.name}]   {op.name}: in process, then over HTTP "
                              f"({counted(workers, 'worker')}, {concurrency} at a time), in "
                              f"{ROUNDS} turns ...", flush=True)
                        rows.append(Row(backend.name, workers, op.name,
                                        *_taking_turns(svc, user, server, token, op, requests,
                                                       concurrency)))
                finally:
                    server.stop()
        finally:
            svc.close()
        return rows
    finally:
        backend.discard(label)


def _taking_turns(svc: Any, user: Any, server: Server, token: str, op: Operation,
                  requests: int, concurrency: int) -> tuple[Measured, Measured]:
    """Both sides in turns of ``requests / ROUNDS``, so a change in the machine's load
    falls on both alike; the server is idle while the in-process side runs."""
    local, remote = Measured(), Measured()
    numbers = count()  # next() on a count is atomic under the GIL
    measure_in_process(svc, user, op, numbers, WARMUP_REQUESTS)
    measure_http(server, token, op, numbers, WARMUP_REQUESTS, 1, warm_up=True)
    for turn in range(ROUNDS):
        share = requests // ROUNDS + (turn < requests % ROUNDS)
        local.add(measure_in_process(svc, user, op, numbers, share))
        remote.add(measure_http(server, token, op, numbers, share, concurrency))
    return local, remote


def http_rows(rows: list[Row]) -> list[tuple]:
    table = []
    for row in rows:
        local, remote = row.local, row.remote
        cpu = remote.cpu_ms is not None  # "-" where /proc is missing
        table.append((
            row.backend, row.operation, row.workers,
            f"{local.per_second:.0f}", f"{local.percentile(50):.1f}",
            f"{local.percentile(99):.1f}", f"{local.cpu_ms:.1f}",
            f"{remote.per_second:.0f}", f"{remote.percentile(50):.1f}",
            f"{remote.percentile(99):.1f}", f"{remote.cpu_ms:.1f}" if cpu else "-",
            f"{remote.percentile(50) / local.percentile(50):.1f}",
            f"{remote.cpu_ms / local.cpu_ms:.1f}" if cpu else "-",
            f"{remote.per_second / local.per_second:.2f}"))
    return table


HTTP_COLUMNS = ("backend", "operation", "workers", "local/s", "p50", "p99", "cpu ms",
                "http/s", "p50", "p99", "cpu ms", "p50 ratio", "cpu ratio", "rate ratio")


def run_http_benchmark(cases: int, requests: int, concurrency: int, workers: int,
                       postgres_url: str | None = None, sqlite: bool = True) -> None:
    """Measure on SQLite (one worker) and PostgreSQL (``workers``), then print the table."""
    from bench.sections import print_table, resolve_postgres_url

    if min(cases, requests, concurrency, workers) < 1:
        raise ValueError("cases, requests, concurrency and workers must be at least 1")
    postgres_url = resolve_postgres_url(postgres_url)
    rows: list[Row] = on_each_backend(
        postgres_url, sqlite, workers,
        lambda backend, used: measure_backend(backend, cases, requests, concurrency, used))
    print()
    print(f"8. The HTTP API ({counted(cases, 'case')} in the store; {requests} requests per "
          f"operation and side; {WARMUP_REQUESTS} warm-up requests not timed). local = the "
          "route's work called in this process, one call at a time, no HTTP; http = "
          f"`abate serve` in a child process, {concurrency} keep-alive connections from this "
          "process on 127.0.0.1, at most one request in flight on each; the two sides take "
          f"{ROUNDS} turns. Latencies in ms. cpu ms = CPU per request of the process doing "
          "the work (this one in process; the server and its workers over HTTP, from /proc). "
          "Ratios http/local: p50 = the API's overhead on one request; cpu = its cost in CPU, "
          "steadier than wall-clock time on a busy machine; rate = requests per second")
    print_table(http_rows(rows), HTTP_COLUMNS, text_columns=2)
    if not postgres_url:
        print("\n(PostgreSQL skipped: give --postgres-url or set ABATE_BENCH_POSTGRES_URL)")

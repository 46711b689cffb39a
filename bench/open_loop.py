"""``python -m bench --only load``: Abate's HTTP API under an open-loop load, beside the HTTP
floor under the same load, in the same run.

Why open loop: a closed-loop client (``--only http``) waits for each answer before the next
request, so a slow server is sent less and its queueing never shows. Here requests are due
at a fixed rate whatever happens to the earlier ones (bench/open_loop_client.py, a process of
its own), and a latency runs from the time a request was due.

The mix (MIX, a seeded random choice per request, the same plan for both sides): 45 % case
show ``GET /api/v1/belleville/cases/{ref}`` (spread over the store), 22.5 % case list
``GET .../cases?limit=50``, 22.5 % worklist ``GET .../worklist?limit=50``, 10 %
``POST .../cases/{ref}/record_inspection`` on an open case (a quarter of the generated cases
stay open, billed and unpaid), ``at`` the time it is sent.

Abate, in the shape docs/operations.md gives: on SQLite the embedded default, one
``abate serve`` process with the scheduler and the view runner on its threads; on PostgreSQL
the production shape, ``abate serve --workers N --without-scheduler`` beside
``abate projections run`` and ``abate scheduler``, each a process of its own. The store is
bench.served.store_with_token's (views caught up), swept once by ``abate scheduler --once``
before anything is timed, so the deadlines long due are recorded before, not during, the load.

The floor (bench/http_floor.py): the same uvicorn with the same settings and number of
workers around a bare ASGI callable answering each operation with the bytes one Abate answer
to it had. Ratios Abate / floor are printed for p50 and p99 and for CPU per request.

For each rate and side: requests due and answered per second, the answers by kind (2xx,
503, other statuses, time-outs and connection errors), p50/p95/p99/max per operation and
overall, and from /proc the CPU and peak memory (VmHWM, started again when the timed part
begins) of every process of the side.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abate.reports import counted
from bench.open_loop_report import MIX, TIMEOUT, Result, print_report
from bench.sections import EARLY_UNPAID, MUNICIPALITY, UNPAID_EVERY, Backend
from bench.served import (ABATE, Child, Server, command_line, cpu_seconds, free_port,
                          on_each_backend, peak_memory_mb, process_tree, reset_peak_memory,
                          server_env, store_with_token, wait_until_answering)

WARMUP_SECONDS = 2  # sent at the rate before the timed part, not recorded
BASE = f"/api/v1/{MUNICIPALITY}"
ROOT = Path(__file__).resolve().parent.parent  # the checkout: bench/ is not installed


def open_cases(cases: int) -> list[int]:
    """The generated cases that stay open (bench.sections.case_commands)."""
    return [i for i in range(cases) if i < EARLY_UNPAID or i % UNPAID_EVERY == 0]


def request_plan(cases: int, rate: int, seconds: int) -> list[list[Any]]:
    """[operation, method, path, body] per request, warm-up first; seeded by the rate, so
    both sides of a rate get the same plan."""
    chooser = random.Random(rate)
    names, weights = zip(*MIX)
    still_open = open_cases(cases)
    plan = []
    for n in range(rate * (WARMUP_SECONDS + seconds)):
        op = chooser.choices(names, weights)[0]
        spread = n * 7919  # not one hot case
        if op == "case show":
            plan.append([op, "GET", f"{BASE}/cases/TR-{spread % cases}", None])
        elif op == "case list":
            plan.append([op, "GET", f"{BASE}/cases?limit=50", None])
        elif op == "worklist":
            plan.append([op, "GET", f"{BASE}/worklist?limit=50", None])
        else:
            ref = still_open[spread % len(still_open)]
            plan.append([op, "POST", f"{BASE}/cases/TR-{ref}/record_inspection",
                         {"at": None, "findings": f"open-loop load, request {n}"}])
    return plan


# ---------------------------------------------------------------- the sides


@dataclass
class Side:
    """Processes serving one port; ``roots`` name each tree measured (its descendants too)."""

    name: str
    port: int
    roots: list[tuple[str, int]]

    def processes(self) -> list[tuple[str, int]]:
        found = []
        for role, root in self.roots:
            tree = process_tree(root)
            found.append((role if len(tree) == 1 else f"{role}: supervisor", root))
            found += [(f"{role}: worker" if "resource_tracker" not in command_line(pid)
                       else f"{role}: resource tracker", pid) for pid in tree[1:]]
        return found


class Floor(Child):
    def __init__(self, workers: int, answers: Path, log: Path):
        self.port = free_port()
        super().__init__([sys.executable, "-m", "bench.http_floor", "--port", str(self.port),
                          "--workers", str(workers), "--answers", str(answers)],
                         {**os.environ, "PYTHONPATH": str(ROOT)}, log,
                         "HTTP floor")
        wait_until_answering(self, workers * 3)


def sample_answers(port: int, token: str, cases: int, path: Path) -> None:
    """One answer of Abate's to each operation, for the floor to give back."""
    import http.client

    plan = {op: next(r for r in request_plan(cases, 10, 10) if r[0] == op) for op, _ in MIX}
    plan["record_inspection"][3] = {**plan["record_inspection"][3],
                                   "at": dt.datetime.now(dt.timezone.utc).isoformat(),
                                   "findings": "open-loop load, a sample answer"}
    answers = {}
    for op, (_, method, target, body) in plan.items():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request(method, target, json.dumps(body) if body else None,
                     {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        answer = conn.getresponse()
        text = answer.read().decode()
        conn.close()
        if answer.status >= 300:
            raise RuntimeError(f"{method} {target}: {answer.status} {text[:500]}")
        answers[op] = text
    path.write_text(json.dumps(answers))


# ---------------------------------------------------------------- one run


def run_load(side: Side, backend: str, workers: int, token: str, plan: list[list[Any]],
             rate: int) -> Result:
    """The client process sends ``plan`` at ``rate`` to ``side``; CPU and peak memory of
    the side's processes are taken when its timed part starts and ends."""
    config = {"port": side.port, "token": token, "rate": rate, "warmup": rate * WARMUP_SECONDS,
              "timeout": TIMEOUT, "plan": plan}
    client = subprocess.Popen([sys.executable, "-m", "bench.open_loop_client"], cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)},
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert client.stdin and client.stdout
        client.stdin.write(json.dumps(config))
        client.stdin.close()
        if client.stdout.readline().strip() != "timed":
            raise RuntimeError("the load client ended before its timed part")
        processes = side.processes()
        for _, pid in processes:
            reset_peak_memory(pid)
        before = {p: cpu_seconds(p[1]) for p in processes}
        if client.stdout.readline().strip() != "done":
            raise RuntimeError("the load client ended before its last answer")
        cpu = {p: None if before[p] is None or (now := cpu_seconds(p[1])) is None
               else now - before[p] for p in processes}  # type: ignore[operator]
        peak = {p: peak_memory_mb(p[1]) for p in processes}
        found = json.loads(client.stdout.readline())
        if client.wait(timeout=60):
            raise RuntimeError(f"the load client ended with status {client.returncode}")
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    return Result(backend, side.name, workers, rate, found["operations"], found["window"],
                  found["late"], found["client_cpu"], cpu, peak)


# ---------------------------------------------------------------- one backend


def abate_side(backend: Backend, url: str, env: dict[str, str], workers: int, folder: Path,
               stack: ExitStack) -> Side:
    """Abate's processes, started in the shape docs/operations.md gives for the backend."""
    if backend.name == "SQLite":
        server = Server(url, env, 1, folder / "serve.log", options=("--with-scheduler",))
        stack.callback(server.stop)
        return Side("Abate", server.port, [("abate serve (+ scheduler, view runner)",
                                            server.pid)])
    views = Child([ABATE, "projections", "run"], server_env(url, env), folder / "views.log",
                  "abate projections run")
    stack.callback(views.stop)
    scheduler = Child([ABATE, "scheduler"], server_env(url, env), folder / "scheduler.log",
                      "abate scheduler")
    stack.callback(scheduler.stop)
    server = Server(url, env, workers, folder / "serve.log", options=("--without-scheduler",))
    stack.callback(server.stop)
    for child in (views, scheduler):
        if (why := child.ended()) is not None:
            raise RuntimeError(why)
    return Side("Abate", server.port, [("abate serve", server.pid),
                                       ("abate projections run", views.pid),
                                       ("abate scheduler", scheduler.pid)])


def measure_backend(backend: Backend, cases: int, rates: tuple[int, ...], seconds: int,
                    workers: int) -> list[Result]:
    label = f"load{cases}"
    url, env = backend.fresh(label)
    results: list[Result] = []
    try:
        print(f"[{backend.name}] open-loop load: {counted(cases, 'case')} ...", flush=True)
        token = store_with_token(url, env, cases)
        swept = subprocess.run([ABATE, "scheduler", "--once"], env=server_env(url, env),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if swept.returncode:
            raise RuntimeError(f"abate scheduler --once failed: {swept.stderr[-2000:]}")
        with tempfile.TemporaryDirectory(prefix="abate-load-") as folder, ExitStack() as stack:
            abate = abate_side(backend, url, env, workers, Path(folder), stack)
            answers = Path(folder) / "answers.json"
            sample_answers(abate.port, token, cases, answers)
            floor = Floor(workers, answers, Path(folder) / "floor.log")
            stack.callback(floor.stop)
            bare = Side("floor", floor.port, [("HTTP floor (uvicorn)", floor.pid)])
            for turn, rate in enumerate(rates):
                plan = request_plan(cases, rate, seconds)
                for side in (abate, bare) if turn % 2 == 0 else (bare, abate):
                    print(f"[{backend.name}]   {side.name}: {rate} requests/s for {seconds} s "
                          f"({counted(workers, 'worker')}) ...", flush=True)
                    results.append(run_load(side, backend.name, workers, token, plan, rate))
        return results
    finally:
        backend.discard(label)


def run_load_benchmark(cases: int, rates: tuple[int, ...], seconds: int, workers: int,
                       postgres_url: str | None = None, sqlite: bool = True) -> None:
    """Each backend, each rate, both sides; then the tables."""
    from bench.sections import resolve_postgres_url

    if min(cases, seconds, workers, *rates) < 1:
        raise ValueError("cases, rates, seconds and workers must be at least 1")
    postgres_url = resolve_postgres_url(postgres_url)
    results: list[Result] = on_each_backend(
        postgres_url, sqlite, workers,
        lambda backend, used: measure_backend(backend, cases, rates, seconds, used))
    print_report(results, cases, seconds, WARMUP_SECONDS)
    if not postgres_url:
        print("\n(PostgreSQL skipped: give --postgres-url or set ABATE_BENCH_POSTGRES_URL)")

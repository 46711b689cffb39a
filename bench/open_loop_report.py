"""The tables of ``python -m bench --only load`` (bench/open_loop.py): one run's answers,
latencies, CPU and memory per side, the ratios Abate / floor, and the targets."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from abate.reports import counted

MIX = (("case show", 45.0), ("case list", 22.5), ("worklist", 22.5),
       ("record_inspection", 10.0))
TARGETS = {  # (backend, rate): p99 ms; and every request answered 2xx, as the issue asks
    ("SQLite", 100): 100.0, ("PostgreSQL", 200): 50.0}
MEMORY_TARGET_MB = 300.0
TIMEOUT = 10.0  # seconds; an answer later than this is a time-out (an error)


@dataclass
class Result:
    backend: str
    side: str
    workers: int
    rate: int
    operations: dict[str, dict[str, Any]]
    window: float
    late: float
    client_cpu: float
    cpu: dict[tuple[str, int], float | None] = field(default_factory=dict)  # s per process
    peak_mb: dict[tuple[str, int], float | None] = field(default_factory=dict)

    def latencies(self, op: str | None = None) -> list[float]:
        return [s for name, o in self.operations.items() if op in (None, name)
                for s in o["latencies"]]

    def answers(self, kind: str) -> int:
        return sum(o["answers"].get(kind, 0) for o in self.operations.values())

    @property
    def requests(self) -> int:
        return len(self.latencies())

    def cpu_ms(self) -> float | None:
        if not self.cpu or None in self.cpu.values():
            return None
        return sum(self.cpu.values()) / self.requests * 1000  # type: ignore[arg-type]


def percentiles(latencies: list[float]) -> dict[str, float]:
    """p50, p95, p99 (statistics.quantiles, inclusive) and max, in ms."""
    if len(latencies) < 2:
        only = latencies[0] * 1000 if latencies else float("nan")
        return {"p50": only, "p95": only, "p99": only, "max": only}
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return {"p50": cuts[49] * 1000, "p95": cuts[94] * 1000, "p99": cuts[98] * 1000,
            "max": max(latencies) * 1000}


def _ms(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def summary_rows(results: list[Result]) -> list[tuple]:
    rows = []
    for r in results:
        p = percentiles(r.latencies())
        peak = [mb for mb in r.peak_mb.values() if mb is not None]
        cpu = r.cpu_ms()
        answered = r.requests - r.answers("timeout") - r.answers("connection")
        rows.append((r.backend, r.side, r.workers, r.rate, f"{answered / r.window:.1f}",
                     r.answers("2xx"), r.answers("503"), r.answers("other"),
                     r.answers("timeout"), r.answers("connection"),
                     *(_ms(p[k]) for k in ("p50", "p95", "p99", "max")),
                     "-" if cpu is None else f"{cpu:.1f}",
                     f"{max(peak):.0f}" if peak else "-", f"{r.late * 1000:.1f}"))
    return rows


SUMMARY_COLUMNS = ("backend", "side", "workers", "due/s", "answered/s", "2xx", "503", "other",
                   "t/o", "conn err", "p50", "p95", "p99", "max", "cpu ms", "peak MB",
                   "late ms")


def operation_rows(results: list[Result]) -> list[tuple]:
    rows = []
    for r in results:
        for op, _ in MIX:
            found = r.latencies(op)
            p = percentiles(found)
            rows.append((r.backend, r.side, r.rate, op, len(found),
                         r.operations.get(op, {}).get("answers", {}).get("2xx", 0),
                         *(_ms(p[k]) for k in ("p50", "p95", "p99", "max"))))
    return rows


def process_rows(results: list[Result]) -> list[tuple]:
    return [(r.backend, r.side, r.rate, role, pid,
             "-" if r.peak_mb[(role, pid)] is None else f"{r.peak_mb[(role, pid)]:.0f}",
             "-" if r.cpu[(role, pid)] is None else f"{r.cpu[(role, pid)]:.1f}")
            for r in results for role, pid in r.cpu]


def ratio_rows(results: list[Result]) -> list[tuple]:
    rows = []
    for r in results:
        if r.side != "Abate":
            continue
        floor = next(f for f in results if f.side == "floor" and f.backend == r.backend
                     and f.rate == r.rate)
        a, b = percentiles(r.latencies()), percentiles(floor.latencies())
        ca, cb = r.cpu_ms(), floor.cpu_ms()
        rows.append((r.backend, r.rate, f"{a['p50'] / b['p50']:.1f}",
                     f"{a['p99'] / b['p99']:.1f}",
                     "-" if ca is None or cb is None else f"{ca / cb:.1f}",
                     f"{r.client_cpu:.1f} / {floor.client_cpu:.1f}"))
    return rows


def target_lines(results: list[Result]) -> list[str]:
    lines = []
    for r in results:
        if r.side != "Abate":
            continue
        p99 = percentiles(r.latencies())["p99"]
        failed = r.requests - r.answers("2xx")
        peak = max((mb for (role, _), mb in r.peak_mb.items() if mb is not None), default=0.0)
        target = TARGETS.get((r.backend, r.rate))
        if target is not None:
            met = failed == 0 and p99 < target
            lines.append(f"{r.backend} at {r.rate}/s, {counted(r.workers, 'worker')}: "
                         f"{failed} of {r.requests} not answered 2xx, p99 {p99:.1f} ms "
                         f"(target: all answered, p99 < {target:.0f} ms): "
                         f"{'met' if met else 'NOT met'}")
        lines.append(f"{r.backend} at {r.rate}/s: peak memory of a process {peak:.0f} MB "
                     f"(target < {MEMORY_TARGET_MB:.0f} MB): "
                     f"{'met' if peak < MEMORY_TARGET_MB else 'NOT met'}")
    return lines


def print_report(results: list[Result], cases: int, seconds: int, warmup: int) -> None:
    from bench.sections import print_table

    mix = ", ".join(f"{share:g} % {op}" for op, share in MIX)
    print()
    print(f"Open-loop load on the HTTP API ({counted(cases, 'case')} in the store; "
          f"{seconds} s per rate and side after {warmup} s not recorded; mix: {mix}). "
          "Abate: on SQLite one `abate serve` with the scheduler and the view runner on its "
          "threads (the embedded default); on PostgreSQL `abate serve --workers N "
          "--without-scheduler`, `abate projections run` and `abate scheduler`, processes "
          "of their own (the production shape of docs/operations.md). floor: the same "
          "uvicorn and workers answering each request with a stored Abate answer of its "
          "kind. The client: its own process, each request sent when due whatever the "
          "earlier ones; latency in ms from when it was due to its whole answer, over every "
          f"request (503s too); a request unanswered after {TIMEOUT:.0f} s is a time-out, at "
          "that latency. due/s the offered rate, answered/s the answers over the time from "
          "the first due request to the last answer; cpu ms = CPU of the side's processes "
          "per request (/proc; not PostgreSQL's own); peak MB = the largest VmHWM of one of "
          "its processes during the timed part; late ms = how late the client sent a "
          "request at worst (its own lag).")
    print_table(summary_rows(results), SUMMARY_COLUMNS, text_columns=2)
    print("\nLatency by operation (ms)")
    print_table(operation_rows(results), ("backend", "side", "rate", "operation", "requests",
                                          "2xx", "p50", "p95", "p99", "max"), text_columns=4)
    print("\nEach process: peak memory (VmHWM, MB) and CPU seconds in the timed part")
    print_table(process_rows(results), ("backend", "side", "rate", "process", "pid",
                                        "peak MB", "cpu s"), text_columns=4)
    print("\nRatios Abate / floor (same rate, same plan, same client)")
    print_table(ratio_rows(results), ("backend", "rate", "p50 ratio", "p99 ratio",
                                      "cpu ratio", "client cpu s Abate / floor"),
                text_columns=2)
    print()
    for line in target_lines(results):
        print(line)

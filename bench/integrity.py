"""Benchmark of tamper evidence (not a test): `abate verify` and `abate seal` beside a
bare read of the same notification log, in the same run, on the same store.

Builds N Belleville cases (open, notice, three or four inspections: about 5.5 events
a case) in batched transactions, then times:

- bare read: the notification log in pages, raw (what sealing must at least read),
  and the same read decoding every event (what any projection must at least do);
- the first seal over the whole log, then an incremental seal after 1% more events;
- ``verify``: every chain, every seal leaf, every snapshot;
- ``verify --seal`` against the first seal (recomputes the digest up to it and
  counts what came after);
- reading one case as ``case show`` does (its events, the highest version a seal covers,
  its chain) beside the bare read of its events alone: the median of ``CASE_READS`` cases
  spread over the store, so the figures at 1,000 and 100,000 cases show whether a case's
  read grows with the store (the seal index, cases/integrity_records.py).
"""

from __future__ import annotations

import datetime as dt
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cases.application import CaseService, Outcome, UnitOfWork
from cases.commands import parse_command
from cases.domain import case_id
from cases.history import load_events
from cases.seal_check import KeptSeal, check_kept_seal
from cases.seals import seal_store
from cases.store import CaseStore
from cases.verify import verify_store

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
CASE_READS = 200
OPENED = dt.datetime(2026, 3, 2, 9, tzinfo=dt.timezone(dt.timedelta(hours=-6)))


def _commands(number: int, inspections: int, prefix: str = "IN") -> list[dict[str, Any]]:
    base = {"municipality": "belleville", "case_ref": f"{prefix}-{number:06d}", "actor": "bench"}
    at = OPENED + dt.timedelta(minutes=number % 500)
    commands = [
        {**base, "command": "open_case", "at": at.isoformat(), "rule": "belleville:9.13",
         "parcel": {"county": "Dane",
                    "number": f"0509-{number // 10000:03d}-{number % 10000:04d}-0"},
         "site_address": "1 Main St", "owner": {"name": f"Owner {number}"},
         "description": "tires"},
        {**base, "command": "serve_notice", "at": (at + dt.timedelta(hours=1)).isoformat(),
         "method": "personal", "served_on": "owner"},
    ]
    commands += [{**base, "command": "record_inspection",
                  "at": (at + dt.timedelta(hours=2 + i)).isoformat(), "findings": f"visit {i}"}
                 for i in range(inspections)]
    return commands


def build(store: CaseStore, cases: int, batch: int = 500) -> int:
    service = CaseService(store)
    for start in range(0, cases, batch):
        uow, outcome = UnitOfWork(store), Outcome()
        for number in range(start, min(start + batch, cases)):
            for data in _commands(number, 3 + number % 2):
                service.execute(parse_command(data), NOW, uow, outcome)
        uow.commit()
    return store.recorder.max_notification_id() or 0


def add_events(store: CaseStore, events: int) -> None:
    """About ``events`` more events: inspections on existing cases."""
    service = CaseService(store)
    uow, outcome = UnitOfWork(store), Outcome()
    for number in range(events):
        data = {"municipality": "belleville", "case_ref": f"IN-{number:06d}", "actor": "bench",
                "command": "record_inspection", "findings": "follow-up",
                "at": (OPENED + dt.timedelta(days=30, minutes=number % 500)).isoformat()}
        service.execute(parse_command(data), NOW, uow, outcome)
    uow.commit()


def _timed(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def raw_read(store: CaseStore, decode: bool, page: int = 2000) -> int:
    events, start = 0, None
    while True:
        batch = store.recorder.select_notifications(start=start, limit=page)
        if not batch:
            return events
        if decode:
            for notification in batch:
                store.mapper.to_domain_event(notification)
        events += len(batch)
        start = batch[-1].id + 1


def case_reads(store: CaseStore, cases: int) -> tuple[float, float, float]:
    """Median milliseconds of one case's bare read, of its sealed-version look-up, and of
    its whole checked read (``load_events``), over cases spread across the store."""
    refs = [f"IN-{number:06d}" for number in range(0, cases, max(cases // CASE_READS, 1))]
    bare, sealed, checked = [], [], []
    for ref in refs:
        key = case_id("belleville", ref)
        seconds, events = _timed(lambda: store.case_events(key))
        bare.append(seconds)
        seconds, _ = _timed(lambda: store.integrity.last_sealed(key))
        sealed.append(seconds)
        seconds, loaded = _timed(lambda: load_events(store, "belleville", ref))
        checked.append(seconds)
        if len(loaded) != len(events):
            raise RuntimeError(f"case {ref}: {len(loaded)} events checked, {len(events)} read")
    return tuple(statistics.median(times) * 1000 for times in (bare, sealed, checked))


def measure(label: str, url: str, cases: int, extra_env: dict | None = None) -> list[tuple]:
    store = CaseStore(url, extra_env=extra_env)
    try:
        built_s, events = _timed(lambda: build(store, cases))
        print(f"[{label}] built {cases:,} cases / {events:,} events in {built_s:.0f} s",
              flush=True)
        raw_s, _ = _timed(lambda: raw_read(store, decode=False))
        decoded_s, _ = _timed(lambda: raw_read(store, decode=True))
        first_s, first = _timed(lambda: seal_store(store, "bench", "first seal"))
        add_events(store, max(events // 100, 1))
        tail = (store.recorder.max_notification_id() or 0) - first.position
        incremental_s, _ = _timed(lambda: seal_store(store, "bench", "incremental"))
        verify_s, report = _timed(lambda: verify_store(store))
        if not report.ok:
            raise RuntimeError(f"verify found problems in a clean store: {report.problems[:3]}")
        kept = KeptSeal(first.log_digest, first.seal_id, first.position, first.event_count,
                        first.case_count)
        kept_s, (matches, _) = _timed(lambda: check_kept_seal(store, kept))
        if not matches:
            raise RuntimeError("the first seal does not match its own store")
        bare_ms, sealed_ms, checked_ms = case_reads(store, cases)
        return [
            (label, "bare read, raw", events, raw_s, 1.0),
            (label, "bare read, decoded", events, decoded_s, decoded_s / raw_s),
            (label, "seal, first (whole log)", events, first_s, first_s / raw_s),
            (label, f"seal, incremental (+{tail:,})", tail, incremental_s, incremental_s / raw_s),
            (label, "verify", report.events_checked, verify_s, verify_s / decoded_s),
            (label, "verify --seal (first seal)", events, kept_s, kept_s / raw_s),
            (label, "one case: bare read (ms)", 1, bare_ms / 1000, 1.0),
            (label, "one case: sealed version (ms)", 1, sealed_ms / 1000, sealed_ms / bare_ms),
            (label, "one case: checked read (ms)", 1, checked_ms / 1000, checked_ms / bare_ms),
        ]
    finally:
        store.close()


def run_integrity_benchmark(cases: int, postgres_url: str | None = None,
                            sqlite: bool = True) -> None:
    rows: list[tuple] = []
    if sqlite:
        with tempfile.TemporaryDirectory() as folder:
            rows += measure("sqlite", f"sqlite:///{Path(folder) / 'integrity.sqlite3'}", cases)
    if postgres_url:
        import uuid

        import sqlalchemy as sa

        schema = f"bench_integrity_{uuid.uuid4().hex[:8]}"
        engine = sa.create_engine(postgres_url)
        with engine.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        try:
            rows += measure("postgres", postgres_url, cases, {"SQLALCHEMY_SCHEMA": schema})
        finally:
            with engine.begin() as conn:
                conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
            engine.dispose()
    print("Tamper evidence: seal and verify beside a bare read of the same log "
          "(ratio: seal and verify --seal to the raw read, verify to the decoded read, "
          f"a case's reads to its bare read; one case: the median of {CASE_READS}, in ms)")
    print(f"{'backend':9} {'what':34} {'events':>9} {'seconds':>9} {'ratio':>7}")
    for backend, what, events, seconds, ratio in rows:
        shown = f"{seconds * 1000:>9.3f}" if what.endswith("(ms)") else f"{seconds:>9.2f}"
        print(f"{backend:9} {what:34} {events:>9,} {shown} {ratio:>7.2f}")

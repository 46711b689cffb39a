"""The access-log writer: rows queued by requests are committed by one thread, many to a
transaction; ``flush`` waits for them, ``close`` writes what is left; a failed commit is
logged, not raised into a request."""

import datetime as dt
import threading

import sqlalchemy as sa
import structlog

from api.access_log import AccessEntry, AccessLog
from api.access_log_writer import AccessLogWriter
from projections.database import records_engine


def entry(n: int) -> AccessEntry:
    return AccessEntry(f"r{n}", dt.datetime(2026, 12, 7, 12, tzinfo=dt.timezone.utc),
                       "c.clerk", "clerk", "belleville", ("belleville",), None, "cases.list",
                       "read", "GET", "/api/v1/belleville/cases", 200, 1.0, "127.0.0.1")


def made(tmp_path) -> AccessLog:
    url = f"sqlite:///{tmp_path / 'records.db'}"
    return AccessLog(records_engine(url), url)


def stored(access_log: AccessLog) -> list[str]:
    with access_log.engine.connect() as conn:
        return list(conn.execute(sa.select(access_log.entries.c.request_id)
                                 .order_by(access_log.entries.c.id)).scalars())


class SlowFirstCommit(AccessLog):
    """Holds its first commit until told, so the rows queued meanwhile pile up."""

    def __init__(self, inner: AccessLog):
        self.__dict__.update(inner.__dict__)
        self.go, self.entered = threading.Event(), threading.Event()
        self.batches: list[int] = []

    def append_many(self, entries):
        if not self.batches:
            self.entered.set()
            self.go.wait(10)
        self.batches.append(len(entries))
        super().append_many(entries)


def test_rows_queued_while_a_commit_runs_are_committed_together_and_in_order(tmp_path):
    access_log = SlowFirstCommit(made(tmp_path))
    writer = AccessLogWriter(access_log)
    try:
        writer.put(entry(0))
        assert access_log.entered.wait(10)
        for n in range(1, 40):
            writer.put(entry(n))
        assert not writer.flush(timeout=0.2)  # the first commit is still held
        access_log.go.set()
        assert writer.flush()
        assert access_log.batches == [1, 39]
        assert stored(access_log) == [f"r{n}" for n in range(40)]
    finally:
        access_log.go.set()
        writer.close()


def test_close_commits_what_is_queued_and_ends_the_thread(tmp_path):
    access_log = made(tmp_path)
    writer = AccessLogWriter(access_log)
    for n in range(5):
        writer.put(entry(n))
    thread = writer._thread
    assert thread is not None and thread.name == "abate-access-log" and thread.is_alive()
    writer.close()
    assert stored(access_log) == [f"r{n}" for n in range(5)]
    assert not thread.is_alive()


def test_a_failed_commit_is_logged_and_the_writer_goes_on(tmp_path):
    access_log = made(tmp_path)
    writer = AccessLogWriter(access_log)
    try:
        with access_log.engine.begin() as conn:
            conn.execute(sa.text("ALTER TABLE abate_access_log RENAME TO gone"))
        with structlog.testing.capture_logs() as logs:
            writer.put(entry(0))
            assert writer.flush()
        assert [(e["event"], e["rows"]) for e in logs] == [("access_log_write_failed", 1)]
        with access_log.engine.begin() as conn:
            conn.execute(sa.text("ALTER TABLE gone RENAME TO abate_access_log"))
        writer.put(entry(1))
        assert writer.flush()
        assert stored(access_log) == ["r1"]
    finally:
        writer.close()


class Counting(AccessLog):
    def __init__(self, inner: AccessLog):
        self.__dict__.update(inner.__dict__)
        self.batches: list[int] = []

    def append_many(self, entries):
        self.batches.append(len(entries))
        super().append_many(entries)


def test_rows_put_within_the_linger_share_one_commit_and_a_flush_ends_the_wait(
        tmp_path, monkeypatch):
    monkeypatch.setattr("api.access_log_writer.LINGER_SECONDS", 60.0)
    access_log = Counting(made(tmp_path))
    writer = AccessLogWriter(access_log)
    try:
        for n in range(10):
            writer.put(entry(n))
        assert writer.flush(timeout=5)  # not the 60 s linger: the flush cut it short
        assert access_log.batches == [10]
        assert stored(access_log) == [f"r{n}" for n in range(10)]
        assert writer.flush(timeout=0.01)  # nothing queued: no wait at all
    finally:
        writer.close()

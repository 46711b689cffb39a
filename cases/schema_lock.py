"""Locks that let several processes share one database safely while they change its tables.

``schema_lock`` is held while a process creates tables (the event store's, the views'),
adds or drops a view generation, or switches readers to a new one: processes starting
together on a new database then create the schema once, and none sees it half made.
``held_while_alive`` marks a running rebuild: it is held by the rebuilding process until
it ends, and the operating system or the server releases it when that process dies, so a
later start can tell an abandoned rebuild (lock free) from one still running (lock held).

PostgreSQL: session-level advisory locks, on a connection of their own (released when that
connection closes, also when the process is killed). SQLite: ``flock`` on a file next to the
database (released when the process dies). In-memory stores live in one process: a
process-wide lock is enough.
"""

from __future__ import annotations

import fcntl
import os
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from cases.store_reach import engine_options

_ABATE = 0x0ABA7E  # the first key of every Abate advisory lock (the second names what is locked)
_memory_lock = threading.Lock()
_memory_held: set[str] = set()


def _key(name: str) -> int:
    """A stable signed 32-bit number for a lock name (advisory locks take integers)."""
    value = zlib.crc32(name.encode())
    return value - (1 << 32) if value >= 1 << 31 else value


def _sqlite_path(database_url: str) -> Path | None:
    path = database_url.split("///", 1)[-1] if "///" in database_url else ""
    return Path(path) if path and path != ":memory:" else None


class Lock:
    """One named lock on the database of ``database_url`` (and PostgreSQL ``schema``)."""

    def __init__(self, database_url: str, schema: str | None, name: str):
        self.database_url = database_url
        self.name = f"{schema or 'public'}:{name}"
        self._connection: sa.Connection | None = None
        self._engine: sa.Engine | None = None
        self._file: int | None = None
        self._path: Path | None = None
        if database_url.startswith("sqlite"):
            db = _sqlite_path(database_url)
            if db is not None:
                safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
                self._path = db.with_name(f"{db.name}.{safe}.lock")

    @property
    def kind(self) -> str:
        if self.database_url.startswith("postgresql"):
            return "postgresql"
        return "file" if self._path is not None else "memory"

    def acquire(self, wait: bool = True) -> bool:
        """Take the lock (waiting for it, or not); True if this process now holds it."""
        if self.kind == "postgresql":
            self._engine = sa.create_engine(self.database_url, poolclass=NullPool,
                                            isolation_level="AUTOCOMMIT",
                                            **engine_options(self.database_url))
            self._connection = self._engine.connect()
            function = "pg_advisory_lock" if wait else "pg_try_advisory_lock"
            got = self._connection.execute(sa.text(f"select {function}(:a, :b)"),
                                           {"a": _ABATE, "b": _key(self.name)}).scalar()
            if got is False:
                self._close()
                return False
            return True
        if self.kind == "file":
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._file = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(self._file, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                self._close()
                return False
            return True
        # memory: one process, so a set of held names under a thread lock
        while True:
            with _memory_lock:
                if self.name not in _memory_held:
                    _memory_held.add(self.name)
                    self._file = -1
                    return True
            if not wait:
                return False
            threading.Event().wait(0.01)

    def release(self, forget: bool = False) -> None:
        """Let go of the lock; ``forget`` also removes its file (only for names never
        locked again after this, and only while holding ``schema_lock``)."""
        if self.kind == "file" and forget and self._path is not None:
            self._path.unlink(missing_ok=True)
        if self.kind == "memory" and self._file == -1:
            with _memory_lock:
                _memory_held.discard(self.name)
            self._file = None
            return
        self._close()

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()  # ends the session: the advisory lock goes with it
            self._connection = None
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        if self._file is not None and self._file >= 0:
            os.close(self._file)  # closing the only descriptor releases the flock
        self._file = None


@contextmanager
def schema_lock(database_url: str, schema: str | None = None) -> Iterator[None]:
    """Hold the database's table lock: one process at a time creates, drops or switches."""
    lock = Lock(database_url, schema, "schema")
    lock.acquire()
    try:
        yield
    finally:
        lock.release()


def held_while_alive(database_url: str, schema: str | None, name: str) -> Lock:
    """Take (waiting) a lock that says "this process is still doing ``name``"."""
    lock = Lock(database_url, schema, name)
    lock.acquire()
    return lock


def is_abandoned(database_url: str, schema: str | None, name: str) -> Lock | None:
    """The lock of ``name`` if no live process holds it (the caller now holds it, and must
    release it), else None."""
    lock = Lock(database_url, schema, name)
    return lock if lock.acquire(wait=False) else None

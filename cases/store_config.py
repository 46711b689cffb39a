"""What the event store is, without opening it: the database URL's settings, the name of
the events' table, and the mapper that turns a stored row into a domain event.

Kept apart from ``cases.store`` (the eventsourcing Application and its SQLAlchemy recorders)
so a command that only reads (``cases.store_reader``) can decode the store's events exactly
as the Application does without importing or building the recorders
(docs/benchmarks.md, start-up).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from eventsourcing.persistence import JSONTranscoder, Transcoding

from cases.errors import ConfigurationError

if TYPE_CHECKING:
    from eventsourcing.persistence import Mapper

STORE_NAME = "Abate"  # the eventsourcing Application's name: its tables are abate_...
EVENTS_TABLE = "abate_events"  # eventsourcing_sqlalchemy's name for the Application's log
# How long a SQLite writer waits for another's write lock before giving up: longer than the
# final move of a large journal (about 10 s for 1,000,000 lines, docs/commands.md), so a
# clerk saving meanwhile waits for it instead of failing ("database is locked").
SQLITE_BUSY_TIMEOUT_SECONDS = 30


class DateAsISO(Transcoding):
    type = dt.date
    name = "date_iso"

    def encode(self, obj: dt.date) -> str:
        return obj.isoformat()

    def decode(self, data: str) -> dt.date:
        return dt.date.fromisoformat(data)


SUPPORTED_URLS = "memory://, sqlite:///PATH or postgresql+psycopg://USER@HOST:5432/DB"


def store_env(database_url: str) -> dict[str, str]:
    """eventsourcing settings for a database URL; a URL that cannot work is refused here,
    before anything connects (a SQLite file's folder must exist: a typo in the path must not
    quietly start a new, empty store)."""
    try:
        scheme = urlparse(database_url).scheme
    except ValueError as exc:  # "Invalid IPv6 URL": a bracket left open
        from cases.failures import redact_url

        raise ConfigurationError(f"database URL {redact_url(database_url)!r}: {exc}; use "
                                 f"{SUPPORTED_URLS}") from None
    if scheme == "memory":
        return {"PERSISTENCE_MODULE": "eventsourcing.popo"}
    if scheme in ("sqlite", "sqlite+pysqlite"):
        path = database_url.split("///", 1)[1] if "///" in database_url else ""
        path = path.split("?", 1)[0]
        if not path or path == ":memory:":
            raise ConfigurationError(
                f"database URL {database_url!r}: give the SQLite file, e.g. sqlite:///var/abate.sqlite3 "
                "(or memory:// to keep nothing)")
        folder = Path(path).parent
        if not folder.is_dir():
            raise ConfigurationError(
                f"database URL {database_url!r}: the folder {folder.resolve()} does not exist "
                "(create it first, or correct the path)")
        if "timeout=" not in database_url:
            database_url += ("&" if "?" in database_url else "?") + \
                f"timeout={SQLITE_BUSY_TIMEOUT_SECONDS}"
    elif scheme != "postgresql+psycopg":
        from cases.failures import redact_url

        raise ConfigurationError(
            f"database URL {redact_url(database_url)!r} is not supported: use {SUPPORTED_URLS}")
    else:
        _check_postgresql_url(database_url)
        # the library's persistence, with network time limits (cases/store_factory.py)
        return {"PERSISTENCE_MODULE": "cases.store_factory:StoreFactory",
                "SQLALCHEMY_URL": database_url}
    return {"PERSISTENCE_MODULE": "eventsourcing_sqlalchemy", "SQLALCHEMY_URL": database_url}


def _check_postgresql_url(database_url: str) -> None:
    """A PostgreSQL URL names a host, a port that is a number, and a database: without
    one the server's default database (``postgres``) would silently receive Abate's tables."""
    from cases.failures import redact_url

    shown = redact_url(database_url)
    try:
        parts = urlparse(database_url)
        parts.port  # noqa: B018 - reading it checks it (a ValueError when not a number)
    except ValueError as exc:
        raise ConfigurationError(f"database URL {shown!r}: {exc}; e.g. "
                                 "postgresql+psycopg://USER@HOST:5432/DB") from None
    if not parts.path.strip("/"):
        raise ConfigurationError(f"database URL {shown!r} names no database: add it after the "
                                 "host, e.g. postgresql+psycopg://USER@HOST:5432/abate")


def register_transcodings(transcoder: JSONTranscoder) -> None:
    """The eventsourcing Application's own transcodings, the domain's dates, and the case's
    values a snapshot holds (``cases.domain.values``)."""
    from eventsourcing.persistence import DatetimeAsISO, DecimalAsStr, UUIDAsHex

    from cases.domain.values import transcodings

    transcoder.register(UUIDAsHex())
    transcoder.register(DecimalAsStr())
    transcoder.register(DatetimeAsISO())
    transcoder.register(DateAsISO())
    for transcoding in transcodings():
        transcoder.register(transcoding)


def store_mapper(env: Mapping[str, str]) -> Mapper:
    """The mapper ``CaseStore`` builds for the same settings (transcoder, cipher and
    compressor read from the environment as the Application reads them), without the
    persistence module's recorders. Importing the domain registers its events under the
    topics they are stored with (``abate.case:Case.Opened``...)."""
    from eventsourcing.popo import POPOFactory
    from eventsourcing.utils import Environment

    import cases.domain  # noqa: F401

    factory = POPOFactory(Environment(STORE_NAME, {**os.environ, **env}))
    transcoder = factory.transcoder()
    if isinstance(transcoder, JSONTranscoder):
        register_transcodings(transcoder)
    return factory.mapper(transcoder=transcoder)


def replay(events: Iterable[Any]) -> Any:
    """The aggregate these decoded events make, in order (None without events).

    The library's ``project_aggregate`` does the same after asserting a runtime-checkable
    Protocol on every event, about 18 µs an event, a large share of the CPU of loading a
    short case (docs/benchmarks.md). The store's mapper gives only the domain's own event
    classes, so that assertion cannot fail here."""
    aggregate = None
    for event in events:
        aggregate = event.mutate(aggregate)
    return aggregate

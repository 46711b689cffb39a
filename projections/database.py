"""The views' database: the same database as the events (so rows and tracking
positions commit in one transaction there), reached through SQLAlchemy Core.

``memory://`` event stores (unit tests) get a private in-memory SQLite database.
Instants are stored as UTC ISO 8601 strings and dates as ISO dates, which sort
correctly as text on both SQLite and PostgreSQL; money is stored as text and
summed as Decimal.
"""

from __future__ import annotations

import datetime as dt
import itertools
import operator
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.pool import StaticPool

from cases.store_config import SQLITE_BUSY_TIMEOUT_SECONDS
from cases.store_reach import engine_options


VIEW_WAL_CHECKPOINT_PAGES = 20_000  # SQLite: WAL pages (4 KB) before a views' commit checkpoints


def view_engine(database_url: str, schema: str | None = None) -> sa.Engine:
    """The views' engine. Views are derived data whose rows commit together with their
    position: a crash may lose the last commits, never split one, and the runner re-applies
    what was lost. So view transactions need not wait for the disk flush (the events' own
    still do): ``synchronous_commit=off`` on PostgreSQL, ``synchronous=NORMAL`` on SQLite."""
    return _engine(database_url, schema, wait_for_flush=False)


def records_engine(database_url: str, schema: str | None = None) -> sa.Engine:
    """An engine for what Abate records beside its events and cannot rebuild from them
    (accounts, password hashes, revocations, the access log, idempotency answers): every
    commit waits for the disk flush, as the events' own do."""
    return _engine(database_url, schema, wait_for_flush=True)


def _engine(database_url: str, schema: str | None, *, wait_for_flush: bool) -> sa.Engine:
    if database_url.startswith("memory"):  # a private in-memory database
        return sa.create_engine("sqlite://", poolclass=StaticPool,
                                connect_args={"check_same_thread": False})
    if database_url.startswith("postgresql"):
        options = (f"-csynchronous_commit={'on' if wait_for_flush else 'off'}"
                   + (f" -csearch_path={schema}" if schema else ""))
        reach = engine_options(database_url)  # network time limits (cases.store_reach)
        return sa.create_engine(database_url, **{
            **reach, "connect_args": {**reach["connect_args"], "options": options}})
    if database_url.startswith("sqlite"):
        engine = sa.create_engine(database_url,
                                  connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS})
        synchronous = "FULL" if wait_for_flush else "NORMAL"

        @sa.event.listens_for(engine, "connect")
        def _wal(dbapi_connection, _record) -> None:
            # WAL: readers keep reading during a rebuild (and while records are written).
            dbapi_connection.execute("PRAGMA journal_mode=WAL")
            dbapi_connection.execute(f"PRAGMA synchronous={synchronous}")
            if not wait_for_flush:
                # Views rewrite many index pages per page of events (case ids land all over
                # their indexes), so checkpointing every 4 MB of WAL (the default 1,000
                # pages) copied the same pages over and over and waited on the disk each
                # time: 1 to 3 s of a 10,000-case rebuild's wall time (docs/benchmarks.md).
                # The WAL may now grow to about 80 MB before the views' connection
                # checkpoints it.
                dbapi_connection.execute(f"PRAGMA wal_autocheckpoint={VIEW_WAL_CHECKPOINT_PAGES}")

        return engine
    return sa.create_engine(database_url)


def insert_rows(conn: sa.Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    """Insert many rows in the connection's transaction.

    On PostgreSQL through COPY (one stream; an executemany still sends and runs one
    INSERT per row, which was most of a view's catch-up time there), elsewhere as an
    executemany of one compiled INSERT.
    """
    if not rows:
        return
    columns = [c.name for c in table.columns]
    preparer = conn.dialect.identifier_preparer
    names = ", ".join(preparer.quote(c) for c in columns)
    if conn.dialect.name == "sqlite":
        # The driver's own executemany of tuples: SQLAlchemy's builds and processes every
        # row's parameters in Python (a tenth of an all-views catch-up, docs/benchmarks.md),
        # and view columns are integers, booleans and text, which sqlite3 stores as they are.
        marks = ", ".join("?" for _ in columns)
        conn.exec_driver_sql(f"INSERT INTO {preparer.format_table(table)} ({names}) "
                             f"VALUES ({marks})", row_tuples(rows, columns))
        return
    if conn.dialect.name != "postgresql":
        conn.execute(table.insert(), rows)
        return
    cursor = conn.connection.driver_connection.cursor()
    try:
        with cursor.copy(f"COPY {preparer.format_table(table)} ({names}) FROM STDIN") as copy:
            for row in row_tuples(rows, columns):
                copy.write_row(row)
    finally:
        cursor.close()


def row_tuples(rows: list[dict[str, Any]], columns: list[str]) -> list[tuple[Any, ...]]:
    """Each row's values in the order of ``columns``, a missing one as None. One
    ``itemgetter`` (in C) per row when every row has every column, as views build them."""
    try:
        if len(columns) == 1:  # a one-column itemgetter gives the value, not a tuple
            return [(row[columns[0]],) for row in rows]
        return list(map(operator.itemgetter(*columns), rows))
    except KeyError:
        return [tuple(map(row.get, columns)) for row in rows]


def batches_of_rows(conn: sa.Connection, query: sa.Select, size: int) -> Iterator[list[Any]]:
    """The rows of a long read, a list of up to ``size`` at a time, never all at once.

    PostgreSQL sends them as it produces them (psycopg's ``stream``, in chunks), so the
    server sends the next rows while this process handles the last ones; a server-side
    cursor (SQLAlchemy's ``stream_results``) asked for each batch and waited for it, one
    side idle at a time (0.15 s of a 100,000-charge tax-roll export, docs/benchmarks.md).
    For queries whose columns and parameters are texts and integers, which psycopg takes
    and gives as SQLAlchemy would. A reader that stops early cancels the query, which leaves
    the transaction in error: close the connection then. Elsewhere SQLAlchemy's buffered
    result."""
    if conn.dialect.name != "postgresql":
        yield from conn.execution_options(stream_results=True, yield_per=size).execute(
            query).partitions()
        return
    compiled = query.compile(dialect=conn.dialect)
    with conn.connection.driver_connection.cursor() as cursor:
        rows = cursor.stream(str(compiled), compiled.params, size=size)
        while batch := list(itertools.islice(rows, size)):
            yield batch


REPLACEMENT = "\ufffd"  # what a NUL character becomes in a view (visibly not the original)
ELLIPSIS = "\u2026"  # the last character of a text cut to fit its column


def text_columns(table: sa.Table) -> list[tuple[str, int | None]]:
    """(name, length limit or None) of each text column of a table."""
    return [(c.name, getattr(c.type, "length", None)) for c in table.columns
            if isinstance(c.type, sa.String)]


def fit_text(value: str, limit: int | None) -> tuple[str, list[str]]:
    """``value`` made storable in a text column of at most ``limit`` characters on every
    backend, and what was changed.

    A record an older Abate accepted may hold a NUL character (PostgreSQL text refuses it)
    or be longer than its view column (PostgreSQL VARCHAR(n) refuses it; SQLite would keep
    it, but both backends store the same here). NULs become U+FFFD and an over-long text is
    cut, ending in an ellipsis, so the change shows wherever the value is printed.
    """
    changes = []
    nuls = value.count("\x00")
    if nuls:
        value = value.replace("\x00", REPLACEMENT)
        changes.append(f"{nuls} NUL character(s) replaced by U+FFFD")
    if limit is not None and len(value) > limit:
        changes.append(f"{len(value)} characters, longer than the {limit} the view holds: "
                       f"cut to {limit}, ending in U+2026")
        value = value[:limit - 1] + ELLIPSIS
    return value, changes


def utc(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is not dt.timezone.utc:  # stored times mostly are UTC already
        value = value.astimezone(dt.timezone.utc)
    return value.isoformat()


def day(value: dt.date | dt.datetime | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        value = value.date()
    return value.isoformat()


def amount(value: Decimal | None) -> str | None:
    return None if value is None else str(value)

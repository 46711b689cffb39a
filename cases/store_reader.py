"""Reading the event store without the eventsourcing Application: for commands that only
read (``abate cases list``, ``abate case show``).

Building ``CaseStore`` imports eventsourcing's SQLAlchemy persistence (with
``sqlalchemy_utils``, its ORM models and the PostgreSQL dialect) and builds its recorders,
which cost such a command more than its whole answer (docs/benchmarks.md, start-up). The
reader selects the same rows with SQLAlchemy Core and decodes them with the mapper the
Application would build (``cases.store_config.store_mapper``), so an event reads the same
either way. It offers what the views' runner and a case's history use: the log's head and
pages, one case's events, a case's state at a version, and the seals.

It writes nothing and creates nothing: ``open_reader`` answers None when the store's tables
are not there yet, and the command then opens the full ``CaseStore`` (which creates them).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from cases.store_config import EVENTS_TABLE, replay, store_env, store_mapper
from cases.store_reach import engine_options

if TYPE_CHECKING:
    from eventsourcing.persistence import Mapper

    from cases.domain import Case
    from cases.integrity_records import IntegrityRecords


class StoredUuid(sa.TypeDecorator):
    """The case id column as eventsourcing_sqlalchemy stores it (``UUIDType``): a native
    UUID on PostgreSQL, 16 bytes elsewhere."""

    impl = sa.LargeBinary(16)
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> Any:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(sa.Uuid())
        return dialect.type_descriptor(sa.LargeBinary(16))

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None or dialect.name == "postgresql":
            return value
        return value.bytes

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None or dialect.name == "postgresql":
            return value
        return uuid.UUID(bytes=bytes(value))


def id_column(column: sa.Column, dialect_name: str, as_stored: bool) -> Any:
    """The case id column to select: as stored when asked, on SQLite its 16 bytes (SQLite has
    no UUID type, and making a UUID of every row in Python is a reader's to choose: the
    views' decoder makes one per case, ``projections.event_decoding``)."""
    if as_stored and dialect_name == "sqlite":
        return sa.type_coerce(column, sa.LargeBinary).label(column.name)
    return column


def events_table(schema: str | None) -> sa.Table:
    """The Application's event log as a Core table (the columns a reader selects)."""
    return sa.Table(
        EVENTS_TABLE, sa.MetaData(schema=schema),
        sa.Column("id", sa.BigInteger, primary_key=True),
        sa.Column("originator_id", StoredUuid, nullable=False),
        sa.Column("originator_version", sa.Integer, nullable=False),
        sa.Column("topic", sa.Text, nullable=False),
        sa.Column("state", sa.LargeBinary, nullable=False),
    )


class _Transactions:
    """What ``cases.integrity_records`` asks of a datastore: an engine and read
    transactions (a Core connection executes the same statements as the ORM's session)."""

    def __init__(self, engine: sa.Engine):
        self.engine = engine

    @contextmanager
    def transaction(self, commit: bool = False) -> Iterator[sa.Connection]:
        if commit:
            raise RuntimeError("a store reader writes nothing")
        with self.engine.connect() as conn:
            yield conn


class StoreReader:
    """The event store, read only, through SQLAlchemy Core."""

    def __init__(self, database_url: str, extra_env: dict[str, Any] | None = None):
        env = store_env(database_url)
        env.update(extra_env or {})
        self.database_url = database_url
        self.schema = env.get("SQLALCHEMY_SCHEMA") or None
        self._env = env
        # The URL as the Application gets it (on SQLite with the busy timeout): tables are
        # named with their schema, so no search path is needed.
        self.engine = sa.create_engine(env["SQLALCHEMY_URL"],
                                       **engine_options(env["SQLALCHEMY_URL"]))
        self.table = events_table(self.schema)
        self._mapper: Mapper | None = None
        self._integrity: IntegrityRecords | None = None

    @property
    def mapper(self) -> Mapper:
        """Built on first use: a list answered from caught-up views decodes nothing."""
        if self._mapper is None:
            self._mapper = store_mapper(self._env)
        return self._mapper

    @property
    def integrity(self) -> IntegrityRecords:
        """The seals and snapshot digests, read through this reader's engine."""
        if self._integrity is None:
            from cases.integrity_records import SqlIntegrityRecords

            self._integrity = SqlIntegrityRecords(_Transactions(self.engine), self.schema, None)
        return self._integrity

    def log_head(self) -> int:
        """The position of the last stored event (0 for an empty store)."""
        with self.engine.connect() as conn:
            return conn.execute(sa.select(sa.func.max(self.table.c.id))).scalar() or 0

    def log_page(self, start: int, limit: int, stop: int | None = None, *,
                 ids_as_stored: bool = False) -> list[Any]:
        """As ``CaseStore.log_page``: up to ``limit`` rows from position ``start``."""
        t = self.table
        query = sa.select(t.c.id, id_column(t.c.originator_id, self.engine.dialect.name,
                                            ids_as_stored),
                          t.c.originator_version, t.c.topic, t.c.state).where(t.c.id >= start)
        if stop is not None:
            query = query.where(t.c.id <= stop)
        with self.engine.connect() as conn:
            return conn.execute(query.order_by(t.c.id).limit(limit)).all()

    def case_events(self, originator_id: Any, version: int | None = None) -> list[Any]:
        """One case's events (up to ``version``), decoded, in order."""
        t = self.table
        query = sa.select(t.c.originator_id, t.c.originator_version, t.c.topic,
                          t.c.state).where(t.c.originator_id == originator_id)
        if version is not None:
            query = query.where(t.c.originator_version <= version)
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(t.c.originator_version)).all()
        return [self.mapper.to_domain_event(row) for row in rows]

    def get_case(self, originator_id: Any, version: int | None = None) -> Case:
        """A case's state at ``version`` replayed from its events (a reader does not load
        snapshots: replaying is always correct, and a read-only command rarely needs it)."""
        from eventsourcing.application import AggregateNotFoundError

        case = replay(self.case_events(originator_id, version))
        if case is None:
            raise AggregateNotFoundError(f"Aggregate {originator_id!r} version {version!r} not found.")
        return case

    def close(self) -> None:
        self.engine.dispose()


def open_reader(database_url: str, extra_env: dict[str, Any] | None = None) -> StoreReader | None:
    """A reader of the store at ``database_url``; None when it is not a SQL store or its
    tables are not created yet (the caller then opens ``CaseStore``, which creates them)."""
    if not database_url.startswith(("sqlite", "postgresql")):
        return None
    reader = StoreReader(database_url, extra_env)
    try:
        with reader.engine.connect() as conn:
            conn.execute(sa.select(reader.table.c.id).limit(0))
            conn.execute(sa.select(reader.integrity.seal_table.c.seal_id).limit(0))
            conn.execute(sa.select(reader.integrity.sealed_cases_table.c.seal_id).limit(0))
    except sa.exc.DBAPIError:
        reader.close()
        return None
    return reader

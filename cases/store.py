"""The event store: one eventsourcing Application configured from a database URL.

``memory://`` keeps events in memory (unit tests); ``sqlite:///path`` is the
embedded default; ``postgresql+psycopg://...`` is production. All three go
through the same Application, so one contract suite covers them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import sqlalchemy as sa
from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError, JSONTranscoder, Notification

from cases.datastore_reads import reading
from cases.domain import Case
from cases.errors import ConcurrentChangeError
from cases.integrity_records import IntegrityRecords, integrity_records
from cases.schema_lock import schema_lock
from cases.store_config import (  # noqa: F401  (re-exported: where the store's callers look)
    SQLITE_BUSY_TIMEOUT_SECONDS,
    STORE_NAME,
    SUPPORTED_URLS,
    DateAsISO,
    register_transcodings,
    replay,
    store_env,
)
from cases.store_reader import id_column
from cases.trusted_snapshots import CheckedSnapshotStore

SNAPSHOT_INTERVAL = 100


class CaseStore(Application):
    """Where case events live. Saves are atomic across every aggregate passed in."""

    name = STORE_NAME
    snapshotting_intervals = {Case: SNAPSHOT_INTERVAL}

    def __init__(self, database_url: str = "memory://", snapshots: bool = True,
                 extra_env: dict[str, Any] | None = None):
        env = store_env(database_url)
        if not snapshots:
            env["IS_SNAPSHOTTING_ENABLED"] = "n"
        env.update(extra_env or {})
        self.database_url = database_url
        self.schema = env.get("SQLALCHEMY_SCHEMA") or None
        if not snapshots:
            self.snapshotting_intervals = {}
        self._integrity: IntegrityRecords | None = None
        # Creating tables checks, then creates: processes starting together on a new
        # database would race between the two, so they take turns (cases/schema_lock.py).
        with schema_lock(database_url, self.schema):
            super().__init__(env=env)
            _ = self.integrity  # the seal and snapshot-digest tables exist from the start
        # The events' table on SQLAlchemy stores (None for the in-memory store of tests).
        table = getattr(getattr(self.recorder, "events_record_cls", None), "__table__", None)
        self._events_table: sa.Table | None = table
        if table is not None:
            # The selects every request makes, built once (SQLAlchemy then reuses their
            # compiled form without building and hashing a new statement each time).
            one_case = table.c.originator_id == sa.bindparam("case_id")
            self._head_query = sa.select(sa.func.max(table.c.id))
            self._one_case_query = sa.select(
                table.c.originator_id, table.c.originator_version, table.c.topic,
                table.c.state).where(one_case).order_by(table.c.originator_version)
            self._exists_query = sa.select(table.c.originator_version).where(one_case).limit(1)
            # what the datastore does at its first transaction, which reads here no longer open
            self.recorder.datastore.init_sqlite_wal_mode()

    @property
    def integrity(self) -> IntegrityRecords:
        """Seals and snapshot digests, kept beside the events (cases.integrity_records)."""
        if self._integrity is None:
            snapshot_recorder = self.snapshots.recorder if self.snapshots else None
            self._integrity = integrity_records(self.recorder, snapshot_recorder, self.schema)
        return self._integrity

    def construct_snapshot_store(self) -> CheckedSnapshotStore:
        """Snapshots are written with their digest and loaded only when it matches
        (cases.trusted_snapshots)."""
        recorder = self.factory.aggregate_recorder(purpose="snapshots")
        return CheckedSnapshotStore(self.mapper, recorder, lambda: self.integrity)

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        """The Application's transcodings and the domain's dates, kept in one place
        (cases/store_config.py) so a reader without the Application decodes alike."""
        register_transcodings(transcoder)

    def close(self) -> None:
        """Close, and release the connection pool of the engine the datastore made itself:
        eventsourcing-sqlalchemy 1.0 leaves it open, so a server or a test run that opens
        store after store would pile up idle PostgreSQL connections until the server
        refuses more ("too many clients")."""
        super().close()
        self.drop_connections()

    def drop_connections(self) -> None:
        """Close the pooled connections of the engine the datastore made (new ones are
        opened when needed): once one was found dead, the others are suspect too."""
        datastore = getattr(self.factory, "datastore", None)
        engine = getattr(datastore, "engine", None)
        if isinstance(engine, sa.engine.Engine):
            engine.dispose()

    def save_atomically(self, *cases: Case) -> int:
        """Save every pending event of the given cases in one transaction."""
        try:
            recordings = self.save(*cases)
        except IntegrityError as exc:
            raise ConcurrentChangeError(
                "another writer recorded on the same case first; nothing was recorded: "
                "reload the case and try again") from exc
        return len(recordings)

    def get_case(self, case_id: Any, version: int | None = None) -> Case:
        """Load a case; on SQLAlchemy stores the snapshot and event reads share one
        read transaction (one BEGIN/ROLLBACK instead of two), which measurably
        matters on PostgreSQL (docs/benchmarks.md)."""
        datastore = getattr(self.recorder, "datastore", None)
        if datastore is None:
            return self._load(case_id, version)
        with datastore.transaction(commit=False):
            return self._load(case_id, version)

    def _load(self, case_id: Any, version: int | None) -> Case:
        """A case with fewer events than the snapshot interval has no snapshot (they are
        taken at multiples of it), so its first ``SNAPSHOT_INTERVAL`` events are read first:
        fewer than that is the whole case, in one query. Only a longer case goes on to the
        snapshot look-up (whose digest is checked, cases/trusted_snapshots.py) and the events
        after the snapshot. Most cases are short; the look-up was most of what separated a
        command from the bare library's (docs/benchmarks.md)."""
        if self.snapshots is None:
            return self.repository.get(case_id, version=version)
        first = self._first_events([case_id], version, SNAPSHOT_INTERVAL).get(case_id, [])
        if len(first) == SNAPSHOT_INTERVAL:
            return self.repository.get(case_id, version=version)
        case = replay(map(self.mapper.to_domain_event, first))
        if case is None:
            raise AggregateNotFoundError(f"Aggregate {case_id!r} version {version!r} not found.")
        return case

    def _first_events(self, keys: list[Any], version: int | None = None,
                      limit: int | None = None) -> dict[Any, list[Any]]:
        """The stored events of these cases (up to ``version``; with ``limit``, of one case,
        its first ``limit``), not decoded, by case, in order; a key without events is left
        out. On SQLAlchemy stores a Core select: the recorder's ORM query builds an object
        per row and cost about as much CPU as decoding the events (docs/benchmarks.md)."""
        table = self._events_table
        if table is None:
            found = {key: list(self.recorder.select_events(key, lte=version, limit=limit))
                     for key in keys}
            return {key: stored for key, stored in found.items() if stored}
        query = (sa.select(table.c.originator_id, table.c.originator_version, table.c.topic,
                           table.c.state)
                 .where(table.c.originator_id.in_(keys) if len(keys) > 1
                        else table.c.originator_id == keys[0])
                 .order_by(table.c.originator_id, table.c.originator_version))
        if version is not None:
            query = query.where(table.c.originator_version <= version)
        if limit is not None:
            query = query.limit(limit)
        with self._reading() as conn:
            rows = conn.execute(query).all()
        events: dict[Any, list[Any]] = {}
        for row in rows:
            events.setdefault(row.originator_id, []).append(row)
        return events

    def get_cases(self, keys: list[Any]) -> dict[Any, Case]:
        """Several cases at once: the events of all of them in one query (the sweep passes
        deadlines a batch of cases at a time). A case of ``SNAPSHOT_INTERVAL`` events or
        more is loaded by ``get_case`` instead (from its checked snapshot); a key without
        events is left out."""
        if not keys:
            return {}
        events = self._first_events(keys)
        found = {}
        for key in keys:
            stored = events.get(key)
            if not stored:
                continue
            if self.snapshots is not None and len(stored) >= SNAPSHOT_INTERVAL:
                found[key] = self.get_case(key)
                continue
            found[key] = replay(map(self.mapper.to_domain_event, stored))
        return found

    def notifications(self, topics: tuple[str, ...] = (), page: int = 500, start: int | None = 1,
                      stop: int | None = None) -> Iterator[Notification]:
        """Every stored event in log order (optionally only some topics, from ``start`` to
        ``stop``; ``start=None`` from the lowest id there is), page by page."""
        while True:
            batch = self.recorder.select_notifications(start=start, limit=page, stop=stop,
                                                       topics=topics)
            if not batch:
                return
            yield from batch
            start = batch[-1].id + 1

    def log_page(self, start: int, limit: int, stop: int | None = None, *,
                 ids_as_stored: bool = False) -> list[Any]:
        """Up to ``limit`` stored events from position ``start`` (to ``stop``), in log order:
        rows with ``id``, ``originator_id``, ``originator_version``, ``topic`` and ``state``,
        which ``self.mapper.to_domain_event`` decodes. ``ids_as_stored``: case ids as the
        database holds them (``store_reader.id_column``), for a decoder that converts them.

        A SQLAlchemy Core select of the notification log: the ORM's ``select_notifications``
        builds an object per row and spent most of a catch-up's read doing so
        (docs/benchmarks.md). The in-memory store (tests) has no table and uses the latter."""
        table = self._events_table
        if table is None:
            return self.recorder.select_notifications(start=start, limit=limit, stop=stop)
        ids = id_column(table.c.originator_id, self.recorder.datastore.engine.dialect.name,
                        ids_as_stored)
        query = sa.select(table.c.id, ids, table.c.originator_version,
                          table.c.topic, table.c.state).where(table.c.id >= start)
        if stop is not None:
            query = query.where(table.c.id <= stop)
        with self._reading() as conn:
            return conn.execute(query.order_by(table.c.id).limit(limit)).all()

    def log_head(self) -> int:
        """The position of the last stored event (0 for an empty store): asked before every
        read that catches views up, so one compiled Core select, not the recorder's ORM
        query (a fifth of its time)."""
        if self._events_table is None:
            return self.recorder.max_notification_id() or 0
        with self._reading() as conn:
            return conn.execute(self._head_query).scalar() or 0

    def case_events(self, originator_id: Any) -> list[Any]:
        """Every stored event of one case, decoded, in order (empty if there is none)."""
        if self._events_table is None:
            return list(self.events.get(originator_id))
        with self._reading() as conn:
            stored = conn.execute(self._one_case_query, {"case_id": originator_id}).all()
        return [self.mapper.to_domain_event(row) for row in stored]

    def has_case(self, originator_id: Any) -> bool:
        """Whether any event of this case is stored (one short indexed read)."""
        if self._events_table is None:
            return any(True for _ in self.events.get(originator_id, limit=1))
        with self._reading() as conn:
            return conn.execute(self._exists_query, {"case_id": originator_id}).first() \
                is not None

    def _reading(self) -> AbstractContextManager[sa.Connection]:
        return reading(self.recorder.datastore)

    def case_ids(self) -> list[Any]:
        return [n.originator_id for n in self.notifications(topics=(Case.Opened.TOPIC,))]

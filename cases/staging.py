"""A unit of work for journals of any size: events staged as they are decided, saved at once.

A journal is all or nothing, but one of a million lines cannot keep every case it
touches in memory, and it must not hold the event store's write lock for the whole
import (other clerks keep working meanwhile). So the events a journal's commands decide
are written, a few thousand at a time and each batch in its own short transaction, to a
staging table that nothing else reads. Cases whose events are staged may leave memory;
a case needed again is rebuilt from the event store and its staged events. Only when
every line has been accepted does one final transaction move the staged events into the
event store: one ``INSERT ... SELECT`` inside the database, under the same table lock and
with the same notification as eventsourcing's own recorder, then the staging rows are
deleted. The events' hash-chain links were computed when they were decided, as for any
save, so the moved events are exactly what a save would have written.

Conflicts with other writers are found, never lost: every staged event has its case's
next version number, so a clerk who recorded on one of the journal's cases meanwhile
owns that version first and the final insert fails on the store's unique
(case, version) index; a case rebuilt during the import whose stored version moved on
fails at once. Either way the whole journal is refused and nothing is recorded.

The trade-off is described in docs/commands.md ("Large journals and other writers").
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any
from uuid import UUID

import sqlalchemy as sa
import structlog
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError, StoredEvent

from cases import errors
from cases.domain import Case, case_id
from cases.staged_index import StagedBatchIndex, index_table
from cases.store import CaseStore

STAGE_EVENTS = 5_000  # commands decided in memory before their events are staged
RESIDENT_CASES = 2_000  # cases kept in memory once their events are staged
# Staged rows of an import that never finished (its process was killed) are removed by the
# next import once they are this old; no import runs this long.
ABANDONED_AFTER = dt.timedelta(hours=24)

_metadata = sa.MetaData()
log = structlog.get_logger("abate.journal")


def staging_table(store: CaseStore) -> sa.Table:
    """The staging table; its event columns have the event table's types, so the final
    move is one ``INSERT ... SELECT`` inside the database."""
    name = "abate_journal_staging"
    key = f"{store.schema}.{name}" if store.schema else name
    if key in _metadata.tables:
        return _metadata.tables[key]
    events = store.recorder.events_record_cls.__table__
    return sa.Table(
        name, _metadata,
        sa.Column("import_id", sa.String(36), primary_key=True),
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("originator_id", events.c.originator_id.type, nullable=False),
        sa.Column("originator_version", events.c.originator_version.type, nullable=False),
        sa.Column("topic", events.c.topic.type, nullable=False),
        sa.Column("state", events.c.state.type, nullable=False),
        sa.Column("staged_at", sa.DateTime(timezone=True), nullable=False),
        sa.Index("abate_journal_staging_case", "import_id", "originator_id"),
        schema=store.schema,
    )


def staged_index_table(store: CaseStore) -> sa.Table:
    """The table of the journal's own cases (``cases.staged_index``), beside the events."""
    name = "abate_journal_cases"
    key = f"{store.schema}.{name}" if store.schema else name
    if key in _metadata.tables:
        return _metadata.tables[key]
    events = store.recorder.events_record_cls.__table__
    return index_table(_metadata, name, events.c.originator_id.type, store.schema)


def supports_staging(store: CaseStore) -> bool:
    """Staging needs a SQL event store (memory:// stores keep a journal in memory)."""
    return getattr(store.recorder, "datastore", None) is not None


class StagedUnitOfWork:
    """The cases of one journal, with their decided events staged in the database."""

    def __init__(self, store: CaseStore, *, stage_events: int = STAGE_EVENTS,
                 resident_cases: int = RESIDENT_CASES):
        self.store = store
        self.import_id = str(uuid.uuid4())
        self.stage_events = stage_events
        self.resident_cases = resident_cases
        self.cases: OrderedDict[UUID, Case] = OrderedDict()  # resident, least recent first
        # Known not to be in the event store (for the chunk of lines being applied: a
        # case the journal opened is then in the index, so older entries are not needed).
        self._absent: set[UUID] = set()
        self._seq = 0
        self._passings_staged = 0
        self._pending = 0
        self._engine = store.recorder.datastore.engine
        self._table = staging_table(store)
        self._table.create(self._engine, checkfirst=True)
        self._index_table = staged_index_table(store)
        self._index_table.create(self._engine, checkfirst=True)
        # The facts of the journal's cases, and the version their staged events follow.
        self.index = StagedBatchIndex(self._engine, self._index_table, self.import_id)
        self._forget_abandoned()

    def _forget_abandoned(self) -> None:
        cutoff = dt.datetime.now(dt.timezone.utc) - ABANDONED_AFTER
        with self._engine.begin() as conn:
            for table in (self._table, self._index_table):
                conn.execute(table.delete().where(table.c.staged_at < cutoff))

    # ------------------------------------------------------------ finding cases

    def prefetch(self, keys: Iterable[UUID]) -> None:
        """Learn with one query which of these cases exist in the event store (a new case
        then costs no failed look-up)."""
        wanted = [k for k in dict.fromkeys(keys) if k not in self.cases]
        journals = self.index.known(wanted)
        unknown = [k for k in wanted if k not in journals]
        self._absent = set()
        if not unknown:
            return
        record = self.store.recorder.events_record_cls
        found: set[UUID] = set()
        with self.store.recorder.datastore.transaction(commit=False) as session:
            for start in range(0, len(unknown), 500):
                chunk = unknown[start:start + 500]
                rows = session.query(record.originator_id).filter(
                    record.originator_id.in_(chunk), record.originator_version == 1)
                found.update(UUID(str(r[0])) for r in rows)
        self._absent = {k for k in unknown if k not in found}

    def find(self, municipality: str, case_ref: str) -> Case | None:
        key = case_id(municipality, case_ref)
        if key in self._absent:
            return None
        try:
            return self.load(key)
        except AggregateNotFoundError:
            self._absent.add(key)
            return None

    def get(self, municipality: str, case_ref: str) -> Case:
        case = self.find(municipality, case_ref)
        if case is None:
            raise errors.CaseNotFoundError(f"no case {case_ref!r} in {municipality}")
        return case

    def load(self, key: UUID) -> Case:
        case = self.cases.get(key)
        if case is None:
            case = self._rebuild(key)
            self.cases[key] = case
        self.cases.move_to_end(key)
        return case

    def all_case_ids(self) -> list[UUID]:
        """Every stored case and every case of this journal (for services without views)."""
        known = dict.fromkeys(self.store.case_ids())
        known.update(dict.fromkeys(self.index.keys()))
        return list(known)

    def add(self, case: Case) -> None:
        """A case this journal opened."""
        self.cases[case.id] = case
        self.note(case)

    def _rebuild(self, key: UUID) -> Case:
        """A case from the event store, with the events this journal staged for it; a case
        another writer recorded on meanwhile is a conflict, found here at once."""
        base = self.index.base(key)
        if base is None:  # nothing staged: the store has it all
            return self.store.get_case(key)
        if base:
            case: Case | None = self.store.get_case(key)
            if case.version != base:
                raise self._conflict(key)
        else:
            case = None
            if self.store.recorder.select_events(key, limit=1):
                raise self._conflict(key)
        for event in self._staged_events(key):
            case = event.mutate(case)
        assert case is not None
        return case

    def _conflict(self, key: UUID) -> errors.ConcurrentChangeError:
        return errors.ConcurrentChangeError(
            f"another writer recorded on case {self.index.case_ref(key)} while the "
            "journal was being imported: import the journal again")

    def _staged_events(self, key: UUID) -> list[Any]:
        t = self._table.c
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(self._table).where(
                t.import_id == self.import_id, t.originator_id == key).order_by(t.seq)).all()
        return [self.store.mapper.to_domain_event(StoredEvent(
            originator_id=key, originator_version=r.originator_version, topic=r.topic,
            state=r.state)) for r in rows]

    # ------------------------------------------------------------ what the service asks

    def note(self, case: Case) -> None:
        """Called after each command: refresh the batch index, stage when enough is decided
        (counted in commands, which decide one to a few events each)."""
        self.index.note(case.id, case)
        self._absent.discard(case.id)  # the journal opened it
        self._pending += 1
        if self._pending >= self.stage_events:
            self.stage()

    def events(self, case: Case) -> list[Any]:
        """The case's events so far (for corrections): stored, staged, then pending."""
        base = self.index.base(case.id)
        if base is None:  # nothing staged
            loaded = [] if case.id in self._absent else list(self.store.events.get(case.id))
        else:
            stored = list(self.store.events.get(case.id, lte=base)) if base else []
            loaded = stored + self._staged_events(case.id)
        last = loaded[-1].originator_version if loaded else 0
        return loaded + [e for e in case.pending_events if e.originator_version > last]

    def deadlines_passing(self) -> int:
        """DeadlinePassed events this journal decided (staged or still pending)."""
        return self._passings_staged + sum(
            isinstance(e, Case.DeadlinePassed)
            for case in self.cases.values() for e in case.pending_events)

    # ------------------------------------------------------------ staging and saving

    def stage(self) -> None:
        """Write every decided event to the staging table (one short transaction) and let
        cases beyond the resident limit leave memory."""
        rows = []
        bases: dict[UUID, int] = {}  # kept by the index only where none is recorded yet
        staged_at = dt.datetime.now(dt.timezone.utc)
        for key, case in self.cases.items():
            events = case.collect_events()
            if events:
                bases[key] = events[0].originator_version - 1
            for event in events:
                self._passings_staged += isinstance(event, Case.DeadlinePassed)
                stored = self.store.mapper.to_stored_event(event)
                self._seq += 1
                rows.append({"import_id": self.import_id, "seq": self._seq,
                             "originator_id": key,
                             "originator_version": stored.originator_version,
                             "topic": stored.topic, "state": stored.state,
                             "staged_at": staged_at})
        if rows:
            with self._engine.begin() as conn:
                conn.execute(self._table.insert(), rows)
        self.index.flush(bases, self.cases)
        self._pending = 0
        while len(self.cases) > self.resident_cases:
            self.cases.popitem(last=False)

    def commit(self) -> int:
        """Move every staged event into the event store in one short transaction; returns
        the number of events saved."""
        self.stage()
        self.cases.clear()
        if not self._seq:
            return 0
        recorder = self.store.recorder
        events = recorder.events_record_cls.__table__
        t = self._table.c
        columns = ["originator_id", "originator_version", "topic", "state"]
        started = time.perf_counter()
        try:
            with recorder.datastore.transaction(commit=True) as session:
                # As eventsourcing_sqlalchemy's own insert: on PostgreSQL an exclusive lock
                # on the event table, so notification ids are committed in order.
                recorder._lock_table(session)
                session.execute(events.insert().from_select(
                    columns, sa.select(*(t[c] for c in columns))
                    .where(t.import_id == self.import_id).order_by(t.seq)))
                notify = getattr(recorder, "_notify_channel", None)
                if notify is not None:  # wakes views that follow the log (LISTEN/NOTIFY)
                    notify(session)
        except IntegrityError as exc:
            raise self._conflict(self._first_taken_version()) from exc
        # How long other writers waited at most (the only time the write lock was held long).
        log.info("journal_staged_events_saved", events=self._seq,
                 seconds=round(time.perf_counter() - started, 3))
        self._take_snapshots()
        # The staged rows are deleted after the move, outside its lock (deleting a million
        # rows takes about as long as inserting them); if this process dies first, they
        # are only rows of a finished import, removed by a later import after a day.
        self.discard()
        return self._seq  # every staged event, or the transaction failed

    def _take_snapshots(self) -> None:
        """Snapshot each case whose staged events crossed a snapshot interval, as a save
        through the library would have (the move bypasses its snapshotting), so long
        cases imported by journal still load from a snapshot."""
        interval = self.store.snapshotting_intervals.get(Case) if self.store.snapshots else None
        if not interval:
            return
        t = self._table.c
        crossed = (sa.select(t.originator_id, sa.func.max(t.originator_version))
                   .where(t.import_id == self.import_id).group_by(t.originator_id)
                   .having(sa.func.max(t.originator_version) // interval
                           > (sa.func.min(t.originator_version) - 1) // interval))
        with self._engine.connect() as conn:
            rows = conn.execute(crossed).all()
        for originator_id, last in rows:
            self.store.take_snapshot(UUID(str(originator_id)), version=last // interval * interval)

    def _first_taken_version(self) -> UUID:
        """A case with a staged version that another writer saved first (to name it)."""
        events = self.store.recorder.events_record_cls.__table__
        t = self._table.c
        taken = sa.select(events.c.originator_id).where(
            events.c.originator_id == t.originator_id,
            events.c.originator_version == t.originator_version)
        with self._engine.connect() as conn:
            return conn.execute(sa.select(t.originator_id).where(
                t.import_id == self.import_id, taken.exists()).limit(1)).scalar_one()

    def discard(self) -> None:
        """Delete this import's staged rows (a refused journal, or after the move)."""
        self.cases.clear()
        if self._seq:
            with self._engine.begin() as conn:
                conn.execute(self._table.delete().where(
                    self._table.c.import_id == self.import_id))
        self.index.discard()

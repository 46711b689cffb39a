"""Where seals and snapshot digests are kept, beside the event store.

Three tables next to the events (same database, same schema): ``abate_seals`` (one row
per seal, append-only, with the leaves it newly covers as one blob), ``abate_sealed_cases``
(the highest version of each case each seal covers, written with the seal: reading one
case asks it instead of unpacking every seal's leaves) and ``abate_snapshot_digests`` (the
digest of each snapshot Abate wrote, so a snapshot changed afterwards is never loaded).
A ``memory://`` store keeps them in memory. Writes join the event store's own transaction
when one is open.
"""

from __future__ import annotations

import json
import struct
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import sqlalchemy as sa
from eventsourcing.persistence import IntegrityError, StoredEvent

from cases.datastore_reads import reading

# One leaf as packed in a seal's blob: notification id, case id, version, record hash.
LEAF = struct.Struct(">Q16sQ32s")


def highest_versions(leaves: bytes) -> dict[UUID, int]:
    """The highest version of each case among a seal's packed leaves (whole leaves only:
    a blob cut short is ``abate verify``'s finding, not this index's)."""
    found: dict[bytes, int] = {}
    whole = len(leaves) - len(leaves) % LEAF.size
    for _n, case, version, _h in LEAF.iter_unpack(leaves[:whole]):
        if version > found.get(case, 0):
            found[case] = version
    return {UUID(bytes=case): version for case, version in found.items()}


@dataclass(frozen=True)
class SealRow:
    """A seal as stored: its fields, the leaves it newly covers, the cases it names."""

    fields: dict[str, Any]
    leaves: bytes
    case_names: dict[str, str]
    # why the stored case names could not be read (the record was altered), else None
    case_names_problem: str | None = None


def _case_names(stored: Any) -> tuple[dict[str, str], str | None]:
    """A seal's stored case names, or none and why: an altered record is a finding for
    ``abate verify`` to report, not a failure of verify itself."""
    try:
        names = json.loads(stored)
    except (TypeError, ValueError) as exc:
        return {}, f"its case names are unreadable ({type(exc).__name__}: {str(exc)[:80]})"
    if not isinstance(names, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
        return {}, "its case names are not a mapping of case ids to names"
    return names, None


class IntegrityRecords(ABC):
    """The interface both keepers share (SQL tables, or memory for ``memory://``)."""

    @abstractmethod
    def seals(self) -> list[SealRow]: ...

    @abstractmethod
    def last_seal_fields(self) -> dict[str, Any] | None: ...

    @abstractmethod
    def seal_fields(self) -> list[dict[str, Any]]:
        """Every seal's fields in seal order, without its leaves (for lists of seals)."""

    @abstractmethod
    def seals_for(self, reason_prefix: str) -> list[dict[str, Any]]:
        """The fields of the seals whose reason starts with ``reason_prefix``, in seal order
        (a year's certifications of a village: ``certification belleville 2026 ``), found
        by the database, not by reading every seal."""

    @abstractmethod
    def newest_seals(self, limit: int, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
        """A page of seals' fields, newest first, and how many seals there are (a page of
        people's lists: one is taken at every import, sweep and certification)."""

    @abstractmethod
    def add_seal(self, row: SealRow) -> None:
        """Append a seal and its cases' index rows; IntegrityError when a seal with that
        id exists already."""

    @abstractmethod
    def last_sealed(self, originator_id: UUID) -> tuple[int, int | None]:
        """(the highest version of this case any seal covers, the first seal that covers
        it); (0, None) when no seal covers the case."""

    @abstractmethod
    def reindex_sealed_cases(self) -> int:
        """Rewrite the whole index from the seals' leaves (after ``abate verify`` found it
        altered); the number of rows written."""

    @abstractmethod
    def sealed_case_rows(self) -> dict[tuple[UUID, int], int]:
        """The whole index as stored, {(case id, seal id): version}: ``abate verify``
        compares it with what the seals' leaves give."""

    @abstractmethod
    def snapshot_digest(self, originator_id: UUID, version: int) -> str | None: ...

    @abstractmethod
    def put_snapshot_digest(self, originator_id: UUID, version: int, digest: str) -> None: ...

    @abstractmethod
    def snapshot_digests(self) -> dict[tuple[UUID, int], str]: ...

    @abstractmethod
    def stored_snapshots(self) -> Iterator[StoredEvent]:
        """Every stored snapshot, raw (for ``abate verify``)."""


SEAL_COLUMNS = ("seal_id", "position", "event_count", "case_count", "log_digest",
                "previous_digest", "sealed_at", "actor", "reason", "digest")


class SqlIntegrityRecords(IntegrityRecords):
    def __init__(self, datastore: Any, schema: str | None, snapshot_record_cls: Any | None):
        self.datastore = datastore
        self.snapshot_record_cls = snapshot_record_cls
        metadata = sa.MetaData(schema=schema)
        self.seal_table = sa.Table(
            "abate_seals", metadata,
            sa.Column("seal_id", sa.Integer, primary_key=True, autoincrement=False),
            sa.Column("position", sa.BigInteger, nullable=False),
            sa.Column("event_count", sa.BigInteger, nullable=False),
            sa.Column("case_count", sa.BigInteger, nullable=False),
            sa.Column("log_digest", sa.String(64), nullable=False),
            sa.Column("previous_digest", sa.String(64), nullable=False),
            sa.Column("sealed_at", sa.String(40), nullable=False),
            sa.Column("actor", sa.Text, nullable=False),
            sa.Column("reason", sa.Text, nullable=False),
            sa.Column("digest", sa.String(64), nullable=False),
            sa.Column("leaves", sa.LargeBinary, nullable=False),
            sa.Column("case_names", sa.Text, nullable=False),
        )
        self.sealed_cases_table = sa.Table(
            "abate_sealed_cases", metadata,
            sa.Column("case_id", sa.String(36), primary_key=True),
            sa.Column("seal_id", sa.Integer, primary_key=True, autoincrement=False),
            sa.Column("version", sa.BigInteger, nullable=False),
        )
        self.digest_table = sa.Table(
            "abate_snapshot_digests", metadata,
            sa.Column("originator_id", sa.String(36), primary_key=True),
            sa.Column("originator_version", sa.Integer, primary_key=True),
            sa.Column("digest", sa.String(64), nullable=False),
        )
        self.metadata = metadata
        t = self.sealed_cases_table  # asked on every case read: built once
        self._last_sealed = sa.select(t.c.version, t.c.seal_id).where(
            t.c.case_id == sa.bindparam("case_id")).order_by(
            t.c.version.desc(), t.c.seal_id).limit(1)

    def create_tables(self) -> None:
        self.metadata.create_all(self.datastore.engine, checkfirst=True)
        self._index_missing_seals()

    def _index_missing_seals(self) -> None:
        """Index the seals recorded before the index existed (a store sealed by an older
        Abate), once; seals recorded since carry their index rows from the start."""
        seals, index = self.seal_table, self.sealed_cases_table
        try:
            with self._write() as session:
                missing = session.execute(sa.select(seals.c.seal_id, seals.c.leaves).where(
                    ~seals.c.seal_id.in_(sa.select(index.c.seal_id).distinct()))).all()
                for seal_id, leaves in missing:
                    rows = self._index_rows(seal_id, bytes(leaves))
                    if rows:
                        session.execute(index.insert(), rows)
        except sa.exc.IntegrityError:  # another process starting beside this one indexed them
            pass

    @staticmethod
    def _index_rows(seal_id: int, leaves: bytes) -> list[dict[str, Any]]:
        return [{"case_id": str(case), "seal_id": seal_id, "version": version}
                for case, version in highest_versions(leaves).items()]

    def _read(self):
        return reading(self.datastore)

    def _write(self):
        return self.datastore.transaction(commit=True)

    def seals(self) -> list[SealRow]:
        with self._read() as session:
            rows = session.execute(sa.select(self.seal_table).order_by(
                self.seal_table.c.seal_id)).mappings().all()
            return [SealRow({k: row[k] for k in SEAL_COLUMNS}, bytes(row["leaves"]),
                            *_case_names(row["case_names"])) for row in rows]

    def last_seal_fields(self) -> dict[str, Any] | None:
        columns = [self.seal_table.c[name] for name in SEAL_COLUMNS]
        with self._read() as session:
            row = session.execute(sa.select(*columns).order_by(
                self.seal_table.c.seal_id.desc()).limit(1)).mappings().first()
            return dict(row) if row else None

    def seal_fields(self) -> list[dict[str, Any]]:
        columns = [self.seal_table.c[name] for name in SEAL_COLUMNS]
        with self._read() as session:
            return [dict(row) for row in session.execute(sa.select(*columns).order_by(
                self.seal_table.c.seal_id)).mappings()]

    def seals_for(self, reason_prefix: str) -> list[dict[str, Any]]:
        columns = [self.seal_table.c[name] for name in SEAL_COLUMNS]
        with self._read() as session:
            rows = session.execute(sa.select(*columns).where(
                self.seal_table.c.reason.startswith(reason_prefix, autoescape=True)).order_by(
                self.seal_table.c.seal_id)).mappings()
            return [dict(row) for row in rows]

    def newest_seals(self, limit: int, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
        columns = [self.seal_table.c[name] for name in SEAL_COLUMNS]
        with self._read() as session:
            total = session.execute(sa.select(sa.func.count()).select_from(
                self.seal_table)).scalar_one()
            rows = session.execute(sa.select(*columns).order_by(
                self.seal_table.c.seal_id.desc()).limit(limit).offset(offset)).mappings()
            return [dict(row) for row in rows], total

    def add_seal(self, row: SealRow) -> None:
        index = self._index_rows(row.fields["seal_id"], row.leaves)
        try:
            with self._write() as session:
                session.execute(self.seal_table.insert().values(
                    **row.fields, leaves=row.leaves, case_names=json.dumps(row.case_names)))
                # This seal id is ours now: rows under it are left from a seal record that
                # was deleted (``abate verify`` reports that); they give way to this seal's.
                t = self.sealed_cases_table
                session.execute(t.delete().where(t.c.seal_id == row.fields["seal_id"]))
                if index:
                    session.execute(t.insert(), index)
        except sa.exc.IntegrityError as exc:  # another sealer took this seal id first
            raise IntegrityError(str(exc)) from exc

    def last_sealed(self, originator_id: UUID) -> tuple[int, int | None]:
        with self._read() as session:
            row = session.execute(self._last_sealed, {"case_id": str(originator_id)}).first()
        return (int(row.version), int(row.seal_id)) if row else (0, None)

    def reindex_sealed_cases(self) -> int:
        seals, index = self.seal_table, self.sealed_cases_table
        written = 0
        with self._write() as session:
            session.execute(index.delete())
            for seal_id, leaves in session.execute(
                    sa.select(seals.c.seal_id, seals.c.leaves)).all():
                rows = self._index_rows(seal_id, bytes(leaves))
                if rows:
                    session.execute(index.insert(), rows)
                written += len(rows)
        return written

    def sealed_case_rows(self) -> dict[tuple[UUID, int], int]:
        t = self.sealed_cases_table
        with self._read() as session:
            return {(UUID(r.case_id), int(r.seal_id)): int(r.version)
                    for r in session.execute(sa.select(t))}

    def snapshot_digest(self, originator_id: UUID, version: int) -> str | None:
        t = self.digest_table
        with self._read() as session:
            return session.execute(sa.select(t.c.digest).where(
                t.c.originator_id == str(originator_id),
                t.c.originator_version == version)).scalar()

    def put_snapshot_digest(self, originator_id: UUID, version: int, digest: str) -> None:
        t = self.digest_table
        with self._write() as session:
            session.execute(t.delete().where(t.c.originator_id == str(originator_id),
                                             t.c.originator_version == version))
            session.execute(t.insert().values(originator_id=str(originator_id),
                                              originator_version=version, digest=digest))

    def snapshot_digests(self) -> dict[tuple[UUID, int], str]:
        t = self.digest_table
        with self._read() as session:
            return {(UUID(r.originator_id), r.originator_version): r.digest
                    for r in session.execute(sa.select(t))}

    def stored_snapshots(self) -> Iterator[StoredEvent]:
        if self.snapshot_record_cls is None:
            return iter(())
        t = self.snapshot_record_cls.__table__
        with self._read() as session:
            found = [StoredEvent(originator_id=r.originator_id,
                                 originator_version=r.originator_version, topic=r.topic,
                                 state=bytes(r.state))
                     for r in session.execute(sa.select(t).order_by(t.c.originator_id,
                                                                    t.c.originator_version))]
        return iter(found)


class MemoryIntegrityRecords(IntegrityRecords):
    def __init__(self, snapshot_recorder: Any | None):
        self._seals: list[SealRow] = []
        self._sealed_cases: dict[UUID, dict[int, int]] = {}  # case -> seal id -> version
        self._digests: dict[tuple[UUID, int], str] = {}
        self.snapshot_recorder = snapshot_recorder

    def create_tables(self) -> None:
        pass

    def seals(self) -> list[SealRow]:
        return list(self._seals)

    def last_seal_fields(self) -> dict[str, Any] | None:
        return dict(self._seals[-1].fields) if self._seals else None

    def seal_fields(self) -> list[dict[str, Any]]:
        return [dict(row.fields) for row in self._seals]

    def seals_for(self, reason_prefix: str) -> list[dict[str, Any]]:
        return [dict(row.fields) for row in self._seals
                if str(row.fields["reason"]).startswith(reason_prefix)]

    def newest_seals(self, limit: int, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
        newest = [dict(row.fields) for row in reversed(self._seals)]
        return newest[offset:offset + limit], len(newest)

    def add_seal(self, row: SealRow) -> None:
        if any(s.fields["seal_id"] == row.fields["seal_id"] for s in self._seals):
            raise IntegrityError(f"seal {row.fields['seal_id']} exists already")
        self._seals.append(row)
        for case, version in highest_versions(row.leaves).items():
            self._sealed_cases.setdefault(case, {})[row.fields["seal_id"]] = version

    def last_sealed(self, originator_id: UUID) -> tuple[int, int | None]:
        by_seal = self._sealed_cases.get(UUID(str(originator_id)))
        if not by_seal:
            return 0, None
        seal_id, version = min(by_seal.items(), key=lambda pair: (-pair[1], pair[0]))
        return version, seal_id

    def reindex_sealed_cases(self) -> int:
        self._sealed_cases = {}
        for row in self._seals:
            for case, version in highest_versions(row.leaves).items():
                self._sealed_cases.setdefault(case, {})[row.fields["seal_id"]] = version
        return sum(len(by_seal) for by_seal in self._sealed_cases.values())

    def sealed_case_rows(self) -> dict[tuple[UUID, int], int]:
        return {(case, seal_id): version for case, by_seal in self._sealed_cases.items()
                for seal_id, version in by_seal.items()}

    def snapshot_digest(self, originator_id: UUID, version: int) -> str | None:
        return self._digests.get((UUID(str(originator_id)), version))

    def put_snapshot_digest(self, originator_id: UUID, version: int, digest: str) -> None:
        self._digests[(UUID(str(originator_id)), version)] = digest

    def snapshot_digests(self) -> dict[tuple[UUID, int], str]:
        return dict(self._digests)

    def stored_snapshots(self) -> Iterator[StoredEvent]:
        if self.snapshot_recorder is None:
            return iter(())
        return iter(list(getattr(self.snapshot_recorder, "_stored_events", [])))


def integrity_records(recorder: Any, snapshot_recorder: Any | None,
                      schema: str | None) -> IntegrityRecords:
    """The keeper for this event store's persistence module, tables created."""
    datastore = getattr(recorder, "datastore", None)
    if datastore is None:
        return MemoryIntegrityRecords(snapshot_recorder)
    snapshot_cls = getattr(snapshot_recorder, "events_record_cls", None)
    records = SqlIntegrityRecords(datastore, schema, snapshot_cls)
    records.create_tables()
    return records

"""The access log: who read, exported or certified what, when and from where.

One append-only table beside the event store (``abate_access_log``), created under the
start-up lock like the users table. Abate only ever inserts into it and reads it: there is
no update and no delete here, so an entry, once written, says what happened. A row per
authenticated ``/api/v1`` request and per web page request of a signed-in user (a case
page, the audit page, the lists: "who looked at which case, when"; ``api.request_log``
writes both); the auditor reads it through ``GET /api/v1/audit/access-log``, only the
entries of its own municipalities.

A request with no municipality in its path (the audit routes) is recorded with the
municipalities of the user who made it, so each of those villages' auditors sees it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from cases.schema_lock import schema_lock

# What a request did with the records: the auditor filters on it.
READ, WRITE, EXPORT, CERTIFY = "read", "write", "export", "certify"


@dataclass(frozen=True)
class AccessEntry:
    request_id: str
    requested_at: dt.datetime
    user: str
    role: str
    municipality: str | None
    user_municipalities: tuple[str, ...]
    case_ref: str | None
    route: str
    action: str
    method: str
    path: str
    status: int
    duration_ms: float
    client: str | None


def _utc(value: dt.datetime) -> str:
    """A sortable UTC text (fixed width): the column orders and filters by time."""
    return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class AccessLog:
    """The access-log table on one database (the event store's)."""

    def __init__(self, engine: sa.Engine, database_url: str, schema: str | None = None):
        self.engine = engine
        metadata = sa.MetaData()
        self.entries = sa.Table(
            "abate_access_log", metadata,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("request_id", sa.String(64), nullable=False),
            sa.Column("requested_at", sa.String(32), nullable=False, index=True),
            sa.Column("user_name", sa.String(100), nullable=False, index=True),
            sa.Column("role", sa.String(16), nullable=False),
            sa.Column("municipality", sa.String(32), index=True),
            # ",belleville,mazomanie,": the user's grants, matched with LIKE on any database
            sa.Column("user_municipalities", sa.String(400), nullable=False),
            sa.Column("case_ref", sa.String(64), index=True),
            sa.Column("route", sa.String(64), nullable=False),
            sa.Column("action", sa.String(16), nullable=False),
            sa.Column("method", sa.String(8), nullable=False),
            sa.Column("path", sa.String(512), nullable=False),
            sa.Column("status", sa.Integer, nullable=False),
            sa.Column("duration_ms", sa.Float, nullable=False),
            sa.Column("client", sa.String(64)),
        )
        self._insert = self.entries.insert()
        self._lengths = [(c.name, c.type.length) for c in self.entries.columns
                         if getattr(c.type, "length", None)]
        with schema_lock(database_url, schema):
            metadata.create_all(engine, checkfirst=True)

    def append(self, entry: AccessEntry) -> None:
        self.append_many([entry])

    def append_many(self, entries: list[AccessEntry]) -> None:
        """Write these rows in one transaction (``api.access_log_writer`` batches them)."""
        with self.engine.begin() as conn:  # one statement, compiled once
            conn.execute(self._insert, [self._row(entry) for entry in entries])

    def _row(self, entry: AccessEntry) -> dict[str, Any]:
        values = dict(vars(entry))  # its fields: no deep copy (dataclasses.asdict) per request
        values["user_name"] = values.pop("user")
        values["requested_at"] = _utc(entry.requested_at)
        values["user_municipalities"] = "," + ",".join(entry.user_municipalities) + ","
        for name, length in self._lengths:  # a path a client made up fits its column
            if isinstance(values.get(name), str):
                values[name] = values[name][:length]
        return values

    def search(self, *, municipalities: tuple[str, ...], user: str | None = None,
               case_ref: str | None = None, municipality: str | None = None,
               since: dt.datetime | None = None, until: dt.datetime | None = None,
               before_id: int | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """Entries about ``municipalities`` (the reader's grants), newest first; a page
        goes on from the last id of the previous one (``before_id``), so entries written
        meanwhile do not shift it."""
        c = self.entries.c
        visible = [c.municipality.in_(municipalities)] + [
            sa.and_(c.municipality.is_(None), c.user_municipalities.like(f"%,{m},%"))
            for m in municipalities]
        query = sa.select(self.entries).where(sa.or_(*visible))
        if user is not None:
            query = query.where(c.user_name == user)
        if case_ref is not None:
            query = query.where(c.case_ref == case_ref)
        if municipality is not None:
            query = query.where(c.municipality == municipality)
        if since is not None:
            query = query.where(c.requested_at >= _utc(since))
        if until is not None:
            query = query.where(c.requested_at < _utc(until))
        if before_id is not None:
            query = query.where(c.id < before_id)
        query = query.order_by(c.id.desc()).limit(limit)
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [_plain(row) for row in rows]


def _plain(row: Any) -> dict[str, Any]:
    entry = dict(row)
    entry["user"] = entry.pop("user_name")
    entry["requested_at"] = dt.datetime.strptime(
        entry["requested_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc)
    entry["user_municipalities"] = [m for m in entry["user_municipalities"].split(",") if m]
    return entry

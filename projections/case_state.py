"""Each view keeps the state of every case it has seen, as the domain computes it.

A view applies each event to the case's state with the event's own ``apply``
(the same code that builds the aggregate), so a view can never disagree with
the domain about a status, a balance or a deadline. The state is stored as the
event store's JSON (same transcoder), one row per case per view generation.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import sqlalchemy as sa

from cases.domain import Case


def state_table(metadata: sa.MetaData, prefix: str) -> sa.Table:
    return sa.Table(
        f"{prefix}_case_state",
        metadata,
        sa.Column("case_id", sa.String(36), primary_key=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("state", sa.LargeBinary, nullable=False),
    )


class CaseStates:
    """Load, evolve and save case states for one page of events."""

    def __init__(self, table: sa.Table, transcoder: Any):
        self.table = table
        self.transcoder = transcoder
        self.loaded: dict[UUID, Case | None] = {}
        self.dirty: set[UUID] = set()
        self.existing: set[UUID] = set()

    def preload(self, conn: sa.Connection, case_ids: set[UUID]) -> None:
        wanted = [str(i) for i in case_ids if i not in self.loaded]
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            rows = conn.execute(sa.select(self.table).where(self.table.c.case_id.in_(chunk))).all()
            for row in rows:
                key = UUID(row.case_id)
                self.loaded[key] = self._decode(row.state)
                self.existing.add(key)
        for key in case_ids:
            self.loaded.setdefault(key, None)

    def apply(self, event: Any) -> Case:
        case = self.loaded.get(event.originator_id)
        if case is None:
            case = event.mutate(None)
        else:
            event.mutate(case)
        self.loaded[event.originator_id] = case
        self.dirty.add(event.originator_id)
        return case

    def save(self, conn: sa.Connection) -> None:
        inserts, updates = [], []
        for key in self.dirty:
            case = self.loaded[key]
            row = {"case_id": str(key), "version": case.version, "state": self._encode(case)}
            (updates if key in self.existing else inserts).append(row)
        if inserts:
            conn.execute(self.table.insert(), inserts)
        for row in updates:
            conn.execute(self.table.update().where(self.table.c.case_id == row["case_id"])
                         .values(version=row["version"], state=row["state"]))
        self.existing |= self.dirty
        self.dirty.clear()

    def _encode(self, case: Case) -> bytes:
        state = {k: v for k, v in vars(case).items() if k != "_pending_events"}
        return self.transcoder.encode(state)

    def _decode(self, data: bytes) -> Case:
        case = Case.__new__(Case)
        case.__dict__.update(self.transcoder.decode(data))
        case.__dict__["_pending_events"] = []
        return case

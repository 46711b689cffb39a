"""Snapshots are a cache: nothing acts on one unless it is the one Abate wrote.

When Abate writes a snapshot it records the digest of the stored snapshot beside it
(``abate_snapshot_digests``). Loading a case (commands, views, ``case show``) goes
through ``CheckedSnapshotStore``: a snapshot whose digest is unknown or differs is
ignored with a ``snapshot_rejected`` warning and the case is replayed from its events.
``abate verify`` goes further and compares every snapshot with the replay of its events.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from eventsourcing.persistence import EventStore, StoredEvent

from cases.logging import get_logger

log = get_logger("abate.snapshots")


def snapshot_digest(stored: StoredEvent) -> str:
    h = hashlib.sha256(str(stored.originator_id).encode() + b"\0")
    h.update(str(stored.originator_version).encode() + b"\0")
    h.update(stored.topic.encode("utf-8") + b"\0")
    h.update(bytes(stored.state))
    return h.hexdigest()


class CheckedSnapshotStore(EventStore):
    """The snapshot store the repository reads: only snapshots whose digest is known."""

    def __init__(self, mapper: Any, recorder: Any, records_of: Any):
        super().__init__(mapper=mapper, recorder=recorder)
        self._records_of = records_of  # a callable: the store's integrity records

    def put(self, domain_events: Any, **kwargs: Any) -> list:
        """Write snapshots with their digests (in one transaction where the store has them)."""
        stored = [self.mapper.to_stored_event(e) for e in domain_events]
        records = self._records_of()
        transaction = getattr(getattr(self.recorder, "datastore", None), "transaction", None)
        if transaction is None:
            self._put(records, stored)
        else:
            with transaction(commit=True):
                self._put(records, stored)
        return []

    def _put(self, records: Any, stored: list[StoredEvent]) -> None:
        for item in stored:
            records.put_snapshot_digest(item.originator_id, item.originator_version,
                                        snapshot_digest(item))
        self.recorder.insert_events(stored)

    def get(self, originator_id: Any, *, gt: int | None = None, lte: int | None = None,
            desc: bool = False, limit: int | None = None) -> Iterator[Any]:
        records = self._records_of()
        for item in self.recorder.select_events(originator_id=originator_id, gt=gt, lte=lte,
                                                desc=desc, limit=limit):
            expected = records.snapshot_digest(item.originator_id, item.originator_version)
            if expected != snapshot_digest(item):
                log.warning("snapshot_rejected", case_id=str(item.originator_id),
                            version=item.originator_version,
                            reason="unknown snapshot" if expected is None else "digest differs",
                            action="replayed from events")
                continue
            yield self.mapper.to_domain_event(item)

"""Seals: a digest over the whole notification log up to a position, kept outside.

The per-case hash chain proves little against someone who can rewrite the database
(they can recompute it with our own code). A seal is a commitment that leaves the
database: printed on the certified list, minuted by the Board, emailed to the county.

    record hash  r = sha256(originator id (16 bytes) || version (8) || topic || 0 || stored state)
    log digest   d_n = sha256(d_{n-1} || notification id (8 bytes) || r_n),  d_0 = 32 zero bytes

over every stored event in notification order. The record hash covers the stored bytes
exactly, so any change to an event (its content, its case, its position in the case or
in the log) changes every later log digest. A seal records (seal id, position, event
and case counts, log digest, previous seal's digest, sealed_at, actor, reason) and its
own digest over those fields, so seals form a chain. Each seal also keeps its LEAVES
(notification id, case id, version, record hash of every event it newly covers) so
``abate verify`` can name what changed where; its log digest proves the leaves.
Sealing reads only the events since the previous seal.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from cases.errors import AbateError
from cases.integrity_records import LEAF, SealRow
from cases.logging import get_logger

if TYPE_CHECKING:
    from cases.store import CaseStore
    from cases.store_reader import StoreReader

log = get_logger("abate.seals")

LOG_GENESIS = bytes(32)
SEAL_GENESIS = "0" * 64
FORMAT = "abate-seal/1"
SEAL_ATTEMPTS = 5
# New events one seal covers at most: a longer unsealed tail (a million-line journal) gets
# consecutive seals, each chained to the one before, so sealing never holds more than this
# many leaves in memory (the last seal still covers the whole log).
SEAL_MAX_EVENTS = 100_000


@dataclass(frozen=True)
class Leaf:
    notification_id: int
    originator_id: UUID
    version: int
    record_hash: bytes


def record_hash(originator_id: Any, version: int, topic: str, state: bytes) -> bytes:
    """The hash of one stored event, exactly as stored."""
    h = hashlib.sha256(UUID(str(originator_id)).bytes)
    h.update(version.to_bytes(8, "big"))
    h.update(topic.encode("utf-8") + b"\0")
    h.update(state)
    return h.digest()


def leaf_of(notification: Any) -> Leaf:
    return Leaf(notification.id, UUID(str(notification.originator_id)),
                notification.originator_version,
                record_hash(notification.originator_id, notification.originator_version,
                            notification.topic, notification.state))


def next_digest(previous: bytes, notification_id: int, leaf_hash: bytes) -> bytes:
    return hashlib.sha256(previous + notification_id.to_bytes(8, "big") + leaf_hash).digest()


def chain(start: bytes, leaves: Iterable[Leaf]) -> bytes:
    digest = start
    for leaf in leaves:
        digest = next_digest(digest, leaf.notification_id, leaf.record_hash)
    return digest


def pack_leaf(leaf: Leaf) -> bytes:
    return LEAF.pack(leaf.notification_id, leaf.originator_id.bytes, leaf.version,
                      leaf.record_hash)


def unpack_leaves(blob: bytes) -> list[Leaf]:
    if len(blob) % LEAF.size:
        raise ValueError(f"leaves blob of {len(blob)} bytes is not whole leaves")
    return [Leaf(n, UUID(bytes=o), v, h) for n, o, v, h in LEAF.iter_unpack(blob)]


def last_sealed_version(store: CaseStore | StoreReader, originator_id: UUID) -> tuple[int, int | None]:
    """(the highest version of this case any seal covers, that seal's id); (0, None) when
    no seal covers it. Lets a reader of one case notice its sealed events were removed;
    asks the index of sealed cases, so its cost does not grow with the seals."""
    return store.integrity.last_sealed(originator_id)


@dataclass(frozen=True)
class Seal:
    seal_id: int
    position: int  # the last notification id covered
    event_count: int
    case_count: int  # cases opened (version-1 events) up to the position
    log_digest: str
    previous_digest: str  # the previous seal's digest (zeros for the first)
    sealed_at: str  # real clock, UTC, ISO 8601
    actor: str
    reason: str
    digest: str  # sha256 over the canonical JSON of every field above

    @staticmethod
    def compute_digest(fields: dict[str, Any]) -> str:
        body = {k: fields[k] for k in SEAL_FIELDS}
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> "Seal":
        return cls(**{k: fields[k] for k in (*SEAL_FIELDS, "digest")})

    def as_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, **asdict(self)}

    def line(self) -> str:
        """The one line an auditor can keep (Board minutes, an email, a printed list)."""
        return (f"abate-seal {self.seal_id} position {self.position} events {self.event_count} "
                f"cases {self.case_count} digest {self.log_digest}")


SEAL_FIELDS = ("seal_id", "position", "event_count", "case_count", "log_digest",
               "previous_digest", "sealed_at", "actor", "reason")


class SealError(AbateError):
    """A seal could not be recorded (another sealer kept winning)."""


def raw_notifications(store: CaseStore, after: int = 0, stop: int | None = None,
                      page: int = 2000) -> Iterator[Any]:
    """Stored events with notification id > ``after`` (and <= ``stop``), raw, in log order.
    From the start, that includes ids below 1, which the notification log never shows
    but a case's own event query does (an event slipped in at id 0)."""
    # From the start: the lowest id there is, even 0.
    return store.notifications(page=page, start=after + 1 if after else None, stop=stop)


def seal_store(store: CaseStore, actor: str, reason: str,
               now: dt.datetime | None = None, max_events: int = SEAL_MAX_EVENTS) -> Seal:
    """Record a seal over the whole log as it stands; returns it (the last one, when more
    than ``max_events`` new events needed several).

    Reads only the events after the previous seal. Two sealers at once: one wins the
    seal id, the other reads again and seals after it.
    """
    while True:
        for _ in range(SEAL_ATTEMPTS):
            try:
                seal, more = _seal_once(store, actor, reason, now, max_events)
                break
            except IntegrityError:
                continue
        else:
            raise SealError(
                f"another process kept recording seals; {SEAL_ATTEMPTS} attempts failed")
        if not more:
            return seal


def _seal_once(store: CaseStore, actor: str, reason: str, now: dt.datetime | None,
               max_events: int) -> tuple[Seal, bool]:
    """One seal over at most ``max_events`` new events; whether more events follow them."""
    records = store.integrity
    previous = records.last_seal_fields()
    after = previous["position"] if previous else 0
    digest = bytes.fromhex(previous["log_digest"]) if previous else LOG_GENESIS
    leaves = bytearray()  # packed as read: 60 bytes an event (as Leaf objects, about 280)
    count, position = 0, after
    names: dict[str, str] = {}
    opened = 0
    more = False
    for notification in raw_notifications(store, after):
        if count == max_events:
            more = True
            break
        leaf = leaf_of(notification)
        digest = next_digest(digest, leaf.notification_id, leaf.record_hash)
        leaves += pack_leaf(leaf)
        count += 1
        position = leaf.notification_id
        if leaf.version == 1:
            opened += 1
            name = case_name_of(store, notification)
            if name:
                names[str(leaf.originator_id)] = name
    fields: dict[str, Any] = {
        "seal_id": (previous["seal_id"] + 1) if previous else 1,
        "position": position,
        "event_count": (previous["event_count"] if previous else 0) + count,
        "case_count": (previous["case_count"] if previous else 0) + opened,
        "log_digest": digest.hex(),
        "previous_digest": previous["digest"] if previous else SEAL_GENESIS,
        "sealed_at": (now or dt.datetime.now(dt.timezone.utc)).astimezone(
            dt.timezone.utc).isoformat(timespec="seconds"),
        "actor": actor,
        "reason": reason,
    }
    fields["digest"] = Seal.compute_digest(fields)
    records.add_seal(SealRow(fields, bytes(leaves), names))
    seal = Seal.from_fields(fields)
    log.info("seal_recorded", seal_id=seal.seal_id, position=seal.position,
             events=seal.event_count, new_events=count, reason=reason)
    return seal, more


def case_name_of(store: CaseStore, notification: Any) -> str | None:
    """``municipality:case_ref`` from a case's opening event, if it can be read."""
    try:
        event = store.mapper.to_domain_event(notification)
    except Exception:  # a tampered event: its name is unknown, not fatal
        return None
    municipality, ref = getattr(event, "municipality", None), getattr(event, "case_ref", None)
    return f"{municipality}:{ref}" if municipality and ref else None


def stored_seals(store: CaseStore) -> list[Seal]:
    return [Seal.from_fields(fields) for fields in store.integrity.seal_fields()]

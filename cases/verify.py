"""Tamper evidence: everything ``abate verify`` checks, from the raw stored records.

- each case's hash chain (content altered, events removed, renumbered or reordered);
- each case's notification ids increase with its positions (the log's order);
- every stored seal: its own digest, its link to the previous seal, and that its
  leaves give its log digest;
- every sealed leaf against the events stored now: altered, deleted, moved in the
  log, inserted at or before the last seal, and whole cases deleted, each named by
  case (``municipality:case_ref``), position and notification id;
- the index of sealed cases (what one case's read asks) against the seals' leaves;
- every snapshot: its digest is the one Abate recorded, and it equals the replay of
  the case's events up to its version.

What none of this can catch without a seal kept outside the database (the seal
records rewritten too, or changes after the last seal) is in docs/operations.md.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from uuid import UUID

from cases.chain import GENESIS, content_hash
from cases.integrity_records import highest_versions
from cases.seals import (
    LOG_GENESIS,
    SEAL_GENESIS,
    Leaf,
    Seal,
    chain,
    leaf_of,
    raw_notifications,
    unpack_leaves,
)
from cases.trusted_snapshots import snapshot_digest

if TYPE_CHECKING:
    from cases.store import CaseStore

Current = dict[int, tuple[UUID, int, bytes]]  # notification id -> (case id, version, record hash)


@dataclass(frozen=True)
class Problem:
    case: str
    position: int | None
    problem: str
    notification_id: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"case": self.case, "position": self.position,
                "notification_id": self.notification_id, "problem": self.problem}


@dataclass
class Report:
    cases_checked: int = 0
    events_checked: int = 0
    seals_checked: int = 0
    snapshots_checked: int = 0
    snapshots_without_digest: int = 0
    last_seal: Seal | None = None
    events_after_last_seal: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __iter__(self):
        """``cases, events, problems = verify_store(store)``, as callers wrote it before."""
        return iter((self.cases_checked, self.events_checked, self.problems))

    def as_dict(self) -> dict[str, Any]:
        last = self.last_seal
        return {
            "ok": self.ok,
            "cases_checked": self.cases_checked,
            "events_checked": self.events_checked,
            "seals_checked": self.seals_checked,
            "last_seal": ({"seal_id": last.seal_id, "position": last.position,
                           "digest": last.log_digest, "sealed_at": last.sealed_at}
                          if last else None),
            "events_after_last_seal": self.events_after_last_seal,
            "not_covered_by_a_seal": (
                f"{self.events_after_last_seal} events after the last seal are checked only "
                "by their cases' chains and order; run `abate seal`"
                if self.events_after_last_seal else None),
            "snapshots_checked": self.snapshots_checked,
            "snapshots_without_digest": self.snapshots_without_digest,
            "problems": [p.as_dict() for p in self.problems],
        }


@dataclass
class _CaseEvent:
    version: int
    notification_id: int
    prev_hash: str | None
    hash: str | None
    problem: str | None  # unreadable / altered


@dataclass
class LogScan:
    """One pass over the stored log: the record hash of every event, and (if asked)
    each case's decoded chain links."""

    current: Current = field(default_factory=dict)
    cases: dict[UUID, list[_CaseEvent]] = field(default_factory=lambda: defaultdict(list))
    names: dict[UUID, str] = field(default_factory=dict)

    def name(self, originator_id: UUID) -> str:
        return self.names.get(originator_id, str(originator_id))


def scan_log(store: CaseStore, decode: bool = True) -> LogScan:
    scan = LogScan()
    for notification in raw_notifications(store):
        leaf = leaf_of(notification)
        scan.current[leaf.notification_id] = (leaf.originator_id, leaf.version, leaf.record_hash)
        if not decode:
            continue
        try:
            event = store.mapper.to_domain_event(notification)
        except Exception as exc:  # any decoding failure is itself evidence of tampering
            scan.cases[leaf.originator_id].append(_CaseEvent(
                leaf.version, leaf.notification_id, None, None, f"unreadable event: {exc}"))
            continue
        claimed = getattr(event, "hash", None)
        altered = (None if content_hash(type(event).TOPIC, vars(event)) == claimed
                   else "content altered: hash does not match")
        scan.cases[leaf.originator_id].append(_CaseEvent(
            leaf.version, leaf.notification_id, getattr(event, "prev_hash", None), claimed,
            altered))
        if leaf.version == 1 and getattr(event, "case_ref", None):
            scan.names[leaf.originator_id] = f"{event.municipality}:{event.case_ref}"
    return scan


def verify_store(store: CaseStore) -> Report:
    rows = store.integrity.seals()
    scan = scan_log(store)
    for row in rows:
        for key, name in row.case_names.items():
            scan.names.setdefault(UUID(key), name)
    report = Report(cases_checked=len(scan.cases), events_checked=len(scan.current),
                    seals_checked=len(rows))
    for originator_id, events in scan.cases.items():
        events.sort(key=lambda e: e.version)
        report.problems += _verify_case(scan.name(originator_id), events)
    seals, sealed, seal_problems = check_seal_records(rows)
    report.problems += seal_problems
    report.problems += check_sealed_index(rows, store.integrity.sealed_case_rows(), scan)
    if seals:
        report.last_seal = seals[-1]
        report.problems += compare_with_leaves(sealed, scan.current, seals[-1].position, scan)
    last_position = seals[-1].position if seals else 0
    report.events_after_last_seal = sum(1 for nid in scan.current if nid > last_position)
    report.problems += check_snapshots(store, scan, report)
    return report


def check_case_events(name: str, events: list[Any]) -> list[Problem]:
    """One case's loaded events (decoded, in version order) against its chain: what
    ``case show`` checks before it replays them."""
    checked = []
    for event in events:
        claimed = getattr(event, "hash", None)
        altered = (None if content_hash(type(event).TOPIC, vars(event)) == claimed
                   else "content altered: hash does not match")
        checked.append(_CaseEvent(event.originator_version, 0, getattr(event, "prev_hash", None),
                                  claimed, altered))
    return _verify_case(name, checked)


def _verify_case(name: str, events: list[_CaseEvent]) -> list[Problem]:
    problems = []
    previous_hash: str | None = GENESIS
    expected_position = 1
    previous_id = 0
    for event in events:
        position = event.version
        if position != expected_position:
            problems.append(Problem(name, position,
                                    f"expected position {expected_position}: events removed or "
                                    "renumbered", event.notification_id))
        expected_position = position + 1
        if event.notification_id < previous_id:
            problems.append(Problem(
                name, position, f"out of order in the log: position {position} is at "
                f"notification id {event.notification_id}, before the case's previous "
                f"position (notification id {previous_id})", event.notification_id))
        previous_id = max(previous_id, event.notification_id)
        if event.problem:
            problems.append(Problem(name, position, event.problem, event.notification_id))
        if event.hash is None:
            previous_hash = None
            continue
        if previous_hash is not None and event.prev_hash != previous_hash:
            problems.append(Problem(name, position,
                                    "chain broken: previous event removed, altered or reordered",
                                    event.notification_id))
        previous_hash = event.hash
    return problems


def check_seal_records(rows: list[Any]) -> tuple[list[Seal], list[tuple[int, Leaf]], list[Problem]]:
    """The stored seals, their leaves (with the seal that covers each) and what is wrong
    with the records themselves."""
    seals: list[Seal] = []
    sealed: list[tuple[int, Leaf]] = []
    problems: list[Problem] = []
    log_digest, previous_digest, count, cases, position = LOG_GENESIS, SEAL_GENESIS, 0, 0, 0
    for expected_id, row in enumerate(rows, start=1):
        f = row.fields
        seal = Seal.from_fields(f)
        where = f"seal {seal.seal_id}"

        def problem(text: str) -> None:
            problems.append(Problem(where, seal.position, text))

        if seal.seal_id != expected_id:
            problem(f"seal {seal.seal_id} found where seal {expected_id} was expected: "
                    "a seal record was deleted or renumbered")
        if Seal.compute_digest(f) != seal.digest:
            problem("the seal record was altered: its digest does not match its fields")
        if seal.previous_digest != previous_digest:
            problem("the chain of seals is broken: its previous digest is not the digest "
                    "of the seal before it")
        if getattr(row, "case_names_problem", None):
            problem(row.case_names_problem)
        try:
            leaves = unpack_leaves(row.leaves)
        except ValueError as exc:
            problem(f"its leaves are unreadable: {exc}")
            leaves = []
        ids = [leaf.notification_id for leaf in leaves]
        if ids and (ids[0] <= position or ids[-1] != seal.position
                    or any(b <= a for a, b in zip(ids, ids[1:]))):
            problem("its leaves are not the notification ids after the previous seal up to "
                    "its position")
        if chain(log_digest, leaves).hex() != seal.log_digest:
            problem("its leaves do not give its log digest: the seal record or its leaves "
                    "were altered")
        if seal.event_count != count + len(leaves):
            problem(f"it counts {seal.event_count} events; its leaves make {count + len(leaves)}")
        opened = sum(1 for leaf in leaves if leaf.version == 1)
        if seal.case_count != cases + opened:
            problem(f"it counts {seal.case_count} cases; its leaves make {cases + opened}")
        sealed += [(seal.seal_id, leaf) for leaf in leaves]
        seals.append(seal)
        log_digest = bytes.fromhex(seal.log_digest) if _is_hex64(seal.log_digest) else log_digest
        previous_digest, count, cases = seal.digest, seal.event_count, seal.case_count
        position = max(position, seal.position)
    return seals, sealed, problems


def check_sealed_index(rows: list[Any], stored: dict[tuple[UUID, int], int],
                       scan: LogScan) -> list[Problem]:
    """The index a case's read asks (``abate_sealed_cases``) against the seals' leaves it is
    made from: a row removed or lowered would let a case whose sealed events were deleted
    read as whole, so every difference is named by case and seal."""
    expected = {(case, row.fields["seal_id"]): version for row in rows
                for case, version in highest_versions(row.leaves).items()}
    problems = []
    repair = "; `abate seal --reindex` rewrites the index from the seals' leaves"
    for key in sorted(expected.keys() | stored.keys(), key=lambda k: (k[1], str(k[0]))):
        case, seal_id = key
        want, have = expected.get(key), stored.get(key)
        if want == have:
            continue
        if have is None:
            text = f"the index of sealed cases lacks seal {seal_id}'s row for this case"
        elif want is None:
            text = f"the index of sealed cases has a row for seal {seal_id} its leaves do not give"
        else:
            text = (f"the index of sealed cases says seal {seal_id} covers this case up to "
                    f"position {have}; its leaves say {want}")
        problems.append(Problem(scan.name(case), want or have, text + repair))
    return problems


def _is_hex64(text: str) -> bool:
    try:
        return len(bytes.fromhex(text)) == 32
    except ValueError:
        return False


def compare_with_leaves(sealed: list[tuple[int, Leaf]], current: Current, upto: int,
                        scan: LogScan) -> list[Problem]:
    """Every sealed event against the events stored now, up to notification id ``upto``."""
    problems: list[Problem] = []
    where_now = {(orig, version): nid for nid, (orig, version, _) in current.items()}
    present_cases = {orig for orig, _, _ in current.values()}
    sealed_ids: set[int] = set()
    sealed_keys: set[tuple[UUID, int]] = set()
    deleted_cases: dict[UUID, list[int]] = defaultdict(list)
    for seal_id, leaf in sealed:
        sealed_ids.add(leaf.notification_id)
        sealed_keys.add((leaf.originator_id, leaf.version))
        now = current.get(leaf.notification_id)
        if now == (leaf.originator_id, leaf.version, leaf.record_hash):
            continue
        if leaf.originator_id not in present_cases:
            deleted_cases[leaf.originator_id].append(leaf.version)
            continue
        name = scan.name(leaf.originator_id)
        if now is not None and now[:2] == (leaf.originator_id, leaf.version):
            problems.append(Problem(name, leaf.version,
                                    f"content differs from seal {seal_id}: altered after it "
                                    "was sealed", leaf.notification_id))
            continue
        moved = where_now.get((leaf.originator_id, leaf.version))
        if moved is None:
            problems.append(Problem(name, leaf.version,
                                    f"deleted: sealed by seal {seal_id} at notification id "
                                    f"{leaf.notification_id}, no longer stored",
                                    leaf.notification_id))
        else:
            altered = "" if current[moved][2] == leaf.record_hash else ", and its content altered"
            problems.append(Problem(name, leaf.version,
                                    f"moved in the log: sealed by seal {seal_id} at notification "
                                    f"id {leaf.notification_id}, now at notification id "
                                    f"{moved}{altered}", leaf.notification_id))
    for originator_id, versions in deleted_cases.items():
        problems.append(Problem(scan.name(originator_id), min(versions),
                                f"case deleted: all {len(versions)} of its sealed events "
                                f"(positions {min(versions)} to {max(versions)}) are gone"))
    for nid in sorted(current):
        if nid > upto or nid in sealed_ids:
            continue
        orig, version, _ = current[nid]
        if (orig, version) not in sealed_keys:
            problems.append(Problem(scan.name(orig), version,
                                    f"inserted: notification id {nid} is at or before the last "
                                    f"seal's position ({upto}) but no seal covers it", nid))
    return problems


def _state(case: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(case).items() if k != "_pending_events"}


def check_snapshots(store: CaseStore, scan: LogScan, report: Report) -> list[Problem]:
    problems = []
    records = store.integrity
    digests = records.snapshot_digests()
    for stored in records.stored_snapshots():
        report.snapshots_checked += 1
        originator_id = UUID(str(stored.originator_id))
        version = stored.originator_version
        name = scan.name(originator_id)
        expected = digests.get((originator_id, version))
        if expected is None:
            report.snapshots_without_digest += 1
        elif expected != snapshot_digest(stored):
            problems.append(Problem(name, version, "snapshot altered: its digest is not the one "
                                    "Abate recorded (it is not used: the case is replayed from "
                                    "its events)"))
        try:
            from_snapshot = store.mapper.to_domain_event(stored).mutate(None)
        except Exception as exc:
            problems.append(Problem(name, version, f"snapshot unreadable: {exc}"))
            continue
        try:
            replayed = None
            for event in store.events.get(originator_id, lte=version):
                replayed = event.mutate(replayed)
        except Exception as exc:
            problems.append(Problem(name, version, f"snapshot cannot be compared: the case's "
                                    f"events do not replay ({exc})"))
            continue
        if replayed is None or replayed.version != version:
            problems.append(Problem(name, version, "snapshot of a version the case's events "
                                    "do not reach"))
            continue
        mine, theirs = _state(from_snapshot), _state(replayed)
        if mine != theirs:
            fields = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
            problems.append(Problem(name, version, "snapshot differs from the replay of its "
                                    f"events (fields: {', '.join(f.lstrip('_') for f in fields)})"))
    return problems

"""Tamper evidence: recompute every case's hash chain from the stored events.

Reads the raw stored events (not the aggregates), so an event altered, removed
or reordered directly in the database is reported by case and position.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from cases.chain import GENESIS, content_hash
from cases.store import CaseStore


@dataclass(frozen=True)
class Problem:
    case: str
    position: int
    problem: str

    def as_dict(self) -> dict[str, Any]:
        return {"case": self.case, "position": self.position, "problem": self.problem}


def verify_store(store: CaseStore) -> tuple[int, int, list[Problem]]:
    """(cases checked, events checked, problems found)."""
    by_case: dict[Any, list[Any]] = defaultdict(list)
    for notification in store.notifications():
        by_case[notification.originator_id].append(notification)
    problems: list[Problem] = []
    events_checked = 0
    for originator_id, stored in by_case.items():
        stored.sort(key=lambda n: n.originator_version)
        events_checked += len(stored)
        problems += _verify_case(store, originator_id, stored)
    return len(by_case), events_checked, problems


def _verify_case(store: CaseStore, originator_id: Any, stored: list[Any]) -> list[Problem]:
    problems = []
    name = str(originator_id)
    decoded = []
    for item in stored:
        try:
            event = store.mapper.to_domain_event(item)
        except Exception as exc:  # any decoding failure is itself evidence of tampering
            problems.append(Problem(name, item.originator_version, f"unreadable event: {exc}"))
            decoded.append(None)
            continue
        decoded.append(event)
        if getattr(event, "case_ref", None) and item.originator_version == 1:
            name = f"{event.municipality}:{event.case_ref}"
    problems = [Problem(name, p.position, p.problem) for p in problems]
    previous_hash = GENESIS
    expected_position = 1
    for item, event in zip(stored, decoded):
        position = item.originator_version
        if position != expected_position:
            problems.append(Problem(name, position,
                                    f"expected position {expected_position}: events removed or renumbered"))
        expected_position = position + 1
        if event is None:
            previous_hash = None
            continue
        recomputed = content_hash(type(event).TOPIC, vars(event))
        if recomputed != event.hash:
            problems.append(Problem(name, position, "content altered: hash does not match"))
        if previous_hash is not None and event.prev_hash != previous_hash:
            problems.append(Problem(name, position,
                                    "chain broken: previous event removed, altered or reordered"))
        previous_hash = event.hash
    return problems

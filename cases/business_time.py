"""Business times as they stand after corrections: which events are facts, and when each
really happened.

A fact's business time (``occurred_at``) is recorded once and never edited. A
``Corrected`` event may later restate it (or a notice's delivery, a snowfall's end, a
bill's receipt, a board meeting), and from then on the corrected value governs: the
order of facts, the deadlines counted from it, and ``case show --as-of``. A deadline
passing whose time a correction moved follows it; one a correction voided (the deadline
had not really run) no longer counts as having happened.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

# Events that are not facts about the case's world: the clock's record of a deadline, a
# correction of the record, and a document printed from it. They take no part in the order
# of facts.
NOT_FACTS = frozenset({"DeadlinePassed", "Corrected", "DocumentIssued"})

TIME_FIELDS = ("at", "delivered_at", "snow_ended_at", "received_on", "board_meeting_on")
INSTANT_FIELDS = ("at", "delivered_at", "snow_ended_at")

# The times a correction may restate, by the kind of fact; every other fact: only ``at``.
_EXTRA_TIMES = {
    "Opened": {"snow_ended_at"},
    "NoticeServed": {"delivered_at"},
    "BillIssued": {"received_on"},
    "AppealFiled": {"board_meeting_on"},
}


def kind(event: Any) -> str:
    return type(event).__name__


def is_fact(event: Any) -> bool:
    return kind(event) not in NOT_FACTS


def correctable_times(event_kind: str) -> set[str]:
    """The time fields a correction of this kind of event may change (none for the clock's
    deadline passings and for corrections themselves)."""
    if event_kind in NOT_FACTS:
        return set()
    return {"at"} | _EXTRA_TIMES.get(event_kind, set())


def recorded_times(event: Any) -> dict[str, Any]:
    """The time fields an event was recorded with (``at`` is its ``occurred_at``)."""
    times: dict[str, Any] = {"at": event.occurred_at}
    for name in correctable_times(kind(event)) - {"at"}:
        times[name] = getattr(event, name, None)
    return times


def effective_fields(event: Any, events: Iterable[Any]) -> dict[str, Any]:
    """An event's time fields after every correction of it among ``events``."""
    times = recorded_times(event)
    for other in events:
        if kind(other) == "Corrected" and other.supersedes == event.originator_version:
            times.update({k: v for k, v in other.changes.items() if k in TIME_FIELDS})
    return times


def effective_times(events: Iterable[Any]) -> dict[int, dt.datetime | None]:
    """Each event's business time by position, after the corrections among ``events``.

    None marks a deadline passing that a correction voided (the corrected deadline had not
    run yet): it did not happen.
    """
    events = list(events)
    times: dict[int, dt.datetime | None] = {e.originator_version: e.occurred_at for e in events}
    for event in events:
        if kind(event) != "Corrected":
            continue
        if "at" in event.changes:
            times[event.supersedes] = event.changes["at"]
        for moved in getattr(event, "deadlines", None) or ():
            if moved.get("passed_by") and moved["state"] == "passed":
                times[moved["passed_by"]] = moved["due_at"]
            if moved.get("voided_passing"):
                times[moved["voided_passing"]] = None
    return times


def facts_in_order(events: Iterable[Any]) -> list[tuple[int, str, dt.datetime]]:
    """(position, kind, effective time) of every fact, in recorded order."""
    events = list(events)
    times = effective_times(events)
    return [(e.originator_version, kind(e), times[e.originator_version])
            for e in events if is_fact(e)]

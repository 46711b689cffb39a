"""Reading a case: its state and full history, now or as it stood at a past moment.

``as_of`` is business time: the facts that had happened by then (a notice
served yesterday and entered today counts as of yesterday). ``known_at`` is
system time: what Abate had recorded by then (what an auditor asks: "what did
we know?"). Both replay the stored events; nothing is recomputed.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from cases import errors
from cases.domain import Case, case_id
from cases.store import CaseStore

_INTERNAL = {"originator_id", "originator_version", "timestamp", "actor", "occurred_at",
             "prev_hash", "hash", "command_id", "originator_topic"}


def load_events(store: CaseStore, municipality: str, case_ref: str) -> list[Any]:
    events = list(store.events.get(case_id(municipality, case_ref)))
    if not events:
        raise errors.CaseNotFoundError(f"no case {case_ref!r} in {municipality}")
    return events


def replay(events: list[Any]) -> Case | None:
    """Build a case from a subset of its events (in sequence order)."""
    case = None
    for event in events:
        if case is None:
            case = event.mutate(None)
        else:
            event.apply(case)
            case.version = event.originator_version
    return case


def case_at(store: CaseStore, municipality: str, case_ref: str, *,
            as_of: dt.datetime | None = None, known_at: dt.datetime | None = None
            ) -> tuple[Case | None, list[Any]]:
    events = load_events(store, municipality, case_ref)
    if known_at is not None:
        events = [e for e in events if e.timestamp <= known_at]
    if as_of is not None:
        events = [e for e in events if e.occurred_at <= as_of]
    return replay(events), events


def _plain(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def describe_event(event: Any) -> dict[str, Any]:
    facts = {k: _plain(v) for k, v in vars(event).items() if k not in _INTERNAL}
    return {
        "position": event.originator_version,
        "type": type(event).__name__,
        "occurred_at": event.occurred_at.isoformat(),
        "recorded_at": event.timestamp.isoformat(),
        "actor": event.actor,
        "command_id": event.command_id,
        "facts": facts,
        "hash": event.hash,
    }


def describe_case(case: Case | None, events: list[Any], *, as_of: dt.datetime | None = None,
                  known_at: dt.datetime | None = None) -> dict[str, Any]:
    if case is None:
        return {"exists": False, "as_of": _plain(as_of), "known_at": _plain(known_at),
                "events": []}
    charge = case.charge or {}
    next_deadline = case.next_deadline
    return {
        "case_ref": case.case_ref,
        "municipality": case.municipality,
        "rule": case.rule,
        "rule_version": case.rule_version,
        "rule_family": case.rule_family,
        "status": case.status,
        "as_of": _plain(as_of),
        "known_at": _plain(known_at),
        "observed_at": case.observed_at.isoformat(),
        "parcel": case.parcel,
        "site_address": case.site_address,
        "owner": case.owner,
        "responsible": case.responsible,
        "description": case.description,
        "hazard": _plain(case.hazard),
        "cure_deadline": _plain(case.cure_deadline),
        "next_deadline": _plain(next_deadline),
        "deadlines": [_plain(d) for d in sorted(case.deadlines.values(), key=lambda d: d["due_at"])],
        "notices": _plain(case.notices),
        "abatements": _plain(case.abatements),
        "charge": _plain({k: v for k, v in charge.items()}) or None,
        "balance": str(case.balance),
        "payments": _plain(case.payments),
        "appeal": _plain(case.appeal),
        "citations": _plain(case.citations),
        "referrals": _plain(case.referrals),
        "dispositions": _plain(case.dispositions),
        "corrections": _plain(case.corrections),
        "closed": case.closed,
        "close_reason": case.close_reason,
        "last_hash": case.last_hash,
        "events": [describe_event(e) for e in events],
    }


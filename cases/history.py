"""Reading a case: its state and full history, now or as it stood at a past moment.

``as_of`` is business time: the facts that had happened by then (a notice
served yesterday and entered today counts as of yesterday). ``known_at`` is
system time: what Abate had recorded by then (what an auditor asks: "what did
we know?"). Both replay the stored events; nothing is recomputed.

Business times are the effective ones (``cases.business_time``): a fact whose time
was corrected counts from its corrected time, and the correction of its time comes
with it (a corrected time is the truth about that fact, whenever it was corrected);
other corrections count from when they were made. Events are replayed in the order
they were recorded even where their times are not in that order (a deadline that had
run before the case was opened is recorded right after the opening): a case does not
exist before its opening, and a deadline whose passing comes after the moment asked
about shows as open.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from cases import errors
from cases.business_time import TIME_FIELDS, effective_times, kind
from cases.domain import Case, RepeatEvidence, case_id
from cases.domain.values import Value, replace
from cases.page_sizes import page_of, paged
from cases.seals import last_sealed_version
from cases.verify import check_case_events

if TYPE_CHECKING:
    from cases.store import CaseStore
    from cases.store_reader import StoreReader

_INTERNAL = {"originator_id", "originator_version", "timestamp", "actor", "occurred_at",
             "prev_hash", "hash", "command_id", "originator_topic"}


def load_events(store: CaseStore | StoreReader, municipality: str, case_ref: str) -> list[Any]:
    """The case's stored events, after checking their chain: a tampered case is named
    with its first problem (TamperedStoreError), never replayed into a traceback."""
    name = f"{municipality}:{case_ref}"
    try:
        events = store.case_events(case_id(municipality, case_ref))
    except Exception as exc:  # an event that no longer decodes was altered in the database
        raise errors.TamperedStoreError(
            f"case {name} fails its integrity check: a stored event is unreadable ({exc}); "
            "run `abate verify`") from None
    if not events:
        raise errors.CaseNotFoundError(f"no case {case_ref!r} in {municipality}")
    sealed, seal_id = last_sealed_version(store, events[0].originator_id)
    if sealed > events[-1].originator_version:
        raise errors.TamperedStoreError(
            f"case {name} fails its integrity check at position {events[-1].originator_version + 1}: "
            f"seal {seal_id} covers its events up to position {sealed}, but the store holds "
            f"only {events[-1].originator_version} (events removed); run `abate verify`")
    problems = check_case_events(name, events)
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise errors.TamperedStoreError(
            f"case {name} fails its integrity check at position {first.position}: "
            f"{first.problem}{more}; run `abate verify`")
    return events


def replay(events: list[Any]) -> Case | None:
    """Build a case from a subset of its events (in sequence order), starting at its
    opening; a deadline passing of a deadline the subset never set is left out."""
    case = None
    for event in events:
        if case is None:
            if kind(event) != "Opened":
                continue
            case = event.mutate(None)
            continue
        if kind(event) == "DeadlinePassed" and event.name not in case.deadlines:
            continue
        event.apply(case)
        case.version = event.originator_version
    return case


def _time_correction(event: Any) -> bool:
    return kind(event) == "Corrected" and bool(set(event.changes) & set(TIME_FIELDS))


def events_as_of(events: list[Any], as_of: dt.datetime) -> list[Any]:
    """The events that had happened by ``as_of`` (effective business times)."""
    times = effective_times(events)
    opened = times.get(1)
    if opened is None or opened > as_of:
        return []
    held = {p for p, t in times.items() if t is not None and t <= as_of}
    return [e for e in events if e.originator_version in held
            or (_time_correction(e) and e.supersedes in held)]


def case_at(store: CaseStore | StoreReader, municipality: str, case_ref: str, *,
            as_of: dt.datetime | None = None, known_at: dt.datetime | None = None
            ) -> tuple[Case | None, list[Any]]:
    return case_from(load_events(store, municipality, case_ref), as_of=as_of,
                     known_at=known_at)


def case_from(events: list[Any], *, as_of: dt.datetime | None = None,
              known_at: dt.datetime | None = None) -> tuple[Case | None, list[Any]]:
    """The case and the events that make it, from all its stored events (``load_events``),
    now, as of a business time or as known at a system time."""
    if known_at is not None:
        events = [e for e in events if e.timestamp <= known_at]
    if as_of is None:
        return replay(events), events
    times = effective_times(events)
    events = events_as_of(events, as_of)
    case = replay(events)
    if case is not None:
        for name, deadline in case.deadlines.items():
            passed = times.get(deadline.passed_by)
            if deadline.state == "passed" and (passed is None or passed > as_of):
                # it passes after the moment asked about
                case.deadlines[name] = replace(deadline, state="open")
    return case, events


def plain(value: Any) -> Any:
    """JSON-ready: instants and dates as ISO text, amounts as exact decimal text, the case's
    values in the shape the case has always shown them (``as_dict``)."""
    if isinstance(value, Value | RepeatEvidence):
        return plain(value.as_dict())
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def describe_event(event: Any, effective_at: dt.datetime | None = None) -> dict[str, Any]:
    """One event; ``effective_at`` is shown when a correction changed its business time."""
    facts = {k: plain(v) for k, v in vars(event).items() if k not in _INTERNAL}
    described = {
        "position": event.originator_version,
        "type": type(event).__name__,
        "occurred_at": event.occurred_at.isoformat(),
        "recorded_at": event.timestamp.isoformat(),
        "actor": event.actor,
        "command_id": event.command_id,
        "facts": facts,
        "hash": event.hash,
    }
    if effective_at is not None and effective_at != event.occurred_at:
        described["effective_at"] = effective_at.isoformat()
    return described


def describe_case(case: Case | None, events: list[Any], *, as_of: dt.datetime | None = None,
                  known_at: dt.datetime | None = None,
                  window: tuple[int, int] | None = None) -> dict[str, Any]:
    """The case and its events in words; ``window`` (limit, offset): only that page of the
    events, with ``events_page`` saying how many there are and where the next page starts
    (times are still worked out from every event: a correction moves an earlier one's)."""
    if case is None:
        return {"exists": False, "as_of": plain(as_of), "known_at": plain(known_at),
                "events": []}
    next_deadline = case.next_deadline
    times = effective_times(events)
    return {
        "case_ref": case.case_ref,
        "municipality": case.municipality,
        "rule": case.rule,
        "rule_version": case.rule_version,
        "rule_family": case.rule_family,
        "status": case.status,
        "as_of": plain(as_of),
        "known_at": plain(known_at),
        "observed_at": case.observed_at.isoformat(),
        "parcel": case.parcel,
        "site_address": case.site_address,
        "owner": case.owner,
        "responsible": case.responsible,
        "description": case.description,
        "hazard": plain(case.hazard),
        "cure_deadline": plain(case.cure_deadline),
        "next_deadline": plain(next_deadline),
        "deadlines": [plain(d) for d in sorted(case.deadlines.values(), key=lambda d: d.due_at)],
        "notices": plain(case.notices),
        "abatements": plain(case.abatements),
        "charge": plain(case.charge),
        "balance": str(case.balance),
        "payments": plain(case.payments),
        "appeal": plain(case.appeal),
        "citations": plain(case.citations),
        "referrals": plain(case.referrals),
        "dispositions": plain(case.dispositions),
        "corrections": plain(case.corrections),
        "documents": plain(case.documents),  # issued (docs/documents.md)
        "closed": case.closed,
        "close_reason": case.close_reason,
        "last_hash": case.last_hash,
        "events": [describe_event(e, times.get(e.originator_version))
                   for e in (events if window is None else paged(events, *window))],
        **({} if window is None else {"events_page": page_of(len(events), *window)}),
    }



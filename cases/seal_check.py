"""Does the store still match a seal kept outside it? (``abate verify --seal``)

The kept seal (the JSON file ``abate seal --output`` wrote, the printed line, or just
the digest) is compared with a log digest recomputed from the CURRENT stored events,
never with the store's own seal record, which an attacker could have rewritten.
Where they differ, the store's sealed leaves name what changed if they can; when the
store's own seal record differs from the kept one, that is said plainly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

from cases.errors import InputError
from cases.seals import (
    LOG_GENESIS,
    SEAL_FIELDS,
    Seal,
    case_name_of,
    leaf_of,
    next_digest,
    raw_notifications,
)
from cases.store import CaseStore
from cases.verify import LogScan, check_seal_records, compare_with_leaves, scan_log

_LINE = re.compile(r"abate-seal\s+(\d+)\s+position\s+(\d+)\s+events\s+(\d+)\s+cases\s+(\d+)"
                   r"\s+digest\s+([0-9a-fA-F]{64})")
_HEX = re.compile(r"^\s*([0-9a-fA-F]{64})\s*$")
NAMES_SHOWN = 100


@dataclass(frozen=True)
class KeptSeal:
    log_digest: str
    seal_id: int | None = None
    position: int | None = None
    event_count: int | None = None
    case_count: int | None = None


def read_kept_seal(given: str) -> KeptSeal:
    """A seal from a file (JSON or the printed line) or from the text itself."""
    path = Path(given)
    text = given
    try:
        if path.is_file():
            text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the seal file {given}: {exc}") from None
    stripped = text.strip()
    if stripped.startswith("{"):
        return _from_json(given, stripped)
    match = _LINE.search(text)
    if match:
        seal_id, position, events, cases, digest = match.groups()
        return KeptSeal(digest.lower(), int(seal_id), int(position), int(events), int(cases))
    match = _HEX.match(text)
    if match:
        return KeptSeal(match.group(1).lower())
    if not path.exists() and ("/" in given or given.endswith(".json")):
        raise InputError(f"no seal file {given}")
    raise InputError(f"{given!r} is not a seal: give the JSON file `abate seal --output` wrote, "
                     "the line `abate-seal N position P events E cases C digest HEX`, or the "
                     "64-character digest")


def _from_json(given: str, text: str) -> KeptSeal:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"seal file {given}: not JSON (line {exc.lineno}: {exc.msg})") from None
    missing = [k for k in (*SEAL_FIELDS, "digest") if k not in data] if isinstance(data, dict) \
        else ["(an object)"]
    if missing:
        raise InputError(f"seal file {given}: missing field {missing[0]}")
    if Seal.compute_digest(data) != data["digest"]:
        raise InputError(f"seal file {given}: its digest does not match its fields; the kept "
                         "copy itself was changed")
    return KeptSeal(str(data["log_digest"]).lower(), int(data["seal_id"]), int(data["position"]),
                    int(data["event_count"]), int(data["case_count"]))


def check_kept_seal(store: CaseStore, kept: KeptSeal) -> tuple[bool, dict[str, Any]]:
    """(matches, report). The digest is recomputed from the events stored now."""
    rows = store.integrity.seals()
    stored = {row.fields["seal_id"]: row.fields for row in rows}
    if kept.position is None:
        kept = _by_seal_digest(kept, stored.values())
    position = kept.position
    if position is None:  # a bare log digest: the stored seal that has it, else any prefix
        position = next((f["position"] for f in stored.values()
                         if f["log_digest"] == kept.log_digest), None)
    digest, events, cases, found_at, last = LOG_GENESIS, 0, 0, None, 0
    for notification in raw_notifications(store, stop=position):
        leaf = leaf_of(notification)
        digest = next_digest(digest, leaf.notification_id, leaf.record_hash)
        events += 1
        cases += leaf.version == 1
        last = leaf.notification_id
        if position is None and digest.hex() == kept.log_digest:
            found_at = leaf.notification_id
            break
    if position is None:
        position = found_at
    report: dict[str, Any] = {"kept_seal": {k: v for k, v in vars(kept).items()}}
    # The log must reach the kept position itself: one that ends before it (events removed
    # at the end, or a kept line whose position was changed) is no match, whatever its digest.
    reached = position is not None and last == position
    matches = reached and digest.hex() == kept.log_digest and \
        kept.event_count in (None, events) and kept.case_count in (None, cases)
    report["recomputed"] = {"position": last if position is not None else None,
                            "events": events, "cases": cases, "log_digest": digest.hex()}
    report["matches"] = matches
    if kept.seal_id is not None:
        report["store_seal_record"] = _compared_with_record(kept, stored.get(kept.seal_id))
    if position is not None and not reached:
        report["differences"] = []
        report["explanation"] = (
            f"the log ends at position {last}, before the kept seal's position {position}: "
            "events at the end of the log were removed, or the kept seal's position is not "
            "the one Abate printed")
        return False, report
    if not matches and digest.hex() == kept.log_digest:
        report["differences"] = []
        report["explanation"] = (
            "the log up to the kept seal's position has the kept digest, so no event at or "
            "before it changed; the kept seal's counts of events or cases are not the ones "
            "that log gives: the kept copy was changed or copied wrong")
        return False, report
    if matches:
        report["after_seal"] = _after(store, position)
        return True, report
    if position is None:
        report["differences"] = []
        report["explanation"] = ("no prefix of the current log has this digest: events at or "
                                 "before the seal were changed, or the seal is of another store")
        return False, report
    scan = scan_log(store, decode=False)
    _, sealed, _ = check_seal_records(rows)
    within = [(sid, leaf) for sid, leaf in sealed if leaf.notification_id <= position]
    _name_cases(store, scan, rows, within, position)
    differences = compare_with_leaves(within, scan.current, position, scan) if within else []
    report["differences"] = [p.as_dict() for p in differences]
    if not differences:
        report["explanation"] = (
            "the events at or before the seal's position differ from the kept seal, and the "
            "store's own seal records were rewritten to match them: what changed cannot be "
            "located from inside the database")
    return False, report


def _compared_with_record(kept: KeptSeal, record: dict[str, Any] | None) -> str:
    """How the store's own record of the kept seal compares with the kept copy, saying which
    side differs where that can be told."""
    if record is None:
        return f"seal {kept.seal_id} is missing from the store"
    if record["log_digest"] != kept.log_digest:
        return (f"the store's seal {kept.seal_id} was rewritten: its digest differs from the "
                "kept one, so the store's own seal records cannot be trusted")
    differ = [f"{name} {record[field]} in the store, {value} kept"
              for name, field, value in (("position", "position", kept.position),
                                         ("events", "event_count", kept.event_count),
                                         ("cases", "case_count", kept.case_count))
              if value is not None and record[field] != value]
    if differ:
        return (f"the store's seal {kept.seal_id} has the kept digest but not the kept "
                f"numbers ({'; '.join(differ)}): the kept line was changed or copied wrong, "
                "or the store's record was")
    return "the same as the kept seal"


def _by_seal_digest(kept: KeptSeal, stored: Any) -> KeptSeal:
    """A bare digest may be a seal's own digest (the ``digest`` of its JSON) rather than its
    log digest: then the stored seal whose fields still hash to it says which log digest and
    position were kept (its fields cannot be changed without changing that hash)."""
    for fields in stored:
        if fields.get("digest") == kept.log_digest and Seal.compute_digest(fields) == kept.log_digest:
            return KeptSeal(fields["log_digest"], fields["seal_id"], fields["position"],
                            fields["event_count"], fields["case_count"])
    return kept


def _name_cases(store: CaseStore, scan: LogScan, rows: list[Any], within: list[Any],
                position: int) -> None:
    """Name each case whose events differ from the sealed ones as the store names it (its
    opening event), as plain ``verify`` does; the seal records' names (which their digest
    does not cover, so whoever rewrote the log could rewrite them too) only for a case the
    store no longer holds. Only the cases that differ are looked up: the scan reads the log
    without decoding it."""
    sealed_at = {leaf.notification_id: leaf for _, leaf in within}
    differing: set[UUID] = set()
    for notification_id, leaf in sealed_at.items():
        now = scan.current.get(notification_id)
        if now != (leaf.originator_id, leaf.version, leaf.record_hash):
            differing.update([leaf.originator_id, *(now[:1] if now else ())])
    differing.update(now[0] for notification_id, now in scan.current.items()
                     if notification_id <= position and notification_id not in sealed_at)
    for originator_id in differing:
        first = store.recorder.select_events(originator_id, lte=1)
        name = case_name_of(store, first[0]) if first else None
        if name:
            scan.names[originator_id] = name
    for row in rows:
        for key, name in row.case_names.items():
            scan.names.setdefault(UUID(key), name)


def _after(store: CaseStore, position: int) -> dict[str, Any]:
    """What was recorded after the seal: events, cases opened, cases changed (named)."""
    changed: dict[Any, None] = {}
    events = opened = 0
    for notification in raw_notifications(store, position):
        events += 1
        opened += notification.originator_version == 1
        changed.setdefault(notification.originator_id, None)
    names = []
    for originator_id in list(changed)[:NAMES_SHOWN]:
        first = store.recorder.select_events(originator_id, lte=1)
        names.append((case_name_of(store, first[0]) if first else None) or str(originator_id))
    return {"events": events, "cases_opened": opened, "cases_changed": len(changed),
            "cases": sorted(names), "cases_listed": min(len(changed), NAMES_SHOWN)}

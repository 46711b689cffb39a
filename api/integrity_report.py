"""The store's integrity as a user may read it (``GET audit/verify`` and the audit page):
the cases' chains, the seals and the snapshots (``abate verify``), or the store against a
seal kept outside it, and each view against what the events give. The log is one for every
village, so all of it is checked (a seal covers the whole log), but only the cases of the
user's municipalities are named; a problem in another village's case is counted."""

from __future__ import annotations

from typing import Any

from api.errors import ApiError
from cases.localtime import localized, shared_zone
from cases.seal_check import KeptSeal, check_kept_seal
from cases.verify import verify_store
from projections.view_check import check_views


def integrity_report(svc: Any, user: Any, *, seal: str | None = None,
                     seal_id: int | None = None) -> dict[str, Any]:
    """What ``abate verify`` (``--seal`` with ``seal`` or ``seal_id``) reports, scoped to
    ``user``'s municipalities, in their local time."""
    if seal is not None and seal_id is not None:
        raise ApiError(422, "invalid", "query parameter seal_id: give seal or seal_id, not both",
                       "seal_id")
    known = set(svc.cases.catalog.municipalities)
    grants = user.municipalities
    tz = shared_zone(svc.cases.catalog.municipality(m).time_zone for m in grants)
    if seal is None and seal_id is None:
        report = verify_store(svc.store).as_dict()
        shown, withheld = _scoped(report["problems"], grants, known, lambda p: p["case"])
        report["problems"] = shown
        report["problems_in_other_municipalities"] = withheld
        report["ok"] = not shown and not withheld
    else:
        kept = KeptSeal(seal.lower()) if seal is not None else _stored_seal(svc, seal_id)
        matches, report = check_kept_seal(svc.store, kept)
        if "differences" in report:
            shown, withheld = _scoped(report["differences"], grants, known, lambda p: p["case"])
            report["differences"] = shown
            report["differences_in_other_municipalities"] = withheld
        after = report.get("after_seal")
        if after:
            after["cases"], withheld = _scoped(after["cases"], grants, known, lambda name: name)
            after["cases_in_other_municipalities"] = withheld
        report["ok"] = matches
    views = check_views(svc.store, svc.runner, exclusive=svc.exclusive).as_dict()
    views["differences"], views["differences_in_other_municipalities"] = _scoped(
        views["differences"], grants, known, lambda d: d["case"])
    report["views"] = views
    report["ok"] = report["ok"] and views["ok"]
    return localized(report, tz)


def _elsewhere(name: Any, grants: tuple[str, ...], known: set[str]) -> bool:
    """Whether a problem or case name is a case of a village the user holds no grant for."""
    municipality, sep, _ = str(name).partition(":")
    return bool(sep) and municipality in known and municipality not in grants


def _scoped(items: list[Any], grants: tuple[str, ...], known: set[str],
            name_of: Any) -> tuple[list[Any], int]:
    shown = [item for item in items if not _elsewhere(name_of(item), grants, known)]
    return shown, len(items) - len(shown)


def _stored_seal(svc: Any, seal_id: int) -> KeptSeal:
    for fields in svc.store.integrity.seal_fields():
        if fields["seal_id"] == seal_id:
            return KeptSeal(fields["log_digest"], fields["seal_id"], fields["position"],
                            fields["event_count"], fields["case_count"])
    raise ApiError(404, "not_found", f"no seal {seal_id} in the store", "seal_id")

"""The auditor's routes: the store's integrity (``abate verify``) and the access log.

No municipality in the path: each answer is scoped by the user's grants. The log is one
for every village, so ``verify`` checks all of it (a village cannot be verified alone: a
seal covers the whole log), but names only the cases of the user's municipalities; a
problem in another village's case is counted, not named. The views are checked against
what the events give (``projections.view_check``), named and counted the same way.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel

from api.deps import AllowedUser, ServicesDep
from api.errors import ERROR_RESPONSES, ApiError, not_found
from api.params import query_name
from cases import filters
from cases.instants import Instant
from cases.localtime import localized, shared_zone
from cases.seal_check import KeptSeal, check_kept_seal
from cases.verify import verify_store
from projections.view_check import check_views

router = APIRouter(tags=["audit"])

_DIGEST = r"^[0-9a-fA-F]{64}$"


class AccessLogPage(BaseModel):
    """Newest first; the next page is ``before_id=next_before_id`` (None: no more)."""

    entries: list[dict[str, Any]]
    limit: int
    next_before_id: int | None


def _elsewhere(name: Any, grants: tuple[str, ...], known: set[str]) -> bool:
    """Whether a problem or case name is a case of a village the user holds no grant for."""
    municipality, sep, _ = str(name).partition(":")
    return bool(sep) and municipality in known and municipality not in grants


def _scoped(items: list[Any], grants: tuple[str, ...], known: set[str],
            name_of: Any) -> tuple[list[Any], int]:
    shown = [item for item in items if not _elsewhere(name_of(item), grants, known)]
    return shown, len(items) - len(shown)


@router.get("/audit/verify", name="audit.verify", response_model=dict[str, Any],
            responses={**ERROR_RESPONSES},
            summary="Check the cases' chains, the seals and the snapshots (`abate verify`), "
                    "or the store against a seal kept outside it; and each view against "
                    "what the events give")
def verify(svc: ServicesDep, user: AllowedUser,
           seal: Annotated[str | None, Query(
               pattern=_DIGEST, description="a kept seal's digest (its log digest or the "
                                            "seal's own digest), 64 hex characters")] = None,
           seal_id: Annotated[int | None, Query(
               ge=1, le=2**31, description="a seal recorded in the store, by its id")] = None
           ) -> dict[str, Any]:
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


def _stored_seal(svc: Any, seal_id: int) -> KeptSeal:
    for row in svc.store.integrity.seals():
        fields = row.fields
        if fields["seal_id"] == seal_id:
            return KeptSeal(fields["log_digest"], fields["seal_id"], fields["position"],
                            fields["event_count"], fields["case_count"])
    raise ApiError(404, "not_found", f"no seal {seal_id} in the store", "seal_id")


@router.get("/audit/access-log", name="audit.access_log", response_model=AccessLogPage,
            responses=ERROR_RESPONSES,
            summary="Who read, exported, wrote or certified what, when, from where "
                    "(the entries of the auditor's municipalities, newest first)")
def access_log(svc: ServicesDep, user: AllowedUser,
               user_name: Annotated[str | None, Query(alias="user", max_length=100)] = None,
               case_ref: Annotated[str | None, Query(max_length=64)] = None,
               municipality: Annotated[str | None, Query(pattern=r"^[a-z]+$",
                                                         max_length=32)] = None,
               since: Annotated[Instant | None, Query(
                   alias="from", description="entries at or after this time")] = None,
               until: Annotated[Instant | None, Query(
                   alias="to", description="entries before this time")] = None,
               before_id: Annotated[int | None, Query(
                   ge=1, le=2**62, description="the next page: entries older than this id")
               ] = None,
               limit: Annotated[int, Query(ge=1, le=500)] = 100) -> AccessLogPage:
    if municipality is not None and municipality not in user.municipalities:
        raise not_found(f"no municipality {municipality!r} among this user's")
    filters.period(("from", since), ("to", until), query_name)
    if user_name is not None and svc.accounts.get(user_name) is None:
        # Any account may appear (another village's user asking here); the answer lists
        # only the accounts of the auditor's own villages.
        own = [u.name for u in svc.accounts.list()
               if set(u.municipalities) & set(user.municipalities)]
        raise ApiError(422, "invalid", f"query parameter user: {user_name!r} is not an "
                       f"account; the accounts of {', '.join(user.municipalities)}: "
                       f"{', '.join(own)}", "user")
    rows = svc.access_log.search(municipalities=user.municipalities, user=user_name,
                                 case_ref=case_ref, municipality=municipality, since=since,
                                 until=until, before_id=before_id, limit=limit + 1)
    catalog = svc.cases.catalog
    entries = [localized(row, catalog.municipality(
        row["municipality"] or user.municipalities[0]).time_zone) for row in rows[:limit]]
    return AccessLogPage(entries=entries, limit=limit,
                         next_before_id=rows[limit - 1]["id"] if len(rows) > limit else None)

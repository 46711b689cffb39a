"""The auditor's routes: the store's integrity (``abate verify``: ``api.integrity_report``,
which the audit page reads too) and the access log. No municipality in the path: each
answer is scoped by the user's grants."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel

from api.deps import AllowedUser, ServicesDep
from api.errors import ERROR_RESPONSES, ApiError, not_found
from api.integrity_report import integrity_report
from api.params import PageLimit, query_name
from cases import filters
from cases.instants import Instant
from cases.localtime import localized
from cases.page_sizes import DEFAULT_LIMIT

router = APIRouter(tags=["audit"])

_DIGEST = r"^[0-9a-fA-F]{64}$"


class AccessLogPage(BaseModel):
    """Newest first; the next page is ``before_id=next_before_id`` (None: no more)."""

    entries: list[dict[str, Any]]
    limit: int
    next_before_id: int | None


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
    return integrity_report(svc, user, seal=seal, seal_id=seal_id)


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
               limit: PageLimit = DEFAULT_LIMIT) -> AccessLogPage:
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
    svc.access_log_writer.flush()  # the rows of every request answered before this one
    rows = svc.access_log.search(municipalities=user.municipalities, user=user_name,
                                 case_ref=case_ref, municipality=municipality, since=since,
                                 until=until, before_id=before_id, limit=limit + 1)
    catalog = svc.cases.catalog
    entries = [localized(row, catalog.municipality(
        row["municipality"] or user.municipalities[0]).time_zone) for row in rows[:limit]]
    return AccessLogPage(entries=entries, limit=limit,
                         next_before_id=rows[limit - 1]["id"] if len(rows) > limit else None)

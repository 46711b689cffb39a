"""Cases of one municipality: open, list, read (now, as of, as known at) and history.

Routes stay thin: the command models parse, ``CaseService`` decides, the views list,
``cases.history`` replays; times go out in the municipality's zone with ``*_utc`` beside
(``cases.localtime.localized``, docs/operations.md "Times you read")."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel

from api import idempotency
from api.body import JsonBody
from api.case_reads import read_case, zone
from api.case_versions import (
    ExpectedVersion,
    IfNoneMatch,
    etag,
    not_modified,
    stale,
    tag_response,
)
from api.command_bodies import SERVER_FIELDS
from api.consistency import NOT_YET, caught_up
from api.deps import AllowedUser, CaseDep, GrantedMunicipality, ServicesDep
from api.errors import ERROR_RESPONSES, WRITE_RESPONSES, ApiError
from api.params import PageLimit, PageOffset, one_line, query_name
from api.services import Services
from cases import filters
from cases.business_time import effective_times
from cases.commands import parse_command
from cases.errors import StaleVersionError
from cases.history import case_from, describe_event, load_events
from cases.instants import Instant
from cases.localtime import localized
from cases.page_sizes import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, page_of, paged
from cases.statuses import CASE_STATUSES
from projections import CaseSummaries

router = APIRouter(tags=["cases"])

# Fields a request never sets: the path gives the municipality (and case), the token the
# actor, the route the command.
class Outcome(BaseModel):
    applied: int
    skipped_duplicates: int
    deadlines_passed: int
    events_recorded: int


class CommandResult(BaseModel):
    """What a command did, the log position it reached (pass it as ``?position=`` to a read
    to see the command's effect), and the case after it (its version is the ``ETag``)."""

    outcome: Outcome
    position: int
    case: dict[str, Any]


class CasePage(BaseModel):
    municipality: str
    cases: list[dict[str, Any]]
    limit: int
    offset: int
    next_offset: int | None
    total: int  # every case that matches the filters, on every page


def run_command(svc: Services, user: Any, municipality: str, name: str,
                body: dict[str, Any], case_ref: str | None = None, *, request: Request,
                response: Response, expected_version: int | None = None) -> CommandResult:
    """Parse ``body`` with the journal's command model and run it as ``user``; with an
    Idempotency-Key the command's id is derived from it (once-only, api/idempotency.py),
    with If-Match only on the case at that version (api/case_versions.py)."""
    for field in SERVER_FIELDS + (("case_ref",) if case_ref else ()):
        if field in body:
            why = {"actor": "the actor is the signed-in user",
                   "municipality": "the path names the municipality",
                   "case_ref": "the path names the case",
                   "command": "the path names the command"}[field]
            raise ApiError(422, "invalid", f"field {field}: not a field of this request "
                                           f"({why})", field)
    data = {**body, "command": name, "municipality": municipality, "actor": user.name}
    if case_ref:
        data["case_ref"] = case_ref
    if data.get("id") is None and (derived := idempotency.command_id(request)):
        data["id"] = derived
    command = parse_command(data)
    try:
        outcome = svc.handle(command, expected_version)
    except StaleVersionError as exc:
        raise stale(exc) from None
    position = svc.head()
    case, version = read_case(svc, municipality, command.case_ref)
    tag_response(response, version)
    return CommandResult(outcome=Outcome(**outcome.as_dict()), position=position, case=case)


@router.post("/{municipality}/cases", name="cases.open", status_code=201,
             response_model=CommandResult, responses=WRITE_RESPONSES,
             summary="Open a case (the open_case journal fields, case_ref included)")
def open_case(svc: ServicesDep, user: AllowedUser, municipality: GrantedMunicipality,
              body: JsonBody, request: Request, response: Response,
              expected: ExpectedVersion = None) -> CommandResult:
    return run_command(svc, user, municipality, "open_case", body, request=request,
                       response=response, expected_version=expected)


CaseStatus = Literal[CASE_STATUSES]  # an unknown status is 422 naming the known ones


@router.get("/{municipality}/cases", name="cases.list", response_model=CasePage,
            responses={**ERROR_RESPONSES, **NOT_YET},
            dependencies=[caught_up(CaseSummaries.name)],
            summary="List cases (the case summaries view)")
def list_cases(svc: ServicesDep, municipality: GrantedMunicipality,
               status: Annotated[CaseStatus | None, Query(
                   description="one of the case statuses, e.g. billed")] = None,
               parcel: Annotated[str | None, Query(
                   max_length=64, description="the parcel number, e.g. 0509-123-4567-0 (in "
                                              "a county's format, else 422)")] = None,
               parcel_part: Annotated[str | None, Query(
                   max_length=64, description="any part of a parcel number, e.g. 4567 (as "
                                              "written: % and _ are no wildcards)")] = None,
               owner: Annotated[str | None, Query(
                   max_length=200, description="part of the owner's name")] = None,
               rule: Annotated[str | None, Query(
                   max_length=64, description="a rule of the municipality, e.g. "
                                              "belleville:9.13 (else 422)")] = None,
               limit: PageLimit = DEFAULT_LIMIT,
               offset: PageOffset = 0) -> CasePage:
    place = svc.cases.catalog.municipality(municipality)
    parcel = filters.parcel_number(place, parcel, query_name)
    rule = filters.rule_key(place, rule, query_name)
    chosen = {"status": status, "parcel": parcel, "rule": rule,
              "parcel_part": filters.parcel_part(parcel_part, query_name),
              "owner": one_line("owner", owner)}
    view = svc.runner.active(CaseSummaries.name)
    with svc.runner.engine.connect() as conn:
        found = view.page(conn, municipality=municipality, limit=limit, offset=offset,
                          **chosen)
    return CasePage(municipality=municipality,
                    cases=localized(found.rows, zone(svc, municipality)), limit=limit,
                    offset=offset, total=found.total, next_offset=found.next_offset)


NOT_MODIFIED: dict[int | str, dict[str, Any]] = {
    304: {"description": "If-None-Match names the case's current version: no body"}}


# A case's events come a page at a time, oldest first (a case can live for years).
EventsLimit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description="events in the answer")]
EventsOffset = Annotated[int, Query(ge=0, le=MAX_OFFSET,
                                    description="the first event's place (0: the oldest)")]


@router.get("/{municipality}/cases/{case_ref}", name="cases.show",
            response_model=dict[str, Any], dependencies=[caught_up()],
            responses={**ERROR_RESPONSES, **NOT_MODIFIED},
            summary="A case and its history, now, as of a business time, or as known then")
def show_case(svc: ServicesDep, case: CaseDep, response: Response,
              as_of: Annotated[Instant | None, Query(
                  description="business time: the facts that had happened by then")] = None,
              known_at: Annotated[Instant | None, Query(
                  description="system time: what had been recorded by then")] = None,
              limit: EventsLimit = DEFAULT_LIMIT, offset: EventsOffset = 0,
              if_none_match: IfNoneMatch = None) -> Any:
    body, version = read_case(svc, case.municipality, case.case_ref, as_of=as_of,
                              known_at=known_at, limit=limit, offset=offset)
    return _tagged(body, version, response, if_none_match)


@router.get("/{municipality}/cases/{case_ref}/history", name="cases.history",
            response_model=dict[str, Any], dependencies=[caught_up()],
            responses={**ERROR_RESPONSES, **NOT_MODIFIED},
            summary="Every event: actor, business and recorded times, rule and rule version")
def case_history(svc: ServicesDep, case: CaseDep, response: Response,
                 limit: EventsLimit = DEFAULT_LIMIT, offset: EventsOffset = 0,
                 if_none_match: IfNoneMatch = None) -> Any:
    events = load_events(svc.store, case.municipality, case.case_ref)
    opened, _ = case_from(events)
    times = effective_times(events)
    described = [{**describe_event(e, times.get(e.originator_version)),
                  "rule": opened.rule, "rule_version": opened.rule_version}
                 for e in paged(events, limit, offset)]
    body = localized({"municipality": case.municipality, "case_ref": case.case_ref,
                      "events": described, **page_of(len(events), limit, offset)},
                     zone(svc, case.municipality))
    return _tagged(body, events[-1].originator_version, response, if_none_match)


def _tagged(body: dict[str, Any], version: int, response: Response,
            if_none_match: str | None) -> Any:
    """The body with the case's ETag, or 304 if the client holds this version already."""
    if not_modified(if_none_match, version):
        return Response(status_code=304, headers={"ETag": etag(version)})
    tag_response(response, version)
    return body

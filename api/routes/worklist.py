"""``GET worklist``: what people must do now (each action with who acts and the rule
that says so) and the open deadlines, earliest first, a page of each; the same report as
``abate worklist`` (projections.worklist_report), times local with ``*_utc`` beside."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Query
from pydantic import BaseModel

from api.params import bounded_day, query_name
from api.deps import GrantedMunicipality, ServicesDep
from api.consistency import NOT_YET, caught_up
from api.errors import ERROR_RESPONSES
from cases import filters
from cases.localtime import localized
from cases.page_sizes import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET
from cases.rules.clock import end_of_local_day
from projections import Worklist
from projections.worklist_report import worklist, worklist_moment

router = APIRouter(tags=["reports"])

Name = Annotated[str | None, Query(max_length=64)]


class WorklistAnswer(BaseModel):
    municipality: str
    as_of: str
    as_of_utc: str
    overdue_only: bool
    actions: list[dict[str, Any]]  # action, due_at, what, by (who acts), by_citation, rule...
    deadlines: list[dict[str, Any]]  # deadline, due_at, consequence, rule, citation...
    actions_total: int  # every action that matches, on every page
    deadlines_total: int
    limit: int
    offset: int
    next_offset: int | None  # where the next page starts while either list has more


@router.get("/{municipality}/worklist", name="worklist.list", response_model=WorklistAnswer,
            responses={**ERROR_RESPONSES, **NOT_YET}, dependencies=[caught_up(Worklist.name)],
            summary="Actions due (who acts, which rule) and open deadlines, earliest first")
def get_worklist(svc: ServicesDep, municipality: GrantedMunicipality,
                 as_of: Annotated[dt.date | None, Query(
                     description="as of the end of this local day (default: now)")] = None,
                 overdue: Annotated[bool, Query(description="only what is overdue")] = False,
                 due_by: Annotated[dt.date | None, Query(
                     description="only what is due by the end of this local day")] = None,
                 action: Annotated[Name, Query(
                     description="only actions of this kind, e.g. serve_notice (an "
                                     "unknown kind is 422 naming the kinds)")] = None,
                 deadline: Annotated[Name, Query(
                     description="only deadlines of this name, e.g. cure (an unknown "
                                     "name is 422 naming the rules' deadlines)")] = None,
                 limit: Annotated[int, Query(
                     ge=1, le=MAX_LIMIT, description="at most this many actions and this "
                                                     "many deadlines")] = DEFAULT_LIMIT,
                 offset: Annotated[int, Query(
                     ge=0, le=MAX_OFFSET, description="skip this many of each (the "
                                                      "answer's next_offset)")] = 0
                 ) -> dict[str, Any]:
    place = svc.cases.catalog.municipality(municipality)
    tz = ZoneInfo(place.time_zone)
    action = filters.action(action, query_name)
    deadline = filters.deadline(place, deadline, query_name)
    moment = worklist_moment(bounded_day("as_of", as_of), tz, svc.clock())
    until = end_of_local_day(due_by, tz) if bounded_day("due_by", due_by) else None
    view = svc.runner.active(Worklist.name)
    with svc.runner.engine.connect() as conn:
        found = worklist(view, conn, municipality=municipality, as_of=moment,
                         overdue_only=overdue, due_by=until, action=action, deadline=deadline,
                         limit=limit, offset=offset)
    return localized(found, tz)

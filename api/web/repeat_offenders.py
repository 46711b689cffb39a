"""The repeat-offenders page (``/{municipality}/repeat-offenders?as_of=&at_least=``):
parcels and parties with at least so many substantiated violations (default 2: an inspector
looks for repeats, not every case) in the trailing 12 months as of a chosen date (default
today, village time), most first, and how many were left out below that count
(projections.repeat_listing). Whether a violation is a repeat offense in law is its rule's
own repeat clause; the page says so in words."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Path, Request

from api.consistency import reach
from api.web.page_params import Asked, local_today
from api.web.render import page
from api.web.session import in_grant, require
from cases.rules.clock import end_of_local_day
from projections import RepeatOffenses
from projections.repeat_listing import repeat_listing

router = APIRouter(include_in_schema=False)

AT_LEAST_DEFAULT, AT_LEAST_MIN, AT_LEAST_MAX = 2, 1, 99


@router.get("/{municipality}/repeat-offenders", name="page.repeat_offenders")
def repeat_offenders_page(request: Request,
                          municipality: str = Path(pattern=r"^[a-z]+$", max_length=32)) -> Any:
    user = require(request, "page.repeat_offenders")
    in_grant(user, municipality)
    svc = request.app.state.services
    place = svc.cases.catalog.municipality(municipality)
    asked = Asked()
    as_of = asked.day("as_of", request.query_params.get("as_of"),
                      local_today(svc.clock(), place))
    at_least = asked.whole_number("at_least", request.query_params.get("at_least"),
                                  AT_LEAST_DEFAULT, AT_LEAST_MIN, AT_LEAST_MAX)
    reach(svc, (RepeatOffenses.name,), None)
    with svc.runner.engine.connect() as conn:
        found = repeat_listing(svc.runner.active(RepeatOffenses.name), conn,
                               municipality=municipality, as_of=as_of, at_least=at_least,
                               known_by=end_of_local_day(as_of, ZoneInfo(place.time_zone)))
    return page(request, "repeat_offenders.html", {
        "municipality": municipality, "village": place.name, "found": found,
        "typed": dict(request.query_params), "errors": asked.errors,
        "at_least_bounds": (AT_LEAST_MIN, AT_LEAST_MAX)},
        status=422 if asked.errors else 200)

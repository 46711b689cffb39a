"""The repeat-offenders page (``/{municipality}/repeat-offenders?as_of=&at_least=``):
parcels and parties with at least so many substantiated violations (default 2: an inspector
looks for repeats, not every case) in the trailing 12 months as of a chosen date (default
today, village time), most first, and how many were left out below that count
(projections.repeat_listing), a page of parcels and one of parties at a time
(``?section=parcels|parties&offset=N``, api/web/page_parts.py). Whether a violation is a
repeat offense in law is its rule's own repeat clause; the page says so in words."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Path, Request

from api.consistency import reach
from api.web.page_params import Asked, local_today
from api.web.page_parts import PartName, PartOffset, Section, asked_part
from api.web.render import page
from api.web.session import in_grant, require
from cases.rules.clock import end_of_local_day
from projections import RepeatOffenses
from projections.repeat_listing import repeat_listing

router = APIRouter(include_in_schema=False)

AT_LEAST_DEFAULT, AT_LEAST_MIN, AT_LEAST_MAX = 2, 1, 99
SECTION_ROWS = 50  # parcels or parties shown at once; the heading gives the whole count


@router.get("/{municipality}/repeat-offenders", name="page.repeat_offenders")
def repeat_offenders_page(request: Request,
                          municipality: str = Path(pattern=r"^[a-z]+$", max_length=32),
                          section: PartName = None,
                          offset: PartOffset = 0) -> Any:
    user = require(request, "page.repeat_offenders")
    in_grant(user, municipality)
    asked_part(section, ("parcels", "parties"), "the repeat offenders page")
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
                               known_by=end_of_local_day(as_of, ZoneInfo(place.time_zone)),
                               limit=SECTION_ROWS,
                               parcels_offset=offset if section == "parcels" else 0,
                               parties_offset=offset if section == "parties" else 0)
    parts = {key: Section(key, title, found[key], found[f"{key}_total"],
                          found[f"{key}_offset"], SECTION_ROWS)
             for key, title in (("parcels", "Parcels"), ("parties", "Parties"))}
    kept = {name: request.query_params[name] for name in ("as_of", "at_least")
            if name in request.query_params and name not in asked.errors}
    return page(request, "repeat_offenders.html", {
        "municipality": municipality, "village": place.name, "found": found, **parts,
        "query": urlencode(kept) + "&" if kept else "",
        "typed": dict(request.query_params), "errors": asked.errors,
        "at_least_bounds": (AT_LEAST_MIN, AT_LEAST_MAX)},
        status=422 if asked.errors else 200)

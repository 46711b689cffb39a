"""The worklist page of a village (``/{municipality}/``): what is due today and overdue,
the village's own abatements due, charges awaiting a bill, charges eligible for the tax
roll, and appeal hearings; from the worklist view, the same report as ``GET worklist``."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Path, Request
from fastapi.responses import RedirectResponse

from api.consistency import reach
from api.web.awaiting_sweep import Sweeps
from api.web.render import page
from api.web.session import PageError, in_grant, require
from cases.action_kinds import UNDATED
from cases.localtime import instant
from cases.rules.clock import end_of_local_day
from projections import Worklist
from projections.worklist_report import worklist

router = APIRouter(include_in_schema=False)  # pages: not part of the API's schema

# The worklist's sections after the two by time: (title, the action kinds it lists).
SECTIONS = (
    ("Village abatement due", ("abate",)),
    ("Awaiting billing", ("issue_bill",)),
    ("Eligible for the tax roll", ("enter_tax_roll",)),
    ("Hearings (appeals to decide)", ("decide_appeal",)),
    # no due time (cases.action_kinds.UNDATED): not overdue, not due today
    ("Needs the village attorney: the statute is not named", ("name_statute",)),
)


def sections(actions: list[dict[str, Any]], now: dt.datetime, tz: ZoneInfo
             ) -> list[tuple[str, list[dict[str, Any]]]]:
    """The worklist's sections: overdue, due today (local day), then each kind."""
    today_ends = end_of_local_day(now.astimezone(tz).date(), tz)
    overdue = [a for a in actions if a["overdue"]]
    today = [a for a in actions if not a["overdue"] and a["action"] not in UNDATED
             and instant(a["due_at"]) <= today_ends]
    found = [("Overdue", overdue), ("Due today", today)]
    for title, kinds in SECTIONS:
        found.append((title, [a for a in actions if a["action"] in kinds]))
    return found


@router.get("/{municipality}/", name="page.worklist")
def worklist_page(request: Request,
                  municipality: str = Path(pattern=r"^[a-z]+$", max_length=32)) -> Any:
    user = require(request, "page.worklist")
    in_grant(user, municipality)
    svc = request.app.state.services
    zone_name = svc.cases.catalog.municipality(municipality).time_zone
    tz = ZoneInfo(zone_name)
    reach(svc, (Worklist.name,), None)
    now = svc.clock()
    with svc.runner.engine.connect() as conn:
        found = worklist(svc.runner.active(Worklist.name), conn, municipality=municipality,
                         as_of=now)
    sweeps = Sweeps(svc.settings.base.sweep_seconds)
    # A deadline due but not yet recorded says so, not "overdue" (api/web/awaiting_sweep.py).
    deadlines = [{**d, "awaiting": sweeps.state_words(d, now, zone_name)}
                 if sweeps.awaiting(d, now) else d for d in found["deadlines"]]
    return page(request, "worklist.html", {
        "municipality": municipality, "tz": zone_name, "now": now,
        "village": svc.cases.catalog.municipality(municipality).name,
        "sections": sections(found["actions"], now, tz), "deadlines": deadlines,
        "undated": UNDATED,
        "awaiting": sum(1 for d in deadlines if d.get("awaiting"))})


# Included after every other route (api/web install): ``/belleville`` goes to the village's
# worklist, and any other one-segment path (``/redoc``, a typo) is a plain 404, not a
# redirect to a trailing slash and then to the sign-in page.
last_router = APIRouter(include_in_schema=False)


@last_router.get("/{municipality}", name="village_root")
def village_root(request: Request, municipality: str) -> Any:
    if municipality not in request.app.state.services.cases.catalog.municipalities:
        raise PageError(404, f"no page {request.url.path}")
    return RedirectResponse(f"/{municipality}/", status_code=307)

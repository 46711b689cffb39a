"""The worklist page of a village (``/{municipality}/``): what is due today and overdue,
the village's own abatements due, charges awaiting a bill, charges eligible for the tax
roll, and appeal hearings; from the worklist view, the same report as ``GET worklist``.
Each part shows a page of its rows with its whole count and links to the next page, so
the page stays quick however many cases the village holds."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Path, Request
from fastapi.responses import RedirectResponse

from api.consistency import reach
from api.web.awaiting_sweep import Sweeps
from api.web.page_parts import PartName, PartOffset, Section, asked_part
from api.web.render import page
from api.web.session import PageError, in_grant, require
from cases.action_kinds import UNDATED
from cases.rules.clock import end_of_local_day
from projections import Worklist

router = APIRouter(include_in_schema=False)  # pages: not part of the API's schema

# The worklist's sections after the two by time: (key, title, the action kinds it lists).
SECTIONS = (
    ("abate", "Village abatement due", ("abate",)),
    ("billing", "Awaiting billing", ("issue_bill",)),
    ("tax-roll", "Eligible for the tax roll", ("enter_tax_roll",)),
    ("hearings", "Hearings (appeals to decide)", ("decide_appeal",)),
    # no due time (cases.action_kinds.UNDATED): not overdue, not due today
    ("statute", "Needs the village attorney: the statute is not named", ("name_statute",)),
)
# Rows a section shows at once; its heading gives the whole count, and links page on.
SECTION_ROWS = 50
SECTION_KEYS = ("overdue", "today", *(key for key, _, _ in SECTIONS), "deadlines")


def sections(view: Worklist, conn: Any, municipality: str, now: dt.datetime, tz: ZoneInfo,
             paged: str | None, offset: int) -> list[Section]:
    """The worklist's action sections: overdue, due today (local day), then each kind;
    ``paged`` is the one section shown from ``offset``, the others from their start."""
    today_ends = end_of_local_day(now.astimezone(tz).date(), tz)
    asked = {"overdue": {"overdue_only": True}, "today": {"due_from": now, "due_by": today_ends}}
    titled = [("overdue", "Overdue"), ("today", "Due today")]
    for key, title, kinds in SECTIONS:
        asked[key] = {"kinds": kinds}
        titled.append((key, title))
    found = []
    for key, title in titled:
        start = offset if key == paged else 0
        rows = view.action_page(conn, municipality=municipality, as_of=now, limit=SECTION_ROWS,
                                offset=start, **asked[key])
        found.append(Section(key, title, rows.rows, rows.total, start, SECTION_ROWS))
    return found


@router.get("/{municipality}/", name="page.worklist")
def worklist_page(request: Request,
                  municipality: str = Path(pattern=r"^[a-z]+$", max_length=32),
                  section: PartName = None,
                  offset: PartOffset = 0) -> Any:
    user = require(request, "page.worklist")
    in_grant(user, municipality)
    svc = request.app.state.services
    zone_name = svc.cases.catalog.municipality(municipality).time_zone
    tz = ZoneInfo(zone_name)
    asked_part(section, SECTION_KEYS, "the worklist")
    reach(svc, (Worklist.name,), None)
    now = svc.clock()
    view = svc.runner.active(Worklist.name)
    with svc.runner.engine.connect() as conn:
        parts = sections(view, conn, municipality, now, tz, section, offset)
        start = offset if section == "deadlines" else 0
        found = view.deadline_page(conn, municipality=municipality, as_of=now,
                                   limit=SECTION_ROWS, offset=start)
        awaiting = view.deadline_page(conn, municipality=municipality, as_of=now,
                                      sweepable_only=True, limit=1).total
    sweeps = Sweeps(svc.settings.base.sweep_seconds)
    # A deadline due but not yet recorded says so, not "overdue" (api/web/awaiting_sweep.py).
    deadlines = [{**d, "awaiting": sweeps.state_words(d, now, zone_name)}
                 if sweeps.awaiting(d, now) else d for d in found.rows]
    return page(request, "worklist.html", {
        "municipality": municipality, "tz": zone_name, "now": now,
        "village": svc.cases.catalog.municipality(municipality).name,
        "sections": parts,
        "deadlines": Section("deadlines", "Open deadlines", deadlines, found.total, start,
                             SECTION_ROWS),
        "undated": UNDATED, "awaiting": awaiting})


# Included after every other route (api/web install): ``/belleville`` goes to the village's
# worklist, and any other one-segment path (``/redoc``, a typo) is a plain 404, not a
# redirect to a trailing slash and then to the sign-in page.
last_router = APIRouter(include_in_schema=False)


@last_router.get("/{municipality}", name="village_root")
def village_root(request: Request, municipality: str) -> Any:
    if municipality not in request.app.state.services.cases.catalog.municipalities:
        raise PageError(404, f"no page {request.url.path}")
    return RedirectResponse(f"/{municipality}/", status_code=307)

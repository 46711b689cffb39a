"""The audit page of a case (``/{municipality}/audit/cases/{case_ref}?as_of=&known_at=``):
the case as of a business date (the facts that had happened by the end of that day,
village time) and as known at a moment (what had been recorded by then), side by side
with the case today; its whole history; the store's verify result (``GET audit/verify``,
for the roles that may run it) and the seals. The same readings as ``GET cases/{ref}``
(``as_of``, ``known_at``) and ``GET cases/{ref}/history``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from markupsafe import Markup

from api.case_reads import read_case
from api.integrity_report import integrity_report
from api.roles import may_page
from api.web.page_params import Asked, local_today
from api.web.page_parts import PartName, PartOffset, Section, asked_part
from api.web.render import page
from api.web.session import in_grant, not_found, require
from cases.business_time import effective_times
from cases.errors import CaseNotFoundError
from cases.history import describe_event, load_events
from cases.localtime import localized
from cases.money import dollars
from cases.page_sizes import paged
from cases.rules.clock import end_of_local_day
from cases.vocabulary import rule_labels, status_label

router = APIRouter(include_in_schema=False)

HISTORY_ROWS = 50  # events of the case's history shown at once, oldest first
SEAL_ROWS = 20  # seals shown at once, newest first (one is taken at every import and sweep)

# What the side-by-side table compares: (label, how to read it from a described case).
COMPARED = (
    ("Status", lambda c: status_label(c.get("status"))),
    ("Rule", lambda c: Markup('{} <span class="hint">version {}</span>').format(
        c.get("rule_label", c.get("rule")), c.get("rule_version"))),
    ("Owner", lambda c: (c.get("owner") or {}).get("name")),
    ("Responsible party", lambda c: (c.get("responsible") or {}).get("name") or "-"),
    ("Parcel", lambda c: " ".join((c.get("parcel") or {}).values())),
    ("Site address", lambda c: c.get("site_address")),
    ("Notices served", lambda c: len(c.get("notices") or [])),
    ("Abatements", lambda c: len(c.get("abatements") or [])),
    ("Charge (principal)", lambda c: dollars((c.get("charge") or {}).get("principal"))),
    ("Balance", lambda c: dollars(c.get("balance"))),
    ("Payments", lambda c: len(c.get("payments") or [])),
    ("Closed", lambda c: "yes" if c.get("closed") else "no"),
    ("Events", lambda c: len(c.get("events") or [])),
)


def view_findings(views: dict[str, Any]) -> list[str]:
    """Each difference the check of the views found (``GET audit/verify``'s ``views``), in
    plain words: which view, which case, what it shows and what the records give."""
    titles = {v["view"]: v["title"] for v in views["views"]}
    lines = []
    for d in views["differences"]:
        where = f"The {titles.get(d['view'], d['view'])} view, case {d['case']}: "
        if d["kind"] == "altered":
            said = "; ".join(f"the {c['field'].replace('_', ' ')} shows {_quoted(c['stored'])} "
                             f"where the records give {_quoted(c['from_events'])}"
                             for c in d["changes"])
        elif d["kind"] == "missing":
            said = "a row the records give is missing"
        elif d["kind"] == "extra":
            said = "it holds a row the records do not give"
        else:
            said = "its rows differ from what the records give"
        lines.append(where + said + ".")
    return lines


def _quoted(value: Any) -> str:
    return "nothing" if value is None else f"\u201c{value}\u201d"


def side_by_side(then: dict[str, Any], now: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for label, read in COMPARED:
        before = read(then) if then.get("exists", True) else "not yet opened"
        today = read(now)
        rows.append({"label": label, "then": before, "now": today, "differs": before != today})
    return rows


@router.get("/{municipality}/audit/cases/{case_ref}", name="page.audit")
async def audit_page(request: Request,
                     municipality: str = Path(pattern=r"^[a-z]+$", max_length=32),
                     case_ref: str = Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,63}$"),
                     section: PartName = None,
                     offset: PartOffset = 0,
                     check: bool = Query(False)) -> Any:
    user = require(request, "page.audit")
    in_grant(user, municipality)
    asked_part(section, ("history", "seals"), "the audit page")
    return await run_in_threadpool(_audit, request, user, municipality, case_ref, section,
                                   offset, check)


def _audit(request: Request, user: Any, municipality: str, case_ref: str,
           section: str | None, offset: int, check: bool) -> Any:
    svc = request.app.state.services
    place = svc.cases.catalog.municipality(municipality)
    tz = ZoneInfo(place.time_zone)
    query = request.query_params
    asked = Asked()
    as_of_day = asked.day("as_of", query.get("as_of"), local_today(svc.clock(), place))
    known_at = asked.moment("known_at", query.get("known_at"), tz)
    as_of = end_of_local_day(as_of_day, tz)
    try:
        events = load_events(svc.store, municipality, case_ref)
    except CaseNotFoundError:
        raise not_found(f"no case {case_ref!r} in {place.name}") from None
    then, _ = read_case(svc, municipality, case_ref, as_of=as_of, known_at=known_at)
    today, _ = read_case(svc, municipality, case_ref)
    labels = rule_labels(place.rules)
    for described in (then, today):
        if described.get("rule"):
            described["rule_label"] = labels.get((described["rule"], described["rule_version"]))
    # The rule version the case runs under, with the catalog's note on its citation (how
    # the section numbers were read), which letters leave out and an auditor should see.
    rule = (svc.cases.catalog.rule_version(today["rule"], today["rule_version"])
            if today.get("rule") else None)
    times = effective_times(events)
    shown = paged(events, HISTORY_ROWS, offset if section == "history" else 0)
    history = Section("history", "History", localized(
        [describe_event(e, times.get(e.originator_version)) for e in shown], tz),
        len(events), offset if section == "history" else 0, HISTORY_ROWS)
    # The check reads the whole store (every village's events, seals and views): run when
    # the auditor asks (``?check=1``), not at every look at a case.
    may_verify = may_page(user.role, "page.audit.verify")
    checked = integrity_report(svc, user) if may_verify and check else None
    seals_offset = offset if section == "seals" else 0
    newest, seal_count = svc.store.integrity.newest_seals(SEAL_ROWS, seals_offset)
    seals = Section("seals", "Seals", localized(newest, tz), seal_count, seals_offset, SEAL_ROWS)
    kept = {k: v for k, v in query.items() if k in ("as_of", "known_at")}
    return page(request, "audit.html", {
        "municipality": municipality, "village": place.name, "tz": place.time_zone,
        "case_ref": case_ref, "as_of": as_of_day.isoformat(),
        "known_at": known_at, "typed": dict(query), "errors": asked.errors,
        "rows": side_by_side(then, today), "then": then, "history": history,
        "rule": rule, "rule_label": today.get("rule_label"),
        "verified": checked, "may_verify": may_verify, "seals": seals,
        "query": (urlencode(kept) + "&") if kept else "",
        "view_findings": view_findings(checked["views"]) if checked else []},
        status=422 if asked.errors else 200)

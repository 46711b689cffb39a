"""The case pages of a village: the case list (search, filters, paging) and a case's
page (its parties, parcel, rule and citation, status, deadlines with countdowns, the
timeline of every event with corrections beside what they correct) with a form for each
command that may come next (``cases.next_commands``) and that the user's role may record.

A form posts to the same case service the journal and the API use: the command's own
model parses it (``api.web.forms``), the domain decides; an error comes back beside its
field and nothing is recorded."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlencode
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from api.consistency import reach
from api.errors import domain_answer
from api.request_log import Export, note_command
from api.web.awaiting_sweep import Sweeps, worklist_gains
from api.roles import COMMAND_ROLES, ROUTE_ROLES, may_page
from api.web.who_records import recorded_by_others
from api.web.corrections import CorrectForm, correct_form, place_error, read_correction
from api.web.error_summary import error_summary
from api.web.forms import Form, command_form, field_errors, read_form
from api.web.plain_errors import plain_detail
from api.web.render import page
from api.web.session import PageError, check_csrf, in_grant, not_found, require
from api.web.page_parts import PartName, PartOffset, Section, asked_part
from api.web.timeline import timeline
from cases.business_time import effective_times
from cases.commands import MAX_POSITION, CaseRef, parse_command
from cases.deadline_recorded import deadlines_recorded_at
from cases.documents.issued import COMMANDS as DOCUMENT_COMMANDS
from cases.documents.issued import check_ready, issued_documents, rebuild, unset_letterhead
from cases.errors import AbateError
from cases.filters import FilterError, one_line, parcel_part, rule_key
from cases.history import case_from, load_events
from cases.instant_bounds import FIRST_DAY, LAST_DAY
from cases.next_commands import next_commands, withheld
from cases.page_sizes import paged
from cases.referral import deadline_outcomes, outcome_words
from cases.rules.clock import end_of_local_day
from cases.statuses import CASE_STATUSES
from cases.vocabulary import rule_label, rule_labels, section_order, status_label
from projections import CaseSummaries

router = APIRouter(include_in_schema=False)  # pages: not part of the API's schema

PAGE_SIZES = (10, 25, 50, 100)  # cases a page of the list may show
TIMELINE_ROWS = 50  # events of a case's timeline shown at once, oldest first
Municipality = Annotated[str, Path(pattern=r"^[a-z]+$", max_length=32)]
Ref = Annotated[str, Path(max_length=64)]
Text = Annotated[str, Query(max_length=200)]


def _zone(svc: Any, municipality: str) -> str:
    return svc.cases.catalog.municipality(municipality).time_zone


# The case list's filters: (query parameter, label, the id of its field on the page).
FILTERS = [("owner", "Owner", "f-owner"), ("parcel", "Parcel number", "f-parcel"),
           ("status", "Status", "f-status"), ("rule", "Rule", "f-rule"),
           ("observed_from", "Observed from", "f-from"), ("observed_to", "Observed to", "f-to"),
           ("per_page", "Per page", "f-per-page")]


def _day(errors: dict[str, str], name: str, value: str) -> dt.date | None:
    """A day typed into a date filter, or None with ``errors[name]`` saying why not."""
    if not value:
        return None
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        errors[name] = "a date as YYYY-MM-DD, like 2026-11-15"
        return None
    if not FIRST_DAY <= day <= LAST_DAY:
        errors[name] = f"a date from {FIRST_DAY.year} to {LAST_DAY.year}"
        return None
    return day


def _chosen(place: Any, tz: ZoneInfo, filters: dict[str, Any]
            ) -> tuple[dict[str, Any], dict[str, str]]:
    """The search the filters ask for, or what is wrong with each (beside its field): a
    filter that can match nothing is refused by name, never answered "No case matches"."""
    errors: dict[str, str] = {}
    if filters["per_page"] not in PAGE_SIZES:
        errors["per_page"] = f"choose one of {', '.join(map(str, PAGE_SIZES))}"
    status = filters["status"]
    if status and status not in CASE_STATUSES:
        errors["status"] = ("choose one of "
                            f"{', '.join(status_label(s) for s in CASE_STATUSES)}")
    start = _day(errors, "observed_from", filters["observed_from"])
    end = _day(errors, "observed_to", filters["observed_to"])
    if start and end and end < start:
        errors["observed_to"] = (f"{end} is before the day observed from ({start}): give a "
                                 "day on or after it, or leave it empty")
    chosen: dict[str, Any] = {
        "status": status or None,
        "observed_from": end_of_local_day(start - dt.timedelta(days=1), tz) if start else None,
        "observed_before": end_of_local_day(end, tz) if end else None}
    checks = {  # a control character would match nothing, or (cut at a NUL) everything
        "rule": lambda text: rule_key(place, one_line("rule", text, named=str) or None, str),
        "parcel_part": lambda text: parcel_part(text, str, "parcel"),
        "owner": lambda text: (one_line("owner", text, named=str) or "").strip() or None}
    for key, check in checks.items():
        name = "parcel" if key == "parcel_part" else key
        try:
            chosen[key] = check(filters[name])
        except FilterError as exc:  # a rule by its section and title, not its key
            errors[name] = ("choose one of the rules of the village: " + "; ".join(
                label for _, label in rule_choices(place.rules))) if name == "rule" \
                else str(exc).removeprefix(f"{name}: ")
    return chosen, errors


@router.get("/{municipality}/cases", name="page.cases.list")
def case_list(request: Request, municipality: Municipality, status: Text = "",
              rule: Text = "", parcel: Text = "", owner: Text = "", observed_from: Text = "",
              observed_to: Text = "",
              offset: PartOffset = 0,
              per_page: int = 50) -> Any:
    user = require(request, "page.cases.list")
    in_grant(user, municipality)
    svc = request.app.state.services
    zone_name = _zone(svc, municipality)
    place = svc.cases.catalog.municipality(municipality)
    filters = {"status": status, "rule": rule, "parcel": parcel, "owner": owner,
               "observed_from": observed_from, "observed_to": observed_to,
               "per_page": per_page}
    chosen, errors = _chosen(place, ZoneInfo(zone_name), filters)
    rows: list[Any] = []
    total = 0
    if not errors:
        reach(svc, (CaseSummaries.name,), None)
        view = svc.runner.active(CaseSummaries.name)
        with svc.runner.engine.connect() as conn:
            found = view.page(conn, municipality=municipality, limit=per_page, offset=offset,
                              **chosen)
        rows, total = found.rows, found.total
    page_size = per_page if per_page in PAGE_SIZES else 50
    return page(request, "cases.html", {
        "municipality": municipality, "tz": zone_name, "now": svc.clock(),
        "village": place.name, "cases": rows, "filters": filters, "statuses": CASE_STATUSES,
        "rules": rule_choices(place.rules), "rule_labels": rule_labels(place.rules),
        "errors": errors, "summary": error_summary(errors, FILTERS),
        "offset": offset, "page_size": page_size,
        "page_sizes": PAGE_SIZES, "total": total, "more": offset + len(rows) < total,
        "page_number": offset // page_size + 1, "pages": max(1, -(-total // page_size)),
        "query": urlencode({k: v for k, v in filters.items() if v})}, 422 if errors else 200)


def rule_choices(rules: Any) -> list[tuple[str, str]]:
    """Each rule's key and its name as people look it up ("§ 9.13 Snow and ice removal"),
    in section order; the name of its latest version."""
    latest = {r.key: r for r in sorted(rules, key=lambda r: r.version)}
    keys = sorted(latest, key=lambda key: section_order(latest[key].id))
    return [(key, rule_label(latest[key])) for key in keys]


def _events(svc: Any, user: Any, municipality: str, case_ref: str) -> list[Any]:
    """The case's events, if it is in the user's grant: another village's case, or a
    reference that is not a case reference, is the same 404 as a missing case."""
    try:
        ref = parse_ref(case_ref)
        events = load_events(svc.store, municipality, ref) \
            if municipality in user.municipalities else []
    except (AbateError, ValueError):
        events = []
    if not events or municipality not in user.municipalities:
        raise not_found(f"no case {case_ref[:64]!r} in {municipality}")
    return events


def parse_ref(case_ref: str) -> str:
    from pydantic import TypeAdapter

    return TypeAdapter(CaseRef).validate_python(case_ref)


def _issuable(user: Any, case: Any, failed: Any, rule: Any, now_local: dt.datetime
              ) -> list[Form]:
    """A form (a button and its time) for each document the user's role may issue and the
    case has something for now (a notice once one is served, a bill once one is issued, a
    referral packet once the case is referred or cited: the packet is the prosecution's
    file; the API still builds one on request, for an attorney weighing a referral)."""
    forms = []
    for name, document in DOCUMENT_COMMANDS.items():
        if not may_page(user.role, f"page.command.{name}") or case.closed:
            continue
        if document == "referral_packet" and not (case.referrals or case.citations):
            continue
        try:
            check_ready(document, case)
        except AbateError:
            continue
        forms.append(failed if failed is not None and failed.command == name
                     else command_form(name, rule, now_local))
    return forms


def _documents(user: Any, events: list[Any]) -> list[dict[str, Any]]:
    """Every document issued on the case (as the timeline and the API's list name them),
    each saying whether this role may open it: a referral packet only for the roles that
    may read one (as the API's download), the others naming who may."""
    packet_readers = ROUTE_ROLES["cases.referral"]
    return [{**d, "readers": None if d["document"] != "referral_packet"
             or user.role in packet_readers else sorted(packet_readers)}
            for d in issued_documents(events)]


def _timeline_part(events: list[Any], rule_version: Any, offset: int) -> Section:
    """A page of the timeline (``TIMELINE_ROWS`` events from ``offset``); an event corrected
    on another page links to the page that shows it (``corrects_offset``)."""
    every = timeline(events, rule_version)
    rows = paged(every, TIMELINE_ROWS, offset)
    for row in rows:
        if row.get("corrects") is not None:
            place = next((i for i, e in enumerate(every) if e["position"] == row["corrects"]), 0)
            row["corrects_offset"] = place - place % TIMELINE_ROWS
    return Section("timeline", "Timeline", rows, len(every), offset, TIMELINE_ROWS)


def _case_view(request: Request, user: Any, municipality: str, case_ref: str,
               failed: Form | CorrectForm | None = None, status: int = 200,
               timeline_offset: int = 0) -> Any:
    svc = request.app.state.services
    events = _events(svc, user, municipality, case_ref)
    case, _ = case_from(events)
    zone_name = _zone(svc, municipality)
    tz = ZoneInfo(zone_name)
    rule = svc.cases.catalog.rule_version(case.rule, case.rule_version)
    now = svc.clock()
    forms = []
    upcoming = next_commands(case, rule, now)
    for name in upcoming:
        if not may_page(user.role, f"page.command.{name}"):
            continue
        forms.append(failed if failed is not None and failed.command == name
                     else command_form(name, rule, now.astimezone(tz)))
    # what the state allows but the rule version or the time does not (the page says why)
    not_offered = {name: why for name, why in withheld(case, rule, now).items()
                   if may_page(user.role, f"page.command.{name}")}
    correction = None
    if may_page(user.role, "page.command.correct") and not case.closed:
        correction = failed if isinstance(failed, CorrectForm) \
            else correct_form(events, now.astimezone(tz))
    deadlines = [d.as_dict() for d in sorted(case.deadlines.values(), key=lambda d: d.due_at)]
    ended = {(d["name"], d["set_by"]): outcome_words(d)
             for d in deadline_outcomes(events, effective_times(events), now)}
    # A deadline a fact ended says how (met, met late, cancelled), as the referral packet does.
    deadlines = [{**d, "ended": ended.get((d["name"], d.get("set_by")))}
                 if d["state"] == "cancelled" else d for d in deadlines]
    recorded = deadlines_recorded_at(events)
    deadlines = [{**d, "set_recorded_at": recorded.get(d["name"])} for d in deadlines]
    deadlines = _awaiting_sweep(svc, case, rule, deadlines, now, zone_name)
    return page(request, "case.html", {
        "municipality": municipality, "tz": zone_name, "now": now, "case": case,
        "rule": rule, "deadlines": deadlines,
        "timeline": _timeline_part(events, svc.cases.catalog.rule_version, timeline_offset),
        "forms": forms, "others": recorded_by_others(user.role, upcoming),
        "not_offered": not_offered, "failed": failed, "done": _done(request),
        "documents": _documents(user, events), "correction": correction,
        "issue_forms": _issuable(user, case, failed, rule, now.astimezone(tz)),
        "letterhead_unset": unset_letterhead(svc.cases.catalog.municipality(municipality)),
        "village": svc.cases.catalog.municipality(municipality).name}, status)


def _awaiting_sweep(svc: Any, case: Any, rule: Any, deadlines: list[dict[str, Any]],
                    now: dt.datetime, tz: str) -> list[dict[str, Any]]:
    """A deadline due but not yet recorded as passed says so (``awaiting``: its words in
    place of "open") and what the worklist lists once the scheduler records it (``gains``)."""
    sweeps = Sweeps(svc.settings.base.sweep_seconds)
    place = svc.cases.catalog.municipality(case.municipality)
    return [{**d, "awaiting": sweeps.state_words(d, now, tz),
             "gains": worklist_gains(case, rule, place, d["name"])}
            if not case.closed and sweeps.awaiting(d, now) else d for d in deadlines]


def _done(request: Request) -> str:
    """The command just recorded (named by the redirect after a form), if it is one."""
    done = request.query_params.get("done", "")
    return done if done in COMMAND_ROLES else ""


@router.get("/{municipality}/cases/{case_ref}", name="page.cases.show")
def case_page(request: Request, municipality: Municipality, case_ref: Ref,
              section: PartName = None,
              offset: PartOffset = 0) -> Any:
    user = require(request, "page.cases.show")
    asked_part(section, ("timeline",), "the case page")
    return _case_view(request, user, municipality, case_ref, timeline_offset=offset)


@router.post("/{municipality}/cases/{case_ref}", name="page.command")
async def case_command(request: Request, municipality: Municipality, case_ref: Ref) -> Any:
    """A command's form posts to the case page's own address (the form names its command):
    a form shown again with its errors leaves the page's address in the address bar, not
    one that a reload would post to again or answer 405."""
    user = require(request, "page.cases.show")
    command = str((await request.form()).get("command", ""))
    note_command(request, command)  # the access log's action, even for a refused post
    posted = await check_csrf(request)
    if command not in COMMAND_ROLES:
        raise PageError(422, f"command: {command[:40]!r} is not a command of a case page "
                             "(nothing was recorded)")
    # the store and the domain block: off the event loop, as FastAPI runs a plain route
    return await run_in_threadpool(_record, request, user, municipality, case_ref, command,
                                   posted)


def _record(request: Request, user: Any, municipality: str, case_ref: str, command: str,
            posted: Any) -> Any:
    """Record ``command`` from the posted form, or show the form again with its errors."""
    svc = request.app.state.services
    events = _events(svc, user, municipality, case_ref)
    if not may_page(user.role, f"page.command.{command}"):
        raise PageError(403, f"the role {user.role} may not {command.replace('_', ' ')} "
                             "(nothing was recorded)")
    case, _ = case_from(events)
    rule = svc.cases.catalog.rule_version(case.rule, case.rule_version)
    tz = ZoneInfo(_zone(svc, municipality))
    if command == "correct":
        return _record_correction(request, user, municipality, case, events, posted, tz)
    form = command_form(command, rule, svc.clock().astimezone(tz))
    data = read_form(form, posted, tz)
    if form.errors:
        return _case_view(request, user, municipality, case_ref, form, 422)
    try:
        parsed = parse_command({**data, "command": command, "municipality": municipality,
                                "actor": user.name, "case_ref": case.case_ref})
        svc.handle(parsed)
    except AbateError as exc:
        answer = domain_answer(exc)
        if answer.status >= 500:
            raise
        form.errors = field_errors(plain_detail(exc, answer.detail, form.labels(),
                                                str(tz)), form)
        return _case_view(request, user, municipality, case_ref, form, answer.status)
    return RedirectResponse(f"/{municipality}/cases/{case.case_ref}?done={command}",
                            status_code=303)


def _record_correction(request: Request, user: Any, municipality: str, case: Any,
                       events: list[Any], posted: Any, tz: ZoneInfo) -> Any:
    """Record a correction from the posted form, or show the form again with its errors
    beside their fields (nothing recorded)."""
    svc = request.app.state.services
    form = correct_form(events, svc.clock().astimezone(tz))
    data = read_correction(form, posted, tz)
    if data is None:
        return _case_view(request, user, municipality, case.case_ref, form, 422)
    try:
        parsed = parse_command({**data, "command": "correct", "municipality": municipality,
                                "actor": user.name, "case_ref": case.case_ref})
        svc.handle(parsed)
    except AbateError as exc:
        answer = domain_answer(exc)
        if answer.status >= 500:
            raise
        place_error(plain_detail(exc, answer.detail, {}, str(tz)), form)
        return _case_view(request, user, municipality, case.case_ref, form, answer.status)
    return RedirectResponse(f"/{municipality}/cases/{case.case_ref}?done=correct",
                            status_code=303)


@router.get("/{municipality}/cases/{case_ref}/documents/{position}",
            name="page.documents.get", dependencies=[Export])
def document_download(request: Request, municipality: Municipality, case_ref: Ref,
                      position: Annotated[int, Path(ge=1, le=MAX_POSITION)]) -> Any:
    """An issued document, built again from its recorded inputs and handed out only when
    its SHA-256 is the recorded one (as the API's download; an export in the access log)."""
    user = require(request, "page.documents.get")
    svc = request.app.state.services
    events = _events(svc, user, municipality, case_ref)
    found = next((e for e in events if e.originator_version == position), None)
    if getattr(found, "document", None) == "referral_packet" \
            and user.role not in ROUTE_ROLES["cases.referral"]:
        raise PageError(403, f"the role {user.role} may not read a referral packet")
    try:
        built = rebuild(events, position, svc.cases.catalog.rule_version,
                        _zone(svc, municipality))
    except AbateError as exc:
        raise not_found(str(exc)) from None
    if not built.matches:
        raise PageError(409, f"document {position} built again has SHA-256 {built.sha256}, "
                             f"not the recorded {built.recorded_sha256} (recorded by "
                             f"{built.recorded_generator}; this server runs {built.generator})")
    return Response(built.content, media_type="application/pdf", headers={
        "Content-Disposition": f'attachment; filename="{built.file_name()}"',
        "X-Abate-Document-SHA256": built.sha256, "Cache-Control": "no-store"})

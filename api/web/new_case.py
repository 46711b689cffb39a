"""The new-case form (``/{municipality}/cases/new``): the open_case fields, with a rule
picker showing, for each rule of the village in force today, its cure period, whom the
notice goes to, whom the bill goes to and what follows when nothing is done (from the
rules catalog). The posted form is parsed by the journal's own command model and run by
the same service as ``POST cases``; an error comes back beside its field, and nothing is
recorded. On success the browser goes to the new case's page."""

from __future__ import annotations

import datetime as dt
import re
import secrets
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Path, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse

from api.errors import domain_answer
from api.web.error_summary import error_summary
from api.web.plain_errors import plain_detail
from api.web.render import page
from api.web.session import check_csrf, in_grant, require
from cases.commands import parse_command
from cases.errors import AbateError, InvalidCommandError
from cases.localtime import SkippedLocalTime, typed_instant
from cases.rules.catalog import Municipality, Rule
from cases.rules.files import NOT_SET
from cases.text_policy import ADDRESS_MAX, FREE_TEXT_MAX, NAME_MAX, PARCEL_MAX
from cases.vocabulary import section_order

router = APIRouter(include_in_schema=False)
Village = Path(pattern=r"^[a-z]+$", max_length=32)

# The form's fields: (name, the command's field it fills, label, max length).
FIELDS = (
    ("case_ref", "case_ref", "Case number", 64),
    ("at", "at", "Observed (village time)", 16),
    ("snow_ended_at", "snow_ended_at", "Snowfall ended (village time; snow and ice rules, "
     "whose time to clear runs from it)", 16),
    ("county", "parcel.county", "County", 32),
    ("parcel_number", "parcel.number", "Parcel number", PARCEL_MAX),
    ("site_address", "site_address", "Site address", ADDRESS_MAX),
    ("owner_name", "owner.name", "Owner", NAME_MAX),
    ("owner_address", "owner.mailing_address", "Owner's mailing address", ADDRESS_MAX),
    ("responsible_name", "responsible.name", "Responsible party (if not the owner)", NAME_MAX),
    ("description", "description", "What was found", FREE_TEXT_MAX),
    ("source", "source", "How it came to the village", 16),
)
FIELD_OF = {command_field: name for name, command_field, _, _ in FIELDS}
# The form's fields in the order it shows them, for the list of errors above it: (error key,
# label, the id of the element a link goes to; the rule's: its first choice).
SHOWN_ORDER = ("rule", "case_ref", "at", "snow_ended_at", "source", "description", "county",
               "parcel_number", "site_address", "owner_name", "owner_address",
               "responsible_name")
SHORT_LABEL = {name: label.split(" (")[0] for name, _, label, _ in FIELDS}
SUMMARY_FIELDS = [("rule", "Rule", "rule-1")] + [(name, SHORT_LABEL[name], name)
                                                 for name in SHOWN_ORDER[1:]]
LABEL_OF = {command_field: label.split(" (")[0] for _, command_field, label, _ in FIELDS}
SOURCES = ("observation", "complaint")


def _period(clock: Any) -> str:
    if clock is None:
        return "none"
    period = clock.period
    return ("stated in the notice" if period == "stated_in_notice" else str(period))


def _tax_roll(tax_roll: Any) -> str:
    """What the tax roll does with an unpaid charge, and under which statute: where the
    ordinance names none, that the village attorney names it (never "not set")."""
    statute = ("the ordinance names no statute; the village attorney names it"
               if tax_roll.statute == NOT_SET else tax_roll.statute)
    return (f"unpaid charges {'go' if tax_roll.mandatory else 'may go'} on the tax roll as a "
            f"{tax_roll.charge_type.replace('_', ' ')} ({statute}; {tax_roll.citation})")


def rule_choices(place: Municipality, today: dt.date) -> list[dict[str, Any]]:
    """Each rule of the village in force ``today`` as the picker shows it (its version's
    words: cure period, notice to, bill to, consequences, each with its citation)."""
    ids = sorted({r.id for r in place.rules}, key=section_order)
    shown = []
    for rule_id in ids:
        in_force = [r for r in place.rules if r.id == rule_id and r.effective_from <= today]
        if not in_force:
            continue
        rule: Rule = max(in_force, key=lambda r: r.effective_from)
        consequences = []
        if rule.cure_expiry_consequence:
            consequences.append(rule.cure_expiry_consequence)
        consequences += [f"{e.consequence} (after {e.after}; {e.citation})"
                         for e in rule.escalations]
        if rule.tax_roll:
            consequences.append(_tax_roll(rule.tax_roll))
        if rule.penalty and rule.penalty.amounts_set:
            consequences.append(f"forfeiture: {rule.penalty.in_words()} "
                                f"({rule.penalty.source})")
        elif rule.penalty and rule.penalty.provided_by:  # the section, as a letter cites it
            consequences.append(f"forfeiture: {rule.penalty.in_words()}")
        shown.append({
            "key": rule.key, "title": rule.title, "citation": rule.citation,
            "version": rule.version, "effective_from": rule.effective_from.isoformat(),
            "cure": _period(rule.cure) + (f" ({rule.cure.citation})" if rule.cure else ""),
            "notice_to": ", ".join(p.replace("_", " ") for p in rule.notice_to) or "nobody",
            "bill_to": (rule.billing.bill_to.replace("_", " ") + f" ({rule.billing.citation})"
                        if rule.billing else "no bill under this rule"),
            "consequences": consequences or ["none stated in the ordinance"]})
    return shown


def _form_page(request: Request, place: Municipality, values: dict[str, str],
               errors: dict[str, str], status: int = 200) -> Any:
    svc = request.app.state.services
    tz = ZoneInfo(place.time_zone)
    today = svc.clock().astimezone(tz).date()
    return page(request, "new_case.html", {
        "municipality": place.municipality, "village": place.name,
        "rules": rule_choices(place, today), "counties": list(place.counties),
        "sources": SOURCES, "fields": {n: (label, size) for n, _, label, size in FIELDS},
        "values": values, "errors": errors,
        "summary": error_summary(errors, SUMMARY_FIELDS)}, status)


@router.get("/{municipality}/cases/new", name="page.cases.new")
def new_case_form(request: Request, municipality: str = Village) -> Any:
    user = require(request, "page.cases.new")
    in_grant(user, municipality)
    svc = request.app.state.services
    place = svc.cases.catalog.municipality(municipality)
    now_local = svc.clock().astimezone(ZoneInfo(place.time_zone))
    values = {"at": now_local.strftime("%Y-%m-%dT%H:%M"), "source": "observation",
              "county": next(iter(place.counties)), "command_id": secrets.token_hex(16)}
    return _form_page(request, place, values, {})


_FIELD = re.compile(r"(?:^|; )field ([^\s:]+): ")


def field_errors(detail: str) -> dict[str, str]:
    """``field parcel.number: ...; field at: ...`` beside the form's fields; what names none
    of them goes above the form (key "")."""
    found: dict[str, str] = {}
    parts = _FIELD.split(detail)
    if len(parts) > 1 and not parts[0].strip():
        pairs = list(zip(parts[1::2], parts[2::2]))
    else:
        head, sep, rest = detail.partition(":")
        pairs = [(head.strip(), rest)] if sep and head.strip() in FIELD_OF else [("", detail)]
    for where, message in pairs:
        key = "rule" if where == "rule" else \
            FIELD_OF.get(where) or FIELD_OF.get(where.split(".")[0], "")
        if where == "parcel":  # the village's own check of the parcel (cases.rules.catalog)
            key = "county" if message.strip().startswith("county") else "parcel_number"
        found[key] = (found.get(key, "") + " " + message.strip()).strip()
    return found


def _command(values: dict[str, str], municipality: str, actor: str, tz: ZoneInfo
             ) -> dict[str, Any]:
    """The open_case command's fields from the form (empty optional parts left out)."""
    def village_time(name: str) -> str:
        try:
            return typed_instant(values.get(name, ""), tz)
        except SkippedLocalTime as exc:
            raise InvalidCommandError(f"field {name}: {exc}") from None

    at = village_time("at")
    data: dict[str, Any] = {
        "command": "open_case", "municipality": municipality, "actor": actor,
        "case_ref": values.get("case_ref", "").strip(), "at": at, "rule": values.get("rule", ""),
        "parcel": {"county": values.get("county", ""),
                   "number": values.get("parcel_number", "").strip()},
        "site_address": values.get("site_address", "").strip(),
        "owner": {"name": values.get("owner_name", "").strip()},
        "description": values.get("description", ""), "source": values.get("source", "")}
    if values.get("owner_address", "").strip():
        data["owner"]["mailing_address"] = values["owner_address"].strip()
    if values.get("snow_ended_at", "").strip():
        data["snow_ended_at"] = village_time("snow_ended_at")
    if values.get("responsible_name", "").strip():
        data["responsible"] = {"name": values["responsible_name"].strip()}
    if re.fullmatch(r"[0-9a-f]{32}", values.get("command_id", "")):
        data["id"] = f"web-{values['command_id']}"  # a double click opens the case once
    return data


@router.post("/{municipality}/cases/new", name="page.cases.new.open")
async def open_case(request: Request, municipality: str = Village) -> Any:
    user = require(request, "page.cases.new.open")
    in_grant(user, municipality)
    posted = await check_csrf(request)
    values = {k: str(v) for k, v in posted.items() if k != "csrf_token"}
    return await run_in_threadpool(_open, request, user, municipality, values)


def _open(request: Request, user: Any, municipality: str, values: dict[str, str]) -> Any:
    svc = request.app.state.services
    place = svc.cases.catalog.municipality(municipality)
    errors: dict[str, str] = {}
    try:  # without a rule the other fields are still checked: every error at once
        command = parse_command(_command(values, municipality, user.name,
                                         ZoneInfo(place.time_zone)))
        svc.handle(command)
    except AbateError as exc:
        answer = domain_answer(exc)
        if answer.status >= 500:
            raise
        errors = field_errors(plain_detail(exc, answer.detail, LABEL_OF, place.time_zone))
    if not values.get("rule"):
        errors["rule"] = "choose the rule the case is under"
    if errors:
        return _form_page(request, place, values, errors, 422)
    return RedirectResponse(f"/{municipality}/cases/{quote(command.case_ref, safe='')}",
                            status_code=303)

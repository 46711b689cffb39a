"""The tax-roll page of a village (``/{municipality}/tax-roll``): the list of a tax year
(one county or all) with its totals, the CSV download (the API's export itself, logged as
an export), certifying a county's list after a confirmation step, the seal of each
certified list and the reconciliation of payments after certification. The list, totals,
certification and reconciliation are projections' (tax_roll, tax_roll_file,
certification, reconciliation), exactly as ``GET/POST tax-roll`` use them. The table of
charges shows a hundred at a time (``?offset=N``); the totals are the whole list's."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Path, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse, StreamingResponse

from api.consistency import reach
from api.pdf_answers import certified_list_answer
from api.request_log import Export
from api.roles import may_page
from api.services import Services
from api.tax_roll_files import tax_roll_list
from api.web.page_params import Asked, local_today
from api.web.page_parts import PartName, PartOffset, Section, asked_part
from api.web.render import page
from api.web.session import PageError, check_csrf, in_grant, require
from cases.errors import CaseNotFoundError
from cases.localtime import localized
from cases.money import dollars, money
from cases.rules.catalog import Municipality
from cases.seals import Seal
from cases.vocabulary import rule_labels
from projections import TaxRoll
from projections.certification import (
    ListChanged,
    ListDigest,
    NotCertifiable,
    certify_listed,
    charges_reader,
    check_reviewed,
    not_certifiable,
    sha256_problem,
)
from projections.reconciliation import reconciliation
from projections.tax_roll_file import csv_chunks, summary

router = APIRouter(include_in_schema=False)
CANNOT_ALL = "its charges cannot all be certified"
# Charges the page's table shows at once (the totals, the CSV and certification take the
# whole list): a year's roll of thousands of charges stays a page a person can load.
CHARGE_ROWS = 100
LATE_ROWS = 50  # payments after certification a page shows at once
Village = Path(pattern=r"^[a-z]+$", max_length=32)


def _listed(svc: Services, place: Municipality, tax_year: int, county: str | None
            ) -> list[dict[str, Any]]:
    """The list as of today (local), from the caught-up view: what certifying would certify."""
    reach(svc, (TaxRoll.name,), None)
    with svc.runner.engine.connect() as conn:
        return list(svc.runner.active(TaxRoll.name).iter_charges(
            conn, municipality=place.municipality, tax_year=tax_year,
            as_of=local_today(svc.clock(), place), county=county))


def certified_seals(svc: Services, place: Municipality, tax_year: int
                    ) -> list[dict[str, Any]]:
    """The seals taken right after each certification of this village's lists of the year
    (their reason names the list: ``certification belleville 2026 Dane``)."""
    prefix = f"certification {place.municipality} {tax_year} "
    found = []
    for fields in svc.store.integrity.seals_for(prefix):
        fields["county"] = fields["reason"][len(prefix):]
        fields["line"] = Seal.from_fields(fields).line()  # the line an auditor keeps
        found.append(localized(fields, place.time_zone))
    return found


def certified_one_by_one(charges: list[dict[str, Any]], seals: list[dict[str, Any]]
                         ) -> list[dict[str, Any]]:
    """The certified charges no seal of their county's list covers: certified one at a
    time (``certify_charge``: a journal line, the case page, the command route) after the
    county's last list certification, if any, so no seal was taken after them. They are
    on the roll and on the certified list (PDF) all the same; the page says so, rather than
    "certified 5 of 7" beside "no list certified"."""
    last_seal: dict[str, dt.datetime] = {}
    for seal in seals:
        at = dt.datetime.fromisoformat(seal["sealed_at"])
        last_seal[seal["county"]] = max(at, last_seal.get(seal["county"], at))
    # a seal's time is in whole seconds: a list's charges are certified within its second
    return [c for c in charges if c["certified"] and (
        c["county"] not in last_seal
        or dt.datetime.fromisoformat(c["certified_at"]).replace(microsecond=0)
        > last_seal[c["county"]])]


def _asked(request: Request, svc: Services, place: Municipality) -> tuple[Asked, int, str | None]:
    asked = Asked()
    query = request.query_params
    year = asked.year("tax_year", query.get("tax_year"), local_today(svc.clock(), place).year)
    county = asked.county("county", query.get("county"), place)
    return asked, year, county


def changed_in_words(changes: list[dict[str, Any]] | None) -> str:
    """How the list changed since the confirmation was shown, for a clerk: "BV-7 added
    ($150.00), BV-3 amount changed ($120.00 to $20.00)"; without the changes, that it did."""
    if not changes:
        return "the list changed since this page showed it"
    said = []
    for change in changes:
        text = f"{change['case_ref']} {change['change'].replace('_', ' ')}"
        amount = change.get("total", change.get("principal"))
        if isinstance(amount, dict):
            text += f" ({dollars(amount['reviewed'])} to {dollars(amount['now'])})"
        elif amount is not None:
            text += f" ({dollars(amount)})"
        said.append(text)
    return "the list changed since this page showed it: " + ", ".join(said)


def _roll_url(municipality: str, tax_year: int, county: str | None, **more: Any) -> str:
    query = {"tax_year": tax_year, **({"county": county} if county else {}), **more}
    return f"/{municipality}/tax-roll?{urlencode(query)}"


@router.get("/{municipality}/tax-roll", name="page.tax_roll")
def tax_roll_page(request: Request, municipality: str = Village,
                  section: PartName = None,
                  offset: PartOffset = 0) -> Any:
    user = require(request, "page.tax_roll")
    in_grant(user, municipality)
    asked_part(section, ("charges", "reconcile"), "the tax roll page")
    late_offset = offset if section == "reconcile" else 0
    offset = 0 if section == "reconcile" else offset
    svc = request.app.state.services
    place = svc.cases.catalog.municipality(municipality)
    asked, year, county = _asked(request, svc, place)
    charges = _listed(svc, place, year, county)
    totals = summary(charges, place, tax_year=year, county=county,
                     as_of=local_today(svc.clock(), place), known_at=None, certified=False,
                     produced_at=svc.clock(), csv_bytes=b"".join(csv_chunks(charges, place)),
                     list_sha256=ListDigest.of(charges))
    with svc.runner.engine.connect() as conn:
        reconciled = localized(reconciliation(svc.runner.active(TaxRoll.name), conn,
                                              municipality=municipality, tax_year=year,
                                              limit=LATE_ROWS, offset=late_offset),
                               place.time_zone)
    query = {"tax_year": year, **({"county": county} if county else {})}
    seals = certified_seals(svc, place, year)
    return page(request, "tax_roll.html", {
        "municipality": municipality, "village": place.name, "tz": place.time_zone,
        "now": svc.clock(), "tax_year": year, "county": county, "counties": list(place.counties),
        "typed": dict(request.query_params), "errors": asked.errors,
        "charges": charges, "summary": totals,
        "shown": Section("charges", "Charges", [localized(c, place.time_zone) for c in
                                                 charges[offset:offset + CHARGE_ROWS]],
                         len(charges), offset, CHARGE_ROWS),
        "query": urlencode(query) + "&",
        "csv_url": f"/{municipality}/tax-roll.csv?{urlencode(query)}",
        "certified_pdf_url": f"/{municipality}/tax-roll/certified-list.pdf?{urlencode(query)}",
        "certify_url": f"/{municipality}/tax-roll/certify?{urlencode(query)}",
        "may_certify": may_page(user.role, "page.tax_roll.certify"),
        "pending": sum(1 for c in charges if not c["certified"]),
        "seals": seals, "one_by_one": certified_one_by_one(charges, seals),
        "reconciliation": reconciled,
        "late": Section("reconcile", "Payments after certification",
                        reconciled["payments_after_certification"], reconciled["total"],
                        late_offset, LATE_ROWS),
        "certified_seal": request.query_params.get("certified")},
        status=422 if asked.errors else 200)


@router.get("/{municipality}/tax-roll.csv", name="page.tax_roll.csv", dependencies=[Export])
def tax_roll_csv(request: Request, municipality: str = Village) -> StreamingResponse:
    """The API's own export (``GET tax-roll``, CSV: ``api.tax_roll_files``), so the file is
    the same byte for byte."""
    user = require(request, "page.tax_roll.csv")
    in_grant(user, municipality)
    svc = request.app.state.services
    place = svc.cases.catalog.municipality(municipality)
    asked, year, county = _asked(request, svc, place)
    if asked.errors:
        raise PageError(422, "; ".join(f"{k}: {v}" for k, v in asked.errors.items()))
    reach(svc, (TaxRoll.name,), None)
    return tax_roll_list(svc, municipality, year, county=county, as_of=None, known_at=None,
                         fmt="csv", excel=False)


@router.get("/{municipality}/tax-roll/certified-list.pdf", name="page.tax_roll.certified_pdf",
            dependencies=[Export])
def certified_list_pdf(request: Request, municipality: str = Village) -> Any:
    """The certified list as PDF for the county treasurer: the API's own document
    (``GET tax-roll/certified-list.pdf``), so the file is the same byte for byte."""
    user = require(request, "page.tax_roll.certified_pdf")
    in_grant(user, municipality)
    svc = request.app.state.services
    place = svc.cases.catalog.municipality(municipality)
    asked, year, county = _asked(request, svc, place)
    if county is None:
        asked.errors.setdefault("county", "choose the county whose certified list to print")
    if asked.errors:
        raise PageError(422, "; ".join(f"{k}: {v}" for k, v in asked.errors.items()))
    reach(svc, (TaxRoll.name,), None)
    try:
        return certified_list_answer(svc, municipality, year, county)
    except CaseNotFoundError as exc:
        raise PageError(404, str(exc)) from None


def _confirmation(request: Request, svc: Services, place: Municipality, year: int,
                  county: str, *, refused: str | None = None) -> Any:
    """The confirmation of a county's list, with its digest (``ListDigest``, the one the
    export and the API give) and the moment it was read, which the form sends back so that
    certifying checks the list is still this one; ``refused`` says why it was not certified."""
    read_at = svc.clock()
    charges = _listed(svc, place, year, county)
    pending = [c for c in charges if not c["certified"]]
    blocked = not_certifiable(pending)
    totals = summary(charges, place, tax_year=year, county=county,
                     as_of=local_today(read_at, place), known_at=None, certified=False,
                     produced_at=read_at)
    return page(request, "tax_roll_certify.html", {
        "municipality": place.municipality, "village": place.name, "tax_year": year,
        "county": county, "summary": totals, "pending": len(pending),
        "pending_total": money(sum((Decimal(c["total"]) for c in pending), Decimal(0))),
        "not_certifiable": blocked, "rule_labels": rule_labels(place.rules),
        "digest": ListDigest.of(charges), "read_at": read_at.isoformat(),
        # a list that cannot be certified says why below, once: no refusal repeats that;
        # a list that changed says so (the clerk's "yes" was for another list)
        "refused": None if blocked and refused == CANNOT_ALL else refused,
        "back_url": _roll_url(place.municipality, year, county)},
        status=409 if refused else 200)


@router.get("/{municipality}/tax-roll/certify", name="page.tax_roll.certify")
def confirm_certification(request: Request, municipality: str = Village) -> Any:
    """The confirmation step: how many charges, what they add up to, the list's digest."""
    user = require(request, "page.tax_roll.certify")
    in_grant(user, municipality)
    svc = request.app.state.services
    place = svc.cases.catalog.municipality(municipality)
    asked, year, county = _asked(request, svc, place)
    if county is None and "county" not in asked.errors:
        asked.errors["county"] = "choose the county whose list to certify (one list a county)"
    if asked.errors:
        raise PageError(422, "; ".join(f"{k}: {v}" for k, v in asked.errors.items()))
    return _confirmation(request, svc, place, year, county)


@router.post("/{municipality}/tax-roll/certify", name="page.tax_roll.certify.confirmed")
async def certify(request: Request, municipality: str = Village) -> Any:
    """Certify the list the clerk confirmed: refused (nothing recorded) when the list is
    no longer the one shown, i.e. its digest changed in between."""
    user = require(request, "page.tax_roll.certify.confirmed")
    in_grant(user, municipality)
    form = await check_csrf(request)
    # the store, the views and the lock block: off the event loop, as a plain route runs
    return await run_in_threadpool(_certify, request, user, municipality, form)


def _certify(request: Request, user: Any, municipality: str, form: Any) -> Any:
    svc = request.app.state.services
    place = svc.cases.catalog.municipality(municipality)
    asked = Asked()
    year = asked.year("tax_year", form.get("tax_year"), 0)
    county = asked.county("county", form.get("county"), place)
    read_at = asked.moment("read_at", form.get("read_at"), ZoneInfo(place.time_zone))
    if county is None or not form.get("tax_year"):
        asked.errors.setdefault("county", "the form names no county and tax year")
    digest = str(form.get("digest", ""))
    if problem := sha256_problem(digest):
        asked.errors["digest"] = problem
    if asked.errors:
        raise PageError(422, "; ".join(f"{k}: {v}" for k, v in asked.errors.items()))
    with svc.exclusive():
        now = svc.clock()
        svc.catch_up(TaxRoll.name)
        view = svc.runner.active(TaxRoll.name)
        try:
            with svc.runner.engine.connect() as conn:
                read = charges_reader(view, conn, municipality=municipality, tax_year=year,
                                      county=county)
                charges = check_reviewed(read, today=local_today(now, place), as_of=None,
                                         known_at=read_at, expected_sha256=digest)
            if all(c["certified"] for c in charges):  # certified already: no second seal
                return RedirectResponse(_roll_url(municipality, year, county), status_code=303)
            done = certify_listed(svc.cases, svc.store, charges, municipality=municipality,
                                  tax_year=year, county=county, actor=user.name, now=now)
        except ListChanged as exc:
            refused = changed_in_words(exc.changes)
        except NotCertifiable:
            refused = CANNOT_ALL
        else:
            refused = None
            svc.catch_up(TaxRoll.name)
    if refused:
        return _confirmation(request, svc, place, year, county, refused=refused)
    return RedirectResponse(_roll_url(municipality, year, county, certified=done.seal["id"]),
                            status_code=303)

"""The tax roll of a municipality: ``GET tax-roll`` (the list to certify, as CSV exactly
as ``abate tax-roll export`` writes it, or JSON with its totals; streamed, never held
whole; with the list's SHA-256), ``POST tax-roll/certify`` (the certification of
``abate tax-roll certify``: certify_charge on each listed charge, then a seal; refused with
409 ``list_changed`` when the list is not the one reviewed) and ``GET tax-roll/reconcile``
(payments after certification). The logic is in projections (tax_roll_file,
certification, reconciliation); these routes choose and stream."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from api.body import JsonBody
from api.params import PageLimit, PageOffset, bounded_day, bounded_instant
from api.deps import AllowedUser, GrantedMunicipality, ServicesDep
from api.consistency import NOT_YET, caught_up
from api.errors import ERROR_RESPONSES, WRITE_RESPONSES, ApiError, ErrorBody
from api.request_log import Export
from api.tax_roll_files import Format, list_answer, place_of, slug, tax_roll_list, today
from cases import filters
from cases.instant_bounds import TAX_YEAR_FIRST, TAX_YEAR_LAST
from cases.localtime import localized
from cases.page_sizes import DEFAULT_LIMIT
from cases.text_policy import County
from projections import TaxRoll
from projections.certification import (ListChanged, NotCertifiable, certify_listed,
                                       charges_reader, check_reviewed, sha256_problem)
from projections.reconciliation import reconciliation

router = APIRouter(tags=["tax roll"])

TaxYear = Annotated[int, Query(ge=TAX_YEAR_FIRST, le=TAX_YEAR_LAST, description="e.g. 2026")]


class TaxRollList(BaseModel):
    """A list and its totals (the summary ``abate tax-roll export`` writes beside the CSV)."""

    charges: list[dict[str, Any]]
    summary: dict[str, Any]


class Reconciliation(BaseModel):
    """A page of the payments after certification; the sums count every one of them."""

    municipality: str
    tax_year: int
    payments_after_certification: list[dict[str, Any]]
    total: int
    limit: int
    offset: int
    next_offset: int | None
    to_credit_or_refund_by_county: dict[str, str]


class CertifyRequest(BaseModel):
    """Which list to certify, and the list the clerk reviewed; who certifies is the
    signed-in user."""

    model_config = ConfigDict(extra="forbid")
    tax_year: int = Field(ge=TAX_YEAR_FIRST, le=TAX_YEAR_LAST)
    county: County
    as_of: dt.date | None = Field(None, description="the date the reviewed list was as of "
                                  "(its summary's as_of); default today")
    known_at: AwareDatetime | None = Field(None, description="when the reviewed list was "
                                           "produced (its summary's produced_at): lets a "
                                           "refusal name what changed since")
    expected_sha256: str | None = Field(None, min_length=64, max_length=64, description=(
        "the reviewed list's list_sha256 (X-Abate-List-SHA256 on its CSV)"))


class ListChangedBody(ErrorBody):
    """409 ``list_changed``: the list to certify is not the one reviewed; nothing recorded.
    ``changes`` is null when the reviewed list cannot be rebuilt (give ``known_at``).
    409 ``not_certifiable``: listed charges whose statute is not set (``not_certifiable``:
    case_ref, rule, rule_version, charge_type, problem); nothing recorded."""

    changes: list[dict[str, Any]] | None = None
    changed_charges: int | None = None
    reviewed_sha256: str | None = None
    current_sha256: str | None = None
    not_certifiable: list[dict[str, Any]] | None = None
    not_certifiable_charges: int | None = None


def _csv_content(description: str) -> dict[int | str, dict[str, Any]]:
    """The 200 answer's CSV form (its JSON form is the route's response model)."""
    return {200: {"description": description,
                  "content": {"text/csv": {"schema": {"type": "string"}}}}}


@router.get("/{municipality}/tax-roll", name="tax_roll.export", response_model=TaxRollList,
            dependencies=[Export, caught_up(TaxRoll.name)],
            responses={**ERROR_RESPONSES, **NOT_YET, **_csv_content(
                "the list: CSV (as `abate tax-roll export` writes it) or JSON with totals")},
            summary="The charges to certify to the county tax roll (CSV or JSON), streamed")
def export_tax_roll(svc: ServicesDep, municipality: GrantedMunicipality, tax_year: TaxYear,
                    county: Annotated[str | None, Query(max_length=32)] = None,
                    as_of: Annotated[dt.date | None, Query(
                        description="the business date the list is for (default today)")] = None,
                    known_at: Annotated[AwareDatetime | None, Query(
                        description="the list as the system knew it then")] = None,
                    format: Annotated[Format, Query(description="csv (default) or json")] = "csv",
                    excel: Annotated[bool, Query(
                        description="CSV: start with a UTF-8 byte-order mark for Excel")] = False
                    ) -> StreamingResponse:
    return tax_roll_list(svc, municipality, tax_year, county=county, as_of=as_of,
                         known_at=known_at, fmt=format, excel=excel)


@router.post("/{municipality}/tax-roll/certify", name="tax_roll.certify",
             response_model=TaxRollList,
             responses={**WRITE_RESPONSES, 409: {
                 "model": ListChangedBody, "description": "list_changed: the list is not the "
                 "one reviewed (as_of, known_at, expected_sha256); not_certifiable: a listed "
                 "charge's statute is not set; nothing was recorded"},
                 **_csv_content("the certified list with the seal taken after its "
                                "certifications")},
             summary="Certify the listed charges of a county (once each), seal, and answer "
                     "the certified list",
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": CertifyRequest.model_json_schema()}}}})
def certify_tax_roll(svc: ServicesDep, user: AllowedUser, municipality: GrantedMunicipality,
                     body: JsonBody,
                     format: Annotated[Format, Query(description="json (default) or csv")] = "json"
                     ) -> StreamingResponse:
    try:
        asked = CertifyRequest.model_validate(body)
    except ValidationError as exc:
        item = exc.errors()[0]
        field = ".".join(str(p) for p in item["loc"]) or "body"
        message = ("not a field of this request (who certifies is the signed-in user)"
                   if item["type"] == "extra_forbidden" else
                   item["msg"].removeprefix("Value error, "))
        raise ApiError(422, "invalid", f"field {field}: {message}", field) from None
    if asked.expected_sha256 is not None:
        asked.expected_sha256 = asked.expected_sha256.lower()
    if asked.expected_sha256 is not None and (problem := sha256_problem(asked.expected_sha256)):
        raise ApiError(422, "invalid", f"field expected_sha256: {problem}", "expected_sha256")
    bounded_day("as_of", asked.as_of)
    bounded_instant("known_at", asked.known_at)
    place = place_of(svc, municipality)
    asked.county = filters.county(place, asked.county, lambda name: f"field {name}")
    with svc.exclusive():
        now = svc.clock()
        svc.catch_up(TaxRoll.name)
        view = svc.runner.active(TaxRoll.name)
        with svc.runner.engine.connect() as conn:
            read = charges_reader(view, conn, municipality=municipality,
                                  tax_year=asked.tax_year, county=asked.county)
            try:
                listed = check_reviewed(read, today=today(svc, place), as_of=asked.as_of,
                                        known_at=asked.known_at,
                                        expected_sha256=asked.expected_sha256)
            except ListChanged as exc:
                raise ApiError(409, "list_changed", exc.detail, extra=exc.as_dict()) from None
        try:
            done = certify_listed(svc.cases, svc.store, listed, municipality=municipality,
                                  tax_year=asked.tax_year, county=asked.county,
                                  actor=user.name, now=now)
        except ListChanged as exc:
            raise ApiError(409, "list_changed", exc.detail, extra=exc.as_dict()) from None
        except NotCertifiable as exc:
            raise ApiError(409, "not_certifiable", exc.detail, extra=exc.as_dict()) from None
        svc.catch_up(TaxRoll.name)
    name = f"certified-{municipality}-{asked.tax_year}-{slug(asked.county)}"
    return list_answer(svc, place, format, filename=f"{name}.csv", tax_year=asked.tax_year,
                       county=asked.county, as_of=today(svc, place), known_at=None,
                       certified=True, newly_certified=done.newly_certified, seal=done.seal)


@router.get("/{municipality}/tax-roll/reconcile", name="tax_roll.reconcile",
            response_model=Reconciliation, responses={**ERROR_RESPONSES, **NOT_YET},
            dependencies=[caught_up(TaxRoll.name)],
            summary="Payments after certification, a page at a time, and what to credit or "
                    "refund per county")
def reconcile_tax_roll(svc: ServicesDep, municipality: GrantedMunicipality,
                       tax_year: TaxYear,
                       limit: PageLimit = DEFAULT_LIMIT,
                       offset: PageOffset = 0
                       ) -> dict[str, Any]:
    view = svc.runner.active(TaxRoll.name)
    with svc.runner.engine.connect() as conn:
        found = reconciliation(view, conn, municipality=municipality, tax_year=tax_year,
                               limit=limit, offset=offset)
    return localized(found, place_of(svc, municipality).time_zone)


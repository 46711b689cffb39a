"""Documents as PDF (docs/documents.md): the documents recorded on a case, one of them built
again from its recorded inputs (and checked against its recorded SHA-256), and the
certified tax-roll list for the county treasurer. Every download is an export in the
access log. Issuing a document is a command (``POST .../issue_notice_document`` ...)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response

from api.case_reads import zone
from api.consistency import NOT_YET, caught_up
from api.deps import AllowedUser, CaseDep, GrantedMunicipality, ServicesDep
from api.errors import ERROR_RESPONSES, ApiError, ErrorBody
from api.params import PageLimit, PageOffset
from api.pdf_answers import certified_list_answer, pdf_answer
from api.request_log import Export
from api.roles import ROUTE_ROLES
from cases.commands import MAX_POSITION
from cases.documents.issued import issued_documents, rebuild
from cases.history import load_events
from cases.instant_bounds import TAX_YEAR_FIRST, TAX_YEAR_LAST
from cases.localtime import localized
from cases.page_sizes import DEFAULT_LIMIT, page_of, paged
from projections import TaxRoll

router = APIRouter(tags=["documents"])

_PDF = {200: {"description": "the document (application/pdf, PDF/A-2B); its SHA-256 in "
                             "X-Abate-Document-SHA256",
              "content": {"application/pdf": {"schema": {"type": "string",
                                                         "format": "binary"}}}}}
_DIFFERS = {409: {"model": ErrorBody, "description": "built again, the document differs from "
                                                     "the recorded digest"}}


@router.get("/{municipality}/cases/{case_ref}/documents", name="cases.documents.list",
            response_model=dict[str, Any], responses=ERROR_RESPONSES,
            summary="The documents issued on the case, oldest first, a page at a time: kind, "
                    "when, by whom, SHA-256, the case version each was built from")
def list_documents(svc: ServicesDep, case: CaseDep,
                   limit: PageLimit = DEFAULT_LIMIT,
                   offset: PageOffset = 0) -> dict[str, Any]:
    events = load_events(svc.store, case.municipality, case.case_ref)
    every = issued_documents(events)
    return localized({"municipality": case.municipality, "case_ref": case.case_ref,
                      "documents": paged(every, limit, offset),
                      **page_of(len(every), limit, offset)}, zone(svc, case.municipality))


@router.get("/{municipality}/cases/{case_ref}/documents/{position}",
            name="cases.documents.get", dependencies=[Export],
            responses={**ERROR_RESPONSES, **_DIFFERS, **_PDF}, response_class=Response,
            summary="One issued document as PDF, built again from its recorded inputs and "
                    "checked against its recorded SHA-256 (409 if it differs)")
def get_document(svc: ServicesDep, user: AllowedUser, case: CaseDep,
                 position: Annotated[int, Path(ge=1, le=MAX_POSITION, description=(
                     "the document's position in the case (from the list)"))]) -> Response:
    events = load_events(svc.store, case.municipality, case.case_ref)
    found = next((e for e in events if e.originator_version == position), None)
    if getattr(found, "document", None) == "referral_packet" \
            and user.role not in ROUTE_ROLES["cases.referral"]:
        raise ApiError(403, "forbidden", f"the role {user.role} may not read a referral "
                       f"packet; who may: {', '.join(sorted(ROUTE_ROLES['cases.referral']))}")
    built = rebuild(events, position, svc.cases.catalog.rule_version,
                    zone(svc, case.municipality))
    if not built.matches:
        raise ApiError(409, "differs", (
            f"document {position} of case {case.case_ref} built again has SHA-256 "
            f"{built.sha256}, not the recorded {built.recorded_sha256} (recorded by "
            f"{built.recorded_generator}; this server runs {built.generator})"))
    return pdf_answer(built.content, built.file_name(), built.sha256)


@router.get("/{municipality}/tax-roll/certified-list.pdf", name="tax_roll.certified_pdf",
            dependencies=[Export, caught_up(TaxRoll.name)], response_class=Response,
            responses={**ERROR_RESPONSES, **NOT_YET, **_PDF},
            summary="The certified tax-roll list of a county and year as PDF, for the county "
                    "treasurer")
def certified_list(svc: ServicesDep, municipality: GrantedMunicipality,
                   tax_year: Annotated[int, Query(ge=TAX_YEAR_FIRST, le=TAX_YEAR_LAST,
                                                  description="e.g. 2026")],
                   county: Annotated[str, Query(max_length=32, description="e.g. Dane")]
                   ) -> Response:
    return certified_list_answer(svc, municipality, tax_year, county)

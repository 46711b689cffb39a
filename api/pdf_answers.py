"""A PDF as an HTTP answer (a download, its SHA-256 in ``X-Abate-Document-SHA256``), and the
certified tax-roll list built for it: the API's routes and the pages answer with these, so
a document is the same byte for byte at either door."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from fastapi.responses import Response

from api.params import one_line
from api.services import Services
from cases.documents.pdf import sha256
from projections import TaxRoll
from projections.tax_roll_document import certified_list_pdf


def pdf_answer(content: bytes, file_name: str, digest: str) -> Response:
    return Response(content, media_type="application/pdf", headers={
        "Content-Disposition": f'attachment; filename="{file_name}"',
        "X-Abate-Document-SHA256": digest})


def certified_list_answer(svc: Services, municipality: str, tax_year: int,
                          county: str) -> Response:
    """The certified list of a county and year, as of today, for the county treasurer."""
    place = svc.cases.catalog.municipality(municipality)
    county = place.county_named(one_line("county", county))
    today = svc.clock().astimezone(ZoneInfo(place.time_zone)).date()
    view = svc.runner.active(TaxRoll.name)
    with svc.runner.engine.connect() as conn:
        charges = list(view.iter_charges(conn, municipality=municipality, tax_year=tax_year,
                                         as_of=today,
                                         county=county))
    content = certified_list_pdf(place, charges, tax_year=tax_year, county=county)
    return pdf_answer(content, f"certified-{municipality}-{tax_year}-{county.lower()}.pdf",
                      sha256(content))

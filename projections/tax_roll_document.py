"""The certified tax-roll list as a PDF for the county treasurer: one county, one tax year,
every charge certified to that roll, its totals per charge type and statute, and who
certified them when.

Built from the certified charges of the tax-roll view (``TaxRoll.iter_charges``, the same
rows as the certified CSV) and the village's letterhead settings; dated by the latest
certification it lists, so the same certified charges always give the same bytes
(``cases.documents.pdf``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from cases import errors
from cases.documents import wording as say
from cases.documents.issued import letterhead
from cases.documents.pdf import INCH, Page
from cases.money import dollars
from cases.rules.catalog import Municipality


def certified_list_pdf(place: Municipality, charges: Iterable[Mapping[str, Any]], *,
                       tax_year: int, county: str) -> bytes:
    """The PDF of the charges certified to ``tax_year``'s roll in ``county`` (in list
    order); CaseNotFoundError when none is certified there yet."""
    rows = [c for c in charges if c["certified"]]
    if not rows:
        raise errors.CaseNotFoundError(
            f"no charge of {place.name} is certified to the {tax_year} tax roll of "
            f"{county} County yet: the {county} County list is printed once it is certified")
    tz = ZoneInfo(place.time_zone)
    dated = max(dt.datetime.fromisoformat(c["certified_at"]) for c in rows).astimezone(tz)
    name, address, phone = say.letterhead(letterhead(place))
    page = Page(title=f"Certified tax-roll list {tax_year}, {county} County", author=name,
                dated=dated, footer=f"{name} · certified list · {county} County {tax_year}")
    page.letterhead(name, address, phone)
    page.ln(3)
    page.paragraph(say.local_day(dated, tz))
    page.window_address([f"{county} County Treasurer", f"{county} County, Wisconsin"])
    page.heading(f"CERTIFIED LIST OF CHARGES FOR THE {tax_year} TAX ROLL", 14)
    page.paragraph(f"{name} certifies the following unpaid charges to be entered on the "
                   f"{tax_year} tax roll against the parcels below, in {county} County.")
    table = [(c["parcel_number"], f"{c['owner_name']}, {c['owner_mailing_address']}",
              c["site_address"], f"{c['charge_type'].replace('_', ' ')}, {c['statute']}",
              dollars(c["total"]), c["case_ref"]) for c in rows]
    page.ruled_table(("Parcel", "Owner and mailing address", "Site", "Charge and statute",
                "Amount", "Case"), table,
               (1.1 * INCH, 1.7 * INCH, 1.2 * INCH, 1.1 * INCH, 0.7 * INCH, 0.95 * INCH),
               ("LEFT", "LEFT", "LEFT", "LEFT", "RIGHT", "LEFT"), size=8)

    page.heading("Totals")
    groups: dict[tuple[str, str], list[Decimal]] = {}
    for charge in rows:
        groups.setdefault((charge["charge_type"], charge["statute"]), []).append(
            Decimal(charge["total"]))
    totals = [(kind.replace("_", " "), statute, str(len(amounts)), dollars(sum(amounts)))
              for (kind, statute), amounts in sorted(groups.items())]
    totals.append(("all charges", "", str(len(rows)),
                   dollars(sum(Decimal(c["total"]) for c in rows))))
    page.ruled_table(("Charge type", "Statute", "Charges", "Total"), totals,
               (1.6 * INCH, 3.0 * INCH, 0.9 * INCH, 1.25 * INCH),
               ("LEFT", "LEFT", "RIGHT", "RIGHT"), size=9)

    who = sorted({c["certified_by"] for c in rows if c.get("certified_by")})
    page.field("Certified by:", ", ".join(who) or "not recorded")
    page.field("Certified:", say.local_time(dated, tz) + " (the latest certification listed)")
    page.ln(10)
    page.paragraph("_______________________________________        Date: ________________")
    page.paragraph(f"Clerk, {name}", size=9.5)
    return page.output_bytes()

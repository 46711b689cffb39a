"""What was certified to each county's tax roll, per tax year: the charges and the sum
certified (the amount each certification recorded), for the charts page.

Read from the tax-roll view's versions: a charge's certification for a year is carried by
every version after it, so each (case, year) is counted once, in the county of its newest
version (a parcel correction moves it)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from projections.tax_roll import TaxRoll


def certified_totals(view: TaxRoll, conn: sa.Connection, *, municipality: str
                     ) -> list[dict[str, Any]]:
    """``[{"tax_year", "county", "charges", "amount"}]`` by year, then county."""
    v = view.versions.c
    query = (sa.select(v.case_id, v.certified_year, v.county, v.certified_amount)
             .where(v.municipality == municipality, v.certified_year.is_not(None))
             .order_by(v.case_id, v.position))
    latest: dict[tuple[str, int], tuple[str, Decimal]] = {}
    for case_id, year, county, amount in conn.execute(query):
        latest[(case_id, year)] = (county, Decimal(amount or "0"))
    sums: dict[tuple[int, str], list[Any]] = {}
    for (_, year), (county, amount) in latest.items():
        entry = sums.setdefault((year, county), [0, Decimal("0.00")])
        entry[0] += 1
        entry[1] += amount
    return [{"tax_year": year, "county": county, "charges": n, "amount": str(total)}
            for (year, county), (n, total) in sorted(sums.items())]

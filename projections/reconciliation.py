"""Reconciling a certified roll: payments taken after certification, which the county
credits or refunds, listed a page at a time with their sum per county (``abate tax-roll reconcile`` and
``GET tax-roll/reconcile``)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from projections.paging import DEFAULT_LIMIT
from projections.tax_roll import TaxRoll


def reconciliation(view: TaxRoll, conn: sa.Connection, *, municipality: str, tax_year: int,
                   limit: int = DEFAULT_LIMIT, offset: int = 0) -> dict[str, Any]:
    """A page of the late payments (``limit`` from ``offset``) and what to credit or refund
    per county, counting every one of them (times in UTC: the caller shows them in the
    municipality's zone)."""
    found = view.late_payments(conn, municipality=municipality, tax_year=tax_year,
                               limit=limit, offset=offset)
    sums = view.late_payment_sums(conn, municipality=municipality, tax_year=tax_year)
    return {"municipality": municipality, "tax_year": tax_year,
            "payments_after_certification": found.rows,
            "total": found.total, "limit": limit, "offset": offset,
            "next_offset": found.next_offset,
            "to_credit_or_refund_by_county": {k: str(v) for k, v in sums.items()}}

"""Reconciling a certified roll: payments taken after certification, which the county
credits or refunds, listed with their sum per county (``abate tax-roll reconcile`` and
``GET tax-roll/reconcile``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from projections.tax_roll import TaxRoll


def reconciliation(view: TaxRoll, conn: sa.Connection, *, municipality: str,
                   tax_year: int) -> dict[str, Any]:
    """The late payments and what to credit or refund per county (times in UTC: the
    caller shows them in the municipality's zone)."""
    payments = view.late_payments(conn, municipality=municipality, tax_year=tax_year)
    by_county: dict[str, Decimal] = {}
    for payment in payments:
        by_county[payment["county"]] = (by_county.get(payment["county"], Decimal("0.00"))
                                        + Decimal(payment["amount"]))
    return {"municipality": municipality, "tax_year": tax_year,
            "payments_after_certification": payments,
            "to_credit_or_refund_by_county": {k: str(v) for k, v in by_county.items()}}

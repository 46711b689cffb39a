"""Money: Decimal with two places, never float."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from cases.errors import InvalidAmountError

CENT = Decimal("0.01")


def money(value: Decimal) -> Decimal:
    return value.quantize(CENT)


def parse_amount(value: object, field: str) -> Decimal:
    """A positive amount with at most two decimals, from a string or Decimal (not a float)."""
    if isinstance(value, bool) or isinstance(value, float):
        raise InvalidAmountError(
            f"{field}: give money as a string like \"125.00\", not a binary float ({value!r})")
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise InvalidAmountError(f"{field}: {value!r} is not an amount") from None
    if not amount.is_finite() or amount <= 0:
        raise InvalidAmountError(f"{field}: {value} must be positive")
    if amount != amount.quantize(CENT):
        raise InvalidAmountError(f"{field}: {value} has more than two decimals")
    return money(amount)

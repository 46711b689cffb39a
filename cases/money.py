"""Money: Decimal with two places, never float, and never a number no village could bill.

Amounts arrive as text (``"125.00"``) or as JSON numbers read as ``Decimal``. Before any
arithmetic an amount must be finite and have at most ``MAX_WHOLE_DIGITS`` digits before
the decimal point (so rounding to cents can never overflow Decimal's precision: ``1e400``
and a number with 5,000 digits are refused by name, not by a traceback). Each
municipality also sets the largest amount it accepts (catalog ``max_amount``).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from cases.errors import InvalidAmountError

CENT = Decimal("0.01")
ZERO = Decimal("0.00")
# A bound on input, not a legal value: 15 whole digits is a trillion dollars and more.
MAX_WHOLE_DIGITS = 15
MAX_TEXT = 32  # characters of an amount written as text


def money(value: Decimal) -> Decimal:
    return value.quantize(CENT)


def amount_problem(value: object) -> str | None:
    """Why ``value`` cannot be an amount of money at all (None when it can be read)."""
    if isinstance(value, bool):
        return f"give money as a string like \"125.00\", not {str(value).lower()}"
    if isinstance(value, float):
        return f"give money as a string like \"125.00\", not a binary float ({value!r})"
    if isinstance(value, str) and len(value.strip()) > MAX_TEXT:
        return f"an amount is at most {MAX_TEXT} characters"
    if not isinstance(value, (str, int, Decimal)):
        return "give money as a string like \"125.00\""
    try:
        amount = Decimal(value.strip() if isinstance(value, str) else value)
    except (InvalidOperation, ValueError):
        return f"{value!r} is not an amount"
    if not amount.is_finite():
        return f"{value} is not a finite amount"
    if amount and amount.adjusted() >= MAX_WHOLE_DIGITS:
        return f"{_short(amount)} has more than {MAX_WHOLE_DIGITS} digits before the decimal point"
    return None


def to_decimal(value: object, field: str) -> Decimal:
    """``value`` as a Decimal that is safe to round, or InvalidAmountError naming the field."""
    problem = amount_problem(value)
    if problem:
        raise InvalidAmountError(f"field {field}: {problem}")
    return Decimal(value.strip() if isinstance(value, str) else value)  # type: ignore[arg-type]


def parse_amount(value: object, field: str, maximum: Decimal | None = None) -> Decimal:
    """A positive amount with at most two decimals (and at most ``maximum``)."""
    amount = to_decimal(value, field)
    if amount <= 0:
        raise InvalidAmountError(f"field {field}: {_short(amount)} must be positive")
    if amount != amount.quantize(CENT):
        raise InvalidAmountError(f"field {field}: {_short(amount)} has more than two decimals")
    if maximum is not None and amount > maximum:
        raise InvalidAmountError(
            f"field {field}: {money(amount)} is more than the largest amount this municipality "
            f"accepts ({maximum}, catalog setting max_amount)")
    return money(amount)


def _short(amount: Decimal) -> str:
    text = str(amount)
    return text if len(text) <= 24 else f"{text[:12]}…({len(amount.as_tuple().digits)} digits)"


def dollars(value: object) -> str:
    """``1234.5`` -> "$1,234.50": an amount as people read it (thousands separated, the
    sign before the dollar sign). Anything that is not an amount ("not set") is shown as
    it is, and nothing as "-"."""
    if value is None or value == "":
        return "-"
    try:
        amount = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return str(value)
    if not amount.is_finite():
        return str(value)
    return f"{'-' if amount < 0 else ''}${abs(amount):,.2f}"

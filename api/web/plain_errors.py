"""A refused command's errors in a clerk's words, for the pages (the one place they are
translated): "enter the owner", "up to 4,000 characters", a parcel number shown by an
example, "an amount above $0.00", a future time in the village's time. The API keeps its
technical ``detail`` (docs/api.md); a page shows this instead, in the same
``field X: ...; field Y: ...`` shape its forms place beside their fields."""

from __future__ import annotations

import re
from typing import Any

from cases.errors import AbateError
from cases.localtime import table_time
from cases.money import dollars
from cases.rules.parcel_formats import parcel_example

# Patterns of the command model (cases/commands.py) as people read them.
PATTERN_WORDS = {
    r"^[A-Za-z0-9][A-Za-z0-9._/\-]{0,63}$":
        "letters, digits and . _ / - only, starting with a letter or digit, up to 64 characters",
}


# Problems that say something a field's own request would hide (its length, its characters).
_OWN_WORDS = frozenset({"string_too_long", "string_pattern_mismatch", "value_error", "too_long"})


def plain_problem(item: dict[str, Any], labels: dict[str, str],
                  asks: dict[str, str] | None = None) -> str:
    """One pydantic error of a command's field as the page says it; ``asks`` gives, for a
    field, what its form asks for ("choose a role"), said for a missing, empty or
    out-of-range value of it."""
    kind, ctx = item["type"], item.get("ctx") or {}
    where = ".".join(str(p) for p in item["loc"])
    asked = (asks or {}).get(where.split(".")[0])
    if asked and kind not in _OWN_WORDS:
        return asked
    label = labels.get(where) or labels.get(where.split(".")[0]) \
        or where.split(".")[-1].replace("_", " ")
    if kind == "missing" or item.get("input") == "" \
            or (kind == "string_too_short" and ctx.get("min_length") == 1):
        return f"required: enter {label[0].lower() + label[1:]}"
    if kind == "string_too_long":
        return (f"up to {ctx['max_length']:,} characters (this has "
                f"{len(str(item.get('input', ''))):,})")
    if kind == "string_pattern_mismatch":
        return PATTERN_WORDS.get(ctx.get("pattern", ""), "not in the form this field takes")
    if kind == "too_short" and where.split(".")[0] == "costs":
        return "add at least one cost line"
    if kind == "too_short":
        return f"add at least {ctx.get('min_length', 1)}"
    if kind == "too_long":
        return f"at most {ctx.get('max_length')} entries"
    if kind.startswith("int_"):
        return "a whole number"
    if kind.startswith("decimal_"):
        return "an amount like $1,200.50"
    if kind in ("greater_than", "greater_than_equal") and "amount" in where:
        return f"an amount above {dollars(ctx.get('gt', ctx.get('ge', 0)))}"
    if kind == "greater_than":
        return f"a number above {ctx.get('gt')}"
    if kind == "greater_than_equal":
        return f"a number of at least {ctx.get('ge')}"
    if kind == "less_than":
        return f"a number below {ctx.get('lt')}"
    if kind == "less_than_equal":
        return f"a number of at most {ctx.get('le'):,}" if isinstance(ctx.get("le"), int) \
            else f"at most {ctx.get('le')}"
    if kind.startswith(("datetime_", "timezone_")):
        return "a date and time, like 2026-12-05 14:30"
    if kind.startswith("date_"):
        return "a date, like 2026-12-05"
    if kind == "literal_error":
        return "choose one of the offered values"
    if kind.startswith("bool_"):
        return "yes or no (1 or 0)"
    return str(item["msg"]).removeprefix("Value error, ")


# The domain's refusals of an amount (cases.money, cases.domain) and how a page says them.
_AMOUNT = re.compile(r"^(?:field )?"
                     r"(?P<field>amount|forfeiture_amount|costs\.\d+\.amount): "
                     r"(?P<value>\S+) (?P<why>must be positive|has more than two decimals|"
                     r"is more than the largest amount this municipality accepts "
                     r"\((?P<most>[^,]+), catalog setting max_amount\))$")
_PAYMENT = re.compile(r"^payment (\S+) exceeds the balance (\S+)$")
_PARCEL = re.compile(r"^(?:field (?:changes\.)?parcel: )?parcel number '.*' does not match the (?P<county>.+) "
                     r"County format (?P<pattern>.+?)(?: \(like .*\))?$")


def _as_typed(value: str, why: str) -> str:
    """The amount in the refusal as the person typed it: in dollars, but never rounded (an
    amount refused for its third decimal shown as ``$6.00`` would contradict the message)."""
    if why.startswith("has"):
        return f"-${value[1:]}" if value.startswith("-") else f"${value}"
    return dollars(value)


def _domain_words(part: str) -> str:
    """``field costs.0.amount: -120 must be positive`` -> ``field costs.0.amount: an amount
    above $0.00``; a parcel number by an example, not its pattern; anything else unchanged."""
    found = _AMOUNT.match(part)
    if found:
        field = found["field"]
        why = found["why"]
        words = ("an amount above $0.00" if why.startswith("must")
                 else "dollars and cents: at most two decimals" if why.startswith("has")
                 else f"at most {dollars(found['most'])}, the largest amount the village "
                      "accepts (its setting)")
        return f"field {field}: {words} ({_as_typed(found['value'], why)} was typed)"
    paid = _PAYMENT.match(part)
    if paid:
        return (f"field amount: {dollars(paid[1])} is more than the balance "
                f"{dollars(paid[2])}")
    parcel = _PARCEL.match(part)
    if parcel:
        example = parcel_example(parcel["pattern"])
        return (f"field parcel: parcel number not as {parcel['county']} County writes it"
                + (f" (like {example})" if example else ""))
    return part


def plain_detail(exc: AbateError, detail: str, labels: dict[str, str], tz: str) -> str:
    """``detail`` (the API's words for ``exc``) as the page says it: each field's problem in
    a clerk's words, the technical detail left to the API and the CLI."""
    problems = getattr(exc, "problems", None)
    if problems:
        return "; ".join(f"field {'.'.join(str(p) for p in item['loc']) or '(command)'}: "
                         f"{plain_problem(item, labels)}" for item in problems)
    limit = getattr(exc, "limit", None)
    if limit is not None:  # the real clock's now: the tolerance for clocks is not the user's
        field = getattr(exc, "field", "at")
        now = getattr(exc, "now", None) or limit
        return (f"field {field}: cannot be later than now ({table_time(now, tz)}); "
                "a time in the future is not accepted")
    return "; ".join(_domain_words(part) for part in detail.split("; "))


def plain_query(items: list[dict[str, Any]]) -> str:
    """A page address's bad query parameters in words ("per_page: a whole number")."""
    return "; ".join(f"{'.'.join(str(p) for p in item['loc'][1:])}: "
                     f"{plain_problem({**item, 'loc': item['loc'][1:]}, {})}" for item in items)

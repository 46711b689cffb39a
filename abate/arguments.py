"""Argument types the commands share: one policy for what a person may type in an option."""

from __future__ import annotations

import argparse
import importlib
import re
from typing import Any

from cases.instant_bounds import TAX_YEAR_FIRST, TAX_YEAR_LAST
from cases.page_sizes import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET


def positive(text: str) -> int:
    """A whole number of at least 1 (sizes, counts, days)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def tax_year(text: str) -> int:
    """A tax year a charge may be certified for (``cases.instant_bounds``), so a year typed
    wrong is refused before a list is read or a seal recorded: --tax-year 1850 certified an
    empty list, 99999 ended in a traceback."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a year such as 2026, got {text!r}") from None
    if not TAX_YEAR_FIRST <= value <= TAX_YEAR_LAST:
        raise argparse.ArgumentTypeError(
            f"a tax year from {TAX_YEAR_FIRST} to {TAX_YEAR_LAST}, got {value}")
    return value


def policed(kind: str, what: str) -> Any:
    """An argparse type for a text option under the same policy as the journal's fields
    (``kind`` names one in cases/text_policy.py): a blank ``--actor ""`` is refused like a
    blank journal actor. The policy (pydantic) is imported only when an option is given."""

    def check(text: str) -> str:
        from pydantic import TypeAdapter, ValidationError

        from cases import text_policy

        try:
            return TypeAdapter(getattr(text_policy, kind)).validate_python(text)
        except ValidationError as exc:
            raise argparse.ArgumentTypeError(
                f"{what}: {exc.errors()[0]['msg']}") from None
    return check


def command(module: str, name: str) -> Any:
    """A command's function, imported when the command runs: building the parser for
    ``abate --help`` imports no command's module (and none of SQLAlchemy or the domain)."""

    def run(args: argparse.Namespace, store: Any) -> int:
        return getattr(importlib.import_module(module), name)(args, store)

    run.__qualname__ = run.__name__ = name
    return run


def page_options(p: argparse.ArgumentParser, what: str) -> None:
    """``--limit``/``--offset``: a list comes in pages (projections.paging); the table
    says where the next page starts, the JSON says it as ``next_offset``."""
    def within(low: int, high: int, name: str) -> Any:
        def number(value: str) -> int:
            if not re.fullmatch(r"\d{1,9}", value) or not low <= int(value) <= high:
                raise argparse.ArgumentTypeError(
                    f"{value[:20]!r} is not a whole number from {low} to {high:,} ({name})")
            return int(value)
        return number

    p.add_argument("--limit", type=within(1, MAX_LIMIT, f"{what} a page"), default=DEFAULT_LIMIT,
                   help=f"at most this many {what} (default {DEFAULT_LIMIT}, at most {MAX_LIMIT})")
    p.add_argument("--offset", type=within(0, MAX_OFFSET, f"{what} to skip"), default=0,
                   help="skip this many (the next page's offset, which the output gives)")

"""Argument types the commands share: one policy for what a person may type in an option."""

from __future__ import annotations

import argparse
from typing import Any


def positive(text: str) -> int:
    """A whole number of at least 1 (sizes, counts, days)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def policed(kind: Any, what: str) -> Any:
    """An argparse type for a text option under the same policy as the journal's fields
    (cases/text_policy.py): a blank ``--actor ""`` is refused like a blank journal actor."""
    from pydantic import TypeAdapter, ValidationError

    adapter = TypeAdapter(kind)

    def check(text: str) -> str:
        try:
            return adapter.validate_python(text)
        except ValidationError as exc:
            raise argparse.ArgumentTypeError(
                f"{what}: {exc.errors()[0]['msg']}") from None
    return check

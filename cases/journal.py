"""One line of a command journal, parsed with bounds that keep a hostile line harmless.

A journal line is one JSON object. Before it reaches the command models it must be
short enough (``max_line_bytes`` of UTF-8), shallow enough (``max_depth`` levels of
objects and lists; Python's JSON parser recurses and a deeply nested line would end
in a RecursionError), free of integers too long for Python's int parser (it raises
ValueError past 4,300 digits) and of the ``Infinity`` / ``NaN`` constants, which are
not JSON and have no meaning as an amount or a date. Numbers with a fraction or an
exponent are read as ``Decimal``, never as binary floats.

Pure: no store, no settings read here (the caller passes the bounds), so a streaming
import can call it line by line.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from cases.errors import UnreadableLineError

# A JSON string (with its escapes): removed before brackets are counted, so a "[" inside
# a text does not count as nesting.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


class _RepeatedName(ValueError):
    """A name given twice in one JSON object (the parser would keep the last silently)."""


def _object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object of ``pairs``, refusing a name given twice: ``{"amount": "100.00",
    "amount": "1.00"}`` is a typing or merging mistake, and taking either value would
    record an amount nobody checked."""
    data = dict(pairs)
    if len(data) < len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise _RepeatedName(name)
            seen.add(name)
    return data


def _shown(name: str, limit: int = 60) -> str:
    """A name from the input, quoted for a message: escapes for control characters, cut
    at ``limit`` characters."""
    return repr(name[:limit]) + ("..." if len(name) > limit else "")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (give amounts as text, like \"125.00\")")


def nesting_depth(text: str) -> int:
    """The deepest nesting of objects and lists in a JSON text (0 for a scalar)."""
    depth = deepest = 0
    for bracket in _BRACKET.finditer(_STRING.sub('""', text)):
        if bracket.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def parse_journal_line(number: int, text: str, max_line_bytes: int,
                       max_depth: int) -> dict[str, Any] | None:
    """The JSON object on line ``number``, or None for a blank or comment line.

    Raises ``UnreadableLineError(number, reason)`` for a line that is too long, nested too
    deeply, not JSON, holds an integer too long to read or a non-finite constant, gives a
    field twice in one object, or is not an object.
    """
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > max_line_bytes:
        raise UnreadableLineError(number, f"the line is {size:,} bytes, longer than the limit of "
                                   f"{max_line_bytes:,} (ABATE_JOURNAL_MAX_LINE_BYTES)")
    depth = nesting_depth(stripped)
    if depth > max_depth:
        raise UnreadableLineError(number, f"the JSON is nested {depth} levels deep, deeper than the "
                                   f"limit of {max_depth} (ABATE_JOURNAL_MAX_DEPTH)")
    try:
        data = json.loads(stripped, parse_float=Decimal, parse_constant=_refuse_constant,
                          object_pairs_hook=_object_without_repeats)
    except _RepeatedName as exc:
        raise UnreadableLineError(number, f"the field {_shown(str(exc))} is given twice in one "
                                          "object: give each field once") from None
    except json.JSONDecodeError as exc:
        raise UnreadableLineError(number, f"not valid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise UnreadableLineError(number, "the JSON is nested too deeply to read") from None
    except ValueError as exc:  # an integer past Python's digit limit, Infinity, NaN
        reason = str(exc)
        if "integer string conversion" in reason:
            reason = "a number in the line has too many digits to read"
        raise UnreadableLineError(number, f"not a usable number: {reason}") from None
    if not isinstance(data, dict):
        raise UnreadableLineError(number, "a command must be a JSON object")
    return data

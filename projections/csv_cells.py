"""Every CSV Abate writes goes through here, so no cell can run in a spreadsheet.

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-`` or ``@`` as a formula, and
some also after a leading tab or carriage return (OWASP, "CSV Injection"). Text from a
journal (an owner's name, an address) could begin that way, so such a cell gets a single
quote in front (``'=HYPERLINK(...)``): the text is kept whole and a spreadsheet shows it as
text. Abate's own numbers (amounts, years, versions) are exempt by column, but only when the
value really is a plain number (``-12.50``); anything else in those columns is neutralised too.

A record that an older Abate accepted before the input policy (a NUL or another control
character in a name) must not stop the export or reach the file raw: each such character is
written as a visible escape (``\\x00``, ``\\x1b``), and the export goes on. Newline and tab
inside free text are kept (the CSV quotes the cell).

defusedcsv (PyPI) was considered: it leaves a leading tab or carriage return alone, changes
the text (``|`` becomes ``\\|``) and does nothing about control characters, so this module is
the one place that does it, on the standard ``csv`` writer.
"""

from __future__ import annotations

import csv
import operator
import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import IO, Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_FIRST = frozenset(FORMULA_STARTS)
_PLAIN_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# In the cells of many rows joined by NUL (and one NUL in front): a cell that may start a
# formula, a control character other than NUL (a NUL in a cell shows in the count).
_CELL_START = re.compile("\x00[" + re.escape("".join(FORMULA_STARTS)) + "]")
_CONTROL_BUT_NUL = re.compile(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]")


def visible_controls(text: str) -> str:
    """Control characters (other than tab, newline, carriage return) as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def safe_cell(value: Any, numeric: bool = False) -> str:
    """The text of one cell: never a formula, never a raw control character."""
    if value is None:
        return ""
    text = visible_controls(str(value))
    if numeric and _PLAIN_NUMBER.fullmatch(text):
        return text
    if text.startswith(FORMULA_STARTS):
        return "'" + text
    return text


class SafeCsvWriter:
    """A ``csv.DictWriter`` look-alike whose every cell passes through ``safe_cell``."""

    def __init__(self, out: IO[str], columns: list[str], numeric: Iterable[str] = (),
                 formatted: Iterable[str] = ()):
        """``numeric``: columns whose plain numbers are left as they are. ``formatted``:
        columns whose every cell the caller formats itself from a number or a date (an
        ``int``, a ``Decimal``'s text, an ISO date, or empty): a plain number in a ``numeric``
        column, else text that begins with a digit, never a control character. As
        ``safe_cell`` leaves such a cell unchanged, ``writerows_values`` leaves them out of
        its check (they are half of a tax-roll row's cells). Any other column may hold text
        a person typed."""
        self.columns = list(columns)
        self.numeric = set(numeric)
        self._numeric_flags = [c in self.numeric for c in self.columns]
        self._writer = csv.writer(out, lineterminator="\n")
        formatted = set(formatted)
        checked = [i for i, c in enumerate(self.columns) if c not in formatted]
        # The cells of a row that the batch check looks at, as a tuple (None: all of them).
        self._checked_cells = (operator.itemgetter(*checked)
                               if 1 < len(checked) < len(self.columns) else None)
        self._checked_count = len(checked) if self._checked_cells else len(self.columns)

    def writeheader(self) -> None:
        self._writer.writerow([safe_cell(c) for c in self.columns])

    def writerow(self, row: Mapping[str, Any]) -> None:
        self.writerow_values(list(map(row.get, self.columns)))

    def writerow_values(self, values: Sequence[Any]) -> None:
        """``safe_cell`` on every cell of a row given in column order, done row by row: one
        search for control characters in the whole row, and a look at each cell's first
        character."""
        texts = ["" if v is None else v if type(v) is str else str(v) for v in values]
        if _CONTROL.search("".join(texts)):
            texts = [visible_controls(t) for t in texts]
        self._writer.writerow([
            "'" + t if t[:1] in _FORMULA_FIRST and not (numeric and _PLAIN_NUMBER.fullmatch(t))
            else t for t, numeric in zip(texts, self._numeric_flags)])

    def writerows_values(self, rows: Sequence[Sequence[Any]]) -> None:
        """Many rows given in column order, checked at once: when no cell of any can start a
        formula or hold a control character, they go to ``csv.writer`` as they are (which
        writes None as "" and a number as ``str`` gives it, as ``safe_cell`` does); else
        each row as ``writerow_values`` writes it. (100,000 rows in a fraction of a second.)
        Only the cells that may hold typed text are looked at (``formatted``: the others)."""
        cells = map(self._checked_cells, rows) if self._checked_cells else rows
        joined = "\x00" + "\x00".join(map(str, chain.from_iterable(cells)))
        if (joined.count("\x00") == (self._checked_count * len(rows) if self._checked_cells
                                      else sum(map(len, rows)))
                and not _CELL_START.search(joined)
                and not _CONTROL_BUT_NUL.search(joined)):
            self._writer.writerows(rows)
            return
        for row in rows:
            self.writerow_values(row)

    def writerows(self, rows: Iterable[Mapping[str, Any]]) -> None:
        for row in rows:
            self.writerow(row)

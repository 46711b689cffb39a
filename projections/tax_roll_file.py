"""The tax-roll files handed to the county: a plain CSV of charges and its summary.

The CSV holds one row per charge and nothing else (no comment or totals line), so any CSV
reader and the county's software take it as it is. What a person checks the list against
(how many charges, the sums per charge type and statute, who certified it and when, the
CSV's SHA-256) is in the summary, a JSON file written beside the CSV (``X.csv`` ->
``X.summary.json``). The municipality column carries the village's name as the county knows
it (``Village of Belleville``, from the rules catalog), not Abate's code for it.

A certification's seal (id, position, digest) is added by passing ``seal``: the CSV then
ends with the columns ``seal_id, seal_position, seal_digest`` and the summary with ``seal``.
"""

from __future__ import annotations

import codecs
import datetime as dt
import hashlib
import io
import operator
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from itertools import islice
from typing import TYPE_CHECKING, Any

from cases.localtime import localized
from cases.rules.files import NOT_SET
from projections.certification import not_certifiable
from projections.csv_cells import SafeCsvWriter
from projections.tax_roll import (CSV_COLUMNS, CSV_WIDTH, LISTED_COLUMNS, listed_charge,
                                  listed_row)

if TYPE_CHECKING:
    from cases.rules.catalog import Municipality
    from cases.rules.places import Place

SUMMARY_FORMAT = "abate-tax-roll-summary/1"
SEAL_COLUMNS = ["seal_id", "seal_position", "seal_digest"]
# Written by Abate itself: plain numbers are left as numbers (see projections.csv_cells).
NUMERIC_COLUMNS = {"tax_year", "principal", "interest", "total", "rule_version", "seal_position"}
# Cells Abate formats itself (projections.csv_cells, ``formatted``): the year and the rule's
# version are integers (the list's argument and an integer column); the amounts are a
# ``Decimal``'s text (TaxRoll.iter_row_batches: a positive principal and total, interest from
# ``money``) or empty; the dates are ``date.isoformat()`` (``projections.database.day``, the
# only writer of the view's date columns) or empty; the seal's position an integer.
FORMATTED_COLUMNS = NUMERIC_COLUMNS | {"incurred_on", "billed_on", "due_on", "eligible_on"}
_CHUNK_ROWS = 500  # CSV rows encoded and handed on at a time
# Where ListTotals finds what it adds up in a row of LISTED_COLUMNS.
(_COUNTY, _CHARGE_TYPE, _STATUTE, _PRINCIPAL, _INTEREST, _TOTAL, _CERTIFIED, _CERTIFIED_AT,
 _CERTIFIED_BY) = map(LISTED_COLUMNS.index, (
     "county", "charge_type", "statute", "principal", "interest", "total", "certified",
     "certified_at", "certified_by"))
_MUNICIPALITY = CSV_COLUMNS.index("municipality")


def summary_path(csv_path: str) -> str:
    """``dane-2026.csv`` -> ``dane-2026.summary.json`` (any other name gets the suffix added)."""
    stem = csv_path[:-4] if csv_path.lower().endswith(".csv") else csv_path
    return f"{stem}.summary.json"


def csv_columns(seal: Mapping[str, Any] | None = None) -> list[str]:
    return CSV_COLUMNS + (SEAL_COLUMNS if seal else [])


class _Sums:
    """How many charges and what they add up to (interest only once a rule sets a rate)."""

    __slots__ = ("charges", "principal", "interest", "total", "with_interest")

    def __init__(self) -> None:
        self.charges = 0
        self.principal = self.interest = self.total = Decimal("0.00")
        self.with_interest = False

    def add(self, principal: Decimal, interest: Decimal | None, total: Decimal,
            times: int = 1) -> None:
        self.charges += times
        self.principal += principal * times
        self.total += total * times
        if interest is not None:
            self.interest += interest * times
            self.with_interest = True

    def add_sums(self, other: "_Sums") -> None:
        self.charges += other.charges
        self.principal += other.principal
        self.interest += other.interest
        self.total += other.total
        self.with_interest = self.with_interest or other.with_interest

    def as_dict(self) -> dict[str, Any]:
        # Interest stays null while no rule of the list sets a rate (the ordinances state none).
        return {"charges": self.charges, "principal": str(self.principal),
                "interest": str(self.interest) if self.with_interest else None,
                "total": str(self.total)}


# What a charge adds to a list's sums: (charge type, statute, county) and its three amounts
# as listed (text). Charges of a list share few of these, so each is counted, and turned
# into numbers once, when the totals are read.
_SUMMED = operator.itemgetter(_CHARGE_TYPE, _STATUTE, _COUNTY, _PRINCIPAL, _INTEREST, _TOTAL)


class ListTotals:
    """A list's totals, taken as its charges stream past (the list is never held whole):
    the sums overall, per charge type and statute, per county, and who certified when."""

    def __init__(self) -> None:
        self._counted: Counter[tuple[str, ...]] = Counter()
        self.certified = 0
        self.certified_by: set[str] = set()
        self.first_certified_at: str | None = None
        self.last_certified_at: str | None = None
        self.not_certifiable: list[dict[str, Any]] = []  # not yet certified, and cannot be

    @classmethod
    def of(cls, charges: Iterable[Mapping[str, Any]]) -> "ListTotals":
        totals = cls()
        totals.add_rows([listed_row(charge) for charge in charges])
        return totals

    def add(self, charge: Mapping[str, Any]) -> None:
        self.add_rows([listed_row(charge)])

    def add_rows(self, rows: list[tuple[Any, ...]]) -> None:
        """Charges as rows of ``LISTED_COLUMNS`` (``TaxRoll.iter_row_batches``)."""
        self._counted.update(map(_SUMMED, rows))
        for row in rows:
            if row[_CERTIFIED]:
                self._add_certified(row)
            elif row[_STATUTE] == NOT_SET:  # the rare charge it concerns
                self.not_certifiable += not_certifiable([listed_charge(row)])

    def _add_certified(self, row: tuple[Any, ...]) -> None:
        self.certified += 1
        if row[_CERTIFIED_BY]:
            self.certified_by.add(row[_CERTIFIED_BY])
        at = row[_CERTIFIED_AT]
        if at:
            if self.first_certified_at is None or at < self.first_certified_at:
                self.first_certified_at = at
            if self.last_certified_at is None or at > self.last_certified_at:
                self.last_certified_at = at

    def _summed(self, by: Any) -> dict[Any, _Sums]:
        sums: dict[Any, _Sums] = {}
        for (*key, principal, interest, total), times in self._counted.items():
            sums.setdefault(by(tuple(key)), _Sums()).add(
                Decimal(principal), Decimal(interest) if interest != "" else None,
                Decimal(total), times)
        return sums

    @property
    def all(self) -> _Sums:
        return self._summed(lambda key: None).get(None) or _Sums()

    @property
    def groups(self) -> dict[tuple[str, str], _Sums]:
        """Per (charge type, statute)."""
        return self._summed(lambda key: key[:2])

    @property
    def counties(self) -> dict[str, _Sums]:
        return self._summed(lambda key: key[2])

    def counted(self, charges: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The charges, passed on unchanged, each added to these totals on its way."""
        for charge in charges:
            self.add(charge)
            yield charge

    def counted_batches(self, batches: Iterable[list[tuple[Any, ...]]]
                        ) -> Iterator[list[tuple[Any, ...]]]:
        """Batches of rows of ``LISTED_COLUMNS``, passed on unchanged, each added on its way."""
        for batch in batches:
            self.add_rows(batch)
            yield batch


def csv_chunks(charges: Iterable[Mapping[str, Any]], place: Municipality | Place, *,
               seal: Mapping[str, Any] | None = None, excel: bool = False) -> Iterator[bytes]:
    """The CSV as UTF-8 bytes, a few hundred rows at a time: a header and one row per
    charge, every cell safe to open in a spreadsheet; with ``excel`` a byte-order mark
    first, so Excel on Windows reads ``§`` right."""
    return csv_row_chunks(map(listed_row, charges), place, seal=seal, excel=excel)


def csv_row_chunks(rows: Iterable[tuple[Any, ...]], place: Municipality | Place, *,
                   seal: Mapping[str, Any] | None = None,
                   excel: bool = False) -> Iterator[bytes]:
    """``csv_chunks`` of rows of ``LISTED_COLUMNS`` (``TaxRoll.iter_rows``)."""
    rows = iter(rows)
    return csv_batch_chunks(iter(lambda: list(islice(rows, _CHUNK_ROWS)), []), place,
                            seal=seal, excel=excel)


def csv_batch_chunks(batches: Iterable[list[tuple[Any, ...]]], place: Municipality | Place, *,
                     seal: Mapping[str, Any] | None = None,
                     excel: bool = False) -> Iterator[bytes]:
    """``csv_chunks`` of batches of rows of ``LISTED_COLUMNS`` (``TaxRoll.iter_row_batches``):
    the header, then one chunk of bytes per batch."""
    out = io.StringIO()
    writer = SafeCsvWriter(out, csv_columns(seal), numeric=NUMERIC_COLUMNS,
                           formatted=FORMATTED_COLUMNS)
    writer.writeheader()
    name = (place.name,)  # in the municipality's column, for its code
    extra = (seal["id"], seal["position"], seal["digest"]) if seal else ()
    first = codecs.BOM_UTF8 if excel else b""
    for batch in batches:
        writer.writerows_values([row[:_MUNICIPALITY] + name + row[_MUNICIPALITY + 1:CSV_WIDTH]
                                 + extra for row in batch])
        yield first + out.getvalue().encode("utf-8")
        first = b""
        out.seek(0)
        out.truncate()
    if first or out.tell():  # no charge: the header alone
        yield first + out.getvalue().encode("utf-8")


def csv_text(charges: Iterable[Mapping[str, Any]], place: Municipality | Place,
             seal: Mapping[str, Any] | None = None) -> str:
    """The CSV as one text (a short list; files and answers stream ``csv_chunks``)."""
    return b"".join(csv_chunks(charges, place, seal=seal)).decode("utf-8")


def encoded(text: str, excel: bool) -> bytes:
    """UTF-8; with ``excel`` a byte-order mark first, so Excel on Windows reads ``§`` right."""
    return text.encode("utf-8-sig" if excel else "utf-8")


def summary(charges: Iterable[Mapping[str, Any]] | ListTotals, place: Municipality | Place, *,
            tax_year: int, county: str | None, as_of: dt.date, known_at: dt.datetime | None,
            certified: bool, produced_at: dt.datetime, csv_bytes: bytes | None = None,
            csv_sha256: str | None = None, csv_file: str | None = None, excel: bool = False,
            newly_certified: int | None = None, seal: Mapping[str, Any] | None = None,
            list_sha256: str | None = None) -> dict[str, Any]:
    """What the list adds up to, per charge type and statute and per county, and who
    certified it when; times in the municipality's zone (``*_at`` with ``*_at_utc``).
    ``charges`` may be the totals already taken while the list streamed (``ListTotals``);
    the CSV is described by its bytes or by their SHA-256. ``list_sha256`` is the list's own
    digest (projections.certification.ListDigest), what a certification is checked against."""
    totals = charges if isinstance(charges, ListTotals) else ListTotals.of(charges)
    if csv_bytes is not None:
        csv_sha256 = hashlib.sha256(csv_bytes).hexdigest()
    data: dict[str, Any] = {
        "format": SUMMARY_FORMAT,
        "list": "certified" if certified else "export",
        "municipality": place.municipality,
        "municipality_name": place.name,
        "county": county,
        "tax_year": tax_year,
        "as_of": as_of.isoformat(),
        "known_at": known_at,
        "produced_at": produced_at,
        **totals.all.as_dict(),
        "list_sha256": list_sha256,
        "by_charge_type": [{"charge_type": t, "statute": s, **sums.as_dict()}
                           for (t, s), sums in sorted(totals.groups.items())],
        "by_county": [{"county": name, **sums.as_dict()}
                      for name, sums in sorted(totals.counties.items())],
        "certification": {
            "certified_charges": totals.certified,
            "newly_certified": newly_certified,
            "certified_by": sorted(totals.certified_by),
            "first_certified_at": totals.first_certified_at,
            "last_certified_at": totals.last_certified_at,
        },
        "csv": None if csv_sha256 is None else {
            "file": csv_file, "rows": totals.all.charges, "columns": csv_columns(seal),
            "encoding": "utf-8 with byte-order mark (--excel)" if excel else "utf-8",
            "sha256": csv_sha256,
        },
        "seal": dict(seal) if seal else None,
        # charges a certification of this list would refuse (projections.certification)
        "not_certifiable": totals.not_certifiable,
    }
    return localized(data, place.time_zone)

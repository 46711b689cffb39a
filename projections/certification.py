"""Certifying a tax-roll list: a ``certify_charge`` on every listed charge not yet
certified (once each, in one transaction), then a seal taken right after, so the certified
list carries the seal that covers its certifications (docs/operations.md, seals).

The same certification for ``abate tax-roll certify`` and ``POST tax-roll/certify``: the
caller lists the charges (``TaxRoll.iter_charges`` as of today) and hands its service in.

The list certified must be the list the clerk reviewed. An export gives the SHA-256 of
its list (``ListDigest``); a certification given that digest, or the date the clerk
reviewed the list as of (``as_of``), compares the reviewed list with the list it would
certify (``check_reviewed``) and refuses, naming the changes by case reference, when they
differ. Certification records today's unpaid balances (the domain's ``certify_charge``),
so a list as of a past date is certifiable only while no listed charge changed since.

A charge is certified to the county under the statute that authorises it. Where the rule
that made the charge leaves that statute ``not set`` (the ordinance says "as provided by
the state statutes" and names none, e.g. Belleville § 9.07(6), Mazomanie § 360-9), the
charge cannot be certified (``not_certifiable``): certifying a list holding one is refused
(``NotCertifiable``), naming each such charge, and nothing is recorded, until the rule's
version names the statute.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from projections.tax_roll import CSV_COLUMNS, CSV_WIDTH

if TYPE_CHECKING:  # the command side is imported by certify_listed alone (start-up: exports)
    from cases.application import CaseService
    from cases.store import CaseStore

DIGEST_FORMAT = "abate-list-digest/1"
_AMOUNTS = ("principal", "interest", "total")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_NAMED_AT_MOST = 200  # changes listed by case reference in one refusal (the count is whole)


# Dates with times and dataclasses go through ``str`` as the json module's ``default`` takes
# them (orjson would write its own forms).
_AS_JSON_MODULE_DOES = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _digest_lines(rows: list[Sequence[Any]]) -> bytes:
    """Each row's line and a newline. orjson takes a few microseconds to start each call,
    more than a row takes to write, so the rows are written as one array of arrays,
    ``[[...],[...]]``, and cut where one row's array ends and the next begins: at ``],[``,
    which is there once between two rows and nowhere else unless inside some text (text
    in quotes cannot share a character with those between rows), so when the count is
    not one less than the rows, each row is written on its own."""
    whole = orjson.dumps(rows, default=str, option=_AS_JSON_MODULE_DOES)
    if whole.count(b"],[") == len(rows) - 1:
        return whole[1:-1].replace(b"],[", b"]\n[") + b"\n"
    return b"".join(orjson.dumps(row, default=str, option=_AS_JSON_MODULE_DOES) + b"\n"
                    for row in rows)


class ListDigest:
    """The SHA-256 of a list as it is shown: each charge's CSV columns (municipality
    code, not name) as one compact JSON array and a newline, in list order. Taken as the
    charges stream past, so a list of any length is never held whole. A line is what
    ``json.dumps(columns, ensure_ascii=False, separators=(",", ":"), default=str)`` gives,
    in UTF-8; orjson writes those very bytes, about ten times faster (tests/test_list_digest.py
    compares the two)."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def add(self, charge: Mapping[str, Any]) -> None:
        self.add_rows([tuple(charge[column] for column in CSV_COLUMNS)])

    def add_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        """Rows of ``LISTED_COLUMNS`` (``TaxRoll.iter_rows``; only the CSV's columns count)."""
        if rows:
            self._hash.update(_digest_lines([row[:CSV_WIDTH] for row in rows]))

    def counted(self, charges: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The charges, passed on unchanged, each added to the digest on its way."""
        for charge in charges:
            self.add(charge)
            yield charge

    def counted_batches(self, batches: Iterable[list[tuple[Any, ...]]]
                        ) -> Iterator[list[tuple[Any, ...]]]:
        """Batches of rows of ``LISTED_COLUMNS`` (``TaxRoll.iter_row_batches``), passed on
        unchanged, each added on its way (SHA-256 takes the bytes in any pieces)."""
        for batch in batches:
            self.add_rows(batch)
            yield batch

    def hexdigest(self) -> str:
        return self._hash.hexdigest()

    @classmethod
    def of(cls, charges: Iterable[Mapping[str, Any]]) -> str:
        digest = cls()
        for charge in charges:
            digest.add(charge)
        return digest.hexdigest()

    @classmethod
    def of_batches(cls, batches: Iterable[list[tuple[Any, ...]]]) -> str:
        digest = cls()
        for batch in batches:
            digest.add_rows(batch)
        return digest.hexdigest()


def sha256_problem(value: str) -> str | None:
    """Why ``value`` is not a list digest (64 lowercase hex digits), or None."""
    if _SHA256.fullmatch(value):
        return None
    return "a SHA-256 is 64 hexadecimal digits (0-9, a-f), as the export gives it"


class ListChanged(Exception):
    """The list to certify is not the list reviewed: nothing was recorded."""

    def __init__(self, detail: str, *, changes: list[dict[str, Any]] | None,
                 reviewed_sha256: str | None, current_sha256: str | None,
                 changed_charges: int | None):
        super().__init__(detail)
        self.detail = detail
        self.changes = changes  # None when the reviewed list cannot be rebuilt to compare
        self.reviewed_sha256, self.current_sha256 = reviewed_sha256, current_sha256
        self.changed_charges = changed_charges

    def as_dict(self) -> dict[str, Any]:
        return {"changes": self.changes, "changed_charges": self.changed_charges,
                "reviewed_sha256": self.reviewed_sha256, "current_sha256": self.current_sha256}


def not_certifiable(charges: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The listed charges that cannot be certified, each with why: the rule that made the
    charge names no statute authorising it (its ``statute`` is ``not set``)."""
    from cases.rules.files import NOT_SET
    from cases.statute import STATUTE_NOT_SET

    return [{"case_ref": c["case_ref"], "rule": c["rule"], "rule_version": c["rule_version"],
             "charge_type": c["charge_type"], "problem": STATUTE_NOT_SET}
            for c in charges if c["statute"] == NOT_SET]


class NotCertifiable(Exception):
    """The list holds charges that cannot be certified (``not_certifiable``): nothing was
    recorded. The text is the domain's for a single charge (``cases.statute``)."""

    def __init__(self, charges: list[dict[str, Any]]):
        from cases.statute import statute_not_set

        self.detail = statute_not_set(charges[:_NAMED_AT_MOST], listed=len(charges))
        super().__init__(self.detail)
        self.charges = charges[:_NAMED_AT_MOST]
        self.count = len(charges)

    def as_dict(self) -> dict[str, Any]:
        return {"not_certifiable": self.charges, "not_certifiable_charges": self.count}


def list_changes(reviewed: Iterable[Mapping[str, Any]],
                 current: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What differs, by case reference, in list order: ``added`` (on the list now, not on the
    reviewed one), ``removed``, ``amount_changed`` (principal, interest or total: before and
    after) and ``details_changed`` (another column the county receives, e.g. the owner)."""
    before = {c["case_ref"]: c for c in reviewed}
    changes: list[dict[str, Any]] = []
    for charge in current:
        old = before.pop(charge["case_ref"], None)
        if old is None:
            changes.append({"case_ref": charge["case_ref"], "change": "added",
                            "total": charge["total"]})
            continue
        amounts = {name: {"reviewed": old[name], "now": charge[name]}
                   for name in _AMOUNTS if old[name] != charge[name]}
        others = [name for name in CSV_COLUMNS
                  if name not in _AMOUNTS and old[name] != charge[name]]
        if amounts:
            changes.append({"case_ref": charge["case_ref"], "change": "amount_changed",
                            **amounts, **({"columns": others} if others else {})})
        elif others:
            changes.append({"case_ref": charge["case_ref"], "change": "details_changed",
                            "columns": others})
    changes += [{"case_ref": ref, "change": "removed", "total": old["total"]}
                for ref, old in before.items()]
    return changes


def _in_words(changes: list[dict[str, Any]]) -> str:
    """``BV-1 amount changed (total 120.00 -> 20.00), BV-2 removed`` for the first few."""
    words = []
    for change in changes[:5]:
        text = f"{change['case_ref']} {change['change'].replace('_', ' ')}"
        amount = next((name for name in ("total", "principal")
                       if isinstance(change.get(name), dict)), None)
        if amount:
            text += f" ({amount} {change[amount]['reviewed']} -> {change[amount]['now']})"
        words.append(text)
    more = f" and {len(changes) - 5} more" if len(changes) > 5 else ""
    return ", ".join(words) + more


class ListReader(Protocol):
    def __call__(self, *, as_of: dt.date, known_at: dt.datetime | None
                 ) -> list[dict[str, Any]]: ...


def charges_reader(view: Any, conn: Any, *, municipality: str, tax_year: int,
                   county: str | None) -> ListReader:
    """How ``check_reviewed`` reads one village's list of a tax year (and county) from the
    tax-roll view on ``conn``: the same reader for the command line, the API and the page."""
    def read(*, as_of: dt.date, known_at: dt.datetime | None) -> list[dict[str, Any]]:
        return list(view.iter_charges(conn, municipality=municipality, tax_year=tax_year,
                                      as_of=as_of, known_at=known_at, county=county))
    return read


def check_reviewed(read: ListReader, *, today: dt.date, as_of: dt.date | None,
                   known_at: dt.datetime | None, expected_sha256: str | None,
                   known_at_named: str = "known_at") -> list[dict[str, Any]]:
    """The list to certify (as of ``today``), once it is shown to be the list reviewed.
    ``read`` lists the charges.

    The digest decides: with ``expected_sha256`` the list to certify must have it. Without
    one, the list reviewed is the list as of ``as_of`` (default today) as known at
    ``known_at`` (default now), and the list to certify must equal it. Otherwise
    ``ListChanged`` is raised, naming the changes from the list reviewed, rebuilt as of
    ``as_of`` as known at ``known_at`` (when a digest is given, only if that rebuilt list
    has it: else the changes cannot be named, and the refusal says how to have them named;
    ``known_at_named`` is how the caller's users give ``known_at``, e.g. ``--known-at``).
    """
    current = read(as_of=today, known_at=None)
    current_sha = ListDigest.of(current)
    if expected_sha256 is not None and current_sha == expected_sha256:
        return current  # what will be certified is, by its digest, the list reviewed
    if as_of in (None, today) and known_at is None:
        reviewed, reviewed_sha = current, current_sha
    else:
        reviewed = read(as_of=as_of or today, known_at=known_at)
        reviewed_sha = ListDigest.of(reviewed)
    what = (f"the list as of {as_of or today}"
            + (f" as known at {known_at.isoformat()}" if known_at is not None else ""))
    if expected_sha256 is not None and reviewed_sha != expected_sha256:
        hint = ("" if known_at is not None else f"; give {known_at_named} (printed with the "
                "reviewed export) to have the changes named")
        raise ListChanged(
            f"the list is not the list reviewed: its SHA-256 is {current_sha}, not "
            f"{expected_sha256}, and {what} (SHA-256 {reviewed_sha}) is not the list reviewed "
            f"either, so the changes cannot be named; nothing was certified: export the list "
            f"again, review it and certify with its digest{hint}", changes=None,
            reviewed_sha256=None, current_sha256=current_sha, changed_charges=None)
    if reviewed_sha != current_sha:
        changes = list_changes(reviewed, current)
        raise ListChanged(
            f"the list changed since {what}: {_in_words(changes)}; nothing was certified "
            f"(certification records today's balances, so a list as of an earlier date is "
            f"certifiable only while none of its charges changed since): export the list "
            f"again, review it and certify with its digest",
            changes=changes[:_NAMED_AT_MOST], reviewed_sha256=reviewed_sha,
            current_sha256=current_sha, changed_charges=len(changes))
    return current


@dataclass(frozen=True)
class Certification:
    newly_certified: int  # certifications recorded now (0 when every charge had one)
    seal: dict[str, Any]  # id, position, digest and the seal's line, as the list carries it


def certify_listed(service: CaseService, store: CaseStore,
                   charges: Iterable[Mapping[str, Any]], *, municipality: str, tax_year: int,
                   county: str, actor: str, now: dt.datetime) -> Certification:
    """Record a certification on each listed charge that has none (idempotent by command id:
    certifying again records nothing twice), then seal the store.

    Each case is read from the store as it is certified: when its unpaid balance is no
    longer the amount listed (another writer recorded in between), ``ListChanged`` is raised
    and nothing is recorded, so what is certified is the list that was checked. A list
    holding a charge that cannot be certified (``not_certifiable``) is refused whole
    (``NotCertifiable``), before anything is read or recorded."""
    from cases.application import Outcome, UnitOfWork
    from cases.commands import parse_command
    from cases.seals import seal_store

    pending = [charge for charge in charges if not charge["certified"]]
    if refused := not_certifiable(pending):
        raise NotCertifiable(refused)
    uow, outcome = UnitOfWork(store), Outcome()
    moved: list[dict[str, Any]] = []
    for charge in pending:
        case_ref = charge["case_ref"]
        balance = uow.get(municipality, case_ref).balance
        if balance != Decimal(charge["principal"]):
            moved.append({"case_ref": case_ref, "change": "amount_changed",
                          "principal": {"reviewed": charge["principal"], "now": str(balance)}})
            continue
        command = parse_command({
            "command": "certify_charge", "municipality": municipality, "case_ref": case_ref,
            "at": now.isoformat(), "actor": actor, "tax_year": tax_year,
            "id": f"certify:{tax_year}:{case_ref}"})
        service.execute(command, now, uow, outcome)
    if moved:
        uow.discard()
        raise ListChanged(
            f"the list changed while it was being certified: {_in_words(moved)}; nothing was "
            "certified: export the list again, review it and certify with its digest",
            changes=moved, reviewed_sha256=None, current_sha256=None,
            changed_charges=len(moved))
    uow.commit()
    seal = seal_store(store, actor=actor,
                      reason=f"certification {municipality} {tax_year} {county}")
    return Certification(outcome.applied, {"id": seal.seal_id, "position": seal.position,
                                           "digest": seal.log_digest, "line": seal.line()})

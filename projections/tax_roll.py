"""Tax-roll charges: what to certify to each county's roll, as of any date and as
known at any moment.

Every event that changes a case's charge adds a *version* row (the charge as it
stood after that event, with the event's business time and recorded time). When
the next version of the same charge arrives, the previous one is marked
superseded, with the next version's business and recorded times. A list "as of
business date D, as known at T" takes, per charge, the version that had happened
by the end of D and been recorded by T and was not yet superseded then, so an
export taken as of a past date equals the export that was taken then.

A list reads the versions through two indexes in list order (county, parcel, case) that
also hold every column its conditions test: the latest versions, and, only when something
was superseded after D (or with a known-at), the superseded ones. The database hands the
list over sorted, and reads the row of a listed version only: a version not listed is
skipped on its index entry. This relies on the versions of a charge being in business-time
and recorded-time order, which the domain enforces (facts are entered in the order they
happened; DeadlinePassed, the one exception, adds no version).

Readings (DOMAIN.md): a charge is listed for tax year Y when it is unpaid and
eligible (its rule's eligibility date, computed by the domain; a pending appeal
removes it) on or before both D and the municipality's cut-off of Y (default
November 15); one eligible after the cut-off waits for Y+1. A charge certified
for another year is not listed again. A charge whose rule names its roll's year (§ 9.24(8):
"for the year in which the work is completed", after a draw on the performance bond) is
listed only for that year (``roll_year``), once eligible, whatever the cut-off. Payments
after certification are listed by ``reconcile`` for the county to credit or refund; the certified list never changes.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from uuid import UUID
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from cases.money import money
from projections.database import amount, batches_of_rows, day, insert_rows, utc
from projections.paging import MAX_LIMIT, Page, read_page
from projections.view import View

if TYPE_CHECKING:
    from cases.domain import Case
    from cases.rules.catalog import Catalog

CSV_COLUMNS = [
    "tax_year", "county", "municipality", "parcel_number", "owner_name",
    "owner_mailing_address", "site_address", "charge_type", "statute", "principal",
    "interest", "total", "incurred_on", "billed_on", "due_on", "eligible_on", "case_ref",
    "rule", "rule_version",
]
# A listed charge as ``TaxRoll.iter_rows`` gives it, one value per name: the CSV's columns
# first (the municipality as its code), then what certification and the summary read.
LISTED_COLUMNS = (*CSV_COLUMNS, "original_principal", "paid", "appeal_state",
                  "interest_rate", "certified", "certified_at", "certified_by")
CSV_WIDTH = len(CSV_COLUMNS)
_CERTIFIED = LISTED_COLUMNS.index("certified")
# Events that change no column of a version (the charge, owner, parcel, site address and the
# tax-roll eligibility deadline; see each event's apply_to in cases/domain/) add no version.
_UNCHANGING = {"DeadlinePassed", "InspectionRecorded", "HazardDeclared", "CitationIssued",
               "ServiceAttempted",
               "ReferredToAttorney", "DispositionRecorded", "Reopened", "DocumentIssued"}
# These change deadlines only: a version when the tax-roll eligibility deadline is among them.
_DEADLINES_ONLY = {"Closed", "NoticeServed", "ComplianceVerified"}
_ELIGIBILITY = "tax_roll_eligible"
# What a listed charge is made of, in the order ``TaxRoll.iter_charges`` unpacks it.
_LISTED_COLUMNS = (
    "county", "parcel_number", "owner_name", "owner_mailing_address", "site_address",
    "charge_type", "statute", "interest_rate", "principal", "paid", "balance", "incurred_on",
    "billed_on", "due_on", "eligible_on", "appeal_state", "certified_year", "certified_amount",
    "certified_at", "certified_by", "case_ref", "rule", "rule_version")
_FETCH_ROWS = 2000  # rows fetched from the database at a time while a list streams
_LIST_ORDER = ("county", "parcel_number", "case_ref")  # a list's order (by code point)


def _changes_charge(kind: str, event: Any) -> bool:
    if kind in _UNCHANGING:
        return False
    if kind in _DEADLINES_ONLY:
        return _ELIGIBILITY in event.cancels or any(
            d["name"] == _ELIGIBILITY for d in getattr(event, "deadlines", ()))
    return True


class TaxRoll(View):
    name = "tax_roll"
    title = "tax roll (charges to certify)"
    # 2: on SQLite, indexes in list order in place of those by eligible date (issue 11).
    definition_version = 2

    def __init__(self, generation: int, catalog: Catalog | None = None,
                 dialect: str | None = None):
        self._catalog = catalog
        self._rule_terms: dict[tuple[str, int], tuple[str, str, str, ZoneInfo]] = {}
        self.begin_page()
        super().__init__(generation, dialect)

    @property
    def catalog(self) -> Catalog:
        """Loaded when a charge needs its rule, not when the view is built: a command that
        reads another view builds this one too (docs/benchmarks.md, start-up)."""
        if self._catalog is None:
            from cases.rules.catalog import default_catalog

            self._catalog = default_catalog()
        return self._catalog

    def define_tables(self) -> None:
        g = self.generation
        self.versions = self.table(
            "versions", *_charge_columns(), sa.Column("position", sa.Integer, nullable=False),
            sa.Column("superseded_at", sa.String(40)),  # business time of the next version
            sa.Column("superseded_recorded_at", sa.String(40)),  # and when it was recorded
            sa.PrimaryKeyConstraint("case_id", "position"),
        )
        # What an export reads, by what makes a charge listable. Latest versions (what
        # today's lists read) apart from superseded ones (what a list as of an earlier date
        # reads as well). Whether anything was superseded after a date is one probe of the
        # "superseded" index; "certified" serves the certified totals.
        v = self.versions.c
        latest, superseded = v.superseded_at.is_(None), v.superseded_at.is_not(None)
        indexes = [("superseded", (v.municipality, v.superseded_at), superseded, None),
                   ("certified", (v.municipality, v.certified_year),
                    v.certified_year.is_not(None), None)]
        # SQLite plans without statistics: an index in list order (county, parcel, case)
        # followed by every column a list's conditions test hands the list over sorted, and
        # skips a version that is not listed on its index entry (a list of a few charges
        # reads index entries, not rows). PostgreSQL plans by statistics: it finds the
        # charges by eligible date (or county) and sorts them, on both cores when many.
        listed_in_order = (v.municipality, v.county, v.parcel_number, v.case_ref)
        tested = (v.occurred_at, v.recorded_at, v.certified_year, v.roll_year, v.eligible_on)
        indexes += [
            ("listing", (*listed_in_order, *tested), latest, "sqlite"),
            ("listing_superseded", (*listed_in_order, v.superseded_at,
                                    v.superseded_recorded_at, *tested), superseded, "sqlite"),
            ("eligible", (v.municipality, v.eligible_on), latest, "postgresql"),
            ("county_eligible", (v.municipality, v.county, v.eligible_on), latest, "postgresql"),
            ("eligible_superseded", (v.municipality, v.eligible_on), superseded, "postgresql")]
        for name, columns, where, dialect in indexes:
            index = sa.Index(f"abate_tax_roll_{name}_g{g}", *columns,
                             **self.partial_where(where))
            if dialect:
                index.ddl_if(dialect=dialect)
        self.payments = self.table(
            "late_payments",
            sa.Column("case_id", sa.String(36), nullable=False),
            sa.Column("position", sa.Integer, nullable=False),
            sa.Column("municipality", sa.String(32), nullable=False),
            sa.Column("county", sa.String(32), nullable=False),
            sa.Column("parcel_number", sa.String(64), nullable=False),
            sa.Column("case_ref", sa.String(64), nullable=False),
            sa.Column("tax_year", sa.Integer, nullable=False),
            sa.Column("amount", sa.String(24), nullable=False),
            sa.Column("paid_at", sa.String(40), nullable=False),
            sa.Column("recorded_at", sa.String(40), nullable=False),
            sa.Column("voided_at", sa.String(40)),
            sa.PrimaryKeyConstraint("case_id", "position"),
        )

    # ------------------------------------------------------------ writing

    def listens_to(self, event_class: type) -> bool:
        return event_class.__name__ not in _UNCHANGING

    def on_event(self, conn: sa.Connection, case: Case, event: Any) -> None:
        kind = type(event).__name__
        if case.charge is None or not _changes_charge(kind, event):
            return
        # Collected and written once per page (on_page_end): one statement, many rows.
        self._pending_versions.append(self._version(case, event))
        if kind == "PaymentReceived" and event.after_certification:
            certified = case.charge.certified
            conn.execute(self.payments.insert(), self.fit(self.payments, [dict(
                case_id=str(event.originator_id), position=event.originator_version,
                municipality=case.municipality, county=case.parcel["county"],
                parcel_number=case.parcel["number"], case_ref=case.case_ref,
                tax_year=certified.tax_year, amount=amount(event.amount),
                paid_at=utc(event.occurred_at), recorded_at=utc(event.timestamp))]))
        elif kind == "Corrected" and event.changes.get("void"):
            conn.execute(self.payments.update().where(
                self.payments.c.case_id == str(event.originator_id),
                self.payments.c.position == event.supersedes).values(voided_at=utc(event.occurred_at)))

    def begin_page(self) -> None:
        self._pending_versions: list[dict[str, Any]] = []

    def on_page_end(self, conn: sa.Connection, cases: dict[Any, Case], opened: set[Any]) -> None:
        """Insert the page's versions, each marked superseded by the next one of its charge,
        and mark each charge's latest version from an earlier page superseded by the first."""
        first: dict[str, dict[str, Any]] = {}
        previous: dict[str, dict[str, Any]] = {}
        for row in self._pending_versions:  # in log order, so per charge in version order
            key = row["case_id"]
            if key in previous:
                previous[key].update(superseded_at=row["occurred_at"],
                                     superseded_recorded_at=row["recorded_at"])
            else:
                first[key] = row
            row.update(superseded_at=None, superseded_recorded_at=None)
            previous[key] = row
        earlier = [{"key": key, "first": row["position"], "at": row["occurred_at"],
                    "recorded": row["recorded_at"]}
                   for key, row in first.items() if UUID(key) not in opened]
        if earlier:
            v = self.versions.c
            conn.execute(self.versions.update().where(
                v.case_id == sa.bindparam("key"), v.superseded_at.is_(None),
                v.position < sa.bindparam("first")).values(
                superseded_at=sa.bindparam("at"),
                superseded_recorded_at=sa.bindparam("recorded")), earlier)
        if self._pending_versions:
            insert_rows(conn, self.versions, self.fit(self.versions, self._pending_versions))
        self.begin_page()

    def _version(self, case: Case, event: Any) -> dict[str, Any]:
        charge_type, statute, interest_rate, tz = self._terms(case.rule, case.rule_version)
        charge = case.charge
        eligible = case.deadlines.get(_ELIGIBILITY)
        eligible_on = None
        if eligible is not None and eligible.state != "cancelled":
            eligible_on = day(eligible.due_at.astimezone(tz))
        certified = charge.certified
        owner = case.owner
        return {
            "case_id": str(event.originator_id), "position": event.originator_version,
            "occurred_at": utc(event.occurred_at), "recorded_at": utc(event.timestamp),
            "municipality": case.municipality, "county": case.parcel["county"],
            "parcel_number": case.parcel["number"], "owner_name": owner["name"],
            "owner_mailing_address": owner.get("mailing_address") or "",
            "site_address": case.site_address,
            "charge_type": charge_type, "statute": statute, "interest_rate": interest_rate,
            "principal": amount(charge.principal), "paid": amount(charge.paid),
            "balance": amount(case.balance), "incurred_on": day(charge.incurred_on),
            "billed_on": day(charge.billed_on),
            "due_on": day(charge.due_at.date()) if charge.due_at else None,
            "eligible_on": eligible_on, "appeal_state": charge.appeal_state,
            "certified_year": certified.tax_year if certified else None,
            "roll_year": charge.roll_year,
            "certified_amount": amount(certified.amount if certified else None),
            "certified_at": utc(certified.at if certified else None),
            "certified_by": certified.by if certified else None,
            "case_ref": case.case_ref, "rule": case.rule, "rule_version": case.rule_version,
        }

    def _terms(self, rule_key: str, version: int) -> tuple[str, str, str, ZoneInfo]:
        """Charge type, statute, interest rate and time zone of a rule version (memoized:
        asked once per version row)."""
        key = (rule_key, version)
        if key not in self._rule_terms:
            from cases.rules.catalog import NOT_SET

            tax_roll = self.catalog.rule_version(rule_key, version).tax_roll
            place = self.catalog.municipality(rule_key.partition(":")[0])
            self._rule_terms[key] = (
                tax_roll.charge_type if tax_roll else "", tax_roll.statute if tax_roll else "",
                str(tax_roll.interest_rate) if tax_roll else NOT_SET, ZoneInfo(place.time_zone))
        return self._rule_terms[key]

    # ------------------------------------------------------------ reading

    def charges(self, conn: sa.Connection, *, municipality: str, tax_year: int,
                as_of: dt.date, known_at: dt.datetime | None = None,
                county: str | None = None) -> list[dict[str, Any]]:
        """The charges to certify for ``tax_year``, as of a business date, as known at a time."""
        return list(self.iter_charges(conn, municipality=municipality, tax_year=tax_year,
                                      as_of=as_of, known_at=known_at, county=county))

    def iter_charges(self, conn: sa.Connection, *, municipality: str, tax_year: int,
                     as_of: dt.date, known_at: dt.datetime | None = None,
                     county: str | None = None) -> Iterator[dict[str, Any]]:
        """``charges`` one at a time, in list order (county, parcel, case), read from the
        database as they are written out: a list of any length is never held whole."""
        return map(listed_charge, self.iter_rows(
            conn, municipality=municipality, tax_year=tax_year, as_of=as_of,
            known_at=known_at, county=county))

    def iter_rows(self, conn: sa.Connection, *, municipality: str, tax_year: int,
                  as_of: dt.date, known_at: dt.datetime | None = None,
                  county: str | None = None) -> Iterator[tuple[Any, ...]]:
        """``iter_charges`` as tuples of ``LISTED_COLUMNS``: what a large export streams
        (a file of 100,000 charges is written without a dict per charge)."""
        return itertools.chain.from_iterable(self.iter_row_batches(
            conn, municipality=municipality, tax_year=tax_year, as_of=as_of,
            known_at=known_at, county=county))

    def iter_row_batches(self, conn: sa.Connection, *, municipality: str, tax_year: int,
                         as_of: dt.date, known_at: dt.datetime | None = None,
                         county: str | None = None) -> Iterator[list[tuple[Any, ...]]]:
        """``iter_rows`` a batch (a list of up to ``_FETCH_ROWS`` rows) at a time, as the
        database hands them over: an export hashes, adds up and writes each batch at once
        (a third of a 100,000-charge export was passing single rows between generators)."""
        from cases.rules.files import NOT_SET
        from cases.rules.places import place as municipality_of

        place = municipality_of(municipality)  # no catalog: its rules are not needed here
        tz = ZoneInfo(place.time_zone)
        month, day_of_month = (int(p) for p in place.certification_cutoff.split("-"))
        cutoff = dt.date(tax_year, month, day_of_month)
        last_day = min(as_of, cutoff).isoformat()
        from cases.rules.clock import end_of_local_day

        end = utc(end_of_local_day(as_of, tz))

        v = self.versions.c
        # The version in force at (end of D, T): happened and recorded by then, and not yet
        # superseded then: the latest versions, and superseded ones when any can be...
        happened = [v.occurred_at <= end]
        if known_at is not None:
            happened.append(v.recorded_at <= utc(known_at))
        superseded = []  # the conditions on superseded versions, when any can be in force
        if self._superseded_after(conn, municipality, end):  # else a list as of today
            superseded.append(v.superseded_at.concat("") > end)
        if known_at is not None:
            superseded.append(sa.and_(v.superseded_at.concat("") <= end,
                                      v.superseded_recorded_at > utc(known_at)))
        # ...and listable: certified for the year, or eligible by the list's date (by the
        # year a rule names, when it names one). ``superseded_at || ''`` (the same value)
        # keeps the "superseded" index, which only answers whether anything was superseded
        # after D, out of the query: on SQLite each part walks its listing index in order.
        place_filter = [v.municipality == municipality] + ([v.county == county] if county else [])
        listable = sa.or_(
            v.certified_year == tax_year,
            sa.and_(v.certified_year.is_(None), v.roll_year.is_(None), v.eligible_on <= last_day),
            sa.and_(v.certified_year.is_(None), v.roll_year == tax_year,
                    v.eligible_on <= as_of.isoformat()))
        in_force = [v.superseded_at.is_(None)]
        if superseded:
            in_force.append(sa.and_(v.superseded_at.is_not(None), sa.or_(*superseded)))
        # Only the columns a listed charge carries; the database sorts, or merges the parts
        # read in list order (disjoint: each version is in force in one way at most).
        columns = [v[name] for name in _LISTED_COLUMNS]
        parts = [sa.select(*columns).where(*place_filter, version_in_force, listable, *happened)
                 for version_in_force in in_force]
        found = (sa.union_all(*parts) if len(parts) > 1 else parts[0]).subquery()
        listing = sa.select(*found.c).order_by(
            *(_code_point_order(conn.dialect.name, found.c[name]) for name in _LIST_ORDER))
        for fetched in batches_of_rows(conn, listing, _FETCH_ROWS):
            batch = []
            for (county_name, parcel_number, owner_name, mailing, site, charge_type, statute,
                 rate, principal, paid, balance, incurred_on, billed_on, due_on, eligible_on,
                 appeal_state, certified_year, certified_amount, certified_at, certified_by,
                 case_ref, rule, rule_version) in fetched:
                certified = certified_year == tax_year
                listed = _listed_amount(certified_amount if certified else balance)
                if listed is None:
                    continue
                principal_listed, total = listed
                interest = ""
                if rate != NOT_SET and due_on:
                    amount_listed = Decimal(principal_listed)
                    accrued = _interest(amount_listed, rate, due_on, as_of)
                    interest, total = str(accrued), str(amount_listed + (accrued or 0))
                batch.append((tax_year, county_name, municipality, parcel_number, owner_name,
                              mailing, site, charge_type, statute, principal_listed, interest,
                              total, incurred_on or "", billed_on or "", due_on or "",
                              eligible_on, case_ref, rule, rule_version, principal, paid,
                              appeal_state, rate, certified, certified_at, certified_by))
            if batch:
                yield batch

    def _superseded_after(self, conn: sa.Connection, municipality: str, end: str) -> bool:
        """Whether any version was superseded after ``end`` (one index probe)."""
        v = self.versions.c
        return conn.execute(sa.select(v.case_id).where(
            v.municipality == municipality, v.superseded_at > end).limit(1)).first() is not None

    def _late(self, municipality: str, tax_year: int) -> sa.Select:
        p = self.payments.c
        return sa.select(self.payments).where(p.municipality == municipality,
                                              p.tax_year == tax_year, p.voided_at.is_(None))

    def late_payments(self, conn: sa.Connection, *, municipality: str, tax_year: int,
                      limit: int = MAX_LIMIT, offset: int = 0) -> Page:
        """A page of the payments taken after certification, by county, parcel and time."""
        p = self.payments.c

        def shape(row: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in row.items() if k not in ("case_id", "position", "voided_at")}

        return read_page(conn, self._late(municipality, tax_year),
                         (p.county, p.parcel_number, p.paid_at, p.position),
                         limit=limit, offset=offset, shape=shape)

    def late_payment_sums(self, conn: sa.Connection, *, municipality: str,
                          tax_year: int) -> dict[str, Decimal]:
        """What the payments after certification add up to, per county (every one of them,
        whatever page is shown; summed as decimals, not by the database's floats)."""
        p = self.payments.c
        sums: dict[str, Decimal] = {}
        query = self._late(municipality, tax_year).with_only_columns(p.county, p.amount)
        for county, paid in conn.execute(query.order_by(p.county)):
            sums[county] = sums.get(county, Decimal("0.00")) + Decimal(paid)
        return sums


def listed_charge(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row of ``TaxRoll.iter_rows`` as the charge's dict (``LISTED_COLUMNS`` its keys)."""
    return dict(zip(LISTED_COLUMNS, row))


def only_certified(batches: Iterable[list[tuple[Any, ...]]]) -> Iterator[list[tuple[Any, ...]]]:
    """The batches of rows (``TaxRoll.iter_row_batches``) with only the charges certified for
    the list's year (a certified list)."""
    for batch in batches:
        if kept := [row for row in batch if row[_CERTIFIED]]:
            yield kept


def listed_row(charge: Mapping[str, Any]) -> tuple[Any, ...]:
    """A charge's dict as a row of ``LISTED_COLUMNS`` (a name it lacks is None)."""
    return tuple(map(charge.get, LISTED_COLUMNS))


@functools.lru_cache(maxsize=4096)
def _listed_amount(stored: str) -> tuple[str, str] | None:
    """(principal, total without interest) listed for an amount as stored, None unless it
    is positive. Memoized: the charges of a list share few amounts, and a Decimal per
    charge was a good part of a 100,000-charge export."""
    value = Decimal(stored)
    return None if value <= 0 else (str(value), str(value + 0))


def _code_point_order(dialect: str, column: Any) -> Any:
    """A column of the listing, ordered by code point (as SQLite and Python compare text),
    not by PostgreSQL's locale: the same store lists in the same order on either."""
    return column.collate("C") if dialect == "postgresql" else column


def _charge_columns() -> list[sa.Column]:
    """The columns of a charge as it stood after one event."""
    return [
        sa.Column("case_id", sa.String(36), nullable=False),
        sa.Column("occurred_at", sa.String(40), nullable=False),
        sa.Column("recorded_at", sa.String(40), nullable=False),
        sa.Column("municipality", sa.String(32), nullable=False),
        sa.Column("county", sa.String(32), nullable=False),
        sa.Column("parcel_number", sa.String(64), nullable=False),
        sa.Column("owner_name", sa.String(200), nullable=False),
        sa.Column("owner_mailing_address", sa.String(300), nullable=False),
        sa.Column("site_address", sa.String(300), nullable=False),
        sa.Column("charge_type", sa.String(32), nullable=False),
        sa.Column("statute", sa.String(100), nullable=False),
        sa.Column("interest_rate", sa.String(16), nullable=False),
        sa.Column("principal", sa.String(24), nullable=False),
        sa.Column("paid", sa.String(24), nullable=False),
        sa.Column("balance", sa.String(24), nullable=False),
        sa.Column("incurred_on", sa.String(10)),
        sa.Column("billed_on", sa.String(10)),
        sa.Column("due_on", sa.String(10)),
        sa.Column("eligible_on", sa.String(10)),
        sa.Column("appeal_state", sa.String(16), nullable=False),
        sa.Column("certified_year", sa.Integer),
        sa.Column("roll_year", sa.Integer),  # the roll the rule names (§ 9.24(8)), if any
        sa.Column("certified_amount", sa.String(24)),
        sa.Column("certified_at", sa.String(40)),
        sa.Column("certified_by", sa.String(200)),
        sa.Column("case_ref", sa.String(64), nullable=False),
        sa.Column("rule", sa.String(64), nullable=False),
        sa.Column("rule_version", sa.Integer, nullable=False),
    ]


def _interest(principal: Decimal, rate: str, due_on: str | None, as_of: dt.date) -> Decimal | None:
    """Simple annual interest from the due date to the as-of date, once a village sets a rate.

    The ordinances state no rate and no method; until a rate is set nothing is computed.
    """
    from cases.rules.files import NOT_SET

    if rate == NOT_SET or not due_on:
        return None
    days = max((as_of - dt.date.fromisoformat(due_on)).days, 0)
    return money(principal * Decimal(rate) * days / Decimal(365))

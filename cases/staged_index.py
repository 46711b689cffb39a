"""The batch index of a large journal, kept in the staging database instead of in memory.

``cases.batch_index.BatchIndex`` keeps a few hundred bytes per case a batch touched; for a
journal of a million lines that is hundreds of megabytes. ``StagedBatchIndex`` answers the
same questions (which of the journal's cases are prior violations of a new one, which have
a deadline due, whether the journal holds a case) with the same answers, from a table beside
the staged events, one row per case, indexed by parcel, party and next due deadline. Only
the cases noted since the last staging are in memory (a ``BatchIndex`` of at most one
staging's commands); they are written to the table when their events are staged, and
until then their facts win over the table's.

The table also keeps, per case, the stored version its staged events follow (``base``),
which the unit of work needs to rebuild a case that left memory.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Iterator
from uuid import UUID

import sqlalchemy as sa
from dateutil.relativedelta import relativedelta
from sqlalchemy.dialects import postgresql, sqlite

from cases.batch_index import BatchIndex, CaseFacts, facts_of, within_window
from cases.domain import Case, RepeatEvidence, case_id
from cases.repeat_scan import normalise_name

_IN_CHUNK = 500  # keys per IN (...) list


class UtcInstant(sa.TypeDecorator):
    """An aware instant stored in UTC (SQLite keeps no offset: all rows must share one, so
    that they compare as text in time order) and read back aware."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: sa.Dialect):
        return None if value is None else value.astimezone(dt.timezone.utc)

    def process_result_value(self, value: dt.datetime | None, dialect: sa.Dialect):
        if value is None or value.tzinfo is not None:
            return value
        return value.replace(tzinfo=dt.timezone.utc)


def index_table(metadata: sa.MetaData, name: str, case_id_type: sa.types.TypeEngine,
                schema: str | None) -> sa.Table:
    return sa.Table(
        name, metadata,
        sa.Column("import_id", sa.String(36), primary_key=True),
        sa.Column("case_id", case_id_type, primary_key=True),
        sa.Column("municipality", sa.Text, nullable=False),
        sa.Column("case_ref", sa.Text, nullable=False),
        sa.Column("family", sa.Text, nullable=False),
        sa.Column("parcel_county", sa.Text, nullable=False),
        sa.Column("parcel_number", sa.Text, nullable=False),
        sa.Column("party", sa.Text, nullable=False),
        sa.Column("observed_at", UtcInstant, nullable=False),
        sa.Column("notified_at", sa.Text, nullable=False),  # JSON list of instants
        sa.Column("counts", sa.Boolean, nullable=False),
        sa.Column("next_due", UtcInstant),
        sa.Column("base", sa.Integer),  # stored version its staged events follow
        sa.Column("staged_at", sa.DateTime(timezone=True), nullable=False),
        sa.Index(f"{name}_parcel", "import_id", "municipality", "family", "parcel_county",
                 "parcel_number"),
        sa.Index(f"{name}_party", "import_id", "municipality", "family", "party"),
        sa.Index(f"{name}_due", "import_id", "next_due"),
        sa.Index(f"{name}_ref", "import_id", "municipality", "case_ref"),
        schema=schema,
    )


class StagedBatchIndex:
    """What ``BatchIndex`` answers, for the cases of one import, from the staging database."""

    def __init__(self, engine: sa.Engine, table: sa.Table, import_id: str):
        self._engine = engine
        self._table = table
        self._import_id = import_id
        self.recent = BatchIndex()  # cases noted since the last flush (all resident)
        # The look-ups' statements are built once (building one costs more than running it).
        t = table.c
        key = sa.bindparam("key")
        self._known = self._select(t.case_id).where(
            t.case_id.in_(sa.bindparam("keys", expanding=True)))
        self._base = self._select(t.base).where(t.case_id == key)
        self._case_ref = self._select(t.case_ref).where(t.case_id == key)
        due = self._select(t.case_id).where(t.next_due <= sa.bindparam("until"))
        self._due = {False: due.order_by(t.case_id),
                     True: due.where(t.municipality == sa.bindparam("municipality"))
                     .order_by(t.case_id)}
        self._prior: dict[tuple[bool, bool, bool], sa.Select] = {}

    def note(self, key: UUID, case: Case) -> None:
        self.recent.note(key, case)

    # ------------------------------------------------------------ writing

    def flush(self, bases: dict[UUID, int], cases: dict[UUID, Case]) -> None:
        """Write the recently noted cases' facts, and the base version of every case whose
        events are staged for the first time (a base once written is kept)."""
        keys = dict.fromkeys([*self.recent.facts, *bases])
        if not keys:
            return
        staged_at = dt.datetime.now(dt.timezone.utc)
        rows = []
        for key in keys:
            facts = self.recent.facts.get(key)
            if facts is None:  # a case with events staged but not noted since last time
                facts = facts_of(cases[key])
            rows.append(self._row(key, facts, bases.get(key), staged_at))
        with self._engine.begin() as conn:
            conn.execute(self._upsert(conn.dialect.name), rows)
        self.recent = BatchIndex()

    def _row(self, key: UUID, facts: CaseFacts, base: int | None,
             staged_at: dt.datetime) -> dict:
        return {"import_id": self._import_id, "case_id": key,
                "municipality": facts.municipality, "case_ref": facts.case_ref,
                "family": facts.family, "parcel_county": storable(facts.parcel[0]),
                "parcel_number": storable(facts.parcel[1]), "party": storable(facts.party),
                "observed_at": facts.observed_at,
                "notified_at": json.dumps([at.isoformat() for at in facts.notified_at]),
                "counts": facts.counts, "next_due": facts.next_due, "base": base,
                "staged_at": staged_at}

    def _upsert(self, dialect: str) -> sa.Insert:
        insert = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}[dialect]
        statement = insert(self._table)
        t = self._table.c
        kept = {"import_id", "case_id", "base"}
        changed = {c.name: statement.excluded[c.name] for c in self._table.columns
                   if c.name not in kept}
        changed["base"] = sa.func.coalesce(t.base, statement.excluded.base)
        return statement.on_conflict_do_update(index_elements=[t.import_id, t.case_id],
                                               set_=changed)

    def discard(self) -> None:
        self.recent = BatchIndex()
        with self._engine.begin() as conn:
            conn.execute(self._table.delete().where(self._table.c.import_id == self._import_id))

    # ------------------------------------------------------------ membership and bases

    def _select(self, *columns: sa.ColumnElement) -> sa.Select:
        return sa.select(*columns).where(self._table.c.import_id == self._import_id)

    def __contains__(self, key: UUID) -> bool:
        return key in self.recent.facts or bool(self.known([key]))

    def known(self, keys: Iterable[UUID]) -> set[UUID]:
        """Which of these cases the journal touched (one query per few hundred)."""
        keys = list(keys)
        found = {k for k in keys if k in self.recent.facts}
        rest = [k for k in keys if k not in found]
        if not rest:
            return found
        with self._engine.connect() as conn:
            for start in range(0, len(rest), _IN_CHUNK):
                rows = conn.execute(self._known, {"keys": rest[start:start + _IN_CHUNK]})
                found.update(_uuid(r[0]) for r in rows)
        return found

    def keys(self) -> Iterator[UUID]:
        t = self._table.c
        with self._engine.connect() as conn:
            stored = [_uuid(r[0]) for r in conn.execute(self._select(t.case_id))]
        yield from dict.fromkeys([*stored, *self.recent.facts])

    def base(self, key: UUID) -> int | None:
        """The stored version this journal's staged events of the case follow (0: opened by
        the journal), or None when none of its events are staged."""
        with self._engine.connect() as conn:
            return conn.execute(self._base, {"key": key}).scalar()

    def case_ref(self, key: UUID) -> str:
        if key in self.recent.facts:
            return self.recent.facts[key].case_ref
        with self._engine.connect() as conn:
            return conn.execute(self._case_ref, {"key": key}).scalar_one()

    def holds(self, municipality: str, case_ref: str) -> bool:
        """Whether the batch touched this case (its state here supersedes the views')."""
        return case_id(municipality, case_ref) in self

    # ------------------------------------------------------------ the questions

    def due_by(self, until: dt.datetime, municipality: str | None = None) -> list[UUID]:
        with self._engine.connect() as conn:
            stored = [_uuid(r[0]) for r in conn.execute(
                self._due[municipality is not None],
                {"until": until, "municipality": municipality})]
        return [*(k for k in stored if k not in self.recent.facts),
                *self.recent.due_by(until, municipality)]

    def prior_violations(self, *, municipality: str, family: str, parcel: dict[str, str],
                         party: str | None, violation_date: dt.date, window_months: int,
                         exclude_case_ref: str, zone: dt.tzinfo,
                         counts: str = "parcel_or_party") -> RepeatEvidence:
        """The journal's own prior violations: candidates by parcel or party from the
        table (and a day either side of the window, when it is the violation that is
        dated), then the same local-date test as ``BatchIndex``."""
        window_start = violation_date - relativedelta(months=window_months)
        by_parcel = counts in ("parcel", "parcel_or_party")
        party_key = normalise_name(party)
        by_party = bool(party_key) and counts != "parcel"
        by_violation = counts != "person_notified_or_convicted"
        refs = set(self.recent.prior_violations(
            municipality=municipality, family=family, parcel=parcel, party=party,
            violation_date=violation_date, window_months=window_months,
            exclude_case_ref=exclude_case_ref, zone=zone, counts=counts).case_refs)
        if by_parcel or by_party:
            # A day of slack either side of the window: the exact test is on local dates.
            values = {"municipality": municipality, "family": family,
                      "exclude": exclude_case_ref, "county": storable(parcel["county"]),
                      "number": storable(parcel["number"]), "party": storable(party_key),
                      "after": _midnight(window_start - dt.timedelta(days=1), zone),
                      "before": _midnight(violation_date + dt.timedelta(days=1), zone)}
            with self._engine.connect() as conn:
                rows = conn.execute(self._prior_query(by_parcel, by_party, by_violation),
                                    values).all()
            for key, ref, observed_at, notified_at in rows:
                if _uuid(key) in self.recent.facts:
                    continue  # its recent facts (answered above) supersede the row
                dates = ((observed_at,) if by_violation
                         else tuple(dt.datetime.fromisoformat(at)
                                    for at in json.loads(notified_at)))
                if within_window(dates, window_start, violation_date, zone):
                    refs.add(ref)
        return RepeatEvidence(count=len(refs), window_start=window_start,
                              window_end=violation_date, case_refs=sorted(refs), counts=counts)


    def _prior_query(self, by_parcel: bool, by_party: bool, by_violation: bool) -> sa.Select:
        shape = (by_parcel, by_party, by_violation)
        if shape not in self._prior:
            t = self._table.c
            who = []
            if by_parcel:
                who.append(sa.and_(t.parcel_county == sa.bindparam("county"),
                                   t.parcel_number == sa.bindparam("number")))
            if by_party:
                who.append(t.party == sa.bindparam("party"))
            query = self._select(t.case_id, t.case_ref, t.observed_at, t.notified_at).where(
                t.municipality == sa.bindparam("municipality"),
                t.family == sa.bindparam("family"), t.counts.is_(True),
                t.case_ref != sa.bindparam("exclude"), sa.or_(*who))
            if by_violation:
                query = query.where(t.observed_at >= sa.bindparam("after"),
                                    t.observed_at < sa.bindparam("before"))
            self._prior[shape] = query
        return self._prior[shape]


def storable(text: str | None) -> str | None:
    """``text`` as PostgreSQL can hold it: a NUL (which old records may carry, from before
    the input policy) as U+FFFD, on the rows written and on the values looked up alike."""
    return text.replace("\x00", "\ufffd") if text else text


def _midnight(day: dt.date, zone: dt.tzinfo) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=zone)


def _uuid(value: object) -> UUID:
    return value if isinstance(value, UUID) else UUID(str(value))

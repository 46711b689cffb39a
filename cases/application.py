"""The use cases: load a case, run one command on it, save (optimistic concurrency).

Every entry point (journal import, CLI, HTTP API, scheduler) goes through
``CaseService.execute``. A batch of commands (a journal) runs in one
``UnitOfWork``: all commands are applied in memory first, and the events are
saved in one transaction only if every command was accepted, so a rejected
journal leaves no event behind.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any
from uuid import UUID
from zoneinfo import ZoneInfo

from eventsourcing.application import AggregateNotFoundError
from pydantic import ValidationError

from cases import commands as c
from cases import errors
from cases.batch_index import BatchIndex
from cases.business_time import INSTANT_FIELDS, TIME_FIELDS
from cases.domain import (
    CLOCK_ACTOR,
    Case,
    DueDeadlines,
    RepeatEvidence,
    RepeatOffenses,
    Stamp,
    case_id,
)
from cases.documents import issued as documents
from cases.journal import parse_journal_line
from cases.localtime import local_date
from cases.referral import prior_violations
from cases.repeat_scan import ScanRepeatOffenses, merge_evidence
from cases.rules.catalog import Catalog, Municipality, Rule, default_catalog
from cases.staging import (
    RESIDENT_CASES,
    STAGE_EVENTS,
    StagedUnitOfWork,
    supports_staging,
)
from cases.store import CaseStore

SCHEDULER_ACTOR = CLOCK_ACTOR
DEFAULT_FUTURE_TOLERANCE = dt.timedelta(minutes=10)
# Calendar dates a command carries that are facts (so not later than today there).
_FACT_DATES = ("received_on",)
JOURNAL_CHUNK_LINES = 2_000


class UnitOfWork:
    """The cases touched by a batch of commands, saved together or not at all.

    It holds every case in memory; a large journal on a SQL store uses
    ``cases.staging.StagedUnitOfWork`` instead, which has the same interface.
    """

    def __init__(self, store: CaseStore):
        self.store = store
        self.cases: dict[UUID, Case] = {}
        self.index = BatchIndex()

    def prefetch(self, keys: Iterable[UUID]) -> None:
        """Nothing to learn ahead: every look-up goes to the store (used by small batches)."""

    def note(self, case: Case) -> None:
        """Called after each command on a case."""
        self.index.note(case.id, case)

    def events(self, case: Case) -> list[Any]:
        """The case's events so far: stored, then not yet saved (this batch)."""
        stored = list(self.store.events.get(case.id))
        last = stored[-1].originator_version if stored else 0
        return stored + [e for e in case.pending_events if e.originator_version > last]

    def discard(self) -> None:
        self.cases.clear()

    def find(self, municipality: str, case_ref: str) -> Case | None:
        key = case_id(municipality, case_ref)
        if key in self.cases:
            return self.cases[key]
        try:
            case = self.store.get_case(key)
        except AggregateNotFoundError:
            return None
        self.cases[key] = case
        return case

    def get(self, municipality: str, case_ref: str) -> Case:
        case = self.find(municipality, case_ref)
        if case is None:
            raise errors.CaseNotFoundError(f"no case {case_ref!r} in {municipality}")
        return case

    def add(self, case: Case) -> None:
        self.cases[case.id] = case
        self.note(case)

    def all_case_ids(self) -> list[UUID]:
        known = dict.fromkeys(self.store.case_ids())
        known.update(dict.fromkeys(self.cases))
        return list(known)

    def load_many(self, keys: list[UUID]) -> None:
        """Load these cases (those not held yet) in one query; ``load`` then finds them."""
        self.cases.update(self.store.get_cases([key for key in keys if key not in self.cases]))

    def load(self, key: UUID) -> Case:
        if key not in self.cases:
            self.cases[key] = self.store.get_case(key)
        return self.cases[key]

    def commit(self) -> int:
        touched = [case for case in self.cases.values() if case.pending_events]
        if not touched:
            return 0
        return self.store.save_atomically(*touched)

    def deadlines_passing(self) -> int:
        """DeadlinePassed events not saved yet (by advance_clock, or before a later fact)."""
        return sum(isinstance(e, Case.DeadlinePassed)
                   for case in self.cases.values() for e in case.pending_events)


@dataclass
class Outcome:
    """What a command or a journal did."""

    applied: int = 0
    skipped_duplicates: int = 0
    deadlines_passed: int = 0
    events_recorded: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "applied": self.applied,
            "skipped_duplicates": self.skipped_duplicates,
            "deadlines_passed": self.deadlines_passed,
            "events_recorded": self.events_recorded,
        }


@dataclass(frozen=True)
class Decision:
    """What one command on an existing case is decided with: the case, its rule version,
    who and when, the municipality's zone and rules, and the unit of work it belongs to."""

    case: Case
    rule: Rule
    stamp: Stamp
    tz: ZoneInfo
    uow: UnitOfWork
    municipality: Municipality


class CaseService:
    """Applies commands to cases, with the rule each case was opened under."""

    # How a journal on a SQL store is staged (cases.staging): commands decided before their
    # events are staged, cases kept in memory after that, lines read and looked up together.
    journal_stage_events = STAGE_EVENTS
    journal_resident_cases = RESIDENT_CASES
    journal_chunk_lines = JOURNAL_CHUNK_LINES

    def __init__(self, store: CaseStore, catalog: Catalog | None = None,
                 repeat_offenses: RepeatOffenses | None = None,
                 due_deadlines: DueDeadlines | None = None, *,
                 future_tolerance: dt.timedelta = DEFAULT_FUTURE_TOLERANCE,
                 journal_max_line_bytes: int = 65_536, journal_max_depth: int = 10):
        self.store = store
        self.catalog = catalog or default_catalog()
        self._repeat_offenses = repeat_offenses
        self._due_deadlines = due_deadlines
        self.future_tolerance = future_tolerance
        self.journal_max_line_bytes = journal_max_line_bytes
        self.journal_max_depth = journal_max_depth

    # ------------------------------------------------------------ entry points

    def handle(self, command: Any, now: dt.datetime,
               expected_version: int | None = None) -> Outcome:
        """Run one command and save its events (one transaction).

        With ``expected_version`` the command runs only on the case at that version (0: a
        case not opened yet), else ``StaleVersionError``; a writer that records between
        this check and the save makes the save fail (``ConcurrentChangeError``). A command
        the case already holds (its ``id``) is a duplicate whatever the version."""
        uow = UnitOfWork(self.store)
        outcome = Outcome()
        if expected_version is not None:
            self._check_version(command, uow, expected_version)
        self.execute(command, now, uow, outcome)
        outcome.deadlines_passed = uow.deadlines_passing()
        outcome.events_recorded = uow.commit()
        return outcome

    @staticmethod
    def _check_version(command: Any, uow: UnitOfWork, expected: int) -> None:
        case = uow.find(command.municipality, command.case_ref)
        if case is not None and command.id and command.id in case.command_ids:
            return  # a retry of a command already recorded: skipped as a duplicate
        current = case.version if case is not None else 0
        if current != expected:
            raise errors.StaleVersionError(
                f"case {command.case_ref!r} is at version {current}, not {expected}: it "
                "changed since you read it; nothing was recorded (read it again)", current)

    def import_journal(self, lines: Iterable[str], now: dt.datetime,
                       admit: Callable[[int, dict[str, Any]], dict[str, Any]] | None = None
                       ) -> Outcome:
        """Apply a journal (JSON lines) all or nothing; errors carry the line number.

        ``admit(line number, fields)`` sees each line's fields before they are parsed into
        a command and returns them, completed, or raises ``JournalError`` naming the line
        (the HTTP API checks the municipality, the actor and the role per line).

        Lines are read and parsed a chunk at a time; one query per chunk learns which of
        its cases exist. On a SQL store the decided events are staged as the journal goes
        (``cases.staging``), so memory stays bounded however long the journal is.
        """
        uow: Any = (StagedUnitOfWork(self.store, stage_events=self.journal_stage_events,
                                     resident_cases=self.journal_resident_cases)
                    if supports_staging(self.store) else UnitOfWork(self.store))
        outcome = Outcome()
        with ExitStack() as views:
            # The views are caught up once: nothing this journal decides is saved before its
            # end, and its own cases are answered from the batch index.
            for lookup in (self._repeat_offenses, self._due_deadlines):
                if hasattr(lookup, "settled"):
                    views.enter_context(lookup.settled())
            return self._import(lines, now, uow, outcome, admit)

    def _import(self, lines: Iterable[str], now: dt.datetime, uow: Any,
                outcome: Outcome, admit: Callable[..., dict[str, Any]] | None) -> Outcome:
        try:
            for parsed in _chunks(self._read(lines, admit), self.journal_chunk_lines):
                uow.prefetch(case_id(c.municipality, c.case_ref) for _, c, _ in parsed
                             if c is not None and getattr(c, "case_ref", None))
                for number, command, failure in parsed:
                    if failure is not None:
                        raise failure
                    if command is not None:
                        self._execute_line(number, command, now, uow, outcome)
            outcome.deadlines_passed = uow.deadlines_passing()
            try:
                outcome.events_recorded = uow.commit()
            except errors.ConcurrentChangeError as exc:
                raise errors.JournalError(0, str(exc)) from None
        except BaseException:
            uow.discard()
            raise
        return outcome

    def _read(self, lines: Iterable[str], admit: Callable[..., dict[str, Any]] | None
              ) -> Iterator[tuple[int, Any, Exception | None]]:
        """(line number, command or None, the error to raise when the line is reached):
        lines are read a chunk ahead, so a line that cannot be read or parsed is reported
        only after every line before it was applied (the first bad line is the one named)."""
        try:
            for number, line in enumerate(lines, start=1):
                yield number, *self._parse_line(number, line, admit)
        except errors.JournalError as exc:  # from the reader: bytes that are not a line
            yield exc.line, None, exc

    def _parse_line(self, number: int, line: str, admit: Callable[..., dict[str, Any]] | None
                    ) -> tuple[Any, errors.JournalError | None]:
        """(command or None for a blank or comment line, the error to raise when reached:
        lines are parsed a chunk ahead, errors reported in line order)."""
        try:
            data = parse_journal_line(number, line, self.journal_max_line_bytes,
                                      self.journal_max_depth)
            if data is None:
                return None, None
            if admit is not None:
                data = admit(number, data)
        except errors.JournalError as exc:
            return None, exc
        try:
            return c.parse_command(data), None
        except errors.AbateError as exc:
            name = data.get("command") if isinstance(data, dict) else None
            where = f" ({name} {data.get('case_ref', '')})".rstrip() if name else ""
            return None, errors.JournalError(number, f"{exc}{where.replace(' )', ')')}")

    def _execute_line(self, number: int, command: Any, now: dt.datetime, uow: Any,
                      outcome: Outcome) -> None:
        try:
            self.execute(command, now, uow, outcome)
        except errors.AbateError as exc:
            if isinstance(exc, errors.JournalError):
                raise
            case_ref = getattr(command, "case_ref", "")
            raise errors.JournalError(number, f"{exc} ({command.command} {case_ref})".replace(
                " )", ")")) from None

    # ------------------------------------------------------------ dispatch

    def execute(self, command: Any, now: dt.datetime, uow: UnitOfWork, outcome: Outcome) -> None:
        municipality = self.catalog.municipality(command.municipality)
        tz = ZoneInfo(municipality.time_zone)
        command = self._at_boundary(command, tz, now)
        stamp = Stamp(actor=command.actor, at=command.at, now=now, command_id=command.id, tz=tz)
        if isinstance(command, c.AdvanceClock):
            self.advance_clock(uow, until=command.at, now=now, actor=command.actor,
                               municipality=command.municipality)
            outcome.applied += 1
            return
        if isinstance(command, c.OpenCase):
            self._open(command, stamp, uow, outcome, tz)
            return
        case = uow.get(command.municipality, command.case_ref)
        if command.id and command.id in case.command_ids:
            outcome.skipped_duplicates += 1
            return
        rule = self.catalog.rule_version(case.rule, case.rule_version)
        HANDLERS[type(command)](self, command, Decision(case, rule, stamp, tz, uow, municipality))
        uow.note(case)
        outcome.applied += 1

    def _at_boundary(self, command: Any, tz: ZoneInfo, now: dt.datetime) -> Any:
        """The command with every instant it carries in the municipality's zone, after
        checking that none is later than the real clock plus the tolerance (nor any
        calendar date of a fact later than the local date then)."""
        limit = now + self.future_tolerance
        updates = {}
        for name in INSTANT_FIELDS:
            value = getattr(command, name, None)
            if value is not None:
                updates[name] = self._instant(name, value, limit, tz)
        for name in _FACT_DATES:
            value = getattr(command, name, None)
            if value is not None:
                self._fact_date(name, value, limit, tz)
        for index, value in enumerate(getattr(command, "offense_dates", None) or ()):
            self._fact_date(f"offense_dates.{index}", value, limit, tz)
        return command.model_copy(update=updates) if updates else command

    def _instant(self, field: str, value: dt.datetime, limit: dt.datetime,
                 tz: ZoneInfo) -> dt.datetime:
        if value > limit:
            error = errors.FutureTimeError(
                f"field {field}: {value.isoformat()} is later than the real clock plus the "
                f"tolerance ({limit.astimezone(tz).isoformat(timespec='seconds')}); a business "
                "time cannot be in the future (ABATE_FUTURE_TOLERANCE_MINUTES)")
            # the pages say it in local time, as the real clock's now (the tolerance is ours)
            error.field, error.limit = field, limit
            error.now = limit - self.future_tolerance
            raise error
        return value.astimezone(tz)

    @staticmethod
    def _fact_date(field: str, value: dt.date, limit: dt.datetime, tz: ZoneInfo) -> None:
        today = local_date(limit, tz)
        if value > today:
            raise errors.FutureTimeError(
                f"field {field}: {value} is later than today ({today}, with the tolerance); "
                "a date of something that happened cannot be in the future")

    def _open(self, command: c.OpenCase, stamp: Stamp, uow: UnitOfWork, outcome: Outcome,
              tz: ZoneInfo) -> None:
        existing = uow.find(command.municipality, command.case_ref)
        if existing is not None:
            if command.id and command.id in existing.command_ids:
                outcome.skipped_duplicates += 1
                return
            raise errors.CaseAlreadyExistsError(
                f"case {command.case_ref!r} already exists in {command.municipality}")
        rule_municipality = command.rule.split(":", 1)[0]
        if rule_municipality != command.municipality:
            raise errors.UnknownRuleError(
                f"rule {command.rule} belongs to {rule_municipality}, not {command.municipality}")
        municipality = self.catalog.municipality(command.municipality)
        rule = municipality.rule_in_force(command.rule.split(":", 1)[1],
                                          command.at.astimezone(tz).date())
        problem = municipality.parcel_error(command.parcel.county, command.parcel.number)
        if problem:
            raise errors.InvalidParcelError(f"field parcel: {problem}")
        case = Case.open(
            stamp, municipality=command.municipality, case_ref=command.case_ref, rule=rule, tz=tz,
            parcel=command.parcel.model_dump(), site_address=command.site_address,
            owner=command.owner.model_dump(),
            responsible=command.responsible.model_dump() if command.responsible else None,
            description=command.description, source=command.source,
            snow_ended_at=command.snow_ended_at,
        )
        uow.add(case)
        outcome.applied += 1

    # ------------------------------------------------------------ one handler per command
    # Each takes the command and what it is decided with, and calls the case's decision.

    def _record_inspection(self, command: c.RecordInspection, d: Decision) -> None:
        d.case.record_inspection(d.stamp, findings=command.findings,
                                 documents=list(command.documents))

    def _record_service_attempt(self, command: c.RecordServiceAttempt, d: Decision) -> None:
        d.case.record_service_attempt(d.stamp, d.rule, method=command.method,
                                      attempted_by=command.attempted_by, result=command.result)

    def _record_bond_draw(self, command: c.RecordBondDraw, d: Decision) -> None:
        d.case.record_bond_draw(d.stamp, d.rule, d.tz, amount=command.amount,
                                max_amount=d.municipality.max_amount)

    def _declare_hazard(self, command: c.DeclareHazard, d: Decision) -> None:
        d.case.declare_hazard(d.stamp, d.rule, description=command.description,
                              nobody_reachable=command.nobody_reachable)

    def _serve_notice(self, command: c.ServeNotice, d: Decision) -> None:
        evidence = (self._repeat_evidence(d.case, d.rule, d.tz, d.uow)
                    if d.rule.repeat and d.rule.repeat.escalates_notice else None)
        d.case.serve_notice(d.stamp, d.rule, d.tz, method=command.method,
                            served_on=command.served_on, delivered_at=command.delivered_at,
                            cure_days=command.cure_days, repeat_evidence=evidence)

    def _record_compliance(self, command: c.RecordCompliance, d: Decision) -> None:
        d.case.record_compliance(d.stamp, notes=command.notes)

    def _record_abatement(self, command: c.RecordAbatement, d: Decision) -> None:
        evidence = None
        if command.without_notice_reason == "repeat_offense":
            evidence = self._repeat_evidence(d.case, d.rule, d.tz, d.uow)
        d.case.record_abatement(d.stamp, d.rule, d.tz, costs=[i.model_dump() for i in command.costs],
                                without_notice_reason=command.without_notice_reason,
                                repeat_evidence=evidence, max_amount=d.municipality.max_amount)

    def _issue_bill(self, command: c.IssueBill, d: Decision) -> None:
        d.case.issue_bill(d.stamp, d.rule, d.tz, received_on=command.received_on)

    def _record_payment(self, command: c.RecordPayment, d: Decision) -> None:
        d.case.record_payment(d.stamp, amount=command.amount,
                              max_amount=d.municipality.max_amount)

    def _file_appeal(self, command: c.FileAppeal, d: Decision) -> None:
        d.case.file_appeal(d.stamp, d.rule, d.tz, grounds=command.grounds,
                           board_meeting_on=command.board_meeting_on)

    def _decide_appeal(self, command: c.DecideAppeal, d: Decision) -> None:
        d.case.decide_appeal(d.stamp, d.rule, d.tz, outcome=command.outcome,
                             amount=command.amount, max_amount=d.municipality.max_amount)

    def _certify_charge(self, command: c.CertifyCharge, d: Decision) -> None:
        cutoff = self.catalog.municipality(d.case.municipality).certification_cutoff
        d.case.certify_charge(d.stamp, d.rule, d.tz, tax_year=command.tax_year, cutoff=cutoff)

    def _issue_citation(self, command: c.IssueCitation, d: Decision) -> None:
        d.case.issue_citation(d.stamp, d.rule, d.tz, citation_number=command.citation_number,
                              offense_dates=list(command.offense_dates))

    def _refer_to_attorney(self, command: c.ReferToAttorney, d: Decision) -> None:
        d.case.refer_to_attorney(d.stamp, d.rule, reason=command.reason)

    def _record_disposition(self, command: c.RecordDisposition, d: Decision) -> None:
        d.case.record_disposition(d.stamp, outcome=command.outcome,
                                  forfeiture_amount=command.forfeiture_amount,
                                  notes=command.notes, max_amount=d.municipality.max_amount,
                                  convicted=command.convicted)

    def _close(self, command: c.CloseCase, d: Decision) -> None:
        d.case.close(d.stamp, reason=command.reason)

    def _reopen(self, command: c.ReopenCase, d: Decision) -> None:
        d.case.reopen(d.stamp, reason=command.reason)

    def _correct(self, command: c.Correct, d: Decision) -> None:
        d.case.correct(d.stamp, d.rule, d.tz, events=d.uow.events(d.case),
                       supersedes=command.supersedes,
                       changes=self._validated_changes(d.case, command.changes, d.tz,
                                                       d.stamp.now),
                       reason=command.reason)

    # ------------------------------------------------------------ helpers

    def _issue_document(self, command: Any, d: Decision) -> None:
        """Build the document from the case as it stands (deadlines due by then passed
        first, as before a fact) and record its digest with what it was built from."""
        case, rule, stamp, tz, uow, municipality = (d.case, d.rule, d.stamp, d.tz, d.uow,
                                                    d.municipality)
        document = documents.COMMANDS[command.command]
        if not case.closed:
            case.pass_due_deadlines(until=stamp.at, now=stamp.now, actor=CLOCK_ACTOR)
        documents.check_ready(document, case)
        inputs: dict[str, Any] = {"settings": documents.letterhead(municipality)}
        if document == "referral_packet":
            lookup = self._repeat_offenses or ScanRepeatOffenses(
                lambda: (uow.load(k) for k in uow.all_case_ids()), self._zone_name)
            inputs["prior_violations"] = prior_violations(self.store, case, rule,
                                                          municipality.time_zone, lookup)
        content = documents.build(document, case, uow.events(case), rule, inputs, stamp.at, tz)
        case.issue_document(stamp, document=document, sha256=documents.sha256(content),
                            size=len(content), built_from_version=case.version,
                            generator=documents.GENERATOR, inputs=inputs)

    def advance_clock(self, uow: UnitOfWork, *, until: dt.datetime, now: dt.datetime,
                      actor: str = SCHEDULER_ACTOR, municipality: str | None = None) -> int:
        """Record every deadline due up to ``until`` on every open case, at its true time.

        The journal's ``advance_clock`` and the scheduler's sweep both come here. With a
        deadline index (the worklist view) only the cases it names are loaded, plus the
        cases this unit of work already holds (changed, not yet saved); without one,
        every stored case is looked at.
        """
        self.check_clock(until, now)
        candidates = list(dict.fromkeys([*self.cases_due(until, municipality),
                                         *uow.index.due_by(until, municipality)]))
        passed = 0
        for key in candidates:
            case = uow.load(key)
            if municipality and case.municipality != municipality:
                continue
            recorded = case.pass_due_deadlines(until=until, now=now, actor=actor)
            if recorded:
                uow.note(case)
            passed += recorded
        return passed

    def check_clock(self, until: dt.datetime, now: dt.datetime) -> None:
        """A clock value (advance_clock, a sweep's --now) may not run ahead of the real
        clock by more than the tolerance: deadlines passed early would stay passed."""
        if until > now + self.future_tolerance:
            raise errors.FutureTimeError(
                f"clock {until.isoformat()} is later than the real clock plus the tolerance "
                f"({(now + self.future_tolerance).isoformat(timespec='seconds')}); deadlines "
                "are passed only once they have run (ABATE_FUTURE_TOLERANCE_MINUTES)")

    def cases_due(self, until: dt.datetime, municipality: str | None = None) -> list[UUID]:
        """The cases with an automatic deadline due by ``until``: from the deadline index
        (the worklist view) when there is one, else every stored case."""
        if self._due_deadlines is None:
            return list(self.store.case_ids())
        return self._due_deadlines.cases_due(until=until, municipality=municipality)

    def _repeat_evidence(self, case: Case, rule: Rule, tz: ZoneInfo,
                         uow: UnitOfWork) -> RepeatEvidence:
        question = dict(
            municipality=case.municipality, family=case.rule_family, parcel=case.parcel,
            party=(case.responsible or case.owner or {}).get("name"),
            violation_date=case.observed_at.astimezone(tz).date(),
            window_months=rule.repeat.window_months if rule.repeat else 12,
            exclude_case_ref=case.case_ref,
            counts=rule.repeat.counts if rule.repeat else "parcel_or_party")
        if self._repeat_offenses is None:  # no read model given: scan every stored case
            every_case = ScanRepeatOffenses(lambda: (uow.load(k) for k in uow.all_case_ids()),
                                            self._zone_name)
            return every_case.prior_violations(**question)
        # The view knows what is saved; cases changed in this batch are not saved yet.
        # Their state here (the batch index) wins over what the view saw of them.
        return merge_evidence(self._repeat_offenses.prior_violations(**question),
                              uow.index.prior_violations(**question, zone=tz),
                              superseded=lambda ref: uow.index.holds(case.municipality, ref))

    def _zone_name(self, municipality: str) -> str:
        return self.catalog.municipality(municipality).time_zone

    def _validated_changes(self, case: Case, changes: dict[str, Any], tz: ZoneInfo,
                           now: dt.datetime) -> dict[str, Any]:
        """Corrected case facts and times pass the same checks as when they were first
        given (corrected instants in the municipality's zone, none in the future)."""
        try:
            model = c.CaseFactChanges.model_validate(changes)
        except ValidationError as exc:
            raise errors.InvalidCommandError(
                "; ".join(f"field changes.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                          for e in exc.errors())) from None
        # In the order the person gave them (a set's order would differ from run to run,
        # and with it the stored event's bytes and the seals over them).
        given = model.model_fields_set
        order = [name for name in changes if name in given] + sorted(given - set(changes))
        checked = {name: getattr(model, name) for name in order}
        checked.update(model.model_dump(include=model.model_fields_set - set(TIME_FIELDS)))
        limit = now + self.future_tolerance
        for name in INSTANT_FIELDS:
            if checked.get(name) is not None:
                checked[name] = self._instant(f"changes.{name}", checked[name], limit, tz)
        if checked.get("received_on") is not None:
            self._fact_date("changes.received_on", checked["received_on"], limit, tz)
        if "parcel" in checked:
            municipality = self.catalog.municipality(case.municipality)
            problem = municipality.parcel_error(checked["parcel"]["county"],
                                                checked["parcel"]["number"])
            if problem:
                raise errors.InvalidParcelError(f"field changes.parcel: {problem}")
        return checked


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# Each command on an existing case, and the handler that decides it (``open_case`` and
# ``advance_clock`` are not about one existing case: ``CaseService.execute`` takes them).
HANDLERS: dict[type, Callable[[CaseService, Any, Decision], None]] = {
    c.RecordInspection: CaseService._record_inspection,
    c.RecordServiceAttempt: CaseService._record_service_attempt,
    c.RecordBondDraw: CaseService._record_bond_draw,
    c.DeclareHazard: CaseService._declare_hazard,
    c.ServeNotice: CaseService._serve_notice,
    c.RecordCompliance: CaseService._record_compliance,
    c.RecordAbatement: CaseService._record_abatement,
    c.IssueBill: CaseService._issue_bill,
    c.RecordPayment: CaseService._record_payment,
    c.FileAppeal: CaseService._file_appeal,
    c.DecideAppeal: CaseService._decide_appeal,
    c.CertifyCharge: CaseService._certify_charge,
    c.IssueCitation: CaseService._issue_citation,
    c.ReferToAttorney: CaseService._refer_to_attorney,
    c.RecordDisposition: CaseService._record_disposition,
    c.CloseCase: CaseService._close,
    c.ReopenCase: CaseService._reopen,
    c.Correct: CaseService._correct,
    c.IssueNoticeDocument: CaseService._issue_document,
    c.IssueBillDocument: CaseService._issue_document,
    c.IssueReferralPacket: CaseService._issue_document,
}

"""The use cases: load a case, run one command on it, save (optimistic concurrency).

Every entry point (journal import, CLI, HTTP API, scheduler) goes through
``CaseService.execute``. A batch of commands (a journal) runs in one
``UnitOfWork``: all commands are applied in memory first, and the events are
saved in one transaction only if every command was accepted, so a rejected
journal leaves no event behind.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID
from zoneinfo import ZoneInfo

from eventsourcing.application import AggregateNotFoundError
from pydantic import ValidationError

from cases import commands as c
from cases import errors
from cases.domain import (
    Case,
    DueDeadlines,
    RepeatEvidence,
    RepeatOffenses,
    Stamp,
    case_id,
)
from cases.repeat_scan import ScanRepeatOffenses, merge_evidence
from cases.rules.catalog import Catalog, Rule, default_catalog
from cases.store import CaseStore

SCHEDULER_ACTOR = "abate-clock"


class UnitOfWork:
    """The cases touched by a batch of commands, saved together or not at all."""

    def __init__(self, store: CaseStore):
        self.store = store
        self.cases: dict[UUID, Case] = {}

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

    def all_case_ids(self) -> list[UUID]:
        known = dict.fromkeys(self.store.case_ids())
        known.update(dict.fromkeys(self.cases))
        return list(known)

    def load(self, key: UUID) -> Case:
        if key not in self.cases:
            self.cases[key] = self.store.get_case(key)
        return self.cases[key]

    def commit(self) -> int:
        touched = [case for case in self.cases.values() if case.pending_events]
        if not touched:
            return 0
        return self.store.save_atomically(*touched)


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


class CaseService:
    """Applies commands to cases, with the rule each case was opened under."""

    def __init__(self, store: CaseStore, catalog: Catalog | None = None,
                 repeat_offenses: RepeatOffenses | None = None,
                 due_deadlines: DueDeadlines | None = None):
        self.store = store
        self.catalog = catalog or default_catalog()
        self._repeat_offenses = repeat_offenses
        self._due_deadlines = due_deadlines

    # ------------------------------------------------------------ entry points

    def handle(self, command: Any, now: dt.datetime) -> Outcome:
        """Run one command and save its events (one transaction)."""
        uow = UnitOfWork(self.store)
        outcome = Outcome()
        self.execute(command, now, uow, outcome)
        outcome.events_recorded = uow.commit()
        return outcome

    def import_journal(self, lines: Iterable[str], now: dt.datetime) -> Outcome:
        """Apply a journal (JSON lines) all or nothing; errors carry the line number."""
        uow = UnitOfWork(self.store)
        outcome = Outcome()
        for number, line in enumerate(lines, start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                data = json.loads(line, parse_float=Decimal)
            except json.JSONDecodeError as exc:
                raise errors.JournalError(number, f"not valid JSON: {exc.msg} at column {exc.colno}") from None
            try:
                command = c.parse_command(data)
                self.execute(command, now, uow, outcome)
            except errors.AbateError as exc:
                if isinstance(exc, errors.JournalError):
                    raise
                name = data.get("command") if isinstance(data, dict) else None
                where = f" ({name} {data.get('case_ref', '')})".rstrip() if name else ""
                raise errors.JournalError(number, f"{exc}{where}") from None
        try:
            outcome.events_recorded = uow.commit()
        except errors.ConcurrentChangeError as exc:
            raise errors.JournalError(0, str(exc)) from None
        return outcome

    # ------------------------------------------------------------ dispatch

    def execute(self, command: Any, now: dt.datetime, uow: UnitOfWork, outcome: Outcome) -> None:
        stamp = Stamp(actor=command.actor, at=command.at, now=now, command_id=command.id)
        municipality = self.catalog.municipality(command.municipality)
        tz = ZoneInfo(municipality.time_zone)
        if isinstance(command, c.AdvanceClock):
            outcome.deadlines_passed += self.advance_clock(uow, until=command.at, now=now,
                                                           actor=command.actor,
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
        self._dispatch(command, case, rule, stamp, tz, uow)
        outcome.applied += 1

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

    def _dispatch(self, command: Any, case: Case, rule: Rule, stamp: Stamp, tz: ZoneInfo,
                  uow: UnitOfWork) -> None:
        match command:
            case c.RecordInspection():
                case.record_inspection(stamp, findings=command.findings,
                                       documents=list(command.documents))
            case c.DeclareHazard():
                case.declare_hazard(stamp, rule, description=command.description,
                                    nobody_reachable=command.nobody_reachable)
            case c.ServeNotice():
                evidence = (self._repeat_evidence(case, rule, tz, uow)
                            if rule.repeat and rule.repeat.escalates_notice else None)
                case.serve_notice(stamp, rule, tz, method=command.method,
                                  served_on=command.served_on, delivered_at=command.delivered_at,
                                  cure_days=command.cure_days, repeat_evidence=evidence)
            case c.RecordCompliance():
                case.record_compliance(stamp, notes=command.notes)
            case c.RecordAbatement():
                evidence = None
                if command.without_notice_reason == "repeat_offense":
                    evidence = self._repeat_evidence(case, rule, tz, uow)
                case.record_abatement(stamp, rule, tz,
                                      costs=[i.model_dump() for i in command.costs],
                                      without_notice_reason=command.without_notice_reason,
                                      repeat_evidence=evidence)
            case c.IssueBill():
                case.issue_bill(stamp, rule, tz, received_on=command.received_on)
            case c.RecordPayment():
                case.record_payment(stamp, amount=command.amount)
            case c.FileAppeal():
                case.file_appeal(stamp, rule, tz, grounds=command.grounds,
                                 board_meeting_on=command.board_meeting_on)
            case c.DecideAppeal():
                case.decide_appeal(stamp, rule, tz, outcome=command.outcome, amount=command.amount)
            case c.CertifyCharge():
                cutoff = self.catalog.municipality(case.municipality).certification_cutoff
                case.certify_charge(stamp, rule, tz, tax_year=command.tax_year, cutoff=cutoff)
            case c.IssueCitation():
                case.issue_citation(stamp, rule, citation_number=command.citation_number,
                                    offense_dates=[d.isoformat() for d in command.offense_dates])
            case c.ReferToAttorney():
                case.refer_to_attorney(stamp, rule, reason=command.reason)
            case c.RecordDisposition():
                case.record_disposition(stamp, outcome=command.outcome,
                                        forfeiture_amount=command.forfeiture_amount,
                                        notes=command.notes)
            case c.CloseCase():
                case.close(stamp, reason=command.reason)
            case c.ReopenCase():
                case.reopen(stamp, reason=command.reason)
            case c.Correct():
                case.correct(stamp, event_types=self._event_types(case),
                             supersedes=command.supersedes,
                             changes=self._validated_changes(case, command.changes),
                             reason=command.reason)
            case _:  # pragma: no cover - the parser only yields known commands
                raise errors.InvalidCommandError(f"unhandled command {command!r}")

    # ------------------------------------------------------------ helpers

    def advance_clock(self, uow: UnitOfWork, *, until: dt.datetime, now: dt.datetime,
                      actor: str = SCHEDULER_ACTOR, municipality: str | None = None) -> int:
        """Record every deadline due up to ``until`` on every open case, at its true time.

        The journal's ``advance_clock`` and the scheduler's sweep both come here. With a
        deadline index (the worklist view) only the cases it names are loaded, plus the
        cases this unit of work already holds (changed, not yet saved); without one,
        every stored case is looked at.
        """
        if self._due_deadlines is None:
            candidates = uow.all_case_ids()
        else:
            due = self._due_deadlines.cases_due(until=until, municipality=municipality)
            candidates = list(dict.fromkeys([*due, *uow.cases]))
        passed = 0
        for key in candidates:
            case = uow.load(key)
            if municipality and case.municipality != municipality:
                continue
            passed += case.pass_due_deadlines(until=until, now=now, actor=actor)
        return passed

    def _repeat_evidence(self, case: Case, rule: Rule, tz: ZoneInfo,
                         uow: UnitOfWork) -> RepeatEvidence:
        question = dict(
            municipality=case.municipality, family=case.rule_family, parcel=case.parcel,
            party=(case.responsible or case.owner or {}).get("name"),
            violation_date=case.observed_at.astimezone(tz).date(),
            window_months=rule.repeat.window_months if rule.repeat else 12,
            exclude_case_ref=case.case_ref)
        if self._repeat_offenses is None:  # no read model given: scan every stored case
            every_case = ScanRepeatOffenses(lambda: (uow.load(k) for k in uow.all_case_ids()))
            return every_case.prior_violations(**question)
        # The view knows what is saved; cases changed in this batch are not saved yet.
        # Their state here wins over what the view saw of them.
        in_this_batch = ScanRepeatOffenses(lambda: list(uow.cases.values()))
        return merge_evidence(self._repeat_offenses.prior_violations(**question),
                              in_this_batch.prior_violations(**question),
                              superseded={c.case_ref for c in uow.cases.values()})

    def _validated_changes(self, case: Case, changes: dict[str, Any]) -> dict[str, Any]:
        """Corrected case facts pass the same checks as when they were first given."""
        try:
            checked = c.CaseFactChanges.model_validate(changes).model_dump(exclude_unset=True)
        except ValidationError as exc:
            raise errors.InvalidCommandError(
                "; ".join(f"field changes.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                          for e in exc.errors())) from None
        if "parcel" in checked:
            municipality = self.catalog.municipality(case.municipality)
            problem = municipality.parcel_error(checked["parcel"]["county"],
                                                checked["parcel"]["number"])
            if problem:
                raise errors.InvalidParcelError(f"field changes.parcel: {problem}")
        return checked

    def _event_types(self, case: Case) -> dict[int, str]:
        stored = self.store.events.get(case.id)
        types = {e.originator_version: type(e).__name__ for e in stored}
        for event in case.pending_events:
            types[event.originator_version] = type(event).__name__
        return types

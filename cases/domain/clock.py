"""The case's deadlines, and the clock that records them as passed.

Business time (docs/commands.md, "Business time"): facts are entered in the order they
happened; before a fact at time T is recorded, every automatic deadline of the case due by
T is recorded as passed at its own time (``DeadlinePassed``, actor ``abate-clock``), so a
later fact never hides a deadline that had already run. The journal's ``advance_clock`` and
the scheduler's sweep pass them the same way (``pass_due_deadlines``).
"""

from __future__ import annotations

import datetime as dt

from cases.domain.recording import CaseEvent, CaseState, Stamp
from cases.domain.values import Deadline, replace

CLOCK_ACTOR = "abate-clock"  # who records a deadline as passed


def set_deadlines(case: CaseState, items: list[dict], position: int) -> None:
    """Put the deadlines an event recorded on the case, each remembering the event."""
    for item in items:
        case.deadlines[item["name"]] = Deadline.from_dict({**item, "set_by": position})


def cancel_deadlines(case: CaseState, names: list[str]) -> None:
    """Cancel the named deadlines (a fact ended them); a name the case lacks is skipped."""
    for name in names:
        if name in case.deadlines:
            case.deadlines[name] = replace(case.deadlines[name], state="cancelled")


class Clock:
    """Deadlines on the case and their passing."""

    def pass_due_deadlines(self, until: dt.datetime, now: dt.datetime, actor: str) -> int:
        """Record every open deadline due by ``until``, each at its true time, in order."""
        if self.closed:
            return 0
        due = sorted((d for d in self.deadlines.values()
                      if d.is_open and d.due_at <= until and not d.needs_person),
                     key=lambda d: d.due_at)
        for deadline in due:
            self._record(self.DeadlinePassed, Stamp(actor=actor, at=deadline.due_at, now=now),
                         name=deadline.name, due_at=deadline.due_at,
                         consequence=deadline.consequence, rule=deadline.rule,
                         rule_version=deadline.rule_version, citation=deadline.citation)
        return len(due)

    def _pass_deadlines_before(self, stamp: Stamp) -> None:
        """Before a fact: the deadlines due by its time, recorded as passed by the clock."""
        self.pass_due_deadlines(until=stamp.at, now=stamp.now, actor=CLOCK_ACTOR)

    class DeadlinePassed(CaseEvent):
        TOPIC = "abate.case:Case.DeadlinePassed"
        name: str
        due_at: dt.datetime
        consequence: str
        rule: str
        rule_version: int
        citation: str

        def apply_to(self, case: CaseState) -> None:
            case.deadlines[self.name] = replace(
                case.deadlines[self.name], state="passed", passed_recorded_at=self.timestamp,
                passed_by=self.originator_version)
            if self.name == "cure" and case.status == "notice_served":
                case.status = "cure_period_passed"
            if self.name == "tax_roll_eligible" and case.charge is not None:
                case.charge = replace(case.charge, tax_roll_eligible=True)

    @property
    def cure_deadline(self) -> dt.datetime | None:
        cure = self.deadlines.get("cure")
        return cure.due_at if cure else None

    @property
    def next_deadline(self) -> Deadline | None:
        pending = [d for d in self.deadlines.values() if d.is_open]
        return min(pending, key=lambda d: d.due_at) if pending else None

    def _is_open(self, name: str) -> bool:
        deadline = self.deadlines.get(name)
        return deadline is not None and deadline.is_open

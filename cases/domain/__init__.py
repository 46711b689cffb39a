"""The Case aggregate: one violation, from complaint to close, laid out by stage.

Public methods decide (check invariants, compute deadlines and amounts from the rule
version the case was opened under, with ``at`` and ``now`` passed in); nested events only
assign. Replay never recomputes a date or re-runs a rule. ``case.py`` composes the stages;
each stage's module holds its commands' decisions, their events and how they apply.
"""

from cases.domain.case import Case
from cases.domain.clock import CLOCK_ACTOR
from cases.domain.questions import DueDeadlines, RepeatEvidence, RepeatOffenses
from cases.domain.recording import Stamp, case_id
from cases.statuses import CASE_STATUSES  # the domain's statuses

__all__ = ["CASE_STATUSES", "CLOCK_ACTOR", "Case", "DueDeadlines", "RepeatEvidence",
           "RepeatOffenses", "Stamp", "case_id"]

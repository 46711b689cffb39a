"""The Case aggregate: one violation, from complaint to close, composed of its stages.

Each stage's module holds its commands' decisions, their events and how each event
applies, side by side (``intake``, ``billing``, ``appeals``, ``court``, ``corrections``;
``clock`` the deadlines and their passing, ``papers`` the documents, ``recording`` what
every event carries and the checks every command makes). The library defines each stage's
events again on ``Case`` (``Case.NoticeServed`` ...), under the explicit topics they are
stored with, so the stages can move without breaking stored history.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Aggregate

from cases.domain.appeals import AppealsAndTaxRoll
from cases.domain.billing import AbatementAndBilling
from cases.domain.clock import Clock
from cases.domain.corrections import Corrections
from cases.domain.court import CitationsAndCourt
from cases.domain.intake import IntakeAndNotice
from cases.domain.papers import Papers
from cases.domain.recording import CaseEvent, Recording


class Case(IntakeAndNotice, AbatementAndBilling, AppealsAndTaxRoll, CitationsAndCourt,
           Corrections, Papers, Clock, Recording, Aggregate):
    """One violation case. Addressed by (municipality, case_ref)."""

    TOPIC = "abate.case:Case"
    # v2: the last fact is remembered with its kind and position (was only its time).
    class_version = 2

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A snapshot taken before v2 knows only the last fact's time."""
        state["last_fact"] = {"position": None, "type": None, "at": state.pop("last_fact_at")}

    class Event(CaseEvent):
        """Every event of a case (``CaseEvent``); it keeps the stored topic of its stage's class."""

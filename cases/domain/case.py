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
from cases.domain.values import (
    Abatement,
    Appeal,
    BondDraw,
    Charge,
    Citation,
    Compliance,
    Correction,
    Deadline,
    Disposition,
    Hazard,
    Inspection,
    IssuedDocument,
    LastFact,
    Notice,
    Payment,
    Referral,
    ServiceAttempt,
)

# The case's values in a snapshot taken before v3: lists of them, and single ones.
_LISTS = {"notices": Notice, "service_attempts": ServiceAttempt, "compliances": Compliance,
          "bond_draws": BondDraw, "inspections": Inspection, "abatements": Abatement,
          "payments": Payment, "citations": Citation, "referrals": Referral,
          "dispositions": Disposition, "corrections": Correction, "documents": IssuedDocument}
_SINGLE = {"hazard": Hazard, "charge": Charge, "appeal": Appeal}


class Case(IntakeAndNotice, AbatementAndBilling, AppealsAndTaxRoll, CitationsAndCourt,
           Corrections, Papers, Clock, Recording, Aggregate):
    """One violation case. Addressed by (municipality, case_ref)."""

    TOPIC = "abate.case:Case"
    # v2: the last fact is remembered with its kind and position (was only its time).
    # v3: the state is typed, frozen values (cases.domain.values), no longer dicts.
    class_version = 3

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A snapshot taken before v2 knows only the last fact's time."""
        state["last_fact"] = {"position": None, "type": None, "at": state.pop("last_fact_at")}

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """A snapshot taken before v3 holds dicts, in the shape the values read
        (``from_dict``); lists a state of its time may lack are empty, and the last
        compliance is the last of ``compliances`` (it was also kept as ``complied``)."""
        if not state.get("compliances") and state.get("complied"):
            state["compliances"] = [state["complied"]]  # kept only as the last one then
        for name, value in _LISTS.items():
            state[name] = [value.from_dict(item) for item in state.get(name) or ()]
        for name, value in _SINGLE.items():
            held = state.get(name)
            state[name] = None if held is None else value.from_dict(held)
        state["deadlines"] = {name: Deadline.from_dict(deadline)
                              for name, deadline in state["deadlines"].items()}
        state["last_fact"] = LastFact.from_dict(state["last_fact"])
        state.pop("complied", None)

    class Event(CaseEvent):
        """Every event of a case (``CaseEvent``); it keeps the stored topic of its stage's class."""

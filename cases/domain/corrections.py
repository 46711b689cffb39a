"""Corrections: an earlier fact, or its business times, restated with a reason; the
original stays. A wrong time is corrected by a ``Corrected`` event that carries what
follows from the new time and the deadlines recomputed from it, decided when the
correction is made (``cases.business_time`` gives each fact's effective time).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from cases import deadlines as plan
from cases import errors
from cases.business_time import (
    TIME_FIELDS,
    correctable_times,
    effective_fields,
    effective_times,
    facts_in_order,
    is_fact,
    kind,
)
from cases.domain.appeals import check_meeting
from cases.domain.recording import CaseEvent, CaseState, Stamp, shown
from cases.domain.values import Charge, Correction, Deadline, replace

if TYPE_CHECKING:
    from cases.rules.catalog import Rule

_CORRECTABLE_CASE_FIELDS = ("owner", "responsible", "site_address", "description", "parcel")
_CORRECTABLE = {
    "Opened": set(_CORRECTABLE_CASE_FIELDS),
    "NoticeServed": {"served_on"},
    "InspectionRecorded": {"findings", "documents"},
    "PaymentReceived": {"void"},
}
# Where a fact's business time is kept in the case state: (the attribute holding its value,
# or a list of them; the value's field).
_ENTRY_TIMES = {
    "InspectionRecorded": ("inspections", "at"),
    "ServiceAttempted": ("service_attempts", "at"),
    "ComplianceVerified": ("compliances", "at"),
    "BondDrawn": ("bond_draws", "at"),
    "HazardDeclared": ("hazard", "at"),
    "NoticeServed": ("notices", "served_at"),
    "AbatementRecorded": ("abatements", "at"),
    "PaymentReceived": ("payments", "at"),
    "AppealFiled": ("appeal", "filed_at"),
    "AppealDecided": ("appeal", "decided_at"),
    "CitationIssued": ("citations", "at"),
    "ReferredToAttorney": ("referrals", "at"),
    "DispositionRecorded": ("dispositions", "at"),
}


class Corrections:
    """Corrections of facts and of their times."""

    def correct(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, *, events: list[Any],
                supersedes: int, changes: dict[str, Any], reason: str) -> None:
        """Supersede an earlier fact, or its business times, by its position in the case.

        ``events`` are the case's events so far (stored and pending), in order. The
        correction's own ``at`` is when it was made: it takes no part in the order of facts.
        """
        if self.closed:
            raise errors.CaseClosedError(
                f"case {self.case_ref} is closed ({self.close_reason}); only reopen_case is allowed")
        if not reason.strip():
            raise errors.CommandRejectedError("a correction needs a reason")
        target = next((e for e in events if e.originator_version == supersedes), None)
        if target is None:
            raise errors.NothingToCorrectError(
                f"there is no event {supersedes} on this case (it has {self.version})")
        event_kind = kind(target)
        times = {k: v for k, v in changes.items() if k in TIME_FIELDS}
        if times:
            if len(times) != len(changes):
                raise errors.NothingToCorrectError(
                    "correct business times and other facts in separate corrections "
                    f"(times: {', '.join(sorted(times))}; other: "
                    f"{', '.join(sorted(set(changes) - set(times)))})")
            self._correct_times(stamp, rule, tz, events, target, times, reason)
            return
        allowed = _CORRECTABLE.get(event_kind, set())
        unknown = set(changes) - allowed
        if unknown or not changes:
            fields = ", ".join(sorted(allowed | correctable_times(event_kind))) or "none"
            raise errors.NothingToCorrectError(
                f"cannot correct {', '.join(sorted(unknown)) or 'nothing'} on {event_kind} "
                f"(correctable: {fields})")
        if event_kind == "PaymentReceived":
            if changes.get("void") is not True:
                raise errors.NothingToCorrectError("a payment correction is {'void': true}")
            if self.payments[self.payment_by_version[supersedes]].void:
                raise errors.NothingToCorrectError(f"payment (event {supersedes}) is already void")
        self._record(self.Corrected, stamp, supersedes=supersedes, supersedes_type=event_kind,
                     changes=changes, reason=reason)

    class Corrected(CaseEvent):
        """A fact, or a business time, restated with a reason; the original stays.

        A time correction also carries what it was (``previous``), what follows from the
        new time (``derived``: an incurred date, a bill date and due time) and the
        deadlines recomputed from it with the case's rule version (``deadlines``), all
        decided when the correction was made. Corrections recorded before times could be
        corrected have none of the three."""

        TOPIC = "abate.case:Case.Corrected"
        supersedes: int
        supersedes_type: str
        changes: dict
        reason: str
        previous: dict | None = None
        derived: dict | None = None
        deadlines: list | None = None

        def apply_to(self, case: CaseState) -> None:
            case.corrections.append(Correction(
                at=self.occurred_at, supersedes=self.supersedes,
                supersedes_type=self.supersedes_type, changes=dict(self.changes),
                reason=self.reason,
                previous=None if self.previous is None else dict(self.previous)))
            if self.supersedes_type == "PaymentReceived" and self.changes.get("void"):
                index = case.payment_by_version[self.supersedes]
                payment = case.payments[index] = replace(case.payments[index], void=True)
                case.charge = replace(case.charge, paid=case.charge.paid - payment.amount)
                for name in payment.cancelled:
                    case.deadlines[name] = replace(case.deadlines[name], state="open")
                if case.status == "paid":
                    case.status = payment.status_before
            for name in _CORRECTABLE_CASE_FIELDS:
                if name in self.changes:
                    setattr(case, name, self.changes[name])
            if set(self.changes) & set(TIME_FIELDS):
                _apply_time_correction(case, self)

    def _correct_times(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, events: list[Any],
                       target: Any, times: dict[str, Any], reason: str) -> None:
        """Restate business times; the deadlines counted from them move with them."""
        event_kind, position = kind(target), target.originator_version
        allowed = correctable_times(event_kind)
        if not allowed:
            why = ("a deadline passes at the time its rule gives: correct the fact it counts from"
                   if event_kind == "DeadlinePassed" else "correct the event it corrected instead")
            raise errors.NothingToCorrectError(f"a {event_kind} event has no time to correct; {why}")
        unknown = set(times) - allowed
        if unknown:
            raise errors.NothingToCorrectError(
                f"cannot correct {', '.join(sorted(unknown))} on {event_kind} (its times: "
                f"{', '.join(sorted(allowed))})")
        for name in ("at", "delivered_at"):
            if name in times and times[name] is None:
                raise errors.NothingToCorrectError(f"give the corrected {name}")
        before = effective_fields(target, events)
        if all(before.get(k) == v for k, v in times.items()):
            raise errors.NothingToCorrectError(
                f"{event_kind} (event {position}) already has "
                + ", ".join(f"{k} {shown(v, tz)}" for k, v in sorted(times.items())))
        after = {**before, **times}
        if "at" in times:
            self._check_fact_order(events, position, event_kind, times["at"], tz)
        self._check_paired_times(event_kind, target, after, tz)
        derived, moved = self._recomputed(stamp, rule, tz, target, before, after)
        self._check_reliance(events, position, moved, times, tz)
        self._record(self.Corrected, stamp, supersedes=position, supersedes_type=event_kind,
                     changes=times, reason=reason,
                     previous={k: before.get(k) for k in times}, derived=derived,
                     deadlines=moved)

    def _check_fact_order(self, events: list[Any], position: int, event_kind: str,
                          new_at: dt.datetime, tz: ZoneInfo) -> None:
        """A corrected fact stays between the facts recorded before and after it."""
        facts = facts_in_order(events)
        index = next(i for i, fact in enumerate(facts) if fact[0] == position)
        if index > 0 and new_at < facts[index - 1][2]:
            other, other_kind, other_at = facts[index - 1]
            raise errors.BusinessTimeOrderError(
                f"the corrected at {shown(new_at, tz)} of {event_kind} (event {position}) is before "
                f"the fact recorded before it, {other_kind} (event {other}) at {shown(other_at, tz)}; "
                "a correction keeps the facts in the order they happened")
        if index + 1 < len(facts) and new_at > facts[index + 1][2]:
            other, other_kind, other_at = facts[index + 1]
            raise errors.BusinessTimeOrderError(
                f"the corrected at {shown(new_at, tz)} of {event_kind} (event {position}) is after "
                f"the fact recorded after it, {other_kind} (event {other}) at {shown(other_at, tz)}; "
                "a correction keeps the facts in the order they happened")

    def _check_paired_times(self, event_kind: str, target: Any, after: dict[str, Any],
                            tz: ZoneInfo) -> None:
        """Times that belong together keep their order after the correction."""
        at = after["at"]
        position = target.originator_version
        if event_kind == "Opened":
            snow = after.get("snow_ended_at")
            if snow is not None and snow > at:
                raise errors.BusinessTimeOrderError(
                    f"snow_ended_at {shown(snow, tz)} is after the case was opened (at {shown(at, tz)})")
            for notice in self.notices:
                if notice.delivered_at < at:
                    raise errors.BusinessTimeOrderError(
                        f"the corrected opening {shown(at, tz)} is after the notice delivered at "
                        f"{shown(notice.delivered_at, tz)}; a case is opened before its notices")
        elif event_kind == "NoticeServed":
            self._check_delivery(after["delivered_at"], served_at=at, tz=tz)
        elif event_kind == "BillIssued":
            received, billed_on = after.get("received_on"), at.astimezone(tz).date()
            if received is not None and received < billed_on:
                raise errors.BusinessTimeOrderError(
                    f"received_on {received} is before the bill date {billed_on}")
        elif event_kind == "AppealFiled":
            if after.get("board_meeting_on") is not None:
                check_meeting(after["board_meeting_on"], at.astimezone(tz).date())
            window = self._set_before("appeal_window", position)
            if window is not None and at > window.due_at:
                raise errors.AppealWindowClosedError(
                    f"the corrected filing {shown(at, tz)} is after the appeal window closed "
                    f"({shown(window.due_at, tz)})")
        elif event_kind == "AbatementRecorded":
            cure = self._set_before("cure", position)
            if cure is not None and target.without_notice_reason is None and at < cure.due_at:
                raise errors.CureDeadlineNotPassedError(
                    f"the corrected abatement {shown(at, tz)} is before the cure period ended "
                    f"({shown(cure.due_at, tz)}, {cure.citation})")
        elif event_kind == "ChargeCertified":
            eligible = self._set_before("tax_roll_eligible", position)
            if eligible is not None and at < eligible.due_at:
                raise errors.NotAllowedByRuleError(
                    f"the corrected certification {shown(at, tz)} is before the charge became "
                    f"eligible for the tax roll ({shown(eligible.due_at, tz)})")

    def _set_before(self, name: str, position: int) -> Deadline | None:
        """The deadline ``name`` if an event before ``position`` set it."""
        found = self.deadlines.get(name)
        if found is None or (found.set_by or 0) >= position:
            return None
        return found

    def _recomputed(self, stamp: Stamp, rule: Rule, tz: ZoneInfo, target: Any,
                    before: dict[str, Any], after: dict[str, Any]) -> tuple[dict, list[dict]]:
        """What follows from the corrected times (dates, due times) and the deadlines that
        count from them, recomputed with the case's rule version.

        A deadline still open moves. One already recorded as passed stays passed when its
        corrected time is not later than the correction (its passing then counts at the
        corrected time); otherwise it had not really run: it is open again and passes at
        its corrected time. A deadline a later fact has replaced or cancelled stays as it is.
        """
        event_kind, position = kind(target), target.originator_version
        original = {d["name"]: d for d in getattr(target, "deadlines", None) or ()}
        derived: dict[str, Any] = {}
        names = set(original)
        fresh: list[dict] = []
        if event_kind == "Opened":
            fresh = plan.opening(rule, tz, after["at"], after.get("snow_ended_at"))
        elif event_kind == "NoticeServed":
            fresh = plan.notice(rule, tz, after["delivered_at"], hazard=target.hazard,
                                starts_cure="cure" in original,
                                cure_days=target.cure_days or _stated_days(target, original, tz))
        elif event_kind == "AbatementRecorded":
            fresh = plan.abatement(rule, tz, after["at"], notice_after=True, eligibility=True)
            derived = {"incurred_on": after["at"].astimezone(tz).date(),
                       "incurred_on_before": before["at"].astimezone(tz).date()}
        elif event_kind == "BillIssued":
            terms = plan.bill(rule, tz, after["at"], after.get("received_on"))
            fresh = terms["deadlines"]
            derived = {k: terms[k] for k in ("billed_on", "due_at", "due_basis")}
        elif event_kind == "AppealFiled":
            if after.get("board_meeting_on") is None and "appeal_decision" in original:
                fresh = [original["appeal_decision"]]  # meeting not known here: stays
            else:
                fresh = plan.appeal(rule, tz, after["at"], after.get("board_meeting_on"))
            names |= {d["name"] for d in fresh}
        elif event_kind == "BondDrawn":  # the roll eligibility it set moves with it
            fresh = [{**d, "due_at": after["at"]} for d in original.values()]
        elif event_kind == "AppealDecided":
            terms = plan.decision(rule, tz, after["at"], still_owed=target.due_at is not None)
            fresh = terms["deadlines"]
            derived = {"due_at": terms["due_at"]} if terms["due_at"] else {}
        derived["at_before"] = before["at"]  # finds the fact's entry in an older state
        by_name = {d["name"]: d for d in fresh}
        moved = []
        for name in sorted(names):
            current = self.deadlines.get(name)
            new = by_name.get(name)
            if current is None:
                if new is not None:  # a deadline the corrected times newly give
                    moved.append({**new, "set_by": position})
                continue
            if not _set_by(current, position, original.get(name)) or current.state == "cancelled":
                continue
            if new is None:
                if current.is_open:
                    moved.append({**current.as_dict(), "state": "cancelled"})
                continue
            if new["due_at"] == current.due_at:
                continue
            entry = {**new, "set_by": position}
            if current.state == "passed":
                if new["due_at"] <= stamp.at:
                    entry.update(state="passed", passed_by=current.passed_by,
                                 passed_recorded_at=current.passed_recorded_at)
                else:
                    entry["voided_passing"] = current.passed_by
            moved.append(entry)
        return derived, moved

    def _check_reliance(self, events: list[Any], position: int, moved: list[dict],
                        times: dict[str, Any], tz: ZoneInfo) -> None:
        """A later recorded fact that relied on a deadline must still come after it (an
        abatement after the cure period, a certification after eligibility) or before it
        (an appeal within its window)."""
        effective = effective_times(events)
        changed = ", ".join(f"{k} {shown(v, tz)}" for k, v in sorted(times.items()))
        for deadline in moved:
            if deadline["state"] == "cancelled":
                continue
            name, due = deadline["name"], deadline["due_at"]
            for event in events:
                if event.originator_version <= position or not is_fact(event):
                    continue
                at = effective[event.originator_version]
                relied = (
                    (name == "cure" and kind(event) == "AbatementRecorded"
                     and event.without_notice_reason is None and at < due)
                    or (name == "tax_roll_eligible" and kind(event) == "ChargeCertified" and at < due)
                    or (name == "appeal_window" and kind(event) == "AppealFiled" and at > due))
                if relied:
                    raise errors.BusinessTimeOrderError(
                        f"with {changed} the deadline {name} would be {shown(due, tz)}, but "
                        f"{kind(event)} (event {event.originator_version}) at {shown(at, tz)} relied "
                        "on the deadline as recorded; correct that fact first, or record what "
                        "really happened")


def _set_by(current: Deadline, position: int, original: dict | None) -> bool:
    """Whether the event at ``position`` set the case's current deadline (a state built
    before deadlines remembered it: the deadline still has the time the event gave)."""
    if current.set_by is not None:
        return current.set_by == position
    return original is not None and current.due_at == original["due_at"]


def _stated_days(notice: Any, original: dict[str, dict], tz: ZoneInfo) -> int | None:
    """The cure days a notice stated, from the cure deadline it set (older notices do not
    record them)."""
    cure = original.get("cure")
    if cure is None:
        return None
    days = (cure["due_at"].astimezone(tz).date() - notice.delivered_at.astimezone(tz).date()).days
    return days if days > 0 else None


def _entry_of(case: CaseState, event_kind: str, position: int,
              previous_at: Any) -> tuple[str, int | None] | None:
    """Where the state entry a fact made is: its attribute, and its index where that holds
    a list. Found by its position (by its time in a state built before entries remembered
    their position)."""
    where = _ENTRY_TIMES.get(event_kind)
    if where is None:
        return None
    attribute, key = where
    held = getattr(case, attribute, None)
    if held is None:
        return None
    entries = list(enumerate(held)) if isinstance(held, list) else [(None, held)]
    for index, entry in entries:
        if entry.position == position:
            return attribute, index
    return next(((attribute, index) for index, entry in entries
                 if getattr(entry, key) == previous_at), None)


def _apply_time_correction(case: CaseState, event: Any) -> None:
    """Assign corrected business times, what was derived from them, and moved deadlines."""
    event_kind, position = event.supersedes_type, event.supersedes
    changes, derived = event.changes, event.derived or {}
    at = changes.get("at")
    if event_kind == "Opened":
        if at is not None:
            case.observed_at = at
        if "snow_ended_at" in changes:
            case.snow_ended_at = changes["snow_ended_at"]
    found = _entry_of(case, event_kind, position, derived.get("at_before"))
    if found is not None:
        attribute, index = found
        updates = {name: changes[name] for name in ("delivered_at", "board_meeting_on")
                   if name in changes}
        if at is not None:
            updates[_ENTRY_TIMES[event_kind][1]] = at
        if "incurred_on" in derived:
            updates["incurred_on"] = derived["incurred_on"]
        if index is None:
            setattr(case, attribute, replace(getattr(case, attribute), **updates))
        else:
            entries = getattr(case, attribute)
            entries[index] = replace(entries[index], **updates)
    if case.charge is not None:
        case.charge = _charge_corrected(case.charge, event_kind, at, changes, derived)
    if at is not None and case.last_fact.position == position:
        case.last_fact = replace(case.last_fact, at=at)
    for moved in event.deadlines or ():
        case.deadlines[moved["name"]] = Deadline.from_dict(moved)
        if moved["name"] == "cure" and moved["state"] == "open" \
                and case.status == "cure_period_passed":
            case.status = "notice_served"
        if moved["name"] == "tax_roll_eligible" and case.charge is not None:
            case.charge = replace(case.charge, tax_roll_eligible=moved["state"] == "passed")


def _charge_corrected(charge: Charge, event_kind: str, at: dt.datetime | None,
                      changes: dict[str, Any], derived: dict[str, Any]) -> Charge:
    """The charge after a correction of the times it was derived from."""
    if "incurred_on" in derived and charge.incurred_on == derived["incurred_on_before"]:
        charge = replace(charge, incurred_on=derived["incurred_on"])
    if event_kind == "BillIssued" and charge.billed_at in (None, derived.get("at_before")):
        if at is not None:
            charge = replace(charge, billed_at=at)
        if "received_on" in changes:
            charge = replace(charge, received_on=changes["received_on"])
        charge = replace(charge, **{k: v for k, v in derived.items()
                                    if k in ("billed_on", "due_at", "due_basis")})
    if event_kind == "AppealDecided" and "due_at" in derived \
            and charge.due_basis == "appeal decided":
        charge = replace(charge, due_at=derived["due_at"])
    if event_kind == "ChargeCertified" and at is not None and charge.certified:
        charge = replace(charge, certified=replace(charge.certified, at=at))
    return charge

"""The case's state as typed, frozen values: a deadline, the charge, a notice served, a
payment, an appeal...

Events record plain data, and their stored fields never change shape; each event's
``apply_to`` turns its data into these values, and a later event replaces a value
(``replace`` below, ``dataclasses.replace`` made faster), never edits one. ``as_dict`` is a value in the shape the case has
always shown it (``abate case show``, the API, the referral packet) and snapshots store it
in; ``from_dict`` reads that shape, also from a snapshot written before the values
(``Case.upcast_v2_v3``). A field left out of that shape where it had no value is left out
again (``_OMITTED``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar, Self

from eventsourcing.persistence import Transcoding

from cases.domain.questions import RepeatEvidence


@dataclass(frozen=True)
class Value:
    """A frozen value of the case's state, shown and stored as a dict."""

    _OMITTED: ClassVar[tuple[str, ...]] = ()  # fields left out of the dict when None
    _KEYS: ClassVar[dict[str, str]] = {}  # a field shown under another key

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is None and field.name in self._OMITTED:
                continue
            shown[self._KEYS.get(field.name, field.name)] = _shown(value)
        return shown

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        given = {}
        plain = cls._read.__func__ is Value._read.__func__  # type: ignore[attr-defined]
        for name, key in _field_keys(cls):
            if key in data:
                value = data[key]
                given[name] = ((tuple(value) if isinstance(value, list) else value) if plain
                               else cls._read(name, value))
        return cls(**given)

    @classmethod
    def _read(cls, name: str, value: Any) -> Any:
        """A field's value from its dict shape (a list is kept as a tuple)."""
        return tuple(value) if isinstance(value, list) else value


_FIELD_KEYS: dict[type, tuple[tuple[str, str], ...]] = {}
_FIELD_NAMES: dict[type, frozenset[str]] = {}


def _field_keys(cls: type[Value]) -> tuple[tuple[str, str], ...]:
    """(field, key in the dict shape) of a value class, found once per class: every event
    a view applies reads values from dicts, and ``dataclasses.fields`` is slow."""
    found = _FIELD_KEYS.get(cls)
    if found is None:
        found = _FIELD_KEYS[cls] = tuple((f.name, cls._KEYS.get(f.name, f.name))
                                         for f in dataclasses.fields(cls))
        _FIELD_NAMES[cls] = frozenset(name for name, _ in found)
    return found


def replace(value: Any, /, **changes: Any) -> Any:
    """``dataclasses.replace`` for a frozen value: a copy with ``changes``. A value has no
    ``__post_init__``, so the copy is made without running ``__init__`` again, several
    times faster (views apply this for most events); other objects go to the library."""
    if not isinstance(value, Value):
        return dataclasses.replace(value, **changes)
    cls = type(value)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        _field_keys(cls)
        names = _FIELD_NAMES[cls]
    if not names.issuperset(changes):
        unknown = changes.keys() - names
        raise TypeError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
    copy = object.__new__(cls)
    copy.__dict__.update(value.__dict__, **changes)
    return copy


def _shown(value: Any) -> Any:
    """A field in the dict shape: values as dicts, tuples as lists, containers copied."""
    if isinstance(value, Value | RepeatEvidence):
        return value.as_dict()
    if isinstance(value, tuple | list):
        return [_shown(item) for item in value]
    if isinstance(value, dict):
        return {key: _shown(item) for key, item in value.items()}
    return value


def _evidence(value: Any) -> RepeatEvidence | None:
    if value is None or isinstance(value, RepeatEvidence):
        return value
    return RepeatEvidence.from_dict(value)


@dataclass(frozen=True)
class Deadline(Value):
    """A deadline on the case: computed once from the rule version when the fact that starts
    it is recorded; ``open`` until it passes (the clock), is cancelled (a fact ended it) or
    is set again. ``set_by``: the position of the event that set it."""

    name: str
    due_at: dt.datetime
    consequence: str
    rule: str
    rule_version: int
    citation: str
    needs_person: bool
    state: str = "open"  # open | passed | cancelled
    set_by: int | None = None
    passed_recorded_at: dt.datetime | None = None
    passed_by: int | None = None
    voided_passing: int | None = None  # a passing a time correction showed had not run

    _OMITTED = ("set_by", "passed_recorded_at", "passed_by", "voided_passing")

    @property
    def is_open(self) -> bool:
        return self.state == "open"


@dataclass(frozen=True)
class LastFact(Value):
    """The last fact recorded: its position, kind and business time (the order check)."""

    position: int | None
    type: str | None
    at: dt.datetime


@dataclass(frozen=True)
class Inspection(Value):
    at: dt.datetime
    findings: str
    documents: tuple[str, ...]
    position: int | None = None

    _OMITTED = ("position",)


@dataclass(frozen=True)
class Hazard(Value):
    at: dt.datetime
    nobody_reachable: bool
    description: str
    position: int | None = None

    _OMITTED = ("position",)


@dataclass(frozen=True)
class ServiceAttempt(Value):
    """A failed attempt to serve a notice by a primary method; a notice served by a fallback
    method names those it relied on (without who recorded them)."""

    at: dt.datetime
    method: str
    attempted_by: str
    result: str
    recorded_by: str | None = None
    position: int | None = None

    _OMITTED = ("recorded_by", "position")


@dataclass(frozen=True)
class Notice(Value):
    """A notice served: how, on whom, when served and delivered, and what it relied on."""

    method: str
    served_on: str
    served_at: dt.datetime
    delivered_at: dt.datetime
    hazard: bool
    repeat_evidence: RepeatEvidence | None
    repeat_consequence: str | None
    position: int | None = None
    after_attempts: tuple[ServiceAttempt, ...] | None = None  # by a fallback method only
    fallback_citation: str | None = None

    def as_dict(self) -> dict[str, Any]:
        shown = super().as_dict()
        if self.after_attempts is not None:
            shown["fallback_citation"] = self.fallback_citation
        return shown

    _OMITTED = ("position", "after_attempts", "fallback_citation")

    @classmethod
    def _read(cls, name: str, value: Any) -> Any:
        if name == "repeat_evidence":
            return _evidence(value)
        if name == "after_attempts" and value is not None:
            return tuple(a if isinstance(a, ServiceAttempt) else ServiceAttempt.from_dict(a)
                         for a in value)
        return super()._read(name, value)


@dataclass(frozen=True)
class Compliance(Value):
    at: dt.datetime
    position: int | None = None

    _OMITTED = ("position",)


@dataclass(frozen=True)
class Cost(Value):
    item: str
    amount: Decimal


@dataclass(frozen=True)
class Abatement(Value):
    """The village's abatement: its costs, when incurred, why without notice, and whether a
    bill has charged it."""

    at: dt.datetime
    costs: tuple[Cost, ...]
    total: Decimal
    incurred_on: dt.date
    without_notice_reason: str | None
    repeat_evidence: RepeatEvidence | None
    billed: bool
    position: int | None = None

    _OMITTED = ("position",)

    @classmethod
    def _read(cls, name: str, value: Any) -> Any:
        if name == "costs":
            return tuple(c if isinstance(c, Cost) else Cost.from_dict(c) for c in value)
        if name == "repeat_evidence":
            return _evidence(value)
        return super()._read(name, value)


@dataclass(frozen=True)
class Certification(Value):
    """The unpaid balance certified to a year's tax roll."""

    tax_year: int
    county: str
    amount: Decimal
    at: dt.datetime
    by: str


@dataclass(frozen=True)
class Charge(Value):
    """What the case charges: the principal and what was paid, the bill's dates and party
    (none where the rule bills nothing: the cost is the charge), the appeal's state, the
    tax roll, and a draw on a bond."""

    principal: Decimal
    paid: Decimal
    incurred_on: dt.date | None
    billed_on: dt.date | None
    due_at: dt.datetime | None
    due_basis: str
    appeal_state: str = "none"
    tax_roll_eligible: bool = False
    certified: Certification | None = None
    billed_at: dt.datetime | None = None  # these three: once a bill is issued
    received_on: dt.date | None = None
    bill_to: dict[str, str] | None = None
    bond_drawn: Decimal | None = None  # these three: once a bond is drawn on
    roll_year: int | None = None
    work_completed_on: dt.date | None = None

    _BILL = ("billed_at", "received_on", "bill_to")
    _BOND = ("bond_drawn", "roll_year", "work_completed_on")

    @property
    def balance(self) -> Decimal:
        return self.principal - self.paid

    def as_dict(self) -> dict[str, Any]:
        left_out = (() if self.bill_to is not None else self._BILL) + \
            (() if self.bond_drawn is not None else self._BOND)
        return {k: v for k, v in super().as_dict().items() if k not in left_out}

    @classmethod
    def _read(cls, name: str, value: Any) -> Any:
        if name == "certified" and isinstance(value, Mapping):
            return Certification.from_dict(value)
        if name == "bill_to" and value is not None:
            return dict(value)
        return super()._read(name, value)


@dataclass(frozen=True)
class BondDraw(Value):
    at: dt.datetime
    amount: Decimal
    balance_after: Decimal
    tax_year: int
    citation: str
    position: int | None = None

    _OMITTED = ("position",)


@dataclass(frozen=True)
class Payment(Value):
    """A payment; voided by a correction, which opens again the deadlines it had closed
    (``cancelled``) and gives the case back its status before it."""

    at: dt.datetime
    amount: Decimal
    after_certification: bool
    void: bool
    position: int | None
    cancelled: tuple[str, ...]
    status_before: str

    _KEYS = {"position": "version"}  # as payments were always shown


@dataclass(frozen=True)
class Appeal(Value):
    filed_at: dt.datetime
    grounds: str
    state: str  # pending | the decision's outcome
    stays_charge: bool
    decision_due: str
    board_meeting_on: dt.date | None
    position: int | None = None
    decided_at: dt.datetime | None = None

    _OMITTED = ("position", "decided_at")


@dataclass(frozen=True)
class Citation(Value):
    """A citation, with the separate offenses the rule counted (as the citation recorded
    them) where the rule divides a continuing violation."""

    at: dt.datetime
    number: str
    offense_dates: tuple[str, ...]
    forfeiture: str
    position: int | None = None
    offense_count: int | None = None
    offenses: tuple[dict[str, Any], ...] | None = None
    offense_basis: dict[str, Any] | None = None

    _OMITTED = ("position", "offense_count", "offenses", "offense_basis")

    @classmethod
    def _read(cls, name: str, value: Any) -> Any:
        if name == "offenses" and value is not None:
            return tuple(dict(o) for o in value)
        if name == "offense_basis" and value is not None:
            return dict(value)
        return super()._read(name, value)


@dataclass(frozen=True)
class Referral(Value):
    at: dt.datetime
    reason: str
    path: str
    position: int | None = None

    _OMITTED = ("position",)


@dataclass(frozen=True)
class Disposition(Value):
    at: dt.datetime
    outcome: str
    forfeiture_amount: Decimal | None
    convicted: bool
    notes: str
    position: int | None = None

    _OMITTED = ("position",)


@dataclass(frozen=True)
class Correction(Value):
    """A correction: what it superseded, the changes and the reason, and for a time what
    it was (``previous``)."""

    at: dt.datetime
    supersedes: int
    supersedes_type: str
    changes: dict[str, Any]
    reason: str
    previous: dict[str, Any] | None = None

    _OMITTED = ("previous",)

    @classmethod
    def _read(cls, name: str, value: Any) -> Any:
        return dict(value) if isinstance(value, Mapping) else value


@dataclass(frozen=True)
class IssuedDocument(Value):
    position: int
    document: str
    at: dt.datetime
    sha256: str
    built_from_version: int


VALUES = (Deadline, LastFact, Inspection, Hazard, ServiceAttempt, Notice, Compliance, Cost,
          Abatement, Certification, Charge, BondDraw, Payment, Appeal, Citation, Referral,
          Disposition, Correction, IssuedDocument, RepeatEvidence)


class ValueAsDict(Transcoding):
    """A value in a snapshot: its dict shape, under the value's name."""

    def __init__(self, value_type: type[Any]):
        self.type = value_type
        self.name = f"abate_{value_type.__name__}"

    def encode(self, obj: Any) -> dict[str, Any]:
        return obj.as_dict()

    def decode(self, data: dict[str, Any]) -> Any:
        return self.type.from_dict(data)


def transcodings() -> list[Transcoding]:
    """What the store registers so a snapshot holds the case's values."""
    return [ValueAsDict(value_type) for value_type in VALUES]

"""What a batch of commands (a journal) knows about its own cases, in a few hundred bytes each.

A large journal cannot keep every case it touched in memory, yet two questions need
all of them: which of them have a deadline due (``advance_clock``), and which are prior
violations of a new one (the repeat-offense look-up, since the views only see what is
saved). ``BatchIndex`` keeps, per touched case, just the facts those questions read,
indexed by parcel and by party, refreshed after every command on the case.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

from dateutil.relativedelta import relativedelta

from cases.domain import Case, RepeatEvidence, case_id
from cases.repeat_scan import normalise_name, notified_or_convicted


@dataclass(frozen=True)
class CaseFacts:
    municipality: str
    case_ref: str
    family: str
    parcel: tuple[str, str]
    party: str
    observed_at: dt.datetime
    notified_at: tuple[dt.datetime, ...]  # notices, citations, convictions (§ 9.25(28))
    counts: bool  # substantiated and not closed as unfounded
    next_due: dt.datetime | None  # the earliest open deadline the clock may pass


def facts_of(case: Case) -> CaseFacts:
    automatic = [d.due_at for d in case.deadlines.values() if d.is_open and not d.needs_person]
    return CaseFacts(
        municipality=case.municipality, case_ref=case.case_ref, family=case.rule_family,
        parcel=(case.parcel["county"], case.parcel["number"]),
        party=normalise_name((case.responsible or case.owner or {}).get("name")),
        observed_at=case.observed_at, notified_at=tuple(notified_or_convicted(case)),
        counts=case.counts_as_violation,
        next_due=None if case.closed or not automatic else min(automatic))


class BatchIndex:
    """Facts of every case a batch touched, by case, parcel and party."""

    def __init__(self) -> None:
        self.facts: dict[UUID, CaseFacts] = {}
        self._by_parcel: dict[tuple[str, str, tuple[str, str]], set[UUID]] = defaultdict(set)
        self._by_party: dict[tuple[str, str, str], set[UUID]] = defaultdict(set)

    def __contains__(self, key: UUID) -> bool:
        return key in self.facts

    def note(self, key: UUID, case: Case) -> None:
        """Refresh what the index knows of a case after a command on it."""
        old = self.facts.get(key)
        new = facts_of(case)
        if old is not None and (old.parcel, old.party, old.family) != (new.parcel, new.party,
                                                                      new.family):
            self._by_parcel[(old.municipality, old.family, old.parcel)].discard(key)
            self._by_party[(old.municipality, old.family, old.party)].discard(key)
        self.facts[key] = new
        self._by_parcel[(new.municipality, new.family, new.parcel)].add(key)
        if new.party:
            self._by_party[(new.municipality, new.family, new.party)].add(key)

    def holds(self, municipality: str, case_ref: str) -> bool:
        """Whether the batch touched this case (its state here supersedes the views')."""
        return case_id(municipality, case_ref) in self.facts

    def due_by(self, until: dt.datetime, municipality: str | None = None) -> list[UUID]:
        return [key for key, facts in self.facts.items()
                if facts.next_due is not None and facts.next_due <= until
                and (municipality is None or facts.municipality == municipality)]

    def prior_violations(self, *, municipality: str, family: str, parcel: dict[str, str],
                         party: str | None, violation_date: dt.date, window_months: int,
                         exclude_case_ref: str, zone: dt.tzinfo,
                         counts: str = "parcel_or_party") -> RepeatEvidence:
        """The batch's own prior violations (the same answer a scan of the cases gives,
        cases.repeat_scan, for each setting of whom the window counts)."""
        window_start = violation_date - relativedelta(months=window_months)
        keys: set[UUID] = set()
        if counts in ("parcel", "parcel_or_party"):
            keys |= self._by_parcel.get((municipality, family, (parcel["county"],
                                                                parcel["number"])), set())
        party_key = normalise_name(party)
        if party_key and counts != "parcel":
            keys |= self._by_party.get((municipality, family, party_key), set())
        refs = []
        for key in keys:
            facts = self.facts[key]
            if facts.case_ref == exclude_case_ref or not facts.counts:
                continue
            dates = (facts.notified_at if counts == "person_notified_or_convicted"
                     else (facts.observed_at,))
            if within_window(dates, window_start, violation_date, zone):
                refs.append(facts.case_ref)
        return RepeatEvidence(count=len(refs), window_start=window_start,
                              window_end=violation_date, case_refs=sorted(refs), counts=counts)


def within_window(instants: Iterable[dt.datetime], window_start: dt.date,
                  violation_date: dt.date, zone: dt.tzinfo) -> bool:
    """Whether any of these instants falls, as a local date, in [window_start, violation)."""
    return any(window_start <= at.astimezone(zone).date() < violation_date for at in instants)

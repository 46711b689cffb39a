"""Repeat-offense look-up by scanning stored cases.

Answers the ``RepeatOffenses`` question (cases.domain) directly from the event
store: it reads the ``Opened`` events of the municipality and loads the few
cases on the same parcel or with the same responsible party. It is correct but
grows with the number of cases; the repeat-offense projection replaces it when
the entry point passes one in.

Reading (DOMAIN.md): a violation counts from the date it was observed, once
substantiated (a notice served, an abatement or a citation recorded); a case
closed as unfounded never counts; the window is the N months before the new
violation's date. Dates are local dates in the municipality's zone, whatever UTC
offset a time was typed with.

Whom the window counts is the rule's ``repeat.counts``: the same parcel, the same
responsible party (the case's responsible party, else its owner), either, or the
same person previously notified (a notice or citation) or convicted, dated by that
notice, citation or conviction rather than by the violation (§ 9.25(28)).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from cases.localtime import local_date

if TYPE_CHECKING:
    from cases.domain import Case, RepeatEvidence


def normalise_name(name: str | None) -> str:
    return " ".join((name or "").split()).casefold()


class ScanRepeatOffenses:
    """Looks through the given cases (all stored ones, or those of a unit of work)."""

    def __init__(self, cases: Callable[[], Iterable[Case]],
                 time_zone: Callable[[str], str] | None = None):
        self.cases = cases
        self.time_zone = time_zone or _catalog_time_zone

    def prior_violations(self, *, municipality: str, family: str, parcel: dict[str, str],
                         party: str | None, violation_date: dt.date, window_months: int,
                         exclude_case_ref: str, counts: str = "parcel_or_party") -> RepeatEvidence:
        from dateutil.relativedelta import relativedelta

        from cases.domain import RepeatEvidence

        window_start = violation_date - relativedelta(months=window_months)
        party_key = normalise_name(party)
        refs = []
        tz = self.time_zone(municipality)
        for case in self.cases():
            if case.municipality != municipality or case.case_ref == exclude_case_ref:
                continue
            if case.rule_family != family or not case.counts_as_violation:
                continue
            same_parcel = counts in ("parcel", "parcel_or_party") and case.parcel == parcel
            same_party = (counts != "parcel" and bool(party_key)
                          and normalise_name(party_of(case)) == party_key)
            if not (same_parcel or same_party):
                continue
            dates = ([local_date(at, tz) for at in notified_or_convicted(case)]
                     if counts == "person_notified_or_convicted"
                     else [local_date(case.observed_at, tz)])
            if any(window_start <= day < violation_date for day in dates):
                refs.append(case.case_ref)
        return RepeatEvidence(count=len(refs), window_start=window_start,
                              window_end=violation_date, case_refs=sorted(refs), counts=counts)


def _catalog_time_zone(municipality: str) -> str:
    from cases.rules.catalog import default_catalog

    return default_catalog().municipality(municipality).time_zone


def party_of(case: Case) -> str | None:
    """The person a case is against: its responsible party, else its owner."""
    return (case.responsible or case.owner or {}).get("name")


def notified_or_convicted(case: Case) -> list[dt.datetime]:
    """When the case's person was notified of the violation (a notice served, a citation
    issued) or convicted (a disposition recorded as a conviction)."""
    return ([n.served_at for n in case.notices] + [c.at for c in case.citations]
            + [d.at for d in case.dispositions if d.convicted])


def merge_evidence(saved: RepeatEvidence, pending: RepeatEvidence,
                   superseded: Callable[[str], bool]) -> RepeatEvidence:
    """The view's answer for saved cases, with the cases of the current batch (whose
    unsaved state supersedes what the view saw of them) answered from the batch."""
    from cases.domain import RepeatEvidence

    refs = sorted({r for r in saved.case_refs if not superseded(r)} | set(pending.case_refs))
    return RepeatEvidence(count=len(refs), window_start=saved.window_start,
                          window_end=saved.window_end, case_refs=refs,
                          counts=saved.counts or pending.counts)

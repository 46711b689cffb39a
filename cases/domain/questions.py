"""The questions a decision asks of a read model (``cases/`` defines them; the entry point
passes in the view that answers, caught up first), and what an answer recorded."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class RepeatEvidence:
    """What a repeat-offense look-up saw; recorded on the decision that used it."""

    count: int
    window_start: dt.date
    window_end: dt.date
    case_refs: list[str]
    counts: str | None = None  # whom the window counted (the rule's repeat.counts)

    def as_dict(self) -> dict[str, Any]:
        found = {
            "count": self.count,
            "window_start": self.window_start,
            "window_end": self.window_end,
            "case_refs": list(self.case_refs),
        }
        if self.counts is not None:
            found["counts"] = self.counts
        return found

    @classmethod
    def from_dict(cls, data: Any) -> RepeatEvidence:
        """The evidence as a decision recorded it (``as_dict``)."""
        return cls(count=data["count"], window_start=data["window_start"],
                   window_end=data["window_end"], case_refs=list(data["case_refs"]),
                   counts=data.get("counts"))


class RepeatOffenses(Protocol):
    """The question a repeat-offense decision asks of a read model."""

    def prior_violations(
        self,
        *,
        municipality: str,
        family: str,
        parcel: dict[str, str],
        party: str | None,
        violation_date: dt.date,
        window_months: int,
        exclude_case_ref: str,
        counts: str = "parcel_or_party",
    ) -> RepeatEvidence: ...


class DueDeadlines(Protocol):
    """The question a clock sweep asks of a read model: which cases have a deadline due?"""

    def cases_due(self, *, until: dt.datetime, municipality: str | None = None) -> list[uuid.UUID]: ...

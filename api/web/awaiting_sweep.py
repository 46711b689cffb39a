"""A deadline whose time has come but that the scheduler has not recorded as passed yet.

The scheduler records each deadline as passed on its next sweep (every
``ABATE_SWEEP_SECONDS``, docs/operations.md). Until then the case still holds it as open,
and what follows from its passing (a re-inspection, a village abatement, a tax-roll entry)
is not on the worklist yet. The pages say so, with the due time in village time and how
often the scheduler sweeps, instead of an open deadline "overdue by 5 min" that leaves a
clerk wondering why the next step is not offered. A deadline a person must meet (serving a
notice) is not the scheduler's to record: it stays "overdue" with its countdown.

Sweeps are late only counting from when the scheduler could first have seen the deadline:
the later of its due time and when it was recorded (``set_recorded_at``,
``cases.deadline_recorded``). A fact entered with an earlier date sets a deadline long
past seconds ago; its next sweep is not late.
"""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import dataclass, replace
from typing import Any

from api.web.render import local_time
from cases.actions import pending_actions
from cases.localtime import instant

# Missed sweeps (plus a minute for a sweep under way) after which the page no longer
# promises the next sweep but says the scheduler may not be running.
LATE_AFTER_SWEEPS = 2
LATE_GRACE = dt.timedelta(minutes=1)


def every(seconds: int) -> str:
    """An interval as people read it: "1 min", "30 s", "2 min 30 s", "1 h", "1 d"."""
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {unit}")
    return " ".join(parts) or "0 s"


@dataclass(frozen=True)
class Sweeps:
    """How often the scheduler sweeps (the serving process's ``ABATE_SWEEP_SECONDS``)."""

    seconds: int

    def awaiting(self, deadline: dict[str, Any], now: dt.datetime) -> bool:
        """Whether ``deadline`` (a case's, or a worklist row) is due but not yet recorded
        as passed, and is the scheduler's to record (not a person's step)."""
        state = deadline.get("state", "open")  # a worklist row lists only open deadlines
        due = deadline["due_at"]
        return state == "open" and not deadline["needs_person"] and instant(due) <= now

    def state_words(self, deadline: dict[str, Any], now: dt.datetime, tz: str) -> str:
        """What the page says in place of "open, overdue by ...": when it passed and when
        it will be recorded, or, once sweeps were missed, that the scheduler may be down."""
        due = instant(deadline["due_at"])
        passed = f"passed at {local_time(due, tz)}"
        recorded = deadline.get("set_recorded_at")
        sweepable_from = max(due, instant(recorded)) if recorded else due
        if now - sweepable_from > LATE_AFTER_SWEEPS * dt.timedelta(seconds=self.seconds) + LATE_GRACE:
            return (f"{passed}; not recorded yet, although the scheduler sweeps every "
                    f"{every(self.seconds)}: it may not be running (tell whoever runs Abate)")
        return f"{passed}; recorded by the scheduler's next sweep (every {every(self.seconds)})"


def worklist_gains(case: Any, rule: Any, place: Any, name: str) -> list[dict[str, Any]]:
    """The worklist actions the case gains once its deadline ``name`` is recorded as passed
    (``cases.actions`` on the case with that deadline passed, less what it lists already);
    ``place`` is the case's municipality (its roll's cut-off)."""
    now_listed = {(a["action"], a["what"]) for a in pending_actions(case, rule, place)}
    passed = copy.copy(case)  # shallow: only the deadlines differ, and they are copied
    passed.deadlines = {**case.deadlines, name: replace(case.deadlines[name], state="passed")}
    return [a for a in pending_actions(passed, rule, place)
            if (a["action"], a["what"]) not in now_listed]

"""When each of a case's deadlines got its present due time recorded.

A fact entered with an earlier date can set a deadline whose due time is long past; the
scheduler records it as passed on its next sweep. Whether that sweep is late counts from
the later of the due time and this recording (``api/web/awaiting_sweep``), not from the
due time alone. The event that set a deadline, or the correction that moved it, carries
it in its ``deadlines``; its ``timestamp`` is when Abate recorded it (system time).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any


def names_set(event: Any) -> list[str]:
    """The deadlines ``event`` set or moved (a correction's moved ones included)."""
    return [d["name"] for d in getattr(event, "deadlines", None) or ()]


def deadlines_recorded_at(events: Iterable[Any]) -> dict[str, dt.datetime]:
    """Each deadline's name with when its present due time was recorded (the last event
    that set or moved it)."""
    found: dict[str, dt.datetime] = {}
    for event in events:
        for name in names_set(event):
            found[name] = event.timestamp
    return found

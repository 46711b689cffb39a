"""A case as the API and the pages show it: its state and history in the village's local
time, now, as of a business time or as known at a system time, with its version (the
ETag). Both doors read a case through ``read_case``."""

from __future__ import annotations

from typing import Any

from api.services import Services
from cases.history import case_from, describe_case, load_events
from cases.localtime import localized
from cases.page_sizes import DEFAULT_LIMIT


def zone(svc: Services, municipality: str) -> str:
    """The village's time zone, in which its times are shown."""
    return svc.cases.catalog.municipality(municipality).time_zone


def read_case(svc: Services, municipality: str, case_ref: str, *, as_of=None,
              known_at=None, limit: int = DEFAULT_LIMIT,
              offset: int = 0) -> tuple[dict[str, Any], int]:
    """The case as the API shows it, with a page of its events (``limit`` from ``offset``),
    and its version (the ETag: all its events)."""
    events = load_events(svc.store, municipality, case_ref)
    case, shown = case_from(events, as_of=as_of, known_at=known_at)
    body = localized(describe_case(case, shown, as_of=as_of, known_at=known_at,
                                   window=(limit, offset)), zone(svc, municipality))
    return body, events[-1].originator_version

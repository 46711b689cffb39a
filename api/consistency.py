"""Read-your-writes: a read given a log position answers only once it can see that position.

A command answers the log ``position`` it reached. A read that passes it back
(``?position=N``) is answered from views that have applied at least that much of the log:
it waits for them, up to ``ABATE_API_READ_WAIT_SECONDS`` (default 5), and answers 503
``not_yet`` (with ``Retry-After``) if they are still behind then. A position past the end
of the log was never answered by this database: 422.

Who moves the views (``ABATE_API_CATCH_UP``):

- ``on-read`` (default): the reading process applies what its views lack before it reads,
  up to the head of the log, so any read, with or without a position, sees every write
  committed before it, whichever process recorded it. Several processes doing so (uvicorn
  workers, ``abate projections run``) is safe: each page of events is applied once, by
  whoever claims it first (projections/tracking.py).
- ``runner``: reads never apply events; ``abate projections run`` keeps the views current
  (production on PostgreSQL, where it follows the log by LISTEN/NOTIFY). A read without a
  position answers from the views as they stand; a read with one waits for the runner.

Case reads and histories come from the event store itself, which holds every committed
write: the position is only checked against the log there.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import Depends, Query
from starlette.concurrency import run_in_threadpool

from api.deps import ServicesDep
from api.errors import ApiError, ErrorBody
from api.services import Services

POLL_SECONDS = 0.05
POSITION_MAX = 2**62

ReadPosition = Annotated[int | None, Query(
    ge=1, le=POSITION_MAX,
    description="a command's `position`: answer only once the data read includes it "
                "(waits up to ABATE_API_READ_WAIT_SECONDS, then 503)")]

NOT_YET: dict[int | str, dict[str, Any]] = {
    503: {"model": ErrorBody, "description": "the views had not reached the position asked "
                                             "for within the wait; retry (Retry-After)"}}


def reach(svc: Services, views: tuple[str, ...], position: int | None) -> None:
    """Return once ``views`` (the event store itself when none) include ``position``."""
    if views and svc.settings.catch_up == "on-read":
        svc.catch_up(*views)
    if position is None:
        return
    head = svc.head()
    if position > head:
        raise ApiError(422, "invalid", f"query parameter position: {position} is past the end "
                                       f"of the log ({head}); give a position a command "
                                       "answered", "position")
    if not views:
        return
    deadline = time.monotonic() + svc.settings.read_wait_seconds
    while (reached := svc.views_position(views)) < position:
        if time.monotonic() >= deadline:
            raise ApiError(503, "not_yet", f"the views stand at position {reached}, not yet at "
                                           f"{position}, after waiting "
                                           f"{svc.settings.read_wait_seconds:g} s; retry",
                           headers={"Retry-After": "1"}, extra={"position": reached})
        time.sleep(POLL_SECONDS)
        if svc.settings.catch_up == "on-read":
            svc.catch_up(*views)


def caught_up(*views: str) -> Any:
    """A route dependency: ``?position=`` read, and ``views`` brought to it (``reach``)."""
    async def at_position(svc: ServicesDep, position: ReadPosition = None) -> None:
        if position is None and not (views and svc.settings.catch_up == "on-read"):
            return  # nothing to wait for and nothing to catch up: no thread needed
        await run_in_threadpool(reach, svc, views, position)

    return Depends(at_position)

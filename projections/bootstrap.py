"""The one place that wires a case service: the store, the views and the ``CaseService``
whose look-ups read those views, all from ``Settings``.

Every entry point (the API, the scheduler, the view runner beside the API, the command line)
builds them here, so each gets the same rules catalog, letterhead, clock tolerance and journal
limits; a setting added to one door cannot be forgotten at another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: a command that opens only the store loads no view
    from cases.application import CaseService
    from cases.settings import Settings
    from cases.store import CaseStore
    from cases.store_reader import StoreReader
    from projections.runner import ViewRunner


def open_store(settings: Settings, database_url: str | None = None) -> CaseStore:
    """The event store the settings name (``database_url`` wins, as ``--database-url``)."""
    from cases.store import CaseStore

    return CaseStore(database_url or settings.database_url, extra_env=settings.store_env())


def open_views(store: CaseStore | StoreReader, reading: bool = False) -> ViewRunner:
    """Every view over ``store``; ``reading`` for a command that only reads them (no table
    set-up when they are in place: projections/runner.py)."""
    from projections import ALL_VIEWS
    from projections.runner import ViewRunner

    return ViewRunner(store, ALL_VIEWS, reading=reading)


def case_service(settings: Settings, store: CaseStore, runner: ViewRunner) -> CaseService:
    """The case service on ``store`` whose repeat-offense and due-deadline questions are
    answered by ``runner``'s views, with the settings' catalog and limits."""
    from cases.application import CaseService
    from projections.lookups import ProjectedDueDeadlines, ProjectedRepeatOffenses

    return CaseService(store, settings.catalog(),
                       repeat_offenses=ProjectedRepeatOffenses(runner),
                       due_deadlines=ProjectedDueDeadlines(runner),
                       future_tolerance=settings.future_tolerance,
                       journal_max_line_bytes=settings.journal_max_line_bytes,
                       journal_max_depth=settings.journal_max_depth)


@dataclass
class Wired:
    """A store, its views and the service on them; ``close()`` releases what it opened
    (a store passed in stays open: its opener closes it)."""

    store: CaseStore
    runner: ViewRunner
    service: CaseService
    owns_store: bool = True

    def close(self) -> None:
        self.runner.close()
        if self.owns_store:
            self.store.close()


def wire(settings: Settings, database_url: str | None = None, *,
         store: CaseStore | None = None) -> Wired:
    """Open (or take) the store, its views and the case service: what every entry point
    that records cases builds once at its start."""
    owns = store is None
    store = store if store is not None else open_store(settings, database_url)
    try:
        runner = open_views(store)
    except BaseException:
        if owns:
            store.close()
        raise
    try:
        return Wired(store, runner, case_service(settings, store, runner), owns)
    except BaseException:
        runner.close()
        if owns:
            store.close()
        raise

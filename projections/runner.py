"""Runs the views: catch-up in pages, following the log, rebuild, status.

A page of notifications (default 500) is applied to a view in ONE transaction
together with the view's tracking position (``tracking.advance``), so a runner
killed mid-run loses at most the page it was writing and resumes from the last
committed position, and two runners never apply the same event twice. On
PostgreSQL ``follow`` waits on the event store's LISTEN/NOTIFY subscription;
on SQLite it polls. Readers call ``catch_up`` first, so a read after a command
sees that command.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import structlog

from cases.store import CaseStore
from projections import tracking
from projections.case_state import CaseStates
from projections.database import view_engine
from projections.view import View

log = structlog.get_logger("abate.projections")

PAGE_SIZE = 500


@dataclass(frozen=True)
class ViewStatus:
    view: str
    generation: int
    position: int
    head: int

    @property
    def lag(self) -> int:
        return max(self.head - self.position, 0)

    def as_dict(self) -> dict[str, Any]:
        return {"view": self.view, "generation": self.generation, "position": self.position,
                "head": self.head, "lag": self.lag}


class ViewRunner:
    """Keeps the registered views up to date with one event store."""

    def __init__(self, store: CaseStore, view_classes: Iterable[type[View]],
                 schema: str | None = None, page_size: int = PAGE_SIZE):
        self.store = store
        self.view_classes = {cls.name: cls for cls in view_classes}
        self.engine = view_engine(store.database_url, schema or store.schema)
        self.page_size = page_size
        tracking.ensure_tables(self.engine)
        self._views: dict[tuple[str, int], View] = {}
        for name in self.view_classes:
            self._ensure_active(name)

    # ------------------------------------------------------------ generations

    def _ensure_active(self, name: str) -> None:
        with self.engine.begin() as conn:
            if tracking.active_generation(conn, name) is None:
                generation = tracking.add_generation(conn, name, active=True)
                self.view(name, generation.generation).create(conn)

    def view(self, name: str, generation: int) -> View:
        key = (name, generation)
        if key not in self._views:
            self._views[key] = self.view_classes[name](generation)
        return self._views[key]

    def active(self, name: str) -> View:
        with self.engine.connect() as conn:
            generation = tracking.active_generation(conn, name)
        return self.view(name, generation.generation)

    # ------------------------------------------------------------ catching up

    def head(self) -> int:
        return self.store.recorder.max_notification_id() or 0

    def catch_up(self, names: Iterable[str] | None = None, until: int | None = None) -> int:
        """Apply every event not yet in the active generation of each view; returns events applied."""
        target = until if until is not None else self.head()
        with self.engine.connect() as conn:
            behind = [g for g in tracking.active_generations(conn, list(names or self.view_classes))
                      if g.position < target]
        applied = 0
        for generation in behind:  # the common case, nothing new, costs the two queries above
            applied += self._catch_up_generation(generation.view, generation.generation, until)
        return applied

    def _catch_up_generation(self, name: str, generation: int, until: int | None = None,
                             progress: Callable[[int], None] | None = None) -> int:
        view = self.view(name, generation)
        applied = 0
        while True:
            with self.engine.connect() as conn:
                start = next(g.position for g in tracking.generations(conn, name)
                             if g.generation == generation)
            if until is not None and start >= until:
                return applied
            notifications = self.store.recorder.select_notifications(
                start=start + 1, limit=self.page_size, stop=until)
            if not notifications:
                return applied
            try:
                self._apply_page(view, start, notifications)
            except tracking.PositionMovedError:
                log.info("projection_page_skipped", view=name, start=start,
                         reason="another runner applied it")
                continue
            applied += len(notifications)
            if progress:
                progress(len(notifications))

    def _apply_page(self, view: View, start: int, notifications: list[Any]) -> None:
        events = [self.store.mapper.to_domain_event(n) for n in notifications]
        states = CaseStates(view.states, self.store.mapper.transcoder)
        with self.engine.begin() as conn:
            # Claim the page first: this fails (and rolls back) if another runner already
            # moved the position, and on PostgreSQL locks the row until we commit.
            tracking.advance(conn, view.name, view.generation, start, notifications[-1].id)
            view.begin_page()
            states.preload(conn, {e.originator_id for e in events})
            touched = {}
            for event in events:
                case = states.apply(event)
                touched[event.originator_id] = case
                view.on_event(conn, case, event)
            view.on_page_end(conn, touched)
            states.save(conn)

    # ------------------------------------------------------------ following

    def follow(self, stop: threading.Event, poll_seconds: float = 1.0) -> None:
        """Keep catching up until ``stop`` is set (LISTEN/NOTIFY on PostgreSQL)."""
        self.catch_up()
        if self.engine.dialect.name == "postgresql":
            with self.store.recorder.subscribe(gt=self.head()) as subscription:
                watcher = threading.Thread(target=lambda: (stop.wait(), subscription.stop()),
                                           daemon=True)
                watcher.start()
                for _ in subscription:
                    self.catch_up()
                    if stop.is_set():
                        break
            return
        while not stop.wait(poll_seconds):
            self.catch_up()

    # ------------------------------------------------------------ rebuild and status

    def rebuild(self, name: str, progress: Callable[[int], None] | None = None) -> int:
        """Fill a new generation from the first event, then switch readers to it."""
        with self.engine.begin() as conn:
            new = tracking.add_generation(conn, name, active=False)
            old = tracking.active_generation(conn, name)
        view = self.view(name, new.generation)
        view.create(self.engine)
        applied = self._catch_up_generation(name, new.generation, progress=progress)
        applied += self._catch_up_generation(name, new.generation, progress=progress)
        with self.engine.begin() as conn:
            tracking.activate(conn, name, new.generation)
        if old is not None:
            self.view(name, old.generation).drop(self.engine)
            with self.engine.begin() as conn:
                tracking.forget(conn, name, old.generation)
        log.info("projection_rebuilt", view=name, generation=new.generation, events=applied)
        return applied

    def status(self) -> list[ViewStatus]:
        head = self.head()
        found = []
        with self.engine.connect() as conn:
            for name in self.view_classes:
                generation = tracking.active_generation(conn, name)
                found.append(ViewStatus(name, generation.generation, generation.position, head))
        return found

    def close(self) -> None:
        self.engine.dispose()

"""Runs the views: catch-up in pages, following the log, rebuild, status.

The log is read in pages of notifications (default 500), each decoded once; up to
ten pages read one after the other (``PAGES_PER_BATCH``) are applied as one batch to
every view that stands at the same position, in ONE transaction together with
those views' tracking positions (``tracking.advance``), so a runner killed
mid-run loses at most the batch it was writing and resumes from the last
committed position, and two runners never apply the same event twice. A
command's few new events are one short page, so one transaction as always. On
PostgreSQL ``follow`` waits on the event store's LISTEN/NOTIFY subscription;
on SQLite it polls. Readers call ``catch_up`` first, so a read after a command
sees that command.
"""

from __future__ import annotations

import datetime as dt
import gc
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from cases.logging import get_logger
from cases.schema_lock import Lock, held_while_alive, is_abandoned, schema_lock
from projections import tracking
from projections.case_state import CaseStateCache
from projections.database import fit_text, view_engine
from projections.event_decoding import EventDecoder
from projections.view import View

if TYPE_CHECKING:
    from cases.store import CaseStore
    from cases.store_reader import StoreReader

log = get_logger("abate.projections")

PAGE_SIZE = 500
# A catch-up that applied at least this many events refreshes the planner statistics of the
# views it filled (PostgreSQL; ``View.analyze``), as a rebuild does: after a large import, a
# tax-roll list planned on an empty table's statistics sorted on disk, one core, 0.25 s
# instead of 0.18 (docs/benchmarks.md). Autovacuum would, later, where it runs.
ANALYZE_AFTER_EVENTS = 10_000
# Pages applied as one batch, in one transaction, when the log has that many to read (a
# rebuild, a catch-up after an import or downtime): a tenth of the commits, position updates
# and statements per view, and each view's rows written in larger batches, about a sixth
# of a rebuild's time on PostgreSQL and less on SQLite (docs/benchmarks.md). The cost: a
# runner killed mid-batch re-applies up to this many pages, and on SQLite a batch holds the
# write lock about a third of a second (commands wait for it, up to the busy timeout).
PAGES_PER_BATCH = 10


@dataclass(frozen=True)
class ViewStatus:
    view: str
    generation: int
    position: int
    head: int
    rebuilding: tuple[dict[str, int], ...] = ()  # generations a live rebuild is filling
    problems: tuple[dict[str, Any], ...] = ()  # what the view could not store as it was
    # what the last comparison with the events found (``abate verify``), None if never made
    last_check: dict[str, Any] | None = None

    @property
    def lag(self) -> int:
        return max(self.head - self.position, 0)

    def as_dict(self) -> dict[str, Any]:
        return {"view": self.view, "generation": self.generation, "position": self.position,
                "head": self.head, "lag": self.lag, "rebuilding": list(self.rebuilding),
                "problems": list(self.problems), "last_check": self.last_check}


# Pages a catch-up applies before it starts freezing (``old_objects_left_alone``).
FREEZE_AFTER_PAGES = 2


@contextmanager
def old_objects_left_alone() -> Iterator[Callable[[], None]]:
    """Keep Python's cyclic garbage collector off what survived each page, until the end.

    Catching up keeps many objects alive from page to page (the case states in memory,
    the views' statements), and the collector traversed all of them again in every full
    collection: measured at about a fifth of catch-up time (docs/benchmarks.md). After
    each page ``gc.freeze()`` moves what is alive to the permanent generation, which
    collections skip; reference counting still frees those objects as usual. At the end
    everything is unfrozen, so a cycle that became garbage meanwhile is collected then.

    Only a catch-up longer than ``FREEZE_AFTER_PAGES`` pages freezes: a server catches up
    a few events after each command, and freezing the whole heap for them, then thawing it
    for the next full collection to traverse, cost a fifth of a busy server's CPU. A
    process that froze objects itself (a pre-forking server), or a catch-up in another
    thread that is freezing, is left as it is.
    """
    state = {"pages": 0, "freezing": None}

    def between_pages() -> None:
        state["pages"] += 1
        if state["pages"] <= FREEZE_AFTER_PAGES:
            return
        if state["freezing"] is None:  # decided once, as late as possible: the count walks
            state["freezing"] = gc.isenabled() and not gc.get_freeze_count()  # the heap
        if state["freezing"]:
            gc.freeze()

    try:
        yield between_pages
    finally:
        if state["freezing"]:
            gc.unfreeze()


class ViewRunner:
    """Keeps the registered views up to date with one event store."""

    def __init__(self, store: CaseStore | StoreReader, view_classes: Iterable[type[View]],
                 schema: str | None = None, page_size: int = PAGE_SIZE,
                 reading: bool = False, views_url: str | None = None):
        """``reading``: a command that only reads first looks whether every view has an
        active generation whose tables have the columns it defines (one query per table);
        only if not does it take the full start below (schema lock, creating tables,
        dropping leftovers, inspecting every table, rebuilding outdated views), which cost a
        read-only command most of its start (docs/benchmarks.md).

        ``views_url``: a database for the views' tables other than the events' own (the
        scratch copy ``projections.view_check`` fills from the events); its locks are there
        too. Rows and positions then no longer commit with the events."""
        self.store = store
        self.view_classes = {cls.name: cls for cls in view_classes}
        self.schema = schema or store.schema
        self.views_url = views_url or store.database_url
        self.engine = view_engine(self.views_url, self.schema)
        self.page_size = page_size
        self.states = CaseStateCache(store)
        # The mapper's events, decoded faster; made at the first page read, so a command that
        # only reads views already current never builds the store's mapper.
        self.decode: Callable[[Any], Any] | None = None
        self._views: dict[tuple[str, int], View] = {}
        if reading and self._ready_to_read():
            return
        # Processes starting together take turns to create tables and drop leftovers.
        with self._schema_lock():
            tracking.ensure_tables(self.engine)
            self.drop_abandoned_generations()
            stored = sa.inspect(self.engine)  # one look at the stored tables, for every view
            outdated = [name for name in self.view_classes if self._ensure_active(name, stored)]
        for name in outdated:
            self.rebuild(name)

    # ------------------------------------------------------------ generations

    def _schema_lock(self):
        return schema_lock(self.views_url, self.schema)

    def _rebuild_lock_name(self, name: str, generation: int) -> str:
        return f"rebuild-{name}-g{generation}"

    def _ready_to_read(self) -> bool:
        """Every view has an active generation whose tables hold every column defined, and
        no other generation (a rebuild running or killed: the full start sees to it)."""
        try:
            with self.engine.connect() as conn:
                every = tracking.all_generations(conn, list(self.view_classes))
                active = [g for g in every if g.active]
                if len(every) != len(self.view_classes) or \
                        {g.view for g in active} != set(self.view_classes):
                    return False
                written_by = tracking.definition_versions(
                    conn, [(g.view, g.generation) for g in active])
                if any(version < self.view_classes[view].definition_version
                       for (view, _), version in written_by.items()):
                    return False
                for g in active:
                    for table in self.view(g.view, g.generation).metadata.sorted_tables:
                        stored = set(conn.execute(sa.select(sa.text("*")).select_from(
                            sa.table(table.name)).limit(0)).keys())
                        if not stored >= set(table.columns.keys()):
                            return False
        except sa.exc.DBAPIError:  # no positions table or no view table yet
            return False
        return True

    def _ensure_active(self, name: str, stored: sa.Inspector) -> bool:
        """Give the view an active generation; True if its stored one is outdated."""
        with self.engine.begin() as conn:
            active = tracking.active_generation(conn, name)
            if active is None:
                generation = tracking.add_generation(conn, name, active=True)
                self._note_definition(conn, name, generation.generation)
                self.view(name, generation.generation).create(conn)
                return False
            [written_by] = tracking.definition_versions(
                conn, [(name, active.generation)]).values()
        stale = self.view(name, active.generation).differences(stored)
        current = self.view_classes[name].definition_version
        if written_by < current:  # the same columns, rows an older definition wrote
            stale.append(f"written by definition {written_by}, this Abate writes {current}")
        if stale:  # tables written by an older Abate: views are derived, so rebuild them
            log.warning("projection_outdated", view=name, generation=active.generation,
                        differences=stale)
            return True
        view = self.view(name, active.generation)
        missing = view.missing_indexes(stored)
        if missing:  # an index a later Abate added: the rows stand, so only build it
            view.create_indexes(self.engine)
            log.info("projection_indexes_added", view=name, generation=active.generation,
                     indexes=[i.name for i in missing])
        return False

    def _note_definition(self, conn: sa.Connection, name: str, generation: int) -> None:
        tracking.record_definition(conn, name, generation,
                                   self.view_classes[name].definition_version)

    def drop_abandoned_generations(self) -> list[tuple[str, int]]:
        """Drop every generation readers do not use and no live process is rebuilding
        (a rebuild killed half-way, or the generation a finished rebuild replaced).

        Call while holding the schema lock. A rebuild holds its generation's lock until it
        ends (the server or the operating system releases it when the process dies), so a
        generation whose lock is free is abandoned."""
        with self.engine.connect() as conn:
            inactive = [g for name in self.view_classes
                        for g in tracking.generations(conn, name) if not g.active]
        dropped = []
        for g in inactive:
            lock = is_abandoned(self.views_url, self.schema,
                                self._rebuild_lock_name(g.view, g.generation))
            if lock is None:
                log.info("projection_rebuild_running", view=g.view, generation=g.generation,
                         position=g.position)
                continue
            try:
                view = self.view(g.view, g.generation)
                tables = [t for t in sa.inspect(self.engine).get_table_names()
                          if t in view.metadata.tables or view.is_own_table(t)]
                view.drop(self.engine)
                with self.engine.begin() as conn:
                    tracking.forget(conn, g.view, g.generation)
                log.warning("projection_leftover_dropped", view=g.view, generation=g.generation,
                            position=g.position, tables=sorted(tables))
                dropped.append((g.view, g.generation))
            finally:
                lock.release(forget=True)
        return dropped

    def view(self, name: str, generation: int) -> View:
        key = (name, generation)
        if key not in self._views:
            self._views[key] = self.view_classes[name](generation,
                                                       dialect=self.engine.dialect.name)
        return self._views[key]

    def active(self, name: str) -> View:
        with self.engine.connect() as conn:
            generation = tracking.active_generation(conn, name)
        return self.view(name, generation.generation)

    # ------------------------------------------------------------ catching up

    def head(self) -> int:
        return self.store.log_head()

    def behind(self, names: Iterable[str] | None = None) -> bool:
        """Whether any of the views (all when none is named) lacks events of the log."""
        target = self.head()
        with self.engine.connect() as conn:
            return any(g.position < target for g in
                       tracking.active_generations(conn, list(names or self.view_classes)))

    def catch_up(self, names: Iterable[str] | None = None, until: int | None = None,
                 progress: Callable[[int], None] | None = None,
                 stop: threading.Event | None = None) -> int:
        """Apply every event not yet in the active generation of each view; returns events applied.

        ``progress`` is called with the number of events after each committed page; once
        ``stop`` is set, the catch-up ends after the batch under way (each batch commits
        with its position, so the next catch-up goes on from there)."""
        target = until if until is not None else self.head()
        with self.engine.connect() as conn:
            behind = [(g.view, g.generation) for g in
                      tracking.active_generations(conn, list(names or self.view_classes))
                      if g.position < target]
        if not behind:  # the common case, nothing new, costs the two queries above
            return 0
        applied = self._catch_up(behind, until, progress, stop)
        if applied >= ANALYZE_AFTER_EVENTS and not (stop and stop.is_set()):
            for name, generation in behind:
                self.view(name, generation).analyze(self.engine)
        return applied

    def _catch_up(self, targets: list[tuple[str, int]], until: int | None = None,
                  progress: Callable[[int], None] | None = None,
                  stop: threading.Event | None = None) -> int:
        """Bring the given (view, generation) pairs to ``until`` (or the head).

        Views that stand at the same position share each page: it is read and
        decoded once, and up to ``PAGES_PER_BATCH`` pages read one after the other are
        applied to all of them as one, in one transaction. A view further back catches
        up alone until it reaches the others.
        """
        with old_objects_left_alone() as between_pages:
            return self._catch_up_pages(targets, until, progress, between_pages, stop)

    def _catch_up_pages(self, targets: list[tuple[str, int]], until: int | None,
                        progress: Callable[[int], None] | None,
                        between_pages: Callable[[], None],
                        stopping: threading.Event | None = None) -> int:
        applied = 0
        positions: dict[tuple[str, int], int] | None = None
        while True:
            between_pages()
            if stopping is not None and stopping.is_set():
                log.info("views_catch_up_stopped", events_applied=applied)
                return applied
            if positions is None:  # at the start, and after another runner moved a view
                with self.engine.connect() as conn:
                    positions = tracking.positions(conn, targets)
            behind = {key: p for key, p in positions.items() if until is None or p < until}
            if not behind:
                return applied
            start = min(behind.values())
            group = [self.view(*key) for key, p in behind.items() if p == start]
            ahead = [p for p in behind.values() if p > start]
            limits = ahead + ([until] if until is not None else [])
            stop = min(limits, default=None)  # stop where the next view stands, to merge
            notifications, events = self._read_pages(start, stop, between_pages)
            if not notifications:
                return applied
            try:
                self._apply_page(group, start, notifications, events)
            except tracking.PositionMovedError:
                log.info("projection_page_skipped", views=[v.name for v in group], start=start,
                         reason="another runner applied it")
                positions = None
                continue
            for view in group:  # where the page's claim (tracking.advance) moved them
                positions[(view.name, view.generation)] = notifications[-1].id
            applied += len(notifications)
            if progress:
                progress(len(notifications))

    def _decoder(self) -> Callable[[Any], Any]:
        """``self.decode``, made at its first use (see ``__init__``)."""
        if self.decode is None:
            self.decode = EventDecoder(self.store.mapper)
        return self.decode

    def _read_pages(self, start: int, stop: int | None,
                    between_pages: Callable[[], None]) -> tuple[list[Any], list[Any]]:
        """The notifications of up to ``PAGES_PER_BATCH`` pages of the log after position ``start``
        (to ``stop``), read a page (``page_size``) at a time, and their events, each page
        decoded as it is read (``between_pages`` after each, as in a catch-up: the collector
        then leaves what was read alone, where a batch decoded at once made its young
        generations large: 9 % of a 100,000-case rebuild, docs/benchmarks.md)."""
        decode = self._decoder()
        # Case ids as stored when the decoder converts them (one UUID per case, not per row).
        as_stored = isinstance(decode, EventDecoder)
        read: list[Any] = []
        events: list[Any] = []
        for number in range(PAGES_PER_BATCH):
            if number:
                between_pages()
            page = self.store.log_page(start + 1, self.page_size, stop, ids_as_stored=as_stored)
            read += page
            events += map(decode, page)
            if len(page) < self.page_size or (page and page[-1].id == stop):
                break
            start = page[-1].id
        return read, events

    def _apply_page(self, views: list[View], start: int, notifications: list[Any],
                    events: list[Any] | None = None) -> None:
        """Apply the notifications (and their decoded ``events``, when already decoded) to the
        views, in one transaction."""
        if events is None:  # a page read elsewhere (tests)
            events = list(map(self._decoder(), notifications))
        with self.engine.begin() as conn:
            # Claim the page first: this fails (and rolls back) if another runner already
            # moved a position, and on PostgreSQL locks the rows until we commit.
            tracking.advance(conn, [(v.name, v.generation) for v in views], start,
                             notifications[-1].id)
            for view in views:
                view.begin_page()
                view.unstorable = []
            listening = [v for v in views if type(v).on_event is not View.on_event]
            by_class: dict[type, list[Callable[..., None]]] = {}  # who listens, per class
            advance = self.states.advance
            touched, opened = {}, set()
            for event in events:
                case = touched[event.originator_id] = advance(event)
                if event.originator_version == 1:
                    opened.add(event.originator_id)
                listeners = by_class.get(event.__class__)
                if listeners is None:
                    listeners = by_class[event.__class__] = [
                        v.on_event for v in listening if v.listens_to(event.__class__)]
                for on_event in listeners:
                    on_event(conn, case, event)
            for view in views:
                view.on_page_end(conn, touched, opened)
            if any(view.unstorable for view in views):
                last = {str(event.originator_id): notification.id
                        for notification, event in zip(notifications, events)}
                for view in views:
                    if view.unstorable:
                        self._record_problems(conn, view, touched, last, notifications[-1].id)

    def _record_problems(self, conn: sa.Connection, view: View, touched: dict[Any, Any],
                         last: dict[str, int], page_end: int) -> None:
        """Record (with the page) what the view stored differently from the record, per case
        with the log position of its last event in the page; and log it."""
        refs = {str(key): case.case_ref for key, case in touched.items()}
        found = [tracking.Problem(case_id, fit_text(refs.get(case_id, "?"), None)[0],
                                  last.get(case_id, page_end), problem)
                 for case_id, problem in view.unstorable]
        view.unstorable = []
        tracking.record_problems(conn, view.name, view.generation, found,
                                 dt.datetime.now(dt.timezone.utc).isoformat())
        for problem in dict.fromkeys(found):
            log.warning("projection_problem", view=view.name, generation=view.generation,
                        case_ref=problem.case_ref, case_id=problem.case_id,
                        position=problem.position, problem=problem.problem)

    # ------------------------------------------------------------ following

    def follow(self, stop: threading.Event, poll_seconds: float = 1.0,
               on_following: Callable[[], None] | None = None) -> None:
        """Keep catching up until ``stop`` is set (LISTEN/NOTIFY on PostgreSQL);
        ``on_following`` is called once caught up, after the line saying so."""
        self.catch_up(stop=stop)
        if stop.is_set():
            return
        # One line when following starts: an operator (and a supervisor) sees it is up.
        log.info("views_following", position=self.head())
        if on_following is not None:
            on_following()
        if self.engine.dialect.name == "postgresql":
            with self.store.recorder.subscribe(gt=self.head()) as subscription:
                watcher = threading.Thread(target=lambda: (stop.wait(), subscription.stop()),
                                           daemon=True)
                watcher.start()
                for _ in subscription:
                    self.catch_up(stop=stop)
                    if stop.is_set():
                        break
            return
        while not stop.wait(poll_seconds):
            self.catch_up(stop=stop)

    # ------------------------------------------------------------ rebuild and status

    def rebuild(self, *names: str, progress: Callable[[int], None] | None = None) -> int:
        """Fill a new generation of each named view (all when none is named) from the first
        event, then switch readers to it. Views rebuilt together share every page."""
        names = names or tuple(self.view_classes)
        unknown = [n for n in names if n not in self.view_classes]
        if unknown:
            raise ValueError(f"no view {unknown[0]!r} (known: {', '.join(self.view_classes)})")
        new: dict[str, int] = {}
        alive: list[Lock] = []
        try:
            with self._schema_lock():
                with self.engine.begin() as conn:
                    for name in names:
                        new[name] = tracking.add_generation(conn, name, active=False).generation
                        self._note_definition(conn, name, new[name])
                # Held until this rebuild ends: a start meanwhile sees it is running.
                alive = [held_while_alive(self.views_url, self.schema,
                                          self._rebuild_lock_name(name, generation))
                         for name, generation in new.items()]
                for name, generation in new.items():  # indexes for readers come last
                    self.view(name, generation).create(self.engine, every_index=False)
            keys = list(new.items())
            applied = self._catch_up(keys, progress=progress)
            applied += self._catch_up(keys, progress=progress)  # what arrived meanwhile
            for name, generation in keys:
                self.view(name, generation).create_indexes(self.engine)
                self.view(name, generation).analyze(self.engine)
            with self._schema_lock():
                with self.engine.begin() as conn:
                    for name, generation in keys:
                        tracking.activate(conn, name, generation)
                self.drop_abandoned_generations()  # the generations replaced
                for lock in alive:
                    lock.release(forget=True)
                alive = []
        finally:
            for lock in alive:  # failed half-way: the next start drops what it made
                lock.release()
        log.info("projection_rebuilt", views=dict(new), events=applied)
        return applied

    def status(self) -> list[ViewStatus]:
        head = self.head()
        found = []
        with self.engine.connect() as conn:
            for name in self.view_classes:
                every = tracking.generations(conn, name)
                active = next(g for g in every if g.active)
                rebuilding = tuple({"generation": g.generation, "position": g.position}
                                   for g in every if not g.active)
                found.append(ViewStatus(name, active.generation, active.position, head,
                                        rebuilding,
                                        tuple(tracking.problems(conn, name, active.generation)),
                                        tracking.last_check(conn, name, active.generation)))
        return found

    def close(self) -> None:
        self.engine.dispose()

"""Whether each view holds what the events give: ``abate verify``'s check of the views.

Views are derived: every row can be computed again from the events. A row edited, deleted
or added in the database outside Abate changes what the case lists, the worklist or the tax
roll show without touching an event, so no chain and no seal sees it. This check fills a
scratch copy of every view from the events, with the runner and view code a rebuild uses,
in a temporary SQLite file (the live views are only read), up to the position each stored
view stands at; then it compares the two per case: a digest of each case's rows in each
view, and one of the whole view at its position. Each case whose rows differ is named, with
the table and the fields; ``abate projections rebuild VIEW`` repairs the view. It costs
about a rebuild (docs/operations.md).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from cases.logging import get_logger
from projections import tracking
from projections.database import batches_of_rows
from projections.runner import ViewRunner
from projections.view import View

if TYPE_CHECKING:
    from cases.store import CaseStore

log = get_logger("abate.projections")

ROWS_PER_READ = 5_000
DESCRIBED_PER_VIEW = 100  # cases of one view described row by row; any more are only named
READ_TRIES = 5  # reads of a view that a runner moved meanwhile, before giving up
_NAMING = ("municipality", "case_ref")  # the columns that name a case in a view's rows
_SHOWN_CHARACTERS = 60


@dataclass(frozen=True)
class Found:
    """One way a case's stored rows of one table differ from the rows the events give."""

    kind: str  # "altered" (a row there, some fields not), "missing", "extra", "differs"
    problem: str
    # (field, stored value, value the events give) of an altered row
    changes: tuple[tuple[str, Any, Any], ...] = ()


@dataclass(frozen=True)
class Difference:
    """One way a case's stored rows in one table of a view differ from what the events give."""

    view: str
    case: str  # ``municipality:case_ref``, as ``abate verify`` names cases (else the case id)
    case_id: str
    table: str
    found: Found

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(name for name, _, _ in self.found.changes)

    def as_dict(self) -> dict[str, Any]:
        return {"view": self.view, "case": self.case, "case_id": self.case_id,
                "table": self.table, "kind": self.found.kind, "fields": list(self.fields),
                "changes": [{"field": name, "stored": stored, "from_events": given}
                            for name, stored, given in self.found.changes],
                "problem": self.found.problem}


@dataclass(frozen=True)
class CheckedView:
    """One view compared at its position: its digest stored and recomputed from the events."""

    view: str
    title: str
    generation: int
    position: int
    cases: int  # cases with rows, stored
    digest: str
    digest_from_events: str
    cases_differing: int

    @property
    def matches(self) -> bool:
        return self.digest == self.digest_from_events and not self.cases_differing

    def as_dict(self) -> dict[str, Any]:
        return {"view": self.view, "title": self.title, "generation": self.generation,
                "position": self.position, "cases": self.cases, "digest": self.digest,
                "digest_from_events": self.digest_from_events, "matches": self.matches,
                "cases_differing": self.cases_differing}


@dataclass
class ViewCheck:
    views: list[CheckedView] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    not_checked: str | None = None  # why the views could not be compared, if they could not

    @property
    def ok(self) -> bool:
        return self.not_checked is None and all(v.matches for v in self.views)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "views": [v.as_dict() for v in self.views],
                "differences": [d.as_dict() for d in self.differences],
                "not_checked": self.not_checked}

    def summary(self) -> str:
        """One line a person reads first: what differs where, and what repairs it."""
        if self.not_checked:
            return f"the views were not compared with the events: {self.not_checked}"
        differing = [v for v in self.views if not v.matches]
        if not differing:
            return "every view holds what the events give"
        first = self.differences[0] if self.differences else None
        table = f"{first.table}: " if first and first.table else ""
        where = f"; first: view {first.view}, case {first.case}, {table}{first.found.problem}" \
            if first else ""
        cases = sum(v.cases_differing for v in differing)
        repair = (f"`abate projections rebuild {differing[0].view}` rebuilds it"
                  if len(differing) == 1 else "`abate projections rebuild` rebuilds them")
        return (f"{_counted(len(differing), 'view')} ({', '.join(v.view for v in differing)}) "
                f"{'differs' if len(differing) == 1 else 'differ'} from what the events give "
                f"in {_counted(cases, 'case')}{where}; {repair} from the events")


class _KeptMoving(Exception):
    """A runner kept moving a view while it was read."""


@dataclass(frozen=True)
class _Stored:
    generation: int
    position: int
    digests: dict[str, bytes]


def check_views(store: CaseStore, runner: ViewRunner,
                exclusive: Callable[[], AbstractContextManager[Any]] = nullcontext) -> ViewCheck:
    """Compare every view of ``runner`` with what the events of ``store`` give, and note the
    result per view (``abate projections status``). ``exclusive``: held while the runner
    catches up and its views are read (the API's one-at-a-time lock), not while the scratch
    copy is filled."""
    try:
        with exclusive():
            runner.catch_up()
            stored = {name: _read_stored(runner, name) for name in runner.view_classes}
        check = _compare_with_events(store, runner, stored)
    except sa.exc.OperationalError:
        raise  # the database cannot be reached or is locked: the command's failure, not this
    except _KeptMoving as exc:
        return ViewCheck(not_checked=f"{exc} kept moving while it was read "
                                     f"({READ_TRIES} tries): run the check again")
    except Exception as exc:  # events that do not decode or apply are evidence, not a crash
        # Said in the report; the traceback only at ABATE_LOG_LEVEL=debug.
        log.debug("view_check_failed", error=f"{type(exc).__name__}: {exc}", exc_info=True)
        return ViewCheck(not_checked=f"the views could not be computed from the events "
                                     f"({type(exc).__name__}: {exc})")
    now = dt.datetime.now(dt.timezone.utc).isoformat()
    with runner.engine.begin() as conn:
        for checked in check.views:
            named = dict.fromkeys(d.case for d in check.differences if d.view == checked.view)
            tracking.record_check(conn, checked.view, checked.generation, checked.position,
                                  now, checked.cases_differing, list(named))
    return check


def _read_stored(runner: ViewRunner, name: str) -> _Stored:
    """The digests of the view's active generation, with the position they stand at: read
    again when a runner moved the view meanwhile (its rows and position commit together)."""
    for _ in range(READ_TRIES):
        with runner.engine.connect() as conn:
            before = tracking.active_generation(conn, name)
            digests = case_digests(conn, runner.view(name, before.generation))
            after = tracking.active_generation(conn, name)
        if after == before:
            return _Stored(before.generation, before.position, digests)
    raise _KeptMoving(f"view {name}")


def _compare_with_events(store: CaseStore, runner: ViewRunner,
                         stored: dict[str, _Stored]) -> ViewCheck:
    check = ViewCheck()
    with tempfile.TemporaryDirectory(prefix="abate-view-check-") as folder:
        scratch = ViewRunner(store, runner.view_classes.values(),
                             views_url=f"sqlite:///{Path(folder) / 'views.sqlite3'}")
        try:
            for position in sorted({side.position for side in stored.values()}):
                scratch.catch_up([n for n, side in stored.items() if side.position == position],
                                 until=position)
            for name, side in stored.items():
                live, fresh = runner.view(name, side.generation), scratch.active(name)
                with scratch.engine.connect() as conn:
                    expected = case_digests(conn, fresh)
                differing = sorted(case for case in side.digests.keys() | expected.keys()
                                   if side.digests.get(case) != expected.get(case))
                check.views.append(CheckedView(
                    name, live.title, side.generation, side.position, len(side.digests),
                    view_digest(side.digests), view_digest(expected), len(differing)))
                check.differences += _differences(runner, scratch, live, fresh, differing,
                                                  side.position)
        finally:
            scratch.close()
    return check


def case_digests(conn: sa.Connection, view: View) -> dict[str, bytes]:
    """A digest of each case's rows in every table of the view (by ``case_id``), whatever
    order the rows are stored in. Rows are read in case order, a batch at a time."""
    hashers: dict[str, Any] = {}

    def add(table: str, case: str | None, rows: list[bytes]) -> None:
        if case is None:
            return
        hasher = hashers.get(case)
        if hasher is None:
            hasher = hashers[case] = hashlib.blake2b(digest_size=16)
        hasher.update(table.encode() + b"\x00")
        for row in sorted(rows):
            hasher.update(row)

    for table in view.metadata.sorted_tables:
        short = _short(view, table)
        at = list(table.columns.keys()).index("case_id")
        case, rows = None, []
        query = sa.select(table).order_by(table.c.case_id)
        for batch in batches_of_rows(conn, query, ROWS_PER_READ):
            for row in batch:
                if row[at] != case:
                    add(short, case, rows)
                    case, rows = row[at], []
                rows.append(repr(tuple(row)).encode() + b"\n")
        add(short, case, rows)
    return {case: hasher.digest() for case, hasher in hashers.items()}


def view_digest(digests: dict[str, bytes]) -> str:
    """One digest of a whole view: its cases' digests in case order."""
    hasher = hashlib.sha256()
    for case in sorted(digests):
        hasher.update(case.encode() + b"\x00" + digests[case])
    return hasher.hexdigest()


def _short(view: View, table: sa.Table) -> str:
    """A table's name within its view (``rows``, ``actions``), the same in every generation."""
    return table.name.removeprefix(f"abate_{view.name}_").removesuffix(f"_g{view.generation}")


def _differences(runner: ViewRunner, scratch: ViewRunner, live: View, fresh: View,
                 differing: list[str], position: int) -> list[Difference]:
    """What differs in each of these cases, row by row for the first ``DESCRIBED_PER_VIEW``."""
    if not differing:
        return []
    found: list[Difference] = []
    names = _case_names(scratch, fresh, differing)
    with runner.engine.connect() as stored, scratch.engine.connect() as expected:
        for number, case_id in enumerate(differing):
            described: list[Difference] = []
            if number < DESCRIBED_PER_VIEW:
                for mine, theirs in zip(live.metadata.sorted_tables,
                                        fresh.metadata.sorted_tables):
                    now, given = _rows(stored, mine, case_id), _rows(expected, theirs, case_id)
                    name = names.get(case_id) or _named_by_rows(mine, now) or case_id
                    described += [Difference(live.name, name, case_id, _short(live, mine), one)
                                  for one in describe_rows(list(mine.columns.keys()), now, given)]
                if not described:  # a runner wrote this case since it was read
                    described.append(Difference(
                        live.name, names.get(case_id, case_id), case_id, "", Found(
                            "differs", "its rows differed from what the events give at "
                            f"position {position} and have changed since: check again")))
            found += described or [Difference(
                live.name, names.get(case_id, case_id), case_id, "",
                Found("differs", "its rows differ from what the events give"))]
    return found


def _rows(conn: sa.Connection, table: sa.Table, case_id: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in conn.execute(sa.select(table).where(table.c.case_id == case_id))]


def _case_names(scratch: ViewRunner, fresh: View, case_ids: list[str]) -> dict[str, str]:
    """``municipality:case_ref`` of these cases, as the events give them: read from the
    scratch copy of any of its views whose rows name their case."""
    names: dict[str, str] = {}
    wanted = set(case_ids)
    views = [fresh] + [scratch.active(n) for n in scratch.view_classes if n != fresh.name]
    with scratch.engine.connect() as conn:
        for view in views:
            for table in view.metadata.sorted_tables:
                if not set(_NAMING) <= set(table.columns.keys()) or not wanted - names.keys():
                    continue
                missing = sorted(wanted - names.keys())
                for start in range(0, len(missing), 500):
                    query = sa.select(table.c.case_id, *(table.c[c] for c in _NAMING)).where(
                        table.c.case_id.in_(missing[start:start + 500]))
                    for case_id, municipality, case_ref in conn.execute(query):
                        names[case_id] = f"{municipality}:{case_ref}"
    return names


def _named_by_rows(table: sa.Table, rows: list[tuple[Any, ...]]) -> str | None:
    """A case the events do not hold, named as its stored rows name it (if they do)."""
    columns = list(table.columns.keys())
    if not rows or not set(_NAMING) <= set(columns):
        return None
    municipality, case_ref = (rows[0][columns.index(c)] for c in _NAMING)
    return f"{municipality}:{case_ref}"


def describe_rows(columns: list[str], stored: list[tuple[Any, ...]],
                  expected: list[tuple[Any, ...]]) -> list[Found]:
    """Each way a case's stored rows of one table differ from the rows the events give: a
    row altered (paired with the given row it shares most values with, at least half),
    a row missing, a row the events do not give."""
    missing = list((Counter(expected) - Counter(stored)).elements())
    extra = list((Counter(stored) - Counter(expected)).elements())
    found: list[Found] = []
    for given in list(missing):
        if not extra:
            break
        shared, closest = max(((sum(a == b for a, b in zip(given, row)), row) for row in extra),
                              key=lambda pair: pair[0])
        if shared * 2 < len(columns):
            continue
        missing.remove(given)
        extra.remove(closest)
        changes = tuple((c, a, b) for c, a, b in zip(columns, closest, given) if a != b)
        found.append(Found("altered", "; ".join(
            f"{c} is {_shown(a)} where the events give {_shown(b)}" for c, a, b in changes),
            changes))
    found += [Found("missing", f"a row the events give is missing ({_row_words(columns, row)})")
              for row in missing]
    found += [Found("extra", f"a row the events do not give ({_row_words(columns, row)})")
              for row in extra]
    return found


def _row_words(columns: Iterable[str], row: tuple[Any, ...]) -> str:
    """A row in a few of its values: enough to tell which one it is."""
    shown = [f"{c} {_shown(v)}" for c, v in zip(columns, row)
             if c not in ("case_id", *_NAMING) and v is not None]
    return ", ".join(shown[:4]) + (", ..." if len(shown) > 4 else "")


def _shown(value: Any) -> str:
    if isinstance(value, str) and len(value) > _SHOWN_CHARACTERS:
        value = value[:_SHOWN_CHARACTERS - 1] + "\u2026"
    return "empty" if value is None else repr(value)


def _counted(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


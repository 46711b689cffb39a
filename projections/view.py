"""What a read model is: its tables (per generation) and what it writes per event.

A view sees each event together with the case's state right after it (see
``case_state``; views share it and store none of it), and rewrites its own rows
for that case. Several views may see the same page in one transaction. Tables are named
``abate_<view>_<table>_g<generation>`` so a rebuild can fill new tables while
readers keep using the old ones.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from projections.database import fit_text, insert_rows, row_tuples, text_columns

if TYPE_CHECKING:
    from cases.domain import Case


def _texts_fit(rows: list[dict[str, Any]], columns: list[tuple[str, int | None]]) -> bool:
    """No text of these (name, limit) columns holds a NUL or is longer than its limit.

    Done in C (``itemgetter``, ``zip``, ``filter``, ``join``): a Python step for every value
    was about a twentieth of a rebuild (docs/benchmarks.md). A value that is neither text
    nor empty (``join`` refuses it) is left out of its column's check, as it is no text."""
    if not rows or not columns:
        return True
    by_column = zip(*row_tuples(rows, [name for name, _ in columns]))
    for (_, limit), values in zip(columns, by_column):
        texts = list(filter(None, values))
        try:
            joined = "".join(texts)
        except TypeError:
            texts = [value for value in texts if value.__class__ is str]
            joined = "".join(texts)
        if texts and ("\x00" in joined or (limit and max(map(len, texts)) > limit)):
            return False
    return True


PARTIAL_INDEX_DIALECTS = ["sqlite", "postgresql"]


def made_on(index: sa.Index, dialect: str) -> bool:
    """Whether the index belongs on a database of this dialect: an index a view gives to one
    dialect only (``Index.ddl_if(dialect=...)``) is left out by ``create_all``, and must be
    by every ``CreateIndex`` Abate runs itself, which SQLAlchemy does not check."""
    only = getattr(getattr(index, "_ddl_if", None), "dialect", None)
    return not only or dialect == only or (not isinstance(only, str) and dialect in only)


def writing_reads(index: sa.Index) -> bool:
    """Whether a view reads this index while it writes: views find the rows they replace
    or update by case id, so an index led by ``case_id`` is needed from the first page
    (without it each page's delete would scan the table). The others serve readers only."""
    first = next(iter(index.expressions), None)
    return getattr(first, "name", None) == "case_id"


class View(ABC):
    """Base of every read model."""

    name: str = ""
    title: str = ""  # what the view is, in words a person reads (the audit page)
    # Raise it when the rows the view writes change while its columns stay (a text worded
    # anew, a date read in another zone): a generation written by an older definition is
    # then rebuilt when a runner starts, as one missing a column is (``ViewRunner``).
    definition_version: int = 1

    def __init__(self, generation: int, dialect: str | None = None):
        """``dialect``: the database's (``sqlite``, ``postgresql``), when known, so that a
        partial index names only its own ``where`` (``partial_where``)."""
        self.generation = generation
        self.dialect = dialect
        self.metadata = sa.MetaData()
        self.define_tables()
        self._text_columns = {t.name: text_columns(t) for t in self.metadata.sorted_tables}
        # (case id, what was wrong) for each value the page could not store as it was;
        # the runner records them with the page (tracking.problems_table).
        self.unstorable: list[tuple[str, str]] = []

    def fit(self, table: sa.Table, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Make each row's text storable (in place; see ``fit_text``), noting what changed.

        Rows name their case by ``case_id`` (or ``key`` in an update's parameters)."""
        columns = self._text_columns[table.name]
        if _texts_fit(rows, columns):
            return rows  # nearly every page
        short = table.name.removeprefix(f"abate_{self.name}_").removesuffix(f"_g{self.generation}")
        for row in rows:
            for name, limit in columns:
                value = row.get(name)
                if value.__class__ is str and ("\x00" in value or (limit and len(value) > limit)):
                    row[name], changes = fit_text(value, limit)
                    case = str(row.get("case_id") or row.get("key") or "")
                    self.unstorable += [(case, f"{short}.{name}: {c}") for c in changes]
        return rows

    def partial_where(self, where: Any) -> dict[str, Any]:
        """The keyword arguments of a partial index's condition: the view's dialect's only,
        when known. Naming a dialect's option imports that dialect (SQLAlchemy checks the
        option): the PostgreSQL one cost a SQLite read command a tenth of its start."""
        dialects = [self.dialect] if self.dialect in PARTIAL_INDEX_DIALECTS \
            else PARTIAL_INDEX_DIALECTS
        return {f"{name}_where": where for name in dialects}

    def table(self, name: str, *columns: Any, **kw: Any) -> sa.Table:
        return sa.Table(f"abate_{self.name}_{name}_g{self.generation}", self.metadata,
                        *columns, **kw)

    @abstractmethod
    def define_tables(self) -> None:
        """Create the view's own sa.Table objects (with ``self.table``)."""

    def begin_page(self) -> None:
        """Forget anything collected for a page that did not commit."""

    def on_event(self, conn: sa.Connection, case: Case, event: Any) -> None:
        """Write (or collect) this view's rows for one event, given the case state after it.

        A view whose rows depend only on each case's state at the end of the page leaves
        this out; the runner then does not call it."""

    def listens_to(self, event_class: type) -> bool:
        """Whether ``on_event`` does anything for events of this class (asked once per class
        and page, so the runner does not call it for the rest). All, unless a view says."""
        return True

    def on_page_end(self, conn: sa.Connection, cases: dict[Any, Case], opened: set[Any]) -> None:
        """Write rows that depend only on each touched case's final state in the page.

        ``opened`` holds the cases whose first event is in this page: no rows of theirs
        exist yet, so there is nothing to replace."""

    def create(self, bind: sa.Engine | sa.Connection, *, every_index: bool = True) -> None:
        """Create this generation's tables. ``every_index=False`` (a rebuild's new, empty
        generation) leaves out the indexes that writing does not read (``writing_reads``):
        rows go in faster without them, and ``create_indexes`` builds each once at the end,
        before readers switch to the generation."""
        if every_index:
            self.metadata.create_all(bind, checkfirst=True)
            return
        with bind.begin() if isinstance(bind, sa.Engine) else nullcontext(bind) as conn:
            for table in self.metadata.sorted_tables:
                conn.execute(sa.schema.CreateTable(table, if_not_exists=True))
                for index in table.indexes:
                    if writing_reads(index) and made_on(index, conn.dialect.name):
                        conn.execute(sa.schema.CreateIndex(index, if_not_exists=True))

    def create_indexes(self, bind: sa.Engine) -> None:
        """Build every index of this generation that is not there yet (after a bulk fill)."""
        with bind.begin() as conn:
            for table in self.metadata.sorted_tables:
                for index in table.indexes:
                    if made_on(index, conn.dialect.name):
                        conn.execute(sa.schema.CreateIndex(index, if_not_exists=True))

    def drop(self, bind: sa.Engine | sa.Connection) -> None:
        """Drop this generation's tables, including any an older Abate made for it."""
        self.metadata.drop_all(bind, checkfirst=True)
        with bind.begin() if isinstance(bind, sa.Engine) else nullcontext(bind) as conn:
            for table in self._stray_tables(sa.inspect(conn)):
                conn.execute(sa.text(f'DROP TABLE "{table}"'))

    def replace_rows(self, conn: sa.Connection, table: sa.Table, cases: dict[Any, Case],
                     opened: set[Any], rows: list[dict[str, Any]]) -> None:
        """Replace the rows (keyed by ``case_id``) of the page's cases with ``rows``."""
        replaced = [str(k) for k in cases if k not in opened]
        if replaced:
            conn.execute(table.delete().where(table.c.case_id.in_(replaced)))
        insert_rows(conn, table, self.fit(table, rows))

    def analyze(self, bind: sa.Engine) -> None:
        """Refresh PostgreSQL's planner statistics of this generation's tables (after a
        bulk fill, before readers use them; autovacuum would do it later). SQLite's query
        plans here come from the indexes alone, so it is left as it is."""
        if bind.dialect.name != "postgresql":
            return
        with bind.begin() as conn:
            for table in self.metadata.sorted_tables:
                conn.execute(sa.text(f'ANALYZE "{table.name}"'))

    def differences(self, inspector: sa.Inspector) -> list[str]:
        """How the stored tables differ from this definition (missing tables or columns,
        tables of this generation it no longer has)."""
        found = [f"{name} is no longer used" for name in self._stray_tables(inspector)]
        for table in self.metadata.sorted_tables:
            if not inspector.has_table(table.name):
                found.append(f"{table.name} is missing")
                continue
            stored = {c["name"] for c in inspector.get_columns(table.name)}
            found += [f"{table.name}.{c.name} is missing" for c in table.columns
                      if c.name not in stored]
        return found

    def missing_indexes(self, inspector: sa.Inspector) -> list[sa.Index]:
        """The indexes this definition has that the stored tables lack (an index added in a
        later Abate): made at the next full start, without a rebuild."""
        found = []
        for table in self.metadata.sorted_tables:
            if inspector.has_table(table.name):
                stored = {i["name"] for i in inspector.get_indexes(table.name)}
                found += [i for i in table.indexes if i.name not in stored
                          and made_on(i, inspector.dialect.name)]
        return found

    def is_own_table(self, table_name: str) -> bool:
        """Whether a table is named for this view and generation (defined or not)."""
        return bool(re.match(rf"^abate_{self.name}_(.+_)?g{self.generation}(_.+)?$", table_name))

    def _stray_tables(self, inspector: sa.Inspector) -> list[str]:
        """Stored tables named for this view and generation that the definition lacks."""
        return [name for name in inspector.get_table_names()
                if self.is_own_table(name) and name not in self.metadata.tables]

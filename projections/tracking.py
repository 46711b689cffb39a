"""Where each view stands in the notification log, and which generation readers use.

One row per (view, generation). A page of events is applied together with an
update of that row guarded by the position the page started from: if another
runner moved the position first, the update touches no row and the whole page
rolls back, so an event is never applied twice (exactly once, with the rows).
A rebuild fills a new generation; readers switch when it is complete.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

metadata = sa.MetaData()

positions_table = sa.Table(
    "abate_view_positions",
    metadata,
    sa.Column("view", sa.String(64), primary_key=True),
    sa.Column("generation", sa.Integer, primary_key=True),
    sa.Column("position", sa.BigInteger, nullable=False),
    sa.Column("active", sa.Boolean, nullable=False),
)


# What a view could not store as it was (a record an older Abate accepted: a NUL character,
# a text longer than the column), one row per (view, generation, case, problem); the view
# stored what it could and went on. ``abate projections status`` lists them.
problems_table = sa.Table(
    "abate_view_problems",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("view", sa.String(64), nullable=False),
    sa.Column("generation", sa.Integer, nullable=False),
    sa.Column("case_id", sa.String(36), nullable=False),
    sa.Column("case_ref", sa.Text, nullable=False),
    sa.Column("position", sa.BigInteger, nullable=False),
    sa.Column("problem", sa.Text, nullable=False),
    sa.Column("recorded_at", sa.String(40), nullable=False),
    sa.Index("abate_view_problems_view", "view", "generation", "case_id"),
)


# Which definition of its view each generation was written by (``View.definition_version``),
# one row per (view, generation). A table of its own, so a store an older Abate made gains
# it by being created (no column to add); a generation without a row was written before
# definitions were counted: version 1.
definitions_table = sa.Table(
    "abate_view_definitions",
    metadata,
    sa.Column("view", sa.String(64), primary_key=True),
    sa.Column("generation", sa.Integer, primary_key=True),
    sa.Column("definition_version", sa.Integer, nullable=False),
)
FIRST_DEFINITION = 1


# What the last comparison of each generation with the events found (``abate verify``,
# projections/view_check.py), one row per (view, generation): ``abate projections status``
# says when a view was found to differ. A rebuild's new generation has none until checked.
checks_table = sa.Table(
    "abate_view_checks",
    metadata,
    sa.Column("view", sa.String(64), primary_key=True),
    sa.Column("generation", sa.Integer, primary_key=True),
    sa.Column("position", sa.BigInteger, nullable=False),
    sa.Column("checked_at", sa.String(40), nullable=False),
    sa.Column("cases_differing", sa.Integer, nullable=False),
    sa.Column("cases", sa.Text, nullable=False),  # the first ones named, one a line
)
CASES_NAMED = 10  # cases a check's row names; the rest are counted


@dataclass(frozen=True)
class Problem:
    """Something a view could not store as it was, and what it stored instead."""

    case_id: str
    case_ref: str
    position: int  # the notification (log position) of the case's last event in the page
    problem: str


class PositionMovedError(Exception):
    """Another runner applied this page first; this attempt was rolled back."""


@dataclass(frozen=True)
class Generation:
    view: str
    generation: int
    position: int
    active: bool


def ensure_tables(engine: sa.Engine) -> None:
    metadata.create_all(engine, checkfirst=True)


_OF_VIEW = sa.select(positions_table).where(
    positions_table.c.view == sa.bindparam("view")).order_by(positions_table.c.generation)


def generations(conn: sa.Connection, view: str) -> list[Generation]:
    rows = conn.execute(_OF_VIEW, {"view": view}).all()
    return [Generation(r.view, r.generation, r.position, r.active) for r in rows]


def active_generation(conn: sa.Connection, view: str) -> Generation | None:
    return next((g for g in generations(conn, view) if g.active), None)


def all_generations(conn: sa.Connection, views: list[str]) -> list[Generation]:
    rows = conn.execute(sa.select(positions_table).where(positions_table.c.view.in_(views))).all()
    return [Generation(r.view, r.generation, r.position, r.active) for r in rows]


# Asked before most reads (is any view behind the log?): built once, not per request.
_ACTIVE = sa.select(positions_table).where(
    positions_table.c.view.in_(sa.bindparam("views", expanding=True)),
    positions_table.c.active.is_(True))


def active_generations(conn: sa.Connection, views: list[str]) -> list[Generation]:
    rows = conn.execute(_ACTIVE, {"views": list(views)}).all()
    return [Generation(r.view, r.generation, r.position, r.active) for r in rows]


def positions(conn: sa.Connection, keys: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """Where each (view, generation) stands."""
    rows = conn.execute(sa.select(positions_table).where(
        positions_table.c.view.in_({view for view, _ in keys}))).all()
    wanted = set(keys)
    return {(r.view, r.generation): r.position for r in rows if (r.view, r.generation) in wanted}


def add_generation(conn: sa.Connection, view: str, *, active: bool) -> Generation:
    existing = generations(conn, view)
    number = max((g.generation for g in existing), default=0) + 1
    conn.execute(positions_table.insert().values(view=view, generation=number, position=0,
                                                 active=active))
    return Generation(view, number, 0, active)


def record_definition(conn: sa.Connection, view: str, generation: int, version: int) -> None:
    """Note that this generation is written by the view's definition ``version``."""
    conn.execute(definitions_table.insert().values(view=view, generation=generation,
                                                   definition_version=version))


def definition_versions(conn: sa.Connection, keys: list[tuple[str, int]]
                        ) -> dict[tuple[str, int], int]:
    """The definition that wrote each (view, generation); ``FIRST_DEFINITION`` if unnoted."""
    rows = conn.execute(sa.select(definitions_table).where(
        definitions_table.c.view.in_({view for view, _ in keys}))).all()
    noted = {(r.view, r.generation): r.definition_version for r in rows}
    return {key: noted.get(key, FIRST_DEFINITION) for key in keys}


def advance(conn: sa.Connection, keys: list[tuple[str, int]], start: int, end: int) -> None:
    """Move each (view, generation) from ``start`` to ``end`` in one statement, or raise."""
    t = positions_table.c
    result = conn.execute(
        positions_table.update()
        .where(sa.or_(*(sa.and_(t.view == view, t.generation == generation)
                        for view, generation in keys)), t.position == start)
        .values(position=end))
    if result.rowcount != len(keys):
        raise PositionMovedError(f"{', '.join(v for v, _ in keys)} moved past {start}")


def activate(conn: sa.Connection, view: str, generation: int) -> None:
    conn.execute(positions_table.update().where(positions_table.c.view == view)
                 .values(active=positions_table.c.generation == generation))


def forget(conn: sa.Connection, view: str, generation: int) -> None:
    conn.execute(positions_table.delete().where(positions_table.c.view == view,
                                                positions_table.c.generation == generation))
    conn.execute(problems_table.delete().where(problems_table.c.view == view,
                                               problems_table.c.generation == generation))
    conn.execute(definitions_table.delete().where(definitions_table.c.view == view,
                                                  definitions_table.c.generation == generation))
    conn.execute(checks_table.delete().where(checks_table.c.view == view,
                                             checks_table.c.generation == generation))


def record_check(conn: sa.Connection, view: str, generation: int, position: int, now: str,
                 cases_differing: int, named: list[str]) -> None:
    """Note what comparing this generation at ``position`` with the events found: how many
    cases' rows differ (0: it matched), the first of them by name. Replaces the last note."""
    t = checks_table.c
    conn.execute(checks_table.delete().where(t.view == view, t.generation == generation))
    conn.execute(checks_table.insert().values(
        view=view, generation=generation, position=position, checked_at=now,
        cases_differing=cases_differing, cases="\n".join(named[:CASES_NAMED])))


def last_check(conn: sa.Connection, view: str, generation: int) -> dict | None:
    """What the last check of this generation found, or None if it was never checked."""
    t = checks_table.c
    row = conn.execute(sa.select(checks_table).where(
        t.view == view, t.generation == generation)).first()
    if row is None:
        return None
    return {"checked_at": row.checked_at, "position": row.position,
            "matches": row.cases_differing == 0, "cases_differing": row.cases_differing,
            "cases": row.cases.split("\n") if row.cases else []}


def record_problems(conn: sa.Connection, view: str, generation: int, found: list[Problem],
                    now: str) -> None:
    """Record each problem once per (view, generation, case): the same value met again when a
    later event rewrites the case's row is the same problem."""
    t = problems_table.c
    for problem in dict.fromkeys(found):
        known = conn.execute(sa.select(t.id).where(
            t.view == view, t.generation == generation, t.case_id == problem.case_id,
            t.problem == problem.problem).limit(1)).first()
        if known is None:
            conn.execute(problems_table.insert().values(
                view=view, generation=generation, case_id=problem.case_id,
                case_ref=problem.case_ref, position=problem.position, problem=problem.problem,
                recorded_at=now))


def problems(conn: sa.Connection, view: str, generation: int) -> list[dict]:
    t = problems_table.c
    rows = conn.execute(sa.select(t.case_ref, t.case_id, t.position, t.problem, t.recorded_at)
                        .where(t.view == view, t.generation == generation)
                        .order_by(t.position, t.id)).mappings()
    return [dict(r) for r in rows]

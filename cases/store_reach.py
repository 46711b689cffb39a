"""Reaching the store over a network, and telling "cannot reach it" from a bug.

In production PostgreSQL is another host: a connection may be refused (the server is down),
never answered (the network is cut) or dropped (the server restarted). Every engine Abate
opens on PostgreSQL gets libpq's time limits, so a cut network fails a request in seconds
instead of after TCP's quarter of an hour. A value the URL names itself wins
(``...?connect_timeout=3``); docs/operations.md lists them. (No check of a pooled connection
before each use, SQLAlchemy's pre-ping: a round trip more on every checkout of every
request; the API drops its pooled connections when it meets an unreachable store instead.)

``unreachable(exc)`` gives the driver's words when a failure means the store cannot be
reached just now, and None for anything else (a bug); ``location(url, schema)`` says
which setting points where, password hidden, for the log line.
"""

from __future__ import annotations

from typing import Any

# libpq's connection parameters: seconds to connect; TCP keepalives on an idle connection
# (one waiting on LISTEN); milliseconds sent data may stay unacknowledged before the
# connection is given up (a request on a connection whose network is cut).
NETWORK_DEFAULTS = {"connect_timeout": "10", "keepalives": "1", "keepalives_idle": "30",
                    "keepalives_interval": "10", "keepalives_count": "3",
                    "tcp_user_timeout": "20000"}
RETRY_AFTER_SECONDS = 5  # what a 503 tells a client to wait before trying again

# PostgreSQL's SQLSTATEs that mean "no usable connection" (class 08 too): too many
# connections, the server shutting down or crashed, not yet accepting connections.
_UNREACHABLE_STATES = {"53300", "57P01", "57P02", "57P03"}
# sqlite3's words for a file that is locked past the busy timeout or cannot be opened.
_SQLITE_UNREACHABLE = ("database is locked", "database table is locked",
                       "unable to open database file", "disk i/o error")


def network_connect_args(database_url: str) -> dict[str, str]:
    """The time limits a PostgreSQL connection gets, but for those the URL names."""
    if not database_url.startswith("postgresql"):
        return {}
    from sqlalchemy.engine import make_url

    named = set(make_url(database_url).query)
    return {k: v for k, v in NETWORK_DEFAULTS.items() if k not in named}


def engine_options(database_url: str) -> dict[str, Any]:
    """``create_engine`` keywords for ``database_url``: on PostgreSQL the time limits."""
    if not database_url.startswith("postgresql"):
        return {}
    return {"connect_args": network_connect_args(database_url)}


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps (SQLAlchemy's ``orig``, ``raise ... from``), each once; not
    what it was raised while handling (a bug in an ``except`` block is still a bug)."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop(0)
        if item is None or any(item is s for s in seen):
            continue
        seen.append(item)
        todo += [getattr(item, "orig", None), item.__cause__]  # wrapped, not met on the way
    return seen


def unreachable(exc: BaseException) -> str | None:
    """Why the store cannot be reached, if that is what ``exc`` means (the driver's first
    line, e.g. ``connection refused``); None for any other failure."""
    import sqlite3

    from sqlalchemy.exc import TimeoutError as PoolTimeout

    from cases.failures import database_reason

    for item in _chain(exc):
        if isinstance(item, PoolTimeout):
            return "no connection free in the pool within its wait (every one is busy)"
        module = type(item).__module__.split(".")[0]
        if module == "psycopg" and _psycopg_unreachable(item):
            return database_reason(item)
        if isinstance(item, sqlite3.OperationalError) and \
                str(item).lower().startswith(_SQLITE_UNREACHABLE):
            return database_reason(item)
    return None


def _psycopg_unreachable(exc: BaseException) -> bool:
    import psycopg

    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = getattr(exc, "sqlstate", None)
    # No SQLSTATE: the client's own failure (refused, timed out, the connection lost).
    return state is None or state.startswith("08") or state in _UNREACHABLE_STATES


def location(database_url: str, schema: str | None = None) -> dict[str, Any]:
    """Where the store is, for the log: the setting, the URL without its password, and its
    host, port and database (a SQLite file: its path as ``file``)."""
    from cases.failures import redact_url

    where: dict[str, Any] = {"setting": "ABATE_DATABASE_URL", "url": redact_url(database_url)}
    if database_url.startswith("sqlite"):
        where["file"] = database_url.split("///", 1)[-1].split("?", 1)[0]
    elif database_url.startswith("postgresql"):
        from sqlalchemy.engine import make_url

        url = make_url(database_url)
        where.update(host=url.host or url.query.get("host"), port=url.port or 5432,
                     database=url.database)
    if schema:
        where["schema"] = schema
        where["schema_setting"] = "ABATE_DATABASE_SCHEMA"
    return where

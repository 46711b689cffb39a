"""What a store holds, counted straight from its tables: a test that asks "was anything
recorded?" reads the rows instead of running ``abate verify`` to count them."""

from __future__ import annotations

import sqlalchemy as sa


def _count(url: str, table: str, schema: str | None = None) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            name = f'"{schema}".{table}' if schema else table
            return conn.execute(sa.text(f"select count(*) from {name}")).scalar_one()
    finally:
        engine.dispose()


def events_stored(url: str, schema: str | None = None) -> int:
    """How many events the store at ``url`` holds."""
    return _count(url, "abate_events", schema)


def seals_stored(url: str, schema: str | None = None) -> int:
    """How many seals the store at ``url`` has recorded."""
    return _count(url, "abate_seals", schema)

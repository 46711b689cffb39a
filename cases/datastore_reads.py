"""Reading the event store's tables without the recorder's ORM session.

eventsourcing-sqlalchemy opens an ORM ``Session`` for every read; for the few small Core
selects a request makes (the log's head, one case's events, its seal) that session cost
more CPU than the query. ``reading`` hands out a plain connection of the datastore's
engine instead, except where the datastore must serialise access itself (in-memory SQLite:
one connection under its lock) or this thread already has a transaction of its own open
(it must see what that transaction wrote).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa


def _in_a_transaction() -> bool:
    """Whether this thread has an eventsourcing-sqlalchemy transaction open. Its module is
    looked up, not imported: a command that only reads (``StoreReader``) never loads it,
    and then no such transaction can be open."""
    module = sys.modules.get("eventsourcing_sqlalchemy.datastore")
    return module is not None and module.transactions.get(None) is not None


@contextmanager
def reading(datastore: Any) -> Iterator[sa.Connection]:
    """A connection to read with (see the module's docstring for which)."""
    shared = _in_a_transaction() or getattr(datastore, "access_lock", None) is not None or \
        getattr(datastore, "scoped_session", None) is not None
    if shared:
        with datastore.transaction(commit=False) as session:
            yield session.connection()
        return
    with datastore.engine.connect() as conn:
        yield conn

"""The persistence the event store is built with on PostgreSQL: eventsourcing-sqlalchemy's,
with an engine that has the network time limits (``cases.store_reach``). The library makes
its engine from the URL alone; its factory's ``datastore_class`` is where such keywords go
in. Named by ``store_env`` as the ``PERSISTENCE_MODULE`` topic, so it is imported only when
a store is opened."""

from __future__ import annotations

from typing import Any

from eventsourcing_sqlalchemy.datastore import SQLAlchemyDatastore
from eventsourcing_sqlalchemy.factory import SQLAlchemyFactory

from cases.store_reach import engine_options


class ReachingDatastore(SQLAlchemyDatastore):
    def __init__(self, *, url: str | None = None, **kwargs: Any):
        super().__init__(url=url, **kwargs, **engine_options(url or ""))


class StoreFactory(SQLAlchemyFactory):
    datastore_class = ReachingDatastore

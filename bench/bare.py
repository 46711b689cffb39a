"""The bare library the benchmarks compare Abate with: an aggregate that is only an id and
one event per step, saved by eventsourcing with the same persistence module and URL as a
CaseStore. Shared by every benchmark section, so each bare side is the same."""

from __future__ import annotations

import uuid

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event


def close(app: Application) -> None:
    """Close the application and its connection pool (so schemas can be dropped)."""
    app.close()
    engine = getattr(getattr(app.factory, "datastore", None), "engine", None)
    if hasattr(engine, "dispose"):
        engine.dispose()


BARE_NAMESPACE = uuid.UUID("0b7d2a55-1f0e-4c3a-9d61-52a0f3c4e8b1")


class BareCase(Aggregate):
    """The least an aggregate can be: an id from the reference, one event per step."""

    @staticmethod
    def create_id(ref: str) -> uuid.UUID:
        return uuid.uuid5(BARE_NAMESPACE, ref)

    def __init__(self, ref: str):
        self.ref = ref
        self.steps: list[str] = []

    @event("Stepped")
    def step(self, name: str) -> None:
        self.steps.append(name)


class BareApp(Application):
    name = "BareBench"


def bare_app(url: str, env: dict[str, str]) -> BareApp:
    """The same persistence module and URL as a CaseStore, no snapshots, no Abate."""
    return BareApp(env={"PERSISTENCE_MODULE": "eventsourcing_sqlalchemy",
                        "SQLALCHEMY_URL": url, **env})

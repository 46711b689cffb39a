"""Helpers for tamper tests: run the installed `abate`, and tamper through SQL as an
attacker with write access to the database would."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import sqlalchemy as sa

from tests.abate_command import run_abate


@dataclass
class Db:
    url: str
    schema: str | None
    engine: sa.engine.Engine

    def table(self, name: str) -> str:
        return f'"{self.schema}".{name}' if self.schema else name

    def env(self) -> dict[str, str]:
        env = {**os.environ, "ABATE_DATABASE_URL": self.url, "ABATE_LOG_FORMAT": "json"}
        env.pop("ABATE_DATABASE_SCHEMA", None)
        if self.schema:
            env["ABATE_DATABASE_SCHEMA"] = self.schema
        return env

    def abate(self, *args: str) -> subprocess.CompletedProcess:
        return run_abate(*args, env=self.env())

    def abate_json(self, *args: str) -> tuple[int, Any]:
        done = self.abate(*args)
        assert "Traceback" not in done.stderr, done.stderr
        try:
            return done.returncode, json.loads(done.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"not JSON: {done.stdout!r} / {done.stderr!r}") from None

    def rows(self, table: str = "abate_events") -> list[Any]:
        key = "id, " if table == "abate_events" else ""
        with self.engine.connect() as conn:
            return conn.execute(sa.text(
                f"SELECT {key}originator_id, originator_version, topic, state FROM "
                f"{self.table(table)} ORDER BY {key}originator_id, originator_version")).all()

    def execute(self, sql: str, **params: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(sa.text(sql.replace("{events}", self.table("abate_events"))
                                 .replace("{snapshots}", self.table("abate_snapshots"))
                                 .replace("{seals}", self.table("abate_seals"))
                                 .replace("{sealed_cases}", self.table("abate_sealed_cases"))),
                         params)


def as_uuid(value: Any) -> UUID:
    """A stored originator id (a 16-byte blob on SQLite, a UUID on PostgreSQL)."""
    return UUID(bytes=bytes(value)) if isinstance(value, (bytes, memoryview)) else UUID(str(value))


def problems(report: dict[str, Any]) -> list[tuple[str, int | None, str]]:
    return [(p["case"], p["position"], p["problem"]) for p in report["problems"]]

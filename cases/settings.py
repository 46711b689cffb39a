"""Settings, read once at start-up by an entry point (never below it)."""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_DATABASE_URL = "sqlite:///var/abate.sqlite3"


@dataclass(frozen=True)
class Settings:
    database_url: str
    database_schema: str | None  # PostgreSQL schema for events and views (default: public)
    log_format: str  # "console" or "json"
    sweep_seconds: int  # how often the scheduler sweeps deadlines
    time_zone: str  # the scheduler's clock zone (deadlines use each municipality's own)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "Settings":
        env = os.environ if environ is None else environ
        return cls(
            database_url=env.get("ABATE_DATABASE_URL", DEFAULT_DATABASE_URL),
            database_schema=env.get("ABATE_DATABASE_SCHEMA") or None,
            log_format=env.get("ABATE_LOG_FORMAT", "console"),
            sweep_seconds=int(env.get("ABATE_SWEEP_SECONDS", "60")),
            time_zone=env.get("ABATE_TIME_ZONE", "America/Chicago"),
        )

    def store_env(self) -> dict[str, str]:
        return {"SQLALCHEMY_SCHEMA": self.database_schema} if self.database_schema else {}

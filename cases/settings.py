"""Settings, read once at start-up by an entry point (never below it)."""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_DATABASE_URL = "sqlite:///var/abate.sqlite3"


@dataclass(frozen=True)
class Settings:
    database_url: str
    log_format: str  # "console" or "json"

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "Settings":
        env = os.environ if environ is None else environ
        return cls(
            database_url=env.get("ABATE_DATABASE_URL", DEFAULT_DATABASE_URL),
            log_format=env.get("ABATE_LOG_FORMAT", "console"),
        )

"""The service's settings: the shared ones (cases.settings) plus the API's own, read once."""

from __future__ import annotations

import os
from dataclasses import dataclass

from cases.errors import ConfigurationError
from cases.settings import Settings

DEFAULT_MAX_BODY_BYTES = 1_048_576  # 1 MiB: a command is a few kB; a journal is larger


@dataclass(frozen=True)
class ApiSettings:
    base: Settings
    database_url: str
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None,
                 database_url: str | None = None) -> "ApiSettings":
        env = os.environ if environ is None else environ
        base = Settings.from_env(dict(env))
        raw = env.get("ABATE_API_MAX_BODY_BYTES") or str(DEFAULT_MAX_BODY_BYTES)
        try:
            limit = int(raw)
        except ValueError:
            raise ConfigurationError(
                f"ABATE_API_MAX_BODY_BYTES={raw!r} is not a whole number") from None
        if limit < 1024:
            raise ConfigurationError(f"ABATE_API_MAX_BODY_BYTES={raw!r} must be at least 1024")
        return cls(base=base, database_url=base.database_url_for(database_url),
                   max_body_bytes=limit)

"""The web pages' settings, read once from the environment (docs/web.md "Settings")."""

from __future__ import annotations

import os
from dataclasses import dataclass

from api.session_secret import split_secrets
from cases.errors import ConfigurationError

DEFAULT_SESSION_HOURS = 12
MAX_SESSION_HOURS = 24 * 30
DEFAULT_SIGN_IN_LIMIT = "10/minute"


@dataclass(frozen=True)
class WebSettings:
    # The secrets that sign session cookies (the first signs, all are accepted), or the file
    # that holds them; neither: a file beside a SQLite database (api/session_secret.py).
    session_secret: str | None = None
    session_secret_file: str | None = None
    https: bool = False  # cookies marked Secure (set ABATE_WEB_HTTPS=1 behind TLS)
    session_hours: int = DEFAULT_SESSION_HOURS
    sign_in_limit: str = DEFAULT_SIGN_IN_LIMIT  # the limits library's notation: "10/minute"

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "WebSettings":
        env = os.environ if environ is None else environ
        secret = env.get("ABATE_WEB_SESSION_SECRET") or None
        secret_file = env.get("ABATE_WEB_SESSION_SECRET_FILE") or None
        if secret is not None and secret_file is not None:
            raise ConfigurationError("set ABATE_WEB_SESSION_SECRET or "
                                     "ABATE_WEB_SESSION_SECRET_FILE, not both")
        if secret is not None:
            split_secrets(secret, "ABATE_WEB_SESSION_SECRET")  # refused now, not at start
        https = (env.get("ABATE_WEB_HTTPS") or "0").strip()
        if https not in ("0", "1"):
            raise ConfigurationError(f"ABATE_WEB_HTTPS={https!r} must be 0 or 1")
        hours = (env.get("ABATE_WEB_SESSION_HOURS") or str(DEFAULT_SESSION_HOURS)).strip()
        if not hours.isdigit() or not 1 <= int(hours) <= MAX_SESSION_HOURS:
            raise ConfigurationError(f"ABATE_WEB_SESSION_HOURS={hours!r} must be a whole "
                                     f"number of hours from 1 to {MAX_SESSION_HOURS}")
        limit = (env.get("ABATE_WEB_SIGN_IN_LIMIT") or DEFAULT_SIGN_IN_LIMIT).strip()
        try:
            from limits import parse

            parse(limit)
        except ValueError:
            raise ConfigurationError(f"ABATE_WEB_SIGN_IN_LIMIT={limit!r} must read like "
                                     "'10/minute' or '30/hour'") from None
        return cls(session_secret=secret, session_secret_file=secret_file,
                   https=https == "1", session_hours=int(hours), sign_in_limit=limit)

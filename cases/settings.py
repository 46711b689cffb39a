"""Settings, read once at start-up by an entry point (never below it)."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cases.errors import ConfigurationError

if TYPE_CHECKING:
    from cases.rules.catalog import Catalog

DEFAULT_DATABASE_URL = "sqlite:///var/abate.sqlite3"
VILLAGE_SETTINGS = "ABATE_VILLAGE_SETTINGS"  # the village settings file (letterheads)


def _int(env: dict[str, str] | os._Environ, name: str, default: int, minimum: int = 0,
         maximum: int = 10**9) -> int:
    """A whole number from 0 (or ``minimum``) to ``maximum``: past that a value is a typo
    that would overflow a timer or undo a guard (a clock tolerance of years)."""
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(f"{name}={raw[:40]!r} is not a whole number") from None
    if not minimum <= value <= maximum:
        raise ConfigurationError(f"{name}={raw!r} must be from {minimum:,} to {maximum:,}")
    return value


def _zone(env: dict[str, str] | os._Environ, name: str, default: str) -> str:
    """An IANA time zone name the system knows (``America/Chicago``), checked only when set."""
    raw = env.get(name) or default
    if raw != default:
        from zoneinfo import ZoneInfo

        try:
            ZoneInfo(raw)
        except (ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError, below
            raise ConfigurationError(f"{name}={raw[:60]!r} is not a time zone name, e.g. "
                                     "America/Chicago") from None
        except KeyError:
            raise ConfigurationError(f"{name}={raw[:60]!r} is not a time zone this system "
                                     "knows, e.g. America/Chicago") from None
    return raw


def _letterhead(env: dict[str, str] | os._Environ) -> dict[str, dict[str, str]]:
    """Each village's letterhead from the village settings file, none while it is not given
    (its checks, with pydantic and the rules catalog, load only then: start-up)."""
    raw = env.get(VILLAGE_SETTINGS) or ""
    if not raw:
        return {}
    from cases.rules.catalog import default_catalog
    from cases.village_settings import read_village_settings

    return read_village_settings(Path(raw), default_catalog().municipalities, VILLAGE_SETTINGS)


LOG_LEVELS = ("debug", "info", "warning", "error")


def _choice(env: dict[str, str] | os._Environ, name: str, default: str,
            choices: tuple[str, ...]) -> str:
    raw = (env.get(name) or default).lower()
    if raw not in choices:
        raise ConfigurationError(f"{name}={env.get(name)!r} must be one of {', '.join(choices)}")
    return raw


@dataclass(frozen=True)
class Settings:
    database_url: str
    database_schema: str | None  # PostgreSQL schema for events and views (default: public)
    log_format: str  # "auto" (JSON unless stderr is a terminal), "console" or "json"
    sweep_seconds: int  # how often the scheduler sweeps deadlines
    time_zone: str  # the scheduler's clock zone (deadlines use each municipality's own)
    # How far ahead of the real clock a business time (or a --now) may be: clocks of the
    # devices people type on drift; a fact dated next year is a typo, not a fact.
    future_tolerance: dt.timedelta = dt.timedelta(minutes=10)
    journal_max_line_bytes: int = 65_536  # one journal line (one command)
    journal_max_depth: int = 10  # JSON nesting of one command (objects in lists in objects)
    log_level: str = "info"  # "debug" adds the details of a failure (never a password)
    # Each village's letterhead address and phone from ABATE_VILLAGE_SETTINGS (a TOML file
    # outside the package); they win over the rules file's: ``catalog()``.
    letterhead: dict[str, dict[str, str]] = field(default_factory=dict)

    def catalog(self) -> "Catalog":
        """The rules catalog with the village settings file's letterhead applied: what a
        service that issues documents (or shows what they will print) uses."""
        from cases.rules.catalog import default_catalog

        return default_catalog().with_letterhead(self.letterhead)

    def database_url_for(self, override: str | None = None) -> str:
        """The database URL a command uses (``--database-url`` wins). Only for the default,
        which nobody typed, does Abate create the folder (``var/``); a folder named in a
        chosen URL must exist, so a mistyped path is an error, not a new empty store."""
        url = override or self.database_url
        if url == DEFAULT_DATABASE_URL:
            Path(url.split("///", 1)[1]).parent.mkdir(parents=True, exist_ok=True)
        return url

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "Settings":
        env = os.environ if environ is None else environ
        return cls(
            database_url=env.get("ABATE_DATABASE_URL", DEFAULT_DATABASE_URL),
            database_schema=env.get("ABATE_DATABASE_SCHEMA") or None,
            log_format=_choice(env, "ABATE_LOG_FORMAT", "auto", ("auto", "console", "json")),
            sweep_seconds=_int(env, "ABATE_SWEEP_SECONDS", 60, minimum=1, maximum=86_400),
            time_zone=_zone(env, "ABATE_TIME_ZONE", "America/Chicago"),
            future_tolerance=dt.timedelta(
                minutes=_int(env, "ABATE_FUTURE_TOLERANCE_MINUTES", 10, maximum=1_440)),
            journal_max_line_bytes=_int(env, "ABATE_JOURNAL_MAX_LINE_BYTES", 65_536,
                                        minimum=1024, maximum=16_777_216),
            journal_max_depth=_int(env, "ABATE_JOURNAL_MAX_DEPTH", 10, minimum=3, maximum=100),
            log_level=_choice(env, "ABATE_LOG_LEVEL", "info", LOG_LEVELS),
            letterhead=_letterhead(env),
        )

    def store_env(self) -> dict[str, str]:
        return {"SQLALCHEMY_SCHEMA": self.database_schema} if self.database_schema else {}

"""The service's settings: the shared ones (cases.settings) plus the API's own, read once."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from api.web_settings import WebSettings
from cases.errors import ConfigurationError
from cases.settings import Settings

DEFAULT_MAX_BODY_BYTES = 1_048_576  # 1 MiB: a command is a few kB; a journal is larger
DEFAULT_MAX_JOURNAL_BYTES = 67_108_864  # 64 MiB: POST journal (spooled to disk, not memory)
KEEP_KEYS_HOURS_MIN = 24  # Idempotency-Key answers are kept at least this long
CATCH_UP_MODES = ("on-read", "runner")
# Below the 40 threads a worker runs sync routes on, so no request waits there for a thread.
DEFAULT_MAX_IN_FLIGHT = 32
DEFAULT_REQUEST_SECONDS = 30.0


@dataclass(frozen=True)
class ApiSettings:
    base: Settings
    database_url: str
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_journal_bytes: int = DEFAULT_MAX_JOURNAL_BYTES  # POST journal's body (api/body.py)
    # Idempotency-Key (api/idempotency.py): how long answers are kept, and how long a retry
    # waits for a first request still running before taking it over.
    idempotency_keep_hours: int = KEEP_KEYS_HOURS_MIN
    idempotency_wait_seconds: float = 30.0
    # Read-your-writes (api/consistency.py): who brings the views up to date for a read
    # ("on-read": the reading process itself; "runner": `abate projections run` only), and
    # how long a read given a log position waits for the views to reach it.
    catch_up: str = "on-read"
    read_wait_seconds: float = 5.0
    web: WebSettings = field(default_factory=WebSettings)  # the pages' (api/web_settings.py)
    # The proxies whose X-Forwarded-For / -Proto name the client (ABATE_TRUSTED_PROXIES):
    # none by default, so a client cannot name its own address to the sign-in limit.
    trusted_proxies: tuple[str, ...] = ()
    # Overload (api/overload.py): requests one worker works on at once (one more is 503 at
    # once), and how long a request may take to begin its answer.
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    request_seconds: float = DEFAULT_REQUEST_SECONDS

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None,
                 database_url: str | None = None) -> "ApiSettings":
        env = os.environ if environ is None else environ
        base = Settings.from_env(dict(env))
        return cls(base=base, database_url=base.database_url_for(database_url),
                   max_body_bytes=_bytes(env, "ABATE_API_MAX_BODY_BYTES",
                                         DEFAULT_MAX_BODY_BYTES),
                   max_journal_bytes=_bytes(env, "ABATE_API_MAX_JOURNAL_BYTES",
                                            DEFAULT_MAX_JOURNAL_BYTES),
                   idempotency_keep_hours=_whole(env, "ABATE_API_IDEMPOTENCY_KEEP_HOURS",
                                                 KEEP_KEYS_HOURS_MIN, KEEP_KEYS_HOURS_MIN),
                   idempotency_wait_seconds=_seconds(env, "ABATE_API_IDEMPOTENCY_WAIT_SECONDS",
                                                     30.0),
                   catch_up=_mode(env), read_wait_seconds=_seconds(
                       env, "ABATE_API_READ_WAIT_SECONDS", 5.0),
                   web=WebSettings.from_env(env), trusted_proxies=_networks(env),
                   max_in_flight=_whole(env, "ABATE_API_MAX_IN_FLIGHT", DEFAULT_MAX_IN_FLIGHT,
                                        1, most=10_000),
                   request_seconds=_seconds(env, "ABATE_API_REQUEST_SECONDS",
                                            DEFAULT_REQUEST_SECONDS, least=1.0))


def _bytes(env, name: str, default: int) -> int:
    raw = env.get(name) or str(default)
    try:
        limit = int(raw)
    except ValueError:
        raise ConfigurationError(f"{name}={raw!r} is not a whole number") from None
    if limit < 1024:
        raise ConfigurationError(f"{name}={raw!r} must be at least 1024")
    return limit


def _whole(env, name: str, default: int, minimum: int, most: int | None = None) -> int:
    raw = env.get(name) or str(default)
    if not raw.isdigit() or int(raw) < minimum or (most is not None and int(raw) > most):
        bounds = f"from {minimum} to {most:,}" if most is not None else f"of at least {minimum}"
        raise ConfigurationError(f"{name}={raw!r} must be a whole number {bounds}")
    return int(raw)


def _seconds(env, name: str, default: float, most: float = 600.0, least: float = 0.0) -> float:
    raw = env.get(name) or str(default)
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not least <= value <= most:  # also refuses nan
        raise ConfigurationError(
            f"{name}={raw!r} must be a number of seconds from {least:g} to {most:g}")
    return value


def _mode(env) -> str:
    raw = (env.get("ABATE_API_CATCH_UP") or CATCH_UP_MODES[0]).lower()
    if raw not in CATCH_UP_MODES:
        raise ConfigurationError(f"ABATE_API_CATCH_UP={raw!r} must be one of "
                                 f"{', '.join(CATCH_UP_MODES)}")
    return raw


def _networks(env, name: str = "ABATE_TRUSTED_PROXIES") -> tuple[str, ...]:
    """Addresses and networks, separated by commas or spaces ("10.0.0.5, 10.1.0.0/16")."""
    import ipaddress

    found = []
    for item in (env.get(name) or "").replace(",", " ").split():
        try:
            found.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise ConfigurationError(f"{name}: {item[:60]!r} is not an IP address or network "
                                     "(e.g. 10.0.0.5, 10.0.0.0/24, ::1)") from None
    return tuple(found)

"""Serving the API: the options and the start shared by ``abate serve`` and ``python -m api``
(one parser, as the scheduler does, so the two entry points cannot drift apart)."""

from __future__ import annotations

import os
import signal
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from api.serve_options import DESCRIPTION, add_options
from cases.errors import ConfigurationError
from cases.failures import OneLineParser
from cases.settings import Settings

if TYPE_CHECKING:  # uvicorn and FastAPI load only when serving: every abate command reads this
    import uvicorn
    from fastapi import FastAPI

    from api.settings import ApiSettings

def worker_app() -> "FastAPI":
    """The app of one worker process (``--workers`` above 1): each builds its own from the
    environment, since processes share no objects."""
    from cases.logging import configure_logging

    settings = Settings.from_env()
    configure_logging(settings.log_format, settings.log_level)
    from api.app import create_app
    from api.settings import ApiSettings

    return create_app(ApiSettings.from_env())


def _server(config: "uvicorn.Config", on_ready: Callable[[], None]) -> "uvicorn.Server":
    """uvicorn's server, calling ``on_ready`` once it listens (not before: a port in use
    must not be announced)."""
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                on_ready()

    return Server(config)


def check_port(host: str, port: int) -> None:
    """Refuse, before anything is loaded, a port another process listens on (uvicorn binds
    with SO_REUSEADDR too, so a port a stopped server left in TIME_WAIT is not refused)."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise ConfigurationError(f"cannot listen on {host}:{port}: "
                                 f"{exc.strerror or exc} (choose another --port or --host)"
                                 ) from None


# On Ctrl-C or SIGTERM, how long requests under way get to finish before they are cut off
# (a write cut off is rolled back whole): a stop takes a few seconds, never minutes.
STOP_GRACE_SECONDS = 3


def proxy_options(settings: "ApiSettings") -> dict[str, object]:
    """uvicorn's reading of X-Forwarded-For and -Proto: only from ABATE_TRUSTED_PROXIES,
    and not at all without them (uvicorn's own default trusts 127.0.0.1, so anyone on the
    host, or a proxy passing the header through, could name any client address)."""
    trusted = list(settings.trusted_proxies)
    return {"proxy_headers": bool(trusted), "forwarded_allow_ips": trusted or None}


def announce(host: str, port: int) -> None:
    print(f"Abate API on http://{host}:{port}/ (docs at /docs); Ctrl-C stops it",
          file=sys.stderr, flush=True)


def serve(host: str, port: int, database_url: str | None = None, *, workers: int = 1,
          on_ready: Callable[[], None] | None = None) -> int:
    """Serve until stopped (Ctrl-C or SIGTERM: requests under way get STOP_GRACE_SECONDS to
    finish, then 0)."""
    import uvicorn

    check_port(host, port)
    on_ready = on_ready or (lambda: announce(host, port))
    stopped_by: list[int] = []
    # uvicorn stops on these signals, then raises them again once it has stopped: the
    # handlers below take that second delivery, so a requested stop ends with status 0.
    previous = {sig: signal.signal(sig, lambda signum, frame: stopped_by.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        from api.settings import ApiSettings

        settings = ApiSettings.from_env(database_url=database_url)  # refused before workers
        if workers > 1:
            from api.session_secret import session_secrets

            # refused here in one line, or the SQLite case's file made once, not per worker
            session_secrets(settings.web.session_secret, settings.web.session_secret_file,
                            settings.database_url)
            if database_url:  # the workers read their settings from the environment
                os.environ["ABATE_DATABASE_URL"] = database_url
            on_ready()
            uvicorn.run("api.serve:worker_app", factory=True, host=host, port=port,
                        workers=workers, log_level="warning",
                        timeout_graceful_shutdown=STOP_GRACE_SECONDS, **proxy_options(settings))
            return 0
        from api.app import create_app

        app = create_app(settings)
        server = _server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                        timeout_graceful_shutdown=STOP_GRACE_SECONDS,
                                        **proxy_options(settings)), on_ready)
        try:
            server.run()
        except SystemExit:  # uvicorn could not start (its reason is logged above)
            if server.started:
                raise
        if not server.started:
            raise ConfigurationError(f"could not serve on {host}:{port} (the reason is above)")
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    from cases.failures import failures_reported
    from cases.logging import configure_logging

    parser = OneLineParser(prog="python -m api", description=DESCRIPTION)
    parser.add_argument("--database-url", help="overrides ABATE_DATABASE_URL")
    add_options(parser)
    args = parser.parse_args(argv)
    with failures_reported("python -m api") as reporter:
        settings = Settings.from_env()
        configure_logging(settings.log_format, settings.log_level)
        reporter.code = serve(args.host, args.port, args.database_url, workers=args.workers)
    return reporter.code

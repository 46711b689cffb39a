"""Serving the API: the options and the start shared by ``abate serve`` and ``python -m api``
(one parser, as the scheduler does, so the two entry points cannot drift apart)."""

from __future__ import annotations

import argparse
import sys


DESCRIPTION = "Serve the HTTP API on the configured database (docs/api.md)."


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1 to 65535, got {value}")
    return value


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=8000, help="port (default 8000)")


def serve(host: str, port: int, database_url: str | None = None) -> int:
    """Build the app once and serve it until stopped."""
    import uvicorn

    from api.app import create_app
    from api.settings import ApiSettings

    app = create_app(ApiSettings.from_env(database_url=database_url))
    print(f"Abate API on http://{host}:{port}/ (docs at /docs); Ctrl-C stops it",
          file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m api", description=DESCRIPTION)
    parser.add_argument("--database-url", help="overrides ABATE_DATABASE_URL")
    add_options(parser)
    args = parser.parse_args(argv)
    from cases.failures import failures_reported
    from cases.logging import configure_logging
    from cases.settings import Settings

    with failures_reported("python -m api") as reporter:
        settings = Settings.from_env()
        configure_logging(settings.log_format, settings.log_level)
        reporter.code = serve(args.host, args.port, args.database_url)
    return reporter.code

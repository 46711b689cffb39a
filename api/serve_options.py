"""The options of ``abate serve`` and ``python -m api`` (one definition, so the two entry
points cannot drift apart), apart from api/serve.py: every abate command builds its parser
with them, and importing the server's module for that cost ``abate --help`` its settings,
socket and signal modules (docs/benchmarks.md)."""

from __future__ import annotations

import argparse

DESCRIPTION = "Serve the HTTP API on the configured database (docs/api.md)."


def _between(low: int, high: int, what: str):
    """An option type: a whole number from ``low`` to ``high``, refused in one line."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} is {low} to {high}, got {value}")
        return value
    return parse


_port = _between(1, 65535, "a port")
_workers = _between(1, 64, "a number of workers")


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=8000, help="port (default 8000)")
    parser.add_argument("--workers", type=_workers, default=1,
                        help="server processes (default 1; several on PostgreSQL, "
                             "docs/operations.md)")

"""structlog set-up: JSON lines in production, readable console on a terminal.

``auto`` (the default) decides by where the lines go: a terminal gets the console
renderer, anything else (a service's journal, a file, a log shipper) one JSON object per
line. Lines carry what is bound in structlog's contextvars (the API's request id)."""

from __future__ import annotations

import logging
import sys

import structlog


class _StderrLogger:
    """Writes to whatever ``sys.stderr`` is at the time (stdout is kept for JSON output)."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warning = error = critical = exception = msg


def configure_logging(log_format: str = "auto", level: str = "info") -> None:
    if log_format == "auto":
        log_format = "console" if sys.stderr.isatty() else "json"
    renderer = (structlog.processors.JSONRenderer() if log_format == "json"
                else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()))
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            getattr(logging, level.upper(), logging.INFO)),
        logger_factory=lambda *args: _StderrLogger(),
        cache_logger_on_first_use=False,
    )

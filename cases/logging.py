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
    """Tracebacks are plain text, without the frames' local variables: those hold request
    headers (a bearer token) and bodies, which must never reach a log."""
    if log_format == "auto":
        log_format = "console" if sys.stderr.isatty() else "json"
    if log_format == "json":
        tail = [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    else:
        tail = [structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty(),
                                              exception_formatter=structlog.dev.plain_traceback)]
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            *tail,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            getattr(logging, level.upper(), logging.INFO)),
        logger_factory=lambda *args: _StderrLogger(),
        cache_logger_on_first_use=False,
    )

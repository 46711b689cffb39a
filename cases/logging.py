"""structlog set-up: JSON lines in production, readable console on a terminal.

``auto`` (the default) decides by where the lines go: a terminal gets the console
renderer, anything else (a service's journal, a file, a log shipper) one JSON object per
line. Lines carry what is bound in structlog's contextvars (the API's request id).

structlog is imported when the first line is logged, not at start: a command that logs
nothing (a case list, a case) does not pay for it (docs/benchmarks.md, start-up). Modules
take their logger from ``get_logger`` here; ``configure_logging(..., lazy=True)`` keeps the
settings until then."""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

_pending: tuple[str, str] | None = None  # settings kept by a lazy configure_logging
_configured = False  # whether structlog got Abate's set-up (else it would print every level)


_ONE_LINE_AT_A_TIME = threading.Lock()


class _StderrLogger:
    """Writes to whatever ``sys.stderr`` is at the time (stdout is kept for JSON output),
    each line whole: ``print`` writes the text and its newline apart, so two threads (the
    server, the view runner, the scheduler, the access-log writer) could put one line's
    text before another's newline, and neither line would read as JSON."""

    def msg(self, message: str) -> None:
        with _ONE_LINE_AT_A_TIME:
            sys.stderr.write(message + "\n")
            sys.stderr.flush()

    log = debug = info = warning = error = critical = exception = msg


class _Logger:
    """A structlog logger made on first use, after the kept settings are applied."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, method: str) -> Any:
        import structlog

        _apply_pending()
        return getattr(structlog.get_logger(self._name), method)


def get_logger(name: str) -> Any:
    return _Logger(name)


def _apply_pending() -> None:
    """Apply the kept settings; with none ever given (the settings themselves could not be
    read), the defaults: structlog unconfigured would print debug lines, and the failure's
    traceback with them, under the one line a person is promised."""
    global _pending
    if _pending is not None:
        settings, _pending = _pending, None
        _configure(*settings)
    elif not _configured:
        _configure("auto", "info")


def configure_logging(log_format: str = "auto", level: str = "info", lazy: bool = False) -> None:
    """``lazy``: keep the settings until a logger from ``get_logger`` is first used (for
    a command whose every logger comes from there: structlog's own loggers would log
    unconfigured meanwhile)."""
    global _pending
    _pending = (log_format, level)
    if not lazy:
        _apply_pending()


def _configure(log_format: str, level: str) -> None:
    """Tracebacks are plain text, without the frames' local variables: those hold request
    headers (a bearer token) and bodies, which must never reach a log."""
    global _configured
    import structlog

    _configured = True
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

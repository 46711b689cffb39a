"""A failure's log line carries the traceback but never the frames' local variables (they
hold request headers with bearer tokens, and bodies), in JSON and on the console."""

from __future__ import annotations

import pytest
import structlog

from cases.logging import configure_logging

SECRET = "abate_s3cr3t-token-value"


@pytest.fixture
def restored_logging():
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def _fail_with_a_secret_in_scope() -> None:
    authorization = f"Bearer {SECRET}"  # noqa: F841 - the local a traceback could show
    raise OverflowError("date value out of range")


@pytest.mark.parametrize("log_format", ["json", "console"])
def test_a_logged_traceback_shows_no_local_variables(restored_logging, capsys, log_format):
    configure_logging(log_format)
    try:
        _fail_with_a_secret_in_scope()
    except OverflowError:
        structlog.get_logger("abate.api").exception("request_failed_unexpectedly")
    logged = capsys.readouterr().err
    assert "request_failed_unexpectedly" in logged
    assert "OverflowError: date value out of range" in logged
    assert "_fail_with_a_secret_in_scope" in logged
    assert SECRET not in logged


def test_lazily_configured_logging_is_configured_by_the_first_line(restored_logging, capsys):
    """A read-only command keeps the settings until a line is logged (structlog is not
    imported before): that line still comes out configured, as JSON on stderr."""
    import json

    from cases.logging import get_logger

    structlog.reset_defaults()
    configure_logging("json", "warning", lazy=True)
    log = get_logger("abate.projections")
    log.info("below_the_level")
    log.warning("projection_outdated", view="tax_roll")
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert json.loads(line)["event"] == "projection_outdated"
    assert json.loads(line)["level"] == "warning"

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


class _SlowStream:
    """A stream that lets other threads run inside every write (as a pipe that is full
    for a moment does), so lines written by several threads at once would mix."""

    def __init__(self):
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        import time

        time.sleep(0)
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_lines_logged_by_several_threads_at_once_each_stay_whole(restored_logging, monkeypatch):
    import json
    import threading

    stream = _SlowStream()
    monkeypatch.setattr("sys.stderr", stream)
    configure_logging("json")
    log = structlog.get_logger("abate.test")

    def many(n: int) -> None:
        for i in range(200):
            log.info("line", thread=n, i=i)

    threads = [threading.Thread(target=many, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = "".join(stream.parts).splitlines()
    assert len(lines) == 1200
    assert sorted((json.loads(line)["thread"], json.loads(line)["i"]) for line in lines) == \
        [(n, i) for n in range(6) for i in range(200)]

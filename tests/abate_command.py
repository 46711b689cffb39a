"""The ``abate`` command through two doors: in this process (``run_abate``: ``abate.cli.main``
with the environment, folder, standard input and output a person's process would have), and
as a person types it (``run_abate_process``: the installed command in a subprocess).

The in-process door is for arguments, output and usage checks; the subprocess door for what
only a process shows (exit statuses as the shell sees them, signals, start-up, a command as
typed in the docs), and for commands that serve or run until stopped."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ABATE = str(Path(sys.executable).with_name("abate"))
# What an operator gives every API process on PostgreSQL (api/session_secret.py).
POSTGRES_SESSION_SECRET = {"ABATE_WEB_SESSION_SECRET": "tests-sign-sessions-with-this-" + "x" * 16}

# Settings of the test run itself that a person's environment would not have.
TEST_ONLY = ("ABATE_TEST_DATABASE_URL", "ABATE_BENCH_POSTGRES_URL", "ABATE_LOG_FORMAT",
             "ABATE_LOG_LEVEL", "ABATE_REQUIRE_BROWSER", "ABATE_REQUIRE_NETNS")


def abate_env(database_url: str | None = None, **extra: str) -> dict[str, str]:
    """The environment a person would have: no test-only settings, one chosen store."""
    env = {k: v for k, v in os.environ.items() if k not in TEST_ONLY}
    if database_url:
        env["ABATE_DATABASE_URL"] = database_url
        if database_url.startswith("postgresql"):
            env.update(POSTGRES_SESSION_SECRET)
    env.update(extra)
    return env


def database_env(database, **extra: str) -> dict[str, str]:
    """``abate_env`` for a ``database`` fixture (URL, extra env, schema), logs as JSON lines."""
    url, _extra, schema = database
    schema_env = {"ABATE_DATABASE_SCHEMA": schema} if schema else {}
    return abate_env(url, ABATE_LOG_FORMAT="json", **schema_env, **extra)


def run_abate(*args: str, database_url: str | None = None, cwd: Path | None = None,
              env: dict[str, str] | None = None, input: str | None = None,
              timeout: float = 120, text: bool = True) -> subprocess.CompletedProcess:
    """``abate ARGS`` run by ``abate.cli.main`` in this process, as its own process would
    run it: ``env`` as the whole environment, ``cwd`` as the folder, ``input`` on standard
    input; its exit status, standard output and standard error as a subprocess's (bytes
    with ``text=False``)."""
    del timeout  # the subprocess door's: kept so that a call reads the same at both doors
    from abate.cli import main

    out, err = _Output(), _Output()
    with _process_state(env or abate_env(database_url), cwd or ROOT, input or ""), \
            redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out.flush()
        err.flush()
    if not text:
        return subprocess.CompletedProcess([ABATE, *args], int(code), out.bytes(), err.bytes())
    return subprocess.CompletedProcess([ABATE, *args], int(code), out.text(), err.text())


def run_abate_process(*args: str, database_url: str | None = None, cwd: Path | None = None,
                      env: dict[str, str] | None = None, input: str | None = None,
                      timeout: float = 120) -> subprocess.CompletedProcess:
    """The installed ``abate ARGS`` in a subprocess, as a person types it."""
    return subprocess.run([ABATE, *args], cwd=cwd or ROOT, env=env or abate_env(database_url),
                          input=input, capture_output=True, text=True, timeout=timeout)


class _Output(io.TextIOWrapper):
    """A text stream with the ``buffer`` a command writes bytes to (a CSV export), read
    back as text afterwards; not a terminal, as a subprocess's pipe is not."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", newline="", write_through=True)

    def bytes(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()

    def text(self) -> str:
        return self.bytes().decode("utf-8", errors="replace")


@contextmanager
def _process_state(env: dict[str, str], cwd: Path, stdin: str) -> Iterator[None]:
    """This process's environment, folder and standard input as ``abate`` would find them,
    put back afterwards with its signal handlers (tests run one at a time in each worker
    process)."""
    saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
    saved_handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.stdin = io.StringIO(stdin)
    try:
        yield
    finally:
        for sig, handler in saved_handlers.items():
            signal.signal(sig, handler)
        sys.stdin = saved_stdin
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def assert_one_line_failure(done: subprocess.CompletedProcess, code: int, *fragments: str) -> str:
    """Exit ``code``, and stderr is one line (no traceback) holding every fragment."""
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1, f"expected one line on stderr, got:\n{done.stderr}"
    assert done.returncode == code, (done.returncode, done.stderr)
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]

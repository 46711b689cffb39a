"""Running the installed ``abate`` command as a person types it, and what its failures look like."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ABATE = str(Path(sys.executable).with_name("abate"))


def abate_env(database_url: str | None = None, **extra: str) -> dict[str, str]:
    """The environment a person would have: no test-only settings, one chosen store."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ABATE_TEST_DATABASE_URL", "ABATE_BENCH_POSTGRES_URL", "ABATE_LOG_FORMAT",
                        "ABATE_LOG_LEVEL")}
    if database_url:
        env["ABATE_DATABASE_URL"] = database_url
    env.update(extra)
    return env


def database_env(database, **extra: str) -> dict[str, str]:
    """``abate_env`` for a ``database`` fixture (URL, extra env, schema), logs as JSON lines."""
    url, _extra, schema = database
    schema_env = {"ABATE_DATABASE_SCHEMA": schema} if schema else {}
    return abate_env(url, ABATE_LOG_FORMAT="json", **schema_env, **extra)


def run_abate(*args: str, database_url: str | None = None, cwd: Path | None = None,
              env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([ABATE, *args], cwd=cwd or ROOT, env=env or abate_env(database_url),
                          capture_output=True, text=True, timeout=timeout)


def assert_one_line_failure(done: subprocess.CompletedProcess, code: int, *fragments: str) -> str:
    """Exit ``code``, and stderr is one line (no traceback) holding every fragment."""
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1, f"expected one line on stderr, got:\n{done.stderr}"
    assert done.returncode == code, (done.returncode, done.stderr)
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]

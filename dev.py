#!/usr/bin/env python3
"""Set-up and run in one step: creates or refreshes ./.venv, then runs a task.

    python3.11 dev.py demo     # the service on the embedded SQLite default, with demo data
                               # (options after it go to `abate serve --demo`: --port 8001)
    python3.11 dev.py test     # the whole test suite (PostgreSQL too when
                               # ABATE_TEST_DATABASE_URL is set)
    python3.11 dev.py bench    # benchmarks (figures, not a test)

Only needs Python 3.11+ and access to the package registry.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".abate-installed"


def _fingerprint() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_venv() -> None:
    """Create the virtual environment and (re)install when pyproject.toml changed."""
    if sys.version_info < (3, 11):
        sys.exit(f"Abate needs Python 3.11 or newer (this is {sys.version.split()[0]})")
    if not (BIN / "python").exists():
        print("creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    if STAMP.exists() and STAMP.read_text() == _fingerprint():
        return
    print("installing Abate and its dependencies into .venv ...", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", "-e", f"{ROOT}[test]"], check=True)
    STAMP.write_text(_fingerprint())


def main(argv: list[str]) -> int:
    tasks = {
        "demo": [str(BIN / "abate"), "serve", "--demo"],
        "test": [str(BIN / "python"), "-m", "pytest"],
        "bench": [str(BIN / "abate"), "bench"],
    }
    if not argv or argv[0] not in tasks:
        print(__doc__)
        return 2
    ensure_venv()
    os.chdir(ROOT)
    command = [*tasks[argv[0]], *argv[1:]]
    if os.name == "posix":
        # Become the task: Ctrl-C and SIGTERM (a terminal, systemd, CI) reach the server or
        # the tests themselves, which stop cleanly; no wrapper is left to print a traceback or
        # to exit while its child goes on holding the port.
        os.execv(command[0], command)
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Set-up and run in one step: creates or refreshes ./.venv, then runs a task.

    python3.11 dev.py demo     # the service on the embedded SQLite default, with demo data
                               # (options after it go to `abate serve --demo`: --port 8001)
    python3.11 dev.py test     # the whole test suite (PostgreSQL too when
                               # ABATE_TEST_DATABASE_URL is set)
    python3.11 dev.py bench    # benchmarks (figures, not a test): python -m bench, with
                               # its options (--help; docs/benchmarks.md)
    python3.11 dev.py lock     # refresh requirements.lock after editing pyproject.toml's
                               # dependencies (--upgrade, or --upgrade-package NAME, to move
                               # to newer releases)

Only needs Python 3.11+ and access to the package registry. .venv holds exactly the versions
in requirements.lock (docs/operations.md, "Installing: the lock").
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".abate-installed"
PYPROJECT = ROOT / "pyproject.toml"
LOCK = ROOT / "requirements.lock"
# The resolver `dev.py lock` runs, from the package registry into a temporary folder (never
# into .venv). The lock is for the interpreter and platform of the developers' machines and CI.
UV = "uv==0.13.9"
LOCK_TARGET = ["--python-version", "3.11", "--python-platform", "x86_64-unknown-linux-gnu"]
LOCK_COMMAND = "python3.11 dev.py lock"


def _fingerprint() -> str:
    return hashlib.sha256(PYPROJECT.read_bytes() + b"\0" + LOCK.read_bytes()).hexdigest()


def ensure_venv() -> None:
    """Make .venv anew from requirements.lock when it or pyproject.toml changed: the locked
    wheels checked against their hashes, then Abate itself, editable, built by the locked
    setuptools. Nothing is resolved or fetched unlocked, and nothing earlier is left over."""
    if not LOCK.exists():
        sys.exit(f"{LOCK.name} is missing: restore it from git, or write it with: {LOCK_COMMAND}")
    if (BIN / "python").exists() and STAMP.exists() and STAMP.read_text() == _fingerprint():
        return
    print("creating .venv from requirements.lock ...", flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    pip = [str(BIN / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "install", "--require-hashes", "--only-binary", ":all:", "-r", str(LOCK)], check=True
    )
    subprocess.run([*pip, "install", "--no-deps", "--no-build-isolation", "-e", str(ROOT)], check=True)
    STAMP.write_text(_fingerprint())


def lock(options: list[str]) -> int:
    """Write requirements.lock: pyproject.toml's dependencies with the test extra, its build
    requirements (the editable install builds without isolation) and pip, each at one version
    with the hashes of its files. Pins already in the lock are kept unless `options` say
    --upgrade or --upgrade-package NAME."""
    import tomllib  # here, not at the top: an older Python gets main's message, not an ImportError

    build = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["build-system"]["requires"]
    with tempfile.TemporaryDirectory() as tools:
        pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
        subprocess.run([*pip, "install", "--target", tools, UV], check=True)
        compile_ = [
            str(Path(tools) / "bin" / "uv"), "pip", "compile", "pyproject.toml", "-",
            "--extra", "test", "--generate-hashes", *LOCK_TARGET, "--python", sys.executable,
            "--custom-compile-command", LOCK_COMMAND, "--output-file", LOCK.name, *options,
        ]
        extra = "\n".join([*build, "pip"]) + "\n"
        done = subprocess.run(compile_, input=extra, text=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        return done.returncode


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):
        sys.exit(f"Abate needs Python 3.11 or newer (this is {sys.version.split()[0]})")
    tasks = {
        "demo": [str(BIN / "abate"), "serve", "--demo"],
        # Two workers (pytest-xdist), each test file on one of them: a file's module-scoped
        # stores and sites are made once; `-n 0` after `test` runs in this process.
        "test": [str(BIN / "python"), "-m", "pytest", "-n", "2", "--dist", "loadfile"],
        "bench": [str(BIN / "python"), "-m", "bench"],  # bench/ is not installed: run here
    }
    if argv and argv[0] == "lock":
        return lock(argv[1:])
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

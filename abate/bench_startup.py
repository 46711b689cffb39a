"""``abate bench --only startup``: how long the installed ``abate`` takes to answer.

A person waits for the whole process: the interpreter, the imports, the settings, the
store and the answer. So each command is run as a person runs it (the installed command,
a child process, a small store made by ``abate demo`` in the run's temporary folder), N
times in turns, and the median wall-clock time is printed with the fastest and slowest.
Beside them, in the same run and taking the same turns, two floors no command can go
under: the interpreter starting and stopping (``python -c pass``), and the interpreter
importing the store's libraries (eventsourcing with its SQLAlchemy persistence, which
every command that opens the store needs). Targets printed: ``--help`` under 0.3 s, a
case list and a case under 0.5 s.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ABATE = str(Path(sys.executable).with_name("abate"))
TARGETS = {"abate --help": 0.3, "abate cases list": 0.5, "abate case show": 0.5}
STORE_LIBRARIES = "import eventsourcing.application, eventsourcing_sqlalchemy.factory"


def _env(database_url: str) -> dict[str, str]:
    """The environment of a person at a terminal: this run's store, no test settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ABATE_")}
    env["ABATE_DATABASE_URL"] = database_url
    return env


def _run(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return seconds


def startup_rows(runs: int = 10) -> list[tuple]:
    """(what, median s, min s, max s, target) for each command and floor, ``runs`` turns."""
    with tempfile.TemporaryDirectory(prefix="abate-startup-") as folder:
        env = _env(f"sqlite:///{folder}/demo.sqlite3")
        subprocess.run([ABATE, "demo"], env=env, check=True, capture_output=True)
        case_ref = "BV-2026-001"
        commands = {
            "python -c pass (interpreter)": [sys.executable, "-c", "pass"],
            "python: import the store's libraries": [sys.executable, "-c", STORE_LIBRARIES],
            "abate --help": [ABATE, "--help"],
            "abate cases list": [ABATE, "cases", "list", "--municipality", "belleville"],
            "abate case show": [ABATE, "case", "show", "--municipality", "belleville", case_ref],
        }
        for argv in commands.values():  # warm-up: the file cache, byte-code files
            _run(argv, env)
        seconds: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(runs):
            for label, argv in commands.items():
                seconds[label].append(_run(argv, env))
    return [(label, f"{statistics.median(s):.3f}", f"{min(s):.3f}", f"{max(s):.3f}",
             f"< {TARGETS[label]}" if label in TARGETS else "floor")
            for label, s in seconds.items()]

"""``python -m bench --only startup``: how long the installed ``abate`` takes to answer.

A person waits for the whole process: the interpreter, the imports, the settings, the
store and the answer. So each command is run as a person runs it (the installed command,
a child process, a small store made by ``abate demo``: on SQLite in the run's temporary
folder, on PostgreSQL in a fresh schema dropped at the end), N times in turns, and the
median wall-clock time is printed with the fastest and slowest, beside the median CPU time
of the child (user + system, from the operating system's accounting of the child): on a
shared machine a child waits for a core, which counts in its wall time and not in its CPU
time. Beside them, in the same run and taking the same turns, two floors no command can go
under: the interpreter starting and stopping (``python -c pass``), and the interpreter
importing what a read of the store needs (SQLAlchemy and eventsourcing's event classes).
Every module is compiled to byte code before the first timed run, and no run is told not to
read it (``PYTHONDONTWRITEBYTECODE`` is left out of the children's environment).
Targets printed: ``--help`` under 0.3 s, a case list and a case under 0.5 s.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ABATE = str(Path(sys.executable).with_name("abate"))
TARGETS = {"abate --help": 0.3, "abate cases list": 0.5, "abate case show": 0.5}
READ_LIBRARIES = "import sqlalchemy, eventsourcing.persistence"


# Settings that would make every run recompile the modules it imports: an installed
# Abate runs from compiled byte code, so the runs are timed with it (docs/benchmarks.md).
NO_BYTECODE = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")


def _env(database_url: str, schema: str | None = None) -> dict[str, str]:
    """The environment of a person at a terminal: this run's store, no test settings, and
    byte code read and written where the modules are, as an installed program's is."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ABATE_") and k not in NO_BYTECODE}
    env["ABATE_DATABASE_URL"] = database_url
    if schema:
        env["ABATE_DATABASE_SCHEMA"] = schema
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall-clock seconds, CPU seconds of the child) of one run."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return seconds, _children_cpu() - cpu


def compile_byte_code(env: dict[str, str]) -> None:
    """Compile every module the commands may import (Abate's and the libraries'), once,
    before any run is timed: no timed run pays for compiling."""
    import sysconfig

    roots = [sysconfig.get_paths()["purelib"],
             *(str(Path(__file__).resolve().parent.parent / package)
               for package in ("abate", "api", "cases", "projections", "scheduler"))]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", *roots], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def _rows(backend: str, env: dict[str, str], runs: int) -> list[tuple]:
    compile_byte_code(env)
    subprocess.run([ABATE, "demo"], env=env, check=True, capture_output=True)
    case_ref = "BV-2026-001"
    commands = {
        "python -c pass (interpreter)": [sys.executable, "-c", "pass"],
        "python: import what a read needs": [sys.executable, "-c", READ_LIBRARIES],
        "abate --help": [ABATE, "--help"],
        "abate cases list": [ABATE, "cases", "list", "--municipality", "belleville"],
        "abate case show": [ABATE, "case", "show", "--municipality", "belleville", case_ref],
    }
    for argv in commands.values():  # warm-up: the file cache
        _run(argv, env)
    wall: dict[str, list[float]] = {label: [] for label in commands}
    cpu: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, argv in commands.items():
            seconds, cpu_seconds = _run(argv, env)
            wall[label].append(seconds)
            cpu[label].append(cpu_seconds)
    return [(backend, label, f"{statistics.median(s):.3f}", f"{min(s):.3f}", f"{max(s):.3f}",
             f"{statistics.median(cpu[label]):.3f}",
             f"< {TARGETS[label]}" if label in TARGETS else "floor")
            for label, s in wall.items()]


def startup_rows(runs: int = 10, postgres_url: str | None = None,
                 sqlite: bool = True) -> list[tuple]:
    """(backend, what, median s, min s, max s, median CPU s, target) for each command and
    floor, ``runs`` turns, on SQLite and (given its URL) PostgreSQL."""
    rows: list[tuple] = []
    if sqlite:
        with tempfile.TemporaryDirectory(prefix="abate-startup-") as folder:
            rows += _rows("SQLite", _env(f"sqlite:///{folder}/demo.sqlite3"), runs)
    if postgres_url:
        import sqlalchemy as sa

        schema = f"abate_startup_{uuid.uuid4().hex[:8]}"
        engine = sa.create_engine(postgres_url)
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
            rows += _rows("PostgreSQL", _env(postgres_url, schema), runs)
        finally:
            with engine.begin() as conn:
                conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
            engine.dispose()
    return rows

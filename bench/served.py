"""What the HTTP sections (``--only http`` and ``--only load``) share: a store of generated
cases with a clerk's token, the installed ``abate`` started in child processes as an
operator starts it (and every process of its tree stopped at the end, also on Ctrl-C), and
what /proc says about those processes (CPU time, peak memory)."""

from __future__ import annotations

import datetime as dt
import http.client
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.sections import MUNICIPALITY, backends, close, generate_cases, view_schema
from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.runner import ViewRunner

ABATE = str(Path(sys.executable).with_name("abate"))
TOKEN_USER = "bench.clerk"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(url: str, env: dict[str, str]) -> dict[str, str]:
    """The environment of an operator's ``abate``: this store, no ABATE_* of this shell."""
    schema = env.get("SQLALCHEMY_SCHEMA")
    server = {k: v for k, v in os.environ.items() if not k.startswith("ABATE_")}
    # PostgreSQL's workers sign the pages' sessions with a secret they are given
    secret = {"ABATE_WEB_SESSION_SECRET": secrets.token_urlsafe(48)} \
        if url.startswith("postgresql") else {}
    return {**server, "ABATE_DATABASE_URL": url, "ABATE_LOG_LEVEL": "warning",
            **({"ABATE_DATABASE_SCHEMA": schema} if schema else {}), **secret}


def store_with_token(url: str, env: dict[str, str], cases: int, progress: str = "") -> str:
    """Fill the empty store with ``cases`` generated cases (bench.sections.generate_cases),
    catch every view up (so no timed request pays for it) and add a clerk of belleville;
    returns the clerk's bearer token."""
    from api.accounts import Accounts

    store = CaseStore(url, extra_env=env)
    try:
        generate_cases(store, cases, progress)
        runner = ViewRunner(store, ALL_VIEWS, schema=view_schema(env))
        try:
            runner.catch_up()
            accounts = Accounts(runner.engine, url, view_schema(env))
            _, token = accounts.add(TOKEN_USER, "clerk", [MUNICIPALITY],
                                    now=dt.datetime.now(dt.timezone.utc))
        finally:
            runner.close()
    finally:
        close(store)
    return token


# ---------------------------------------------------------------- /proc


def process_tree(pid: int) -> list[int]:
    """``pid`` and every live descendant (uvicorn's workers are children of the server)."""
    found, todo = [], [pid]
    while todo:
        each = todo.pop()
        found.append(each)
        try:
            for task in Path(f"/proc/{each}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def started_at(pid: int) -> int | None:
    """When the process started (clock ticks after boot): a pid with another start time
    is another process."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU of one process, from /proc (None where it cannot be read)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a process and its live descendants (the workers)."""
    times = [cpu_seconds(each) for each in process_tree(pid)]
    return None if None in times else sum(times)  # type: ignore[arg-type]


def peak_memory_mb(pid: int) -> float | None:
    """The process's peak resident memory (VmHWM), in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None


def reset_peak_memory(pid: int) -> bool:
    """Start the process's VmHWM again from its present size (Linux: clear_refs 5), so the
    peak read later is the peak of what ran in between. False where that is refused."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return "?"


# ---------------------------------------------------------------- child processes


class Child:
    """A command in a child process, its stderr in ``log``; ``stop()`` sends SIGTERM to it
    and, after ``grace`` seconds, SIGKILL to every process of its tree still there."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path, name: str):
        self.name, self.log_path = name, log
        self.log = log.open("w")
        self.process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                        stderr=self.log)

    @property
    def pid(self) -> int:
        return self.process.pid

    def ended(self) -> str | None:
        """None while running, else why it ended (the end of its log)."""
        if self.process.poll() is None:
            return None
        return f"{self.name} ended ({self.process.returncode}): " \
               f"{self.log_path.read_text()[-2000:]}"

    def stop(self, grace: float = 30) -> None:
        tree = [(pid, started_at(pid)) for pid in process_tree(self.pid)]
        self.process.terminate()
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        for pid, started in reversed(tree):  # the workers too, should the server leave them
            if started is not None and started_at(pid) == started:  # not a pid used again
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        self.process.wait()
        self.log.close()


class Server(Child):
    """``abate serve`` on 127.0.0.1 and a free port, waited for until it answers /health
    three times per worker. ``options``: how it runs the scheduler and the view runner."""

    def __init__(self, url: str, env: dict[str, str], workers: int, log: Path,
                 options: tuple[str, ...] = ("--without-scheduler",),
                 extra_env: dict[str, str] | None = None):
        self.port = free_port()
        super().__init__([ABATE, "serve", "--port", str(self.port), "--workers", str(workers),
                          *options], {**server_env(url, env), **(extra_env or {})}, log,
                         "abate serve")
        wait_until_answering(self, workers * 3)


def wait_until_answering(child: Child, answers: int, path: str = "/health",
                         seconds: float = 120) -> None:
    """Wait until ``child`` (serving on ``child.port``) has answered ``path`` 200
    ``answers`` times; if it does not (or the wait is interrupted), stop it."""
    try:
        _wait(child, answers, path, seconds)
    except BaseException:
        child.stop(grace=5)
        raise


def _wait(child: Child, answers: int, path: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    answered = 0
    while time.monotonic() < deadline and answered < answers:
        if (why := child.ended()) is not None:
            raise RuntimeError(why)
        try:
            port = child.port  # type: ignore[attr-defined]
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", path)
            answered += conn.getresponse().status == 200
            conn.close()
        except OSError:
            time.sleep(0.2)
    if answered < answers:
        raise RuntimeError(f"{child.name} did not answer: {child.log_path.read_text()[-2000:]}")


def on_each_backend(postgres_url: str | None, sqlite: bool, workers: int,
                    measure: Callable[[Any, int], list[Any]]) -> list[Any]:
    """``measure(backend, workers)`` on SQLite (one worker: the embedded store has one
    writer) and on PostgreSQL (``workers``), the results of both in one list."""
    results: list[Any] = []
    with backends(postgres_url, sqlite=sqlite) as found:
        for backend in found:
            results += measure(backend, 1 if backend.name == "SQLite" else workers)
    return results

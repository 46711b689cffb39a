"""`abate serve` through the installed command: it serves the API on the configured
database, and a token from `abate users add` on that database works against it."""

from __future__ import annotations

import datetime as dt
import json
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from cases.application import SCHEDULER_ACTOR
from tests.abate_command import (ABATE, abate_env, assert_one_line_failure, database_env, run_abate,
                                  run_abate_process)
from tests.api_kit import served

pytestmark = pytest.mark.slow  # run first: conftest.py


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_abate_serve_answers_health_and_a_users_token(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    added = run_abate("users", "add", "--name", "kim", "--role", "auditor",
                      "--municipality", "belleville", database_url=url)
    token = json.loads(added.stdout)["token"]
    with served(url, tmp_path / "serve.log") as server:
        base = server.base
        health = httpx.get(f"{base}/health", timeout=5)
        assert health.status_code == 200 and health.json()["store"]["reachable"]
        listed = httpx.get(f"{base}/api/v1/belleville/cases",
                           headers={"Authorization": f"Bearer {token}"})
        assert listed.status_code == 200 and listed.json()["cases"] == []
        assert httpx.get(f"{base}/api/v1/belleville/cases").status_code == 401


def test_abate_serve_refuses_a_bad_port_in_one_line():
    done = run_abate_process("serve", "--port", "99999")
    assert done.returncode == 2 and "a port is 1 to 65535" in done.stderr


def test_a_port_in_use_is_refused_in_one_line_before_the_demo_is_loaded(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
        done = run_abate_process("serve", "--demo", "--port", str(port), database_url=url)
    assert_one_line_failure(done, 2, f"cannot listen on 127.0.0.1:{port}", "--port")
    assert not (tmp_path / "abate.sqlite3").exists()


# ---------------------------------------------------------------- the README's run command


class Served:
    """A running ``abate serve --demo``: its printed lines, read as they come."""

    def __init__(self, url: str, port: int, *extra: str, command: tuple[str, ...] = (),
                 together: bool = False, **env: str):
        """``together``: stderr (the log lines) into the same pipe as stdout, in the order
        written, as a terminal shows them; ``lines`` then holds both."""
        self.process = subprocess.Popen(
            [*(command or (ABATE, "serve", "--demo")), "--port", str(port), *extra],
            env=abate_env(url, **env), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if together else subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr: list[str] = []
        if not together:
            threading.Thread(target=lambda: self.stderr.extend(self.process.stderr),
                             daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("")  # the end

    def banner(self) -> list[str]:
        """The lines printed up to "Ctrl-C stops it" (printed once it listens)."""
        printed = []
        while not printed or not printed[-1].endswith("Ctrl-C stops it"):
            try:
                line = self.lines.get(timeout=90)
            except queue.Empty:
                raise AssertionError(f"no banner; printed {printed}; {self.stderr}") from None
            if line == "" and self.process.poll() is not None:
                raise AssertionError(f"ended {self.process.returncode}: {''.join(self.stderr)}")
            printed.append(line)
        return printed

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.process.send_signal(sig)
        return self.process.wait(timeout=60)


TOKEN_LINE = re.compile(r"^\s+(demo\.\S+)\s+(\w+)\s+(\S+)\s+(abate_\S+)$")


def _printed(banner: list[str]) -> tuple[str, dict[str, str]]:
    """The URL and each demo user's token, as a person reads them off the terminal."""
    base = re.search(r"Abate API on (http://\S+?)/ ", banner[0]).group(1)
    tokens = {m.group(1): m.group(4) for line in banner if (m := TOKEN_LINE.match(line))}
    return base, tokens


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_run_command_serves_the_demo_with_its_users_the_scheduler_and_a_restart(tmp_path):
    """`python3.11 dev.py demo` runs `abate serve --demo`: the demo cases and users, the
    printed tokens work with the role and village checks, the scheduler passes a deadline
    in the same process and the view runner keeps the views current, SIGTERM ends it with
    status 0, and a second start on the same store loads nothing twice and prints new tokens."""
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    port = _free_port()
    served = Served(url, port, ABATE_SWEEP_SECONDS="1")
    try:
        banner = served.banner()
        base, tokens = _printed(banner)
        assert base == f"http://127.0.0.1:{port}" and f"{base}/docs" in banner[0]
        assert banner[1] == (f"The store at {url} (the file {tmp_path / 'abate.sqlite3'}) "
                             "holds the demo's 39 cases.")
        villages = ("belleville", "mazomanie")
        roles = ("inspector", "clerk", "attorney", "auditor")
        assert set(tokens) == {f"demo.{v}.{r}" for v in villages for r in roles} | {"demo.admin"}

        clerk = _bearer(tokens["demo.belleville.clerk"])
        case = httpx.get(f"{base}/api/v1/belleville/cases/BV-2026-001", headers=clerk)
        assert case.status_code == 200 and case.json()["case_ref"] == "BV-2026-001"
        other = httpx.get(f"{base}/api/v1/mazomanie/cases/MZ-2026-001", headers=clerk)
        missing = httpx.get(f"{base}/api/v1/mazomanie/cases/MZ-2026-999", headers=clerk)
        assert other.status_code == missing.status_code == 404
        assert httpx.get(f"{base}/api/v1/mazomanie/cases/MZ-2026-001", headers=_bearer(
            tokens["demo.mazomanie.clerk"])).status_code == 200
        assert httpx.get(f"{base}/docs").status_code == 200

        # A snow case whose owner's 24 hours ran out yesterday: nobody but the scheduler
        # running inside `abate serve` records that deadline passing.
        now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
        opened = httpx.post(f"{base}/api/v1/belleville/cases", headers=_bearer(
            tokens["demo.belleville.inspector"]), json={
            "case_ref": "BV-2026-900", "at": (now - dt.timedelta(hours=40)).isoformat(),
            "rule": "belleville:9.09", "parcel": {"county": "Dane", "number": "0509-363-0000-1"},
            "site_address": "1 Test St, Belleville, WI 53508",
            "owner": {"name": "Test Owner", "mailing_address": "1 Test St, Belleville, WI 53508"},
            "description": "Walk not cleared", "source": "observation",
            "snow_ended_at": (now - dt.timedelta(hours=48)).isoformat()})
        assert opened.status_code == 201, opened.text
        passed = _wait_for(lambda: [e for e in httpx.get(
            f"{base}/api/v1/belleville/cases/BV-2026-900/history", headers=clerk
        ).json()["events"] if e["type"] == "DeadlinePassed"])
        assert passed[0]["actor"] == SCHEDULER_ACTOR, passed
        assert passed[0]["facts"]["rule"] == "belleville:9.09", passed
        # ... and the view runner brings every view to the end of the log, unasked.
        health = _wait_for(lambda: (h := httpx.get(f"{base}/health").json())["views"] and all(
            v["lag"] == 0 for v in h["views"]) and h)
        assert health["store"]["position"] > 291

        assert served.stop(signal.SIGTERM) == 0
        assert "Traceback" not in "".join(served.stderr)
    finally:
        if served.process.poll() is None:
            served.process.kill()

    again = Served(url, port)
    try:
        banner = again.banner()
        _, new_tokens = _printed(banner)
        # the demo's 39, not loaded twice, and the one opened through the API above
        assert banner[1].endswith("holds 40 cases: the demo's 39 and 1 other case."), banner
        _wait_for(lambda: "The demo was already in" in "".join(again.stderr))
        assert new_tokens.keys() == tokens.keys()
        assert not set(new_tokens.values()) & set(tokens.values())
        assert httpx.get(f"{base}/api/v1/belleville/cases/BV-2026-001",
                         headers=clerk).status_code == 401  # the token printed before
        listed = httpx.get(f"{base}/api/v1/belleville/cases?limit=100",
                           headers=_bearer(new_tokens["demo.belleville.auditor"]))
        assert listed.status_code == 200
        assert len([c for c in listed.json()["cases"] if c["case_ref"] == "BV-2026-001"]) == 1
        # The demo's facts read as the demo users' work, over the API too.
        history = httpx.get(f"{base}/api/v1/belleville/cases/BV-2026-002/history",
                            headers=_bearer(new_tokens["demo.belleville.auditor"])).json()
        actors = {e["type"]: e["actor"] for e in history["events"]}
        assert actors["Opened"] == actors["NoticeServed"] == "demo.belleville.inspector"
        assert actors["BillIssued"] == actors["PaymentReceived"] == "demo.belleville.clerk"
        assert actors["DeadlinePassed"] == SCHEDULER_ACTOR
        assert again.stop(signal.SIGINT) == 0
    finally:
        if again.process.poll() is None:
            again.process.kill()

    # `abate demo` over the same store: the case a demo user opened through the API is
    # someone trying the demo, not a village's real case, so the demo is not refused.
    rerun = run_abate("demo", database_url=url)
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stdout.rstrip().endswith("40 cases") and "BV-2026-900" in rerun.stdout


def _wait_for(check, seconds: float = 30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.2)
    raise AssertionError("not seen in time")


def _worker_pids(pid: int) -> list[int]:
    """The server's worker processes (uvicorn spawns them as multiprocessing children)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children
            if b"multiprocessing" in Path(f"/proc/{c}/cmdline").read_bytes()
            and b"resource_tracker" not in Path(f"/proc/{c}/cmdline").read_bytes()]


def test_several_workers_serve_one_store_and_stop_together(database):
    """`abate serve --workers 2` (the production shape, docs/operations.md): two server
    processes answer on one port with the same users and cases, and SIGTERM stops both."""
    url, _extra, _schema = database
    served = Served(url, _free_port(), "--workers", "2", **database_env(database))
    try:
        base, tokens = _printed(served.banner())
        clerk = _bearer(tokens["demo.mazomanie.clerk"])
        answers = [_wait_for(lambda: _get_or_none(f"{base}/api/v1/mazomanie/cases?limit=5",
                                                  clerk)) for _ in range(20)]
        assert {a.status_code for a in answers} == {200}
        workers = _wait_for(lambda: len(_worker_pids(served.process.pid)) == 2
                            and _worker_pids(served.process.pid))
        assert served.stop(signal.SIGTERM) == 0
        assert not [w for w in workers if Path(f"/proc/{w}").exists()]
        assert "Traceback" not in "".join(served.stderr)
    finally:
        if served.process.poll() is None:
            served.process.kill()


def _get_or_none(url: str, headers: dict[str, str]) -> httpx.Response | None:
    try:
        return httpx.get(url, headers=headers, timeout=10)
    except httpx.TransportError:  # a worker still starting
        return None


README_RUN = (shutil.which("python3.11") or sys.executable, str(Path(__file__).resolve().parents[1] / "dev.py"), "demo")


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_the_readme_run_command_itself_stops_on_sigterm_and_on_ctrl_c(tmp_path):
    """`python3.11 dev.py demo` as the README writes it (options after it go to the server):
    a SIGTERM or a Ctrl-C sent to that process stops the server itself, exit 0, no
    traceback, the port free again (no wrapper exits while its child goes on serving)."""
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    for sig in (signal.SIGTERM, signal.SIGINT):
        port = _free_port()
        served = Served(url, port, command=README_RUN)
        try:
            base, tokens = _printed(served.banner())
            assert httpx.get(f"{base}/health").status_code == 200
            assert served.stop(sig) == 0
            assert "Traceback" not in "".join(served.stderr), served.stderr
            assert _port_is_free(port)
        finally:
            if served.process.poll() is None:
                served.process.kill()


def _logged(line: str) -> dict | None:
    """A log line's fields (JSON: stderr is not a terminal), or None for a printed line."""
    try:
        fields = json.loads(line)
    except ValueError:
        return None
    return fields if isinstance(fields, dict) and "event" in fields else None


def test_the_demo_banner_comes_after_the_start_up_log_lines(tmp_path):
    """`python3.11 dev.py demo` with its log lines and its banner on one screen (one pipe,
    in the order written): the demo load, the views caught up, the scheduler started and
    its first sweep are all logged before the banner, the banner is not interleaved with
    them, and the next line after it is the first request's; Ctrl-C stops it (exit 0)."""
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    served = Served(url, _free_port(), command=README_RUN, together=True)
    try:
        printed = served.banner()
        first = next(i for i, line in enumerate(printed) if line.startswith("Abate API on "))
        before, banner = printed[:first], printed[first:]
        assert not [line for line in banner if _logged(line)], banner  # nothing among it
        events = [fields["event"] for line in before if (fields := _logged(line))]
        assert events[0] != "scheduler_started"  # the demo's own load logs first
        assert any(e.startswith("Demo loaded into") for e in events), events
        assert "views_following" in events, events
        started = events.index("scheduler_started")
        assert "deadline_sweep" in events[started:], events  # its first sweep, at once
        base, tokens = _printed(banner)
        assert httpx.get(f"{base}/health").status_code == 200
        after = served.lines.get(timeout=30)
        assert (_logged(after) or {}).get("event") == "request" and "/health" in after, after
        assert served.stop(signal.SIGINT) == 0
    finally:
        if served.process.poll() is None:
            served.process.kill()

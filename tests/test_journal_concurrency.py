"""A large ``abate import`` and a clerk in another process, at the same time.

The clerk (tests/clerk_worker.py) records an inspection every few hundredths of a second.
While the journal is imported its events are only staged, so the clerk keeps recording
(on SQLite a lock held for the whole import would make the clerk's saves fail with
"database is locked" after five seconds, and the clerk process would die). A journal
that also touches the clerk's case is refused as a whole at its end, naming that case,
and the clerk's inspections are all kept.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.journal_generator import write_journal
from cases.application import CaseService
from cases.store import CaseStore
from tests.builders import CaseLines, as_lines
from tests.conftest import NOW

pytestmark = pytest.mark.slow  # run first: conftest.py

ROOT = Path(__file__).resolve().parent.parent
ABATE = str(Path(sys.executable).with_name("abate"))
CLERK_CASE = CaseLines("belleville", "CLK-000")
JOURNAL_CASES = 2_000  # about 10,400 lines: a few seconds of import


def env_for(database) -> dict[str, str]:
    import os

    url, _, schema = database
    env = {**os.environ, "ABATE_DATABASE_URL": url}
    if schema:
        env["ABATE_DATABASE_SCHEMA"] = schema
    return env


def recorded(output: Path) -> int:
    return output.read_text().split().count("recorded")


def import_beside_a_clerk(database, tmp_path: Path, journal: Path):
    """Run ``abate import`` while the clerk works; (import result, clerk saves during the
    import, clerk output)."""
    url, extra, schema = database
    store = CaseStore(url, extra_env=extra)
    try:
        CaseService(store).import_journal(as_lines(
            CLERK_CASE.open("belleville:9.13", "2026-10-01T09:00:00-05:00")), now=NOW)
        opened_events = sum(1 for _ in store.notifications())
    finally:
        store.close()
    stop, output = tmp_path / "stop", tmp_path / "clerk.out"
    with output.open("w") as out:
        clerk = subprocess.Popen(
            [sys.executable, "-m", "tests.clerk_worker", url, schema or "-", "CLK-", "1",
             "0.02", str(stop)], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while recorded(output) == 0:  # the clerk is at work
            assert clerk.poll() is None and time.monotonic() < deadline, output.read_text()
            time.sleep(0.05)
        before = recorded(output)
        done = subprocess.run([ABATE, "import", str(journal)], env=env_for(database),
                              capture_output=True, text=True, timeout=900)
        during = recorded(output) - before
    finally:
        stop.touch()
        clerk.wait(timeout=60)
    assert clerk.returncode == 0, output.read_text()  # never "database is locked"
    return done, during, output.read_text(), opened_events


def events_in(database) -> int:
    """Events stored (counted: on PostgreSQL a refused insert leaves a gap in the ids)."""
    url, extra, _ = database
    store = CaseStore(url, extra_env=extra)
    try:
        return sum(1 for _ in store.notifications())
    finally:
        store.close()


def test_a_clerk_keeps_recording_while_a_large_journal_is_imported(database, tmp_path):
    journal = tmp_path / "large.jsonl"
    write_journal(str(journal), JOURNAL_CASES)
    done, during, clerk_output, opened = import_beside_a_clerk(database, tmp_path, journal)
    assert done.returncode == 0, done.stderr
    assert during >= 5, f"the clerk recorded {during} inspections during the import"
    events_recorded = json.loads(done.stdout)["events_recorded"]
    clerk_total = clerk_output.split().count("recorded")
    assert events_in(database) == opened + events_recorded + clerk_total  # nothing lost


def test_a_journal_touching_the_clerks_case_is_refused_whole_and_the_clerk_keeps_all(
        database, tmp_path):
    journal = tmp_path / "conflicting.jsonl"
    write_journal(str(journal), JOURNAL_CASES)
    inspection = as_lines(CLERK_CASE.cmd("record_inspection", "2026-10-03T12:00:00-05:00",
                                         findings="journal visit"))[0]
    journal.write_text(inspection + "\n" + journal.read_text())  # decided first, saved last
    done, during, clerk_output, opened = import_beside_a_clerk(database, tmp_path, journal)
    assert done.returncode == 1, done.stderr
    assert "another writer recorded on case CLK-000 while the journal was being imported" \
        in done.stderr and "nothing was recorded" in done.stderr
    assert "Traceback" not in done.stderr
    assert during >= 1
    assert events_in(database) == opened + clerk_output.split().count("recorded")




def test_a_sqlite_writer_waits_for_a_long_final_move_instead_of_failing(tmp_path):
    """The final move of a very large journal holds SQLite's write lock for seconds (about
    10 s for 1,000,000 lines): a clerk's `abate import` meanwhile waits for it and succeeds,
    where SQLite's default 5 s wait ended in "database is locked"."""
    import sqlite3

    path = tmp_path / "abate.sqlite3"
    env = {**env_for((f"sqlite:///{path}", {}, None)), "ABATE_LOG_FORMAT": "json"}
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("\n".join(as_lines(CLERK_CASE.open("belleville:9.13",
                                                        "2026-03-02T09:00:00-06:00"))) + "\n")
    other = CaseLines("belleville", "CLK-001")
    second.write_text("\n".join(as_lines(other.open("belleville:9.13",
                                                    "2026-03-02T09:00:00-06:00"))) + "\n")
    assert subprocess.run([ABATE, "import", str(first)], env=env, capture_output=True,
                          timeout=120).returncode == 0
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's long write, as the final move
    try:
        clerk = subprocess.Popen([ABATE, "import", str(second)], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(8)  # longer than SQLite's default 5 s wait
        assert clerk.poll() is None, clerk.communicate()  # still waiting, not failed
    finally:
        holder.execute("COMMIT")
        holder.close()
    out, err = clerk.communicate(timeout=60)
    assert clerk.returncode == 0, err
    assert json.loads(out)["events_recorded"] >= 1

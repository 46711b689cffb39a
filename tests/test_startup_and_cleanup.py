"""Start-up under concurrency and clean-up after a killed rebuild, through the installed command.

Several processes starting together on a new database create the schema once and all
succeed; a rebuild killed half-way leaves nothing behind after the next start, and a rebuild
still running in another process is left alone.
"""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from cases.application import CaseService
from cases.schema_lock import is_abandoned
from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.runner import ViewRunner
from tests.abate_command import database_env
from tests.builders import CaseLines
from tests.conftest import NOW

pytestmark = pytest.mark.slow  # run first: conftest.py

ROOT = Path(__file__).resolve().parent.parent
ABATE = str(Path(sys.executable).with_name("abate"))


def abate_env(database) -> dict[str, str]:
    return database_env(database)


def table_names(database) -> list[str]:
    url, _extra, schema = database
    engine = sa.create_engine(url)
    try:
        return sa.inspect(engine).get_table_names(schema=schema)
    finally:
        engine.dispose()


def positions(database, with_position=False) -> list[tuple]:
    url, _extra, schema = database
    engine = sa.create_engine(url)
    prefix = f'"{schema}".' if schema else ""
    try:
        with engine.connect() as conn:
            return sorted(tuple(r) for r in conn.execute(sa.text(
                f"select view, generation, active{', position' if with_position else ''} "
                f"from {prefix}abate_view_positions")))
    finally:
        engine.dispose()


# ---------------------------------------------------------------- concurrent first start


@pytest.mark.parametrize("command", [
    ["cases", "list", "--municipality", "belleville"],
    ["projections", "status"],
])
def test_eight_processes_starting_together_on_a_new_database_all_succeed(database, command):
    env = abate_env(database)
    url = database[0]
    if url.startswith("sqlite:///"):  # a new, empty database file (reading commands never
        Path(url.split("///", 1)[1]).touch()  # create one: tests/test_cli_door.py)
    processes = [subprocess.Popen([ABATE, *command], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(8)]
    outcomes = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in processes]
    for process in processes:
        process.stdout.close()
        process.stderr.close()
    failed = [(rc, err[-2000:]) for rc, _out, err in outcomes if rc != 0]
    assert not failed, failed
    # The schema exists once: one generation per view, every table once.
    assert positions(database) == [(name, 1, True) for name in sorted(v.name for v in ALL_VIEWS)]
    tables = table_names(database)
    assert len(tables) == len(set(tables))
    assert not [t for t in tables if t.startswith("abate_") and t.endswith("_g2")]


# ---------------------------------------------------------------- a rebuild killed half-way


def seeded(database, cases=150):
    """A store with the demo journal and ``cases`` more cases, its views caught up."""
    from abate.demo_store import demo_journal_path

    url, extra, schema = database
    store = CaseStore(url, extra_env=extra)
    service = CaseService(store)
    service.import_journal(demo_journal_path().read_text().splitlines(), now=NOW)
    lines = []
    for number in range(cases):
        case = CaseLines("belleville", f"K-{number:03d}")
        lines += [case.open("belleville:9.13", "2026-10-01T09:00:00-05:00"),
                  case.cmd("serve_notice", "2026-10-01T10:00:00-05:00", method="personal",
                           served_on="O")]
    service.import_journal([json.dumps(line) for line in lines], now=NOW)
    runner = ViewRunner(store, ALL_VIEWS, schema=schema)
    runner.catch_up()
    runner.close()
    return store


def start_rebuild(database) -> subprocess.Popen:
    process = subprocess.Popen([ABATE, "projections", "rebuild"], cwd=ROOT,
                               env=abate_env(database), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    views = {v.name for v in ALL_VIEWS}
    while {v for v in views for t in table_names(database)
           if t.startswith(f"abate_{v}_") and t.endswith("_g2")} != views:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the rebuild made no new generation"
        time.sleep(0.01)
    return process


def abate(database, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([ABATE, *args], cwd=ROOT, env=abate_env(database),
                          capture_output=True, text=True, timeout=120)


def test_a_killed_rebuild_leaves_nothing_behind_after_the_next_start(database):
    seeded(database, cases=400).close()
    view_names = sorted(v.name for v in ALL_VIEWS)
    rebuild = start_rebuild(database)
    rebuild.send_signal(signal.SIGKILL)  # somewhere between its new tables and its end
    rebuild.communicate(timeout=30)
    left = sorted((v, g) for v, g, active in positions(database) if not active)
    assert left, "the rebuild had finished before it was killed"
    assert any(t.endswith("_g2") for t in table_names(database))

    listed = abate(database, "cases", "list", "--municipality", "belleville",
                   "--limit", "500")
    assert listed.returncode == 0, listed.stderr
    assert "K-399" in listed.stdout
    dropped = [json.loads(line) for line in listed.stderr.splitlines()
               if "projection_leftover_dropped" in line]
    assert sorted((d["view"], d["generation"]) for d in dropped) == left
    assert any(d["tables"] for d in dropped)

    # One generation per view is left, the one readers use; no table of another one.
    kept = positions(database)
    assert [(v, active) for v, _g, active in kept] == [(v, True) for v in view_names]
    for view, generation, _active in kept:
        other = 3 - generation
        assert not [t for t in table_names(database)
                    if t.startswith(f"abate_{view}_") and t.endswith(f"_g{other}")]
    status = abate(database, "projections", "status")
    assert status.returncode == 0, status.stderr
    assert [s["rebuilding"] for s in json.loads(status.stdout)] == [[]] * len(view_names)


def stop_while_filling(rebuild: subprocess.Popen, database) -> None:
    """Leave ``rebuild`` stopped after it made its new tables and before it switches readers,
    outside the schema lock (held while it makes tables and while it switches).

    It runs in short slices and is looked at only while stopped, so what the test sees cannot
    move on behind its back.
    """
    url, _extra, schema = database
    deadline = time.monotonic() + 60
    while True:
        rebuild.send_signal(signal.SIGSTOP)
        switched = [v for v, g, active in positions(database) if active and g != 1]
        lock = None if switched else is_abandoned(url, schema, "schema")
        if lock is not None:
            lock.release()
            return
        if switched or time.monotonic() > deadline or rebuild.poll() is not None:
            rebuild.kill()
            pytest.fail(f"not stopped before its switch: {switched}, {rebuild.communicate()}")
        rebuild.send_signal(signal.SIGCONT)
        time.sleep(0.002)


def test_a_rebuild_still_running_in_another_process_is_left_alone(database):
    # Enough events that its fill spans many of the slices stop_while_filling lets it run.
    seeded(database, cases=1200).close()
    view_names = sorted(v.name for v in ALL_VIEWS)
    rebuild = start_rebuild(database)
    stop_while_filling(rebuild, database)
    try:
        assert [g for _v, g, active in positions(database) if active] == [1] * len(view_names)
        status = abate(database, "projections", "status")
        assert status.returncode == 0, status.stderr
        assert "projection_leftover_dropped" not in status.stderr
        assert "projection_rebuild_running" in status.stderr
        shown = json.loads(status.stdout)
        assert [s["rebuilding"][0]["generation"] for s in shown] == [2] * len(view_names)
    finally:
        rebuild.send_signal(signal.SIGCONT)
    _out, err = rebuild.communicate(timeout=120)
    assert rebuild.returncode == 0, err
    assert positions(database) == [(v, 2, True) for v in view_names]
    assert not [t for t in table_names(database) if t.endswith("_g1")]

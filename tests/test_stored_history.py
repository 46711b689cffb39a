"""A store written by an earlier Abate reads the same today: its cases, their histories, the
documents built again, the views rebuilt from it, its seals and ``abate verify``; a case
loaded from its old snapshot takes new commands; and today's code writes the same events.

The store and what reading it gave are in tests/fixtures/stored_history/, made by
tests/fixtures/stored_history.py with the code of that time (see its docstring).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.fixtures.stored_history import (
    EXPECTED_FILE,
    FOLDER,
    NOW_FIXTURE,
    STORE_FILE,
    build_store,
    observe,
    run_abate,
)

EXPECTED = json.loads((FOLDER / EXPECTED_FILE).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A copy of the fixture store (reading it rebuilds views and may add tables)."""
    folder = tmp_path_factory.mktemp("stored_history")
    shutil.copy(FOLDER / STORE_FILE, folder / STORE_FILE)
    return folder


@pytest.fixture(scope="module")
def observed(stored) -> dict:
    return json.loads(json.dumps(observe(stored, EXPECTED["seals"])))


@pytest.mark.parametrize("section", sorted(EXPECTED))
def test_the_stored_history_reads_as_it_did(observed, section):
    expected, found = EXPECTED[section], observed[section]
    if isinstance(expected, dict):
        assert sorted(found) == sorted(expected)
        differing = [key for key in expected if found[key] != expected[key]]
        assert not differing, f"{section}: {differing[:10]} read differently"
    assert found == expected


def test_the_fixture_holds_every_event_type_a_snapshot_and_two_seals():
    with sqlite3.connect(FOLDER / STORE_FILE) as database:
        topics = {t for (t,) in database.execute("select distinct topic from abate_events")}
        snapshots = database.execute("select count(*) from abate_snapshots").fetchone()[0]
    from cases.domain import Case

    kinds = {value.TOPIC for value in vars(Case).values()
             if isinstance(value, type) and issubclass(value, Case.Event)}
    assert topics == kinds - {Case.Event.TOPIC}  # Created, the library's, is never recorded
    assert snapshots == 1 and len(EXPECTED["seals"]) == 2
    assert EXPECTED["verify"]["report"]["snapshots_checked"] == 1


def test_a_case_loaded_from_its_old_snapshot_is_the_replayed_case_and_takes_commands(tmp_path):
    """FX-LONG has a snapshot written before the case's state was values (Case v2): loaded
    through it (upcast), the case is the replayed one and takes commands; at 200 events
    today's snapshot is written (v3, its values transcoded) and loads as the replay too."""
    from cases.application import CaseService
    from cases.commands import parse_command
    from cases.domain import Case, case_id
    from cases.history import case_at, describe_case
    from cases.store import CaseStore

    shutil.copy(FOLDER / STORE_FILE, tmp_path / STORE_FILE)
    url = f"sqlite:///{tmp_path / STORE_FILE}"
    key = case_id("belleville", "FX-LONG")

    def inspection(minute: int) -> str:
        return json.dumps({"command": "record_inspection", "municipality": "belleville",
                           "case_ref": "FX-LONG", "actor": "inspector", "findings": "checked",
                           "at": f"2026-12-02T{9 + minute // 60:02d}:{minute % 60:02d}:00-06:00"})

    store = CaseStore(url)
    try:
        loaded = store.get_case(key)
        replayed, events = case_at(store, "belleville", "FX-LONG")
        assert describe_case(loaded, events) == describe_case(replayed, events)
        assert vars(loaded) == vars(replayed)
        CaseService(store).handle(parse_command(json.loads(inspection(0))), now=NOW_FIXTURE)
        shown = describe_case(*case_at(store, "belleville", "FX-LONG"))
        CaseService(store).import_journal([inspection(m) for m in range(1, 200 - loaded.version)],
                                          now=NOW_FIXTURE)
        latest = store.get_case(key)
        replayed, events = case_at(store, "belleville", "FX-LONG")
        snapshot = store.snapshots.get(key, desc=True, limit=1)
        assert [s.originator_version for s in snapshot] == [200] == [latest.version]
        assert vars(latest) == vars(replayed) and isinstance(latest, Case)
    finally:
        store.close()
    before = EXPECTED["cases"]["belleville:FX-LONG"]["shown"]
    assert [e["type"] for e in shown["events"]] == \
        [e["type"] for e in before["events"]] + ["InspectionRecorded"]
    with sqlite3.connect(tmp_path / STORE_FILE) as database:
        [(state,)] = database.execute("select state from abate_snapshots "
                                      "where originator_version = 200").fetchall()
    assert b'"class_version":3' in state and b'"_type_":"abate_Deadline"' in state
    code, report = run_abate("--database-url", url, "verify")
    assert (code, report["ok"], report["problems"], report["snapshots_checked"]) == (0, True, [], 2)


def test_todays_code_writes_the_stored_events_again(tmp_path):
    """The same commands give the same stored events: type, case, position and fields in
    their order (compared as JSON: the order of a correction's several changes follows
    Python's string hashing, as it did)."""
    build_store(tmp_path)

    def events(path: Path) -> list[tuple]:
        with sqlite3.connect(path) as database:
            rows = database.execute("select id, originator_id, originator_version, topic, state "
                                    "from abate_events order by id").fetchall()
        return [(*row[:4], list(fields), fields)  # the fields in their stored order too
                for row in rows for fields in [json.loads(row[4])]]

    assert events(tmp_path / STORE_FILE) == events(FOLDER / STORE_FILE)

"""`abate verify` catches events altered, removed or reordered directly in the database."""

import json

import pytest
import sqlalchemy as sa

from abate.cli import main
from cases.application import CaseService
from cases.store import CaseStore
from cases.verify import verify_store
from tests.builders import CaseLines, as_lines, dumping_through_bill
from tests.conftest import NOW

case = CaseLines("belleville", "B-T-1")
other = CaseLines("belleville", "B-T-2")


def lifecycle():
    return as_lines(*dumping_through_bill(case),
                    other.open("belleville:9.14", "2026-03-02T09:00:00-06:00"))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def stored(request, tmp_path):
    """A store holding two cases, and a SQL connection to tamper with it."""
    if request.param == "sqlite":
        url, extra, table = f"sqlite:///{tmp_path / 'a.sqlite3'}", {}, "abate_events"
    else:
        from tests.conftest import _fresh_postgres_schema

        url, extra = _fresh_postgres_schema(request.getfixturevalue("postgres_database"))
        table = f'"{extra["SQLALCHEMY_SCHEMA"]}".abate_events'
    store = CaseStore(url, extra_env=extra)
    CaseService(store).import_journal(lifecycle(), now=NOW)
    engine = sa.create_engine(url)
    yield store, engine, table
    engine.dispose()
    store.close()


def rows(engine, table):
    with engine.connect() as conn:
        return conn.execute(sa.text(
            f"SELECT id, originator_id, originator_version, state FROM {table} ORDER BY id")).all()


def problems_of(store):
    return [(p.case, p.position, p.problem) for p in verify_store(store)[2]]


def test_an_untouched_store_verifies_clean(stored):
    store, _, _ = stored
    cases, events, problems = verify_store(store)
    assert (cases, events, problems) == (2, 6, [])


def test_an_altered_amount_is_reported_by_case_and_position(stored):
    store, engine, table = stored
    target = next(r for r in rows(engine, table) if b"150.00" in bytes(r.state))
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE {table} SET state = :s WHERE id = :id"),
                     {"s": bytes(target.state).replace(b"150.00", b"15.00"), "id": target.id})
    found = problems_of(store)
    assert ("belleville:B-T-1", target.originator_version,
            "content altered: hash does not match") in found
    assert all(p[0] == "belleville:B-T-1" for p in found)


def test_a_removed_event_is_reported(stored):
    store, engine, table = stored
    target = [r for r in rows(engine, table) if r.originator_version == 2][0]
    with engine.begin() as conn:
        conn.execute(sa.text(f"DELETE FROM {table} WHERE id = :id"), {"id": target.id})
    found = problems_of(store)
    assert any(position == 3 and "removed" in problem for _, position, problem in found)


def test_reordered_events_are_reported(stored):
    store, engine, table = stored
    first_case = rows(engine, table)[0].originator_id
    mine = [r for r in rows(engine, table) if r.originator_id == first_case]
    a, b = mine[2], mine[3]
    with engine.begin() as conn:  # swap positions 3 and 4 through a free number
        conn.execute(sa.text(f"UPDATE {table} SET originator_version = 999 WHERE id = :id"), {"id": a.id})
        conn.execute(sa.text(f"UPDATE {table} SET originator_version = :v WHERE id = :id"),
                     {"v": a.originator_version, "id": b.id})
        conn.execute(sa.text(f"UPDATE {table} SET originator_version = :v WHERE id = :id"),
                     {"v": b.originator_version, "id": a.id})
    found = problems_of(store)
    positions = {position for _, position, _ in found}
    assert {3, 4} <= positions


def test_abate_verify_exits_nonzero_and_names_the_case(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'v.sqlite3'}"
    journal = tmp_path / "j.jsonl"
    journal.write_text("\n".join(lifecycle()) + "\n")
    assert main(["--database-url", url, "import", str(journal)]) == 0
    assert main(["--database-url", url, "verify"]) == 0
    capsys.readouterr()
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM abate_events WHERE originator_version = 1 AND id = 1"))
    engine.dispose()
    assert main(["--database-url", url, "verify"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert report["problems"][0]["position"] == 2

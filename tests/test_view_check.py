"""`abate verify` compares every view with what the events give: a view row edited, deleted
or added in the database (outside Abate) is found, named by view, case and field, makes
verify exit 1 (with and without --seal), shows in `abate projections status`, and
`abate projections rebuild VIEW` repairs it.

The attack as an attacker types it runs through the installed `abate` command once; every
view's tables, on each backend, through the in-process door (``abate.cli.main``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from abate.cli import main
from tests.abate_command import abate_env, run_abate
from tests.builders import CaseLines, as_lines, dumping_through_bill
from tests.conftest import _fresh_postgres_schema

BILLED = [CaseLines("belleville", ref) for ref in ("B-V-1", "B-V-2")]
OPENED = [CaseLines("belleville", ref) for ref in ("B-V-3", "B-V-4")]
FAKE_ID = "00000000-0000-4000-8000-00000000fa4e"


def journal() -> list[str]:
    """Two cases billed (a balance, deadlines, a charge, substantiated) and two only opened
    (a notice to serve: the worklist's actions)."""
    lines = [line for case in BILLED for line in dumping_through_bill(case)]
    lines += [case.open("belleville:9.13", "2026-03-02T09:00:00-06:00") for case in OPENED]
    return as_lines(*lines)


def active_table(engine: sa.Engine, schema: str | None, view: str, table: str) -> str:
    """The name of a view's table in its active generation."""
    prefix = f'"{schema}".' if schema else ""
    with engine.connect() as conn:
        generation = conn.execute(sa.text(
            f"SELECT generation FROM {prefix}abate_view_positions WHERE view = :v AND active"),
            {"v": view}).scalar_one()
    return f"abate_{view}_{table}_g{generation}"


def quoted(schema: str | None, table: str) -> str:
    return f'"{schema}"."{table}"' if schema else f'"{table}"'


# ---------------------------------------------------------------- the attack, as typed


def test_an_edited_case_summary_is_found_by_verify_and_repaired_by_a_rebuild(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    env = abate_env(url)
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(journal()) + "\n")
    imported = run_abate("import", str(path), env=env)
    assert imported.returncode == 0, imported.stderr
    seal = json.loads(imported.stdout)["seal"]
    listed = run_abate("cases", "list", "--municipality", "belleville", env=env)
    assert {c["case_ref"]: c["balance"] for c in json.loads(listed.stdout)["cases"]}["B-V-1"] == "150.00"

    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("update abate_case_summaries_rows_g1 set owner_name='Tampered "
                             "Owner', balance='0.00' where case_ref = 'B-V-1'"))
    engine.dispose()
    listed = run_abate("cases", "list", "--municipality", "belleville", env=env)
    assert {c["case_ref"]: c["balance"] for c in json.loads(listed.stdout)["cases"]}["B-V-1"] == "0.00"

    for args in (("verify",), ("verify", "--seal", seal)):
        done = run_abate(*args, env=env)
        assert done.returncode == 1, (args, done.stderr)
        told = done.stderr.strip().splitlines()
        assert len(told) == 1 and "Traceback" not in done.stderr, told
        assert "case_summaries" in told[0] and "belleville:B-V-1" in told[0], told
        assert "abate projections rebuild case_summaries" in told[0], told
        report = json.loads(done.stdout)
        assert report["ok"] is False and report["views"]["ok"] is False
        [difference] = report["views"]["differences"]
        assert (difference["view"], difference["case"], difference["table"],
                difference["fields"]) == ("case_summaries", "belleville:B-V-1", "rows",
                                          ["owner_name", "balance"])
        assert {(c["field"], c["stored"], c["from_events"]) for c in difference["changes"]} \
            == {("owner_name", "Tampered Owner", "Ann Owner"), ("balance", "0.00", "150.00")}
    status = {s["view"]: s for s in json.loads(run_abate("projections", "status",
                                                         env=env).stdout)}
    assert status["case_summaries"]["last_check"]["matches"] is False
    assert status["case_summaries"]["last_check"]["cases"] == ["belleville:B-V-1"]
    assert status["worklist"]["last_check"]["matches"] is True

    rebuilt = run_abate("projections", "rebuild", "case_summaries", env=env)
    assert rebuilt.returncode == 0, rebuilt.stderr
    done = run_abate("verify", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["views"]["ok"] is True
    listed = run_abate("cases", "list", "--municipality", "belleville", env=env)
    shown = {c["case_ref"]: c for c in json.loads(listed.stdout)["cases"]}["B-V-1"]
    assert (shown["balance"], shown["owner_name"]) == ("150.00", "Ann Owner")


# ---------------------------------------------------------------- every view, each backend


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres",
                                                               marks=pytest.mark.postgres)])
def store_db(request, tmp_path_factory):
    """(URL, schema, engine) of a store holding ``journal()`` (the first verify catches its
    views up)."""
    folder: Path = tmp_path_factory.mktemp("view-check")
    if request.param == "sqlite":
        url, schema = f"sqlite:///{folder / 'abate.sqlite3'}", None
    else:
        url, extra = _fresh_postgres_schema(request.getfixturevalue("postgres_database"))
        schema = extra["SQLALCHEMY_SCHEMA"]
    path = folder / "j.jsonl"
    path.write_text("\n".join(journal()) + "\n")
    with pytest.MonkeyPatch.context() as env:
        if schema:
            env.setenv("ABATE_DATABASE_SCHEMA", schema)
        assert main(["--database-url", url, "import", str(path)]) == 0
    engine = sa.create_engine(url)
    yield url, schema, engine
    engine.dispose()


@pytest.fixture
def abate(store_db, monkeypatch, capsys):
    """``abate ARGS`` in process on the store: (exit status, JSON printed, stderr)."""
    url, schema, _ = store_db
    if schema:
        monkeypatch.setenv("ABATE_DATABASE_SCHEMA", schema)
    else:
        monkeypatch.delenv("ABATE_DATABASE_SCHEMA", raising=False)

    def run(*args: str) -> tuple[int, object, str]:
        capsys.readouterr()
        code = main(["--database-url", url, *args])
        out, err = capsys.readouterr()
        return code, json.loads(out) if out.strip() else None, err

    return run


# (view, table, a column to alter and its new value)
TABLES = [
    ("case_summaries", "rows", "owner_name", "Tampered Owner"),
    ("worklist", "rows", "consequence", "nothing happens"),
    ("worklist", "actions", "what", "nothing to do"),
    ("repeat_offenses", "rows", "party_name", "Somebody Else"),
    ("tax_roll", "versions", "principal", "1.00"),
    ("case_months", "rows", "closed_on", "2026-01-01"),
]


@pytest.mark.parametrize("view, table, column, value", TABLES,
                         ids=[f"{view}.{table}" for view, table, _, _ in TABLES])
def test_a_row_altered_deleted_or_added_in_any_view_is_named_and_rebuilt(
        store_db, abate, view, table, column, value):
    _, schema, engine = store_db
    code, report, _ = abate("verify")
    assert code == 0 and report["views"]["ok"] is True, report["views"]
    names = _case_names(engine, schema)  # before the case summaries are tampered with
    bare = active_table(engine, schema, view, table)
    name = quoted(schema, bare)
    with engine.begin() as conn:
        held = sorted({case_id for (case_id,) in conn.execute(
            sa.text(f"SELECT case_id FROM {name}"))}, key=names.get)
        assert len(held) >= 2, held
        altered, deleted = held[:2]
        columns = [c["name"] for c in sa.inspect(conn).get_columns(bare, schema=schema)]
        copied = ", ".join(":fake" if c == "case_id" else "'FAKE-1'" if c == "case_ref"
                           else f'"{c}"' for c in columns)
        listed = ", ".join(f'"{c}"' for c in columns)
        conn.execute(sa.text(f"INSERT INTO {name} ({listed}) SELECT {copied} FROM {name} "
                             "WHERE case_id = :id"), {"fake": FAKE_ID, "id": altered})
        conn.execute(sa.text(f'UPDATE {name} SET "{column}" = :v WHERE case_id = :id'),
                     {"v": value, "id": altered})
        conn.execute(sa.text(f"DELETE FROM {name} WHERE case_id = :id"), {"id": deleted})
    try:
        code, report, err = abate("verify")
        assert code == 1, err
        assert len(err.strip().splitlines()) == 1 and view in err, err
        found = {(d["view"], d["case"], d["table"], d["kind"], tuple(d["fields"]))
                 for d in report["views"]["differences"]}
        fake = "belleville:FAKE-1" if view != "case_months" else FAKE_ID
        assert found == {(view, names[altered], table, "altered", (column,)),
                         (view, names[deleted], table, "missing", ()),
                         (view, fake, table, "extra", ())}, found
        [checked] = [v for v in report["views"]["views"] if v["view"] == view]
        assert checked["digest"] != checked["digest_from_events"]
        assert checked["cases_differing"] == 3
        assert all(v["matches"] for v in report["views"]["views"] if v["view"] != view)
    finally:
        assert abate("projections", "rebuild", view)[0] == 0
    code, report, err = abate("verify")
    assert code == 0 and report["views"]["ok"] is True, err
    [checked] = [v for v in report["views"]["views"] if v["view"] == view]
    assert checked["digest"] == checked["digest_from_events"]


def _case_names(engine: sa.Engine, schema: str | None) -> dict[str, str]:
    """Case id -> ``municipality:case_ref``, from the case summaries (untouched here)."""
    with engine.connect() as conn:
        return {case_id: f"{municipality}:{ref}" for case_id, municipality, ref in conn.execute(
            sa.text("SELECT case_id, municipality, case_ref FROM " + quoted(
                schema, active_table(engine, schema, "case_summaries", "rows"))))}


def test_events_that_cannot_be_applied_leave_the_views_unchecked_not_a_traceback(
        tmp_path, monkeypatch, capsys):
    """An event made unreadable in the database: verify names it, and says the views were
    not compared (they cannot be computed from such events), in one line."""
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    monkeypatch.delenv("ABATE_DATABASE_SCHEMA", raising=False)
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(journal()) + "\n")
    assert main(["--database-url", url, "import", str(path)]) == 0
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE abate_events SET state = :s WHERE id = 2"),
                     {"s": b"not an event"})
    engine.dispose()
    capsys.readouterr()
    assert main(["--database-url", url, "verify"]) == 1
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["views"]["ok"] is False and report["views"]["differences"] == []
    assert "could not be computed from the events" in report["views"]["not_checked"]
    [line] = err.strip().splitlines()
    assert "unreadable event" in line and "the views were not compared" in line, line

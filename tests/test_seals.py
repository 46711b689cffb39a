"""Seals kept outside the database: `abate seal`, `abate verify --seal`, and snapshots
that nothing acts on unless they are the ones Abate wrote (all through the `abate`
command, tampering through SQL)."""

from __future__ import annotations

import json
from pathlib import Path
from uuid import UUID

import pytest
import sqlalchemy as sa

from cases.application import CaseService
from cases.domain import case_id
from cases.seals import seal_store
from cases.store import CaseStore
from tests.abate_command import run_abate
from tests.builders import CaseLines, as_lines
from tests.conftest import NOW
from tests.tamper_kit import Db, problems
from tests.test_tamper_evidence import B1, lifecycle, rewrite_case_consistently

third = CaseLines("belleville", "B-T-3")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def db(database, tmp_path):
    url, _, schema = database
    engine = sa.create_engine(url)
    db = Db(url, schema, engine)
    journal = tmp_path / "j.jsonl"
    journal.write_text("\n".join(lifecycle()) + "\n")
    assert db.abate("import", str(journal)).returncode == 0
    yield db
    engine.dispose()


def kept_seal(db, tmp_path):
    path = tmp_path / "seal-kept.json"
    code, printed = db.abate_json("seal", "--actor", "clerk Ann", "--reason",
                                  "Board meeting 2026-12-01", "--output", str(path))
    assert code == 0
    assert json.loads(path.read_text())["digest"] == printed["digest"]
    return path, printed


def test_seal_prints_a_line_to_keep_and_chains_to_the_previous_seal(db, tmp_path):
    path, printed = kept_seal(db, tmp_path)
    assert printed["seal_id"] == 2  # the import sealed first
    assert (printed["position"], printed["event_count"], printed["case_count"]) == (6, 6, 2)
    assert printed["line"] == (f"abate-seal 2 position 6 events 6 cases 2 digest "
                               f"{printed['log_digest']}")
    _, report = db.abate_json("verify")
    assert report["ok"] and report["seals_checked"] == 2
    with db.engine.connect() as conn:
        first = conn.execute(sa.text(f"SELECT digest FROM {db.table('abate_seals')} "
                                     "WHERE seal_id = 1")).scalar()
    assert printed["previous_digest"] == first


def test_a_kept_seal_matches_and_reports_what_came_after(db, tmp_path):
    path, printed = kept_seal(db, tmp_path)
    more = tmp_path / "more.jsonl"
    more.write_text("\n".join(as_lines(third.open("belleville:9.14",
                                                  "2026-03-05T09:00:00-06:00"))) + "\n")
    assert db.abate("import", str(more)).returncode == 0
    # The file, the printed line, its log digest, or the seal's own digest (the `digest`
    # field of the file, which an auditor may copy instead).
    for given in (str(path), printed["line"], printed["log_digest"], printed["digest"]):
        code, report = db.abate_json("verify", "--seal", given)
        assert code == 0 and report["matches"] is True, given
        assert report["after_seal"]["events"] == 1
        assert report["after_seal"]["cases"] == ["belleville:B-T-3"]


def test_a_kept_seal_reports_a_change_made_after_it(db, tmp_path):
    path, _ = kept_seal(db, tmp_path)
    target = next(r for r in db.rows() if b"150.00" in bytes(r.state))
    db.execute("UPDATE {events} SET state = :s WHERE id = :id",
               s=bytes(target.state).replace(b"150.00", b"15.00"), id=target.id)
    for given in (str(path), printed_digest(path)):
        code, report = db.abate_json("verify", "--seal", given)
        assert code == 1 and report["matches"] is False
        assert (B1, target.originator_version) in {(p["case"], p["position"])
                                                   for p in report["differences"]}


def printed_digest(path) -> str:
    return json.loads(path.read_text())["digest"]


def test_rewriting_events_and_every_seal_record_is_caught_only_by_the_kept_seal(
        db, database, tmp_path):
    path, _ = kept_seal(db, tmp_path)
    url, extra, _ = database
    store = CaseStore(url, extra_env=extra)
    try:
        rewrite_case_consistently(db, store, "B-T-1")
        db.execute("DELETE FROM {seals}")  # and re-seal with Abate's own code
        seal_store(store, "abate", "automatic: import j.jsonl")
        seal_store(store, "clerk Ann", "Board meeting 2026-12-01")
    finally:
        store.close()
    code, report = db.abate_json("verify")
    assert (code, report["problems"]) == (0, [])  # nothing inside the database can tell
    code, report = db.abate_json("verify", "--seal", str(path))
    assert code == 1 and report["matches"] is False
    assert "rewritten" in report["store_seal_record"]


def test_an_altered_seal_record_is_reported(db):
    db.execute("UPDATE {seals} SET actor = 'someone else'")
    code, report = db.abate_json("verify")
    assert code == 1
    assert ("seal 1", 6, "the seal record was altered: its digest does not match its fields") \
        in problems(report)


def test_an_edited_index_of_sealed_cases_is_named_and_reindex_repairs_it(db):
    """A case's read asks the index, not every seal's leaves: removing its row (to hide
    deleted events) is a finding of `abate verify`, and `abate seal --reindex` repairs it."""
    db.execute("DELETE FROM {sealed_cases} WHERE case_id = :case",
               case=str(case_id("belleville", "B-T-1")))
    code, report = db.abate_json("verify")
    assert code == 1
    assert [(c, text.split(";")[0]) for c, _, text in problems(report)] == [
        (B1, "the index of sealed cases lacks seal 1's row for this case")]
    code, printed = db.abate_json("seal", "--reindex")
    assert (code, printed) == (0, {"reindexed": {"seals": 1, "rows": 2}})
    assert db.abate_json("verify")[1]["ok"]
    db.execute("UPDATE {sealed_cases} SET version = 1")
    code, report = db.abate_json("verify")
    assert code == 1
    assert [c for c, _, text in problems(report) if "its leaves say" in text] == [B1]
    assert db.abate_json("seal", "--reindex")[0] == 0
    assert db.abate_json("verify")[1]["ok"]


def test_a_store_sealed_before_the_index_existed_is_indexed_when_opened(db):
    db.execute("DROP TABLE {sealed_cases}")
    code, report = db.abate_json("verify")  # opening the store made and filled the index
    assert code == 0 and report["ok"], report["problems"]
    with db.engine.connect() as conn:
        count = conn.execute(sa.text(
            f"SELECT count(*) FROM {db.table('abate_sealed_cases')}")).scalar()
    assert count == 2


def test_a_kept_line_with_another_position_is_no_match_and_says_which_side_differs(
        db, tmp_path):
    """It matched: the log read up to position 999 ended at the seal's own position."""
    _, printed = kept_seal(db, tmp_path)
    line = printed["line"].replace(f"position {printed['position']}",
                                   f"position {printed['position'] + 900}")
    code, report = db.abate_json("verify", "--seal", line)
    assert code == 1 and report["matches"] is False
    assert report["recomputed"]["position"] == printed["position"]
    assert f"the log ends at position {printed['position']}, before the kept seal's " \
           f"position {printed['position'] + 900}" in report["explanation"]
    assert "has the kept digest but not the kept numbers" in report["store_seal_record"]
    assert "rewritten" not in report["store_seal_record"]


def test_a_kept_line_with_other_counts_says_the_kept_copy_differs(db, tmp_path):
    _, printed = kept_seal(db, tmp_path)
    line = printed["line"].replace(f"cases {printed['case_count']}", "cases 7000")
    code, report = db.abate_json("verify", "--seal", line)
    assert code == 1 and report["matches"] is False
    assert "the kept copy was changed or copied wrong" in report["explanation"]
    assert "rewritten" not in report["explanation"]


def test_verify_seal_names_a_changed_case_as_the_store_does_not_as_the_seal_record_says(
        db, tmp_path):
    """A seal record's case names are not covered by its digest: a case whose events were
    deleted was named with whatever name the record had been rewritten to give it."""
    path, _ = kept_seal(db, tmp_path)
    key = str(case_id("belleville", "B-T-1"))
    with db.engine.connect() as conn:
        [(seal, names)] = [(seal, json.loads(names)) for seal, names in conn.execute(sa.text(
            f"SELECT seal_id, case_names FROM {db.table('abate_seals')}")) if key in names]
    assert names[key] == B1
    names[key] = "belleville:SOMEONE-ELSE"
    db.execute("UPDATE {seals} SET case_names = :names WHERE seal_id = :seal",
               names=json.dumps(names), seal=seal)
    [second] = [r for r in db.rows() if r.originator_version == 2 and key == str(
        r.originator_id if isinstance(r.originator_id, UUID) else UUID(bytes=r.originator_id))]
    db.execute("DELETE FROM {events} WHERE id = :id", id=second.id)
    code, report = db.abate_json("verify", "--seal", str(path))
    assert code == 1 and report["matches"] is False
    named = {p["case"] for p in report["differences"]}
    assert "belleville:SOMEONE-ELSE" not in named, report["differences"]
    assert named == {B1}, report["differences"]


@pytest.mark.parametrize("names", ["not json", "[1, 2]"])
def test_a_seal_record_whose_case_names_are_damaged_is_a_finding_not_a_crash(db, tmp_path,
                                                                               names):
    """The check must hold exactly when the records were tampered with: this was exit 3."""
    path, _ = kept_seal(db, tmp_path)
    db.execute("UPDATE {seals} SET case_names = :names", names=names)
    code, report = db.abate_json("verify")
    assert code == 1
    assert any(where == "seal 1" and ("case names are unreadable" in text
                                      or "not a mapping" in text)
               for where, _, text in problems(report)), report
    done = db.abate("verify", "--seal", str(path))
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    assert "unexpected" not in done.stderr


@pytest.mark.parametrize("given, expected", [
    ("no-such-seal.json", "no seal file"),
    ("hello", "is not a seal"),
])
def test_an_unreadable_seal_exits_2_with_one_line(db, tmp_path, given, expected):
    done = db.abate("verify", "--seal", given)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert expected in done.stderr


def test_a_kept_seal_file_that_was_edited_exits_2(db, tmp_path):
    path, _ = kept_seal(db, tmp_path)
    data = json.loads(path.read_text())
    data["position"] = 5
    path.write_text(json.dumps(data))
    done = db.abate("verify", "--seal", str(path))
    assert done.returncode == 2 and "kept copy itself was changed" in done.stderr


# ---------------------------------------------------------------- snapshots

long_case = CaseLines("belleville", "B-LONG")


def long_case_journal(inspections: int) -> list[str]:
    lines = [long_case.open("belleville:9.13", "2026-03-02T09:00:00-06:00")]
    lines += [long_case.cmd("record_inspection", f"2026-03-02T{10 + i // 60:02d}:{i % 60:02d}:00-06:00",
                            findings=f"visit {i}") for i in range(inspections)]
    return as_lines(*lines)


@pytest.fixture
def snapshotted(database, tmp_path):
    """A case of 100 events (so a snapshot at version 100), imported with `abate`."""
    url, extra, schema = database
    engine = sa.create_engine(url)
    db = Db(url, schema, engine)
    journal = tmp_path / "long.jsonl"
    journal.write_text("\n".join(long_case_journal(99)) + "\n")
    assert db.abate("import", str(journal)).returncode == 0
    snapshot = db.rows("abate_snapshots")
    assert [r.originator_version for r in snapshot] == [100]
    db.execute("UPDATE {snapshots} SET state = :s",
               s=bytes(snapshot[0].state).replace(b"Ann Owner", b"Eve Forger"))
    yield db, url, extra
    engine.dispose()


def test_an_altered_snapshot_is_reported_by_verify(snapshotted):
    db, _, _ = snapshotted
    code, report = db.abate_json("verify")
    assert code == 1
    found = problems(report)
    assert any(c == "belleville:B-LONG" and p == 100 and text.startswith("snapshot altered")
               for c, p, text in found)
    assert ("belleville:B-LONG", 100,
            "snapshot differs from the replay of its events (fields: owner)") in found


def test_an_altered_snapshot_is_used_by_neither_commands_nor_views(snapshotted, tmp_path):
    db, url, extra = snapshotted
    more = tmp_path / "more.jsonl"
    more.write_text("\n".join(as_lines(long_case.cmd(
        "record_inspection", "2026-03-03T09:00:00-06:00", findings="one more"))) + "\n")
    done = db.abate("import", str(more))
    assert done.returncode == 0, done.stderr
    assert "snapshot_rejected" in done.stderr
    code, listed = db.abate_json("cases", "list", "--municipality", "belleville")
    assert code == 0
    owners = {row["owner_name"] for row in (listed if isinstance(listed, list)
                                              else listed.get("cases", []))}
    assert owners == {"Ann Owner"}
    store = CaseStore(url, extra_env=extra)
    try:
        assert store.get_case(case_id("belleville", "B-LONG")).owner["name"] == "Ann Owner"
    finally:
        store.close()
    shown = db.abate("case", "show", "--municipality", "belleville", "B-LONG")
    assert "Eve" not in shown.stdout


def test_a_sweep_that_recorded_something_seals_automatically(database, tmp_path):
    url, _, schema = database
    engine = sa.create_engine(url)
    db = Db(url, schema, engine)
    try:
        journal = tmp_path / "open.jsonl"
        journal.write_text("\n".join(as_lines(
            third.open("belleville:9.13", "2026-03-02T09:00:00-06:00"),
            third.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal",
                      served_on="Ann"))) + "\n")
        assert db.abate("import", str(journal)).returncode == 0
        done = run_abate("scheduler", "--once", env=db.env())
        assert done.returncode == 0, done.stderr
        with engine.connect() as conn:
            seals = conn.execute(sa.text(f"SELECT reason, position FROM {db.table('abate_seals')} "
                                         "ORDER BY seal_id")).all()
        assert [r.reason for r in seals] == ["automatic: import open.jsonl",
                                             "automatic: deadline sweep"]
        assert seals[1].position > seals[0].position
        _, report = db.abate_json("verify")
        assert report["ok"] and report["events_after_last_seal"] == 0
    finally:
        engine.dispose()


def test_a_long_unsealed_tail_gets_consecutive_seals_each_chained_and_checked(database):
    """Sealing holds at most ``max_events`` leaves in memory (a million-line journal's
    automatic seal is several seals); the last one covers the whole log."""
    from cases.application import CaseService
    from tests.conftest import NOW

    url, extra, schema = database
    store = CaseStore(url, extra_env=extra)
    try:
        CaseService(store).import_journal(lifecycle(), now=NOW)
        last = seal_store(store, actor="clerk Ann", reason="test", max_events=4)
        events = store.recorder.max_notification_id()
    finally:
        store.close()
    assert (last.seal_id, last.position, last.event_count, last.case_count) == (2, events, 6, 2)
    engine = sa.create_engine(url)
    try:
        db = Db(url, schema, engine)
        _, report = db.abate_json("verify")
        assert report["ok"] and report["seals_checked"] == 2
        code, kept = db.abate_json("verify", "--seal", last.line())
        assert code == 0 and kept["matches"] is True
    finally:
        engine.dispose()


@pytest.mark.parametrize("url", ["memory://", "sqlite"])
def test_seals_are_found_by_the_start_of_their_reason_and_listed_newest_first(url, tmp_path):
    store = CaseStore(f"sqlite:///{tmp_path / 's.db'}" if url == "sqlite" else url)
    try:
        CaseService(store).import_journal(as_lines(CaseLines("belleville", "B-S-1").open(
            "belleville:9.13", "2026-05-01T09:00:00-05:00")), NOW)
        reasons = ["certification belleville 2026 Dane", "certification belleville_2026 x",
                   "certification belleville 2026 Green", "a sweep"]
        for n, reason in enumerate(reasons):
            if n:  # a new event between seals: each seal covers something new
                CaseService(store).import_journal(as_lines(CaseLines(
                    "belleville", f"B-S-{n + 1}").open("belleville:9.13",
                                                       "2026-05-01T09:00:00-05:00")), NOW)
            seal_store(store, "clerk", reason)
        found = store.integrity.seals_for("certification belleville 2026 ")
        assert [f["reason"] for f in found] == [reasons[0], reasons[2]]  # "_" is no wildcard
        page, total = store.integrity.newest_seals(2, 1)
        assert total == 4 and [f["reason"] for f in page] == [reasons[2], reasons[1]]
    finally:
        store.close()

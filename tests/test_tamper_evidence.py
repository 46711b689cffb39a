"""`abate verify` (the installed command) catches every kind of change made directly in
the database, and names the case and the position.

The store is filled with `abate import`, which seals automatically; each test then
tampers through SQL as an attacker with write access would.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
import sqlalchemy as sa
from eventsourcing.persistence import StoredEvent

from cases.chain import GENESIS
from cases.domain import case_id
from cases.store import CaseStore
from tests.builders import CaseLines, as_lines, dumping_through_bill
from tests.tamper_kit import Db, as_uuid, problems

case = CaseLines("belleville", "B-T-1")
other = CaseLines("belleville", "B-T-2")
B1, B2 = "belleville:B-T-1", "belleville:B-T-2"


def lifecycle():
    return as_lines(*dumping_through_bill(case),
                    other.open("belleville:9.14", "2026-03-02T09:00:00-06:00"))


@pytest.fixture
def db(database, tmp_path):
    """Two cases imported with the `abate` command (which seals them)."""
    url, _, schema = database
    engine = sa.create_engine(url)
    db = Db(url, schema, engine)
    journal = tmp_path / "j.jsonl"
    journal.write_text("\n".join(lifecycle()) + "\n")
    done = db.abate("import", str(journal))
    assert done.returncode == 0, done.stderr
    yield db
    engine.dispose()


def ids_of(db, case_ref):
    key = case_id("belleville", case_ref)
    return {r.originator_version: r for r in db.rows() if as_uuid(r.originator_id) == key}


def verify(db):
    code, report = db.abate_json("verify")
    return code, report, problems(report)


def test_an_untouched_store_verifies_clean_and_is_sealed(db):
    code, report, found = verify(db)
    assert (code, found) == (0, [])
    assert (report["cases_checked"], report["events_checked"]) == (2, 6)
    assert report["last_seal"]["position"] == 6 and report["events_after_last_seal"] == 0


def test_altered_content_is_named_by_case_and_position(db):
    target = next(r for r in db.rows() if b"150.00" in bytes(r.state))
    db.execute("UPDATE {events} SET state = :s WHERE id = :id",
               s=bytes(target.state).replace(b"150.00", b"15.00"), id=target.id)
    code, _, found = verify(db)
    assert code == 1
    told = db.abate("verify").stderr.strip().splitlines()  # a person reads one line first
    assert len(told) == 1 and told[0].startswith("abate verify: ") and B1 in told[0], told
    assert (B1, target.originator_version, "content altered: hash does not match") in found
    assert any(c == B1 and p == target.originator_version and "differs from seal 1" in text
               for c, p, text in found)


def test_a_deleted_event_in_the_middle_is_named(db):
    target = ids_of(db, "B-T-1")[2]
    db.execute("DELETE FROM {events} WHERE id = :id", id=target.id)
    code, _, found = verify(db)
    assert code == 1
    assert any(c == B1 and p == 2 and text.startswith("deleted") for c, p, text in found)


def test_the_deleted_last_event_of_a_case_is_named(db):
    mine = ids_of(db, "B-T-1")
    last = mine[max(mine)]
    db.execute("DELETE FROM {events} WHERE id = :id", id=last.id)
    code, _, found = verify(db)
    assert code == 1
    assert any(c == B1 and p == last.originator_version and text.startswith("deleted")
               and f"notification id {last.id}" in text for c, p, text in found)
    # Reading the case says so too, instead of showing it one fact short.
    shown = db.abate("case", "show", "--municipality", "belleville", "B-T-1")
    assert shown.returncode == 1 and "Traceback" not in shown.stderr
    assert f"at position {last.originator_version}" in shown.stderr
    assert "events removed" in shown.stderr


def test_a_deleted_whole_case_is_named(db):
    db.execute("DELETE FROM {events} WHERE originator_id = :o",
               o=ids_of(db, "B-T-2")[1].originator_id)
    code, _, found = verify(db)
    assert code == 1
    assert any(c == B2 and p == 1 and text.startswith("case deleted") for c, p, text in found)


def test_events_reordered_within_a_case_are_named(db):
    mine = ids_of(db, "B-T-1")
    a, b = mine[3], mine[4]
    db.execute("UPDATE {events} SET originator_version = 999 WHERE id = :id", id=a.id)
    db.execute("UPDATE {events} SET originator_version = 3 WHERE id = :id", id=b.id)
    db.execute("UPDATE {events} SET originator_version = 4 WHERE id = :id", id=a.id)
    code, _, found = verify(db)
    assert code == 1
    assert {3, 4} <= {p for c, p, _ in found if c == B1}
    assert any(c == B1 and p == 3 and "moved in the log" in text for c, p, text in found)


def test_notification_ids_swapped_across_cases_are_named(db):
    """Each case keeps its own order, so only the seal sees the log's order changed
    (views would replay these two events in the wrong order)."""
    mine, theirs = ids_of(db, "B-T-1")[5], ids_of(db, "B-T-2")[1]
    db.execute("UPDATE {events} SET id = :tmp WHERE id = :id", tmp=100000, id=mine.id)
    db.execute("UPDATE {events} SET id = :new WHERE id = :id", new=mine.id, id=theirs.id)
    db.execute("UPDATE {events} SET id = :new WHERE id = :tmp", new=theirs.id, tmp=100000)
    code, _, found = verify(db)
    assert code == 1
    assert (B1, 5) in {(c, p) for c, p, text in found if "moved in the log" in text}
    assert (B2, 1) in {(c, p) for c, p, text in found if "moved in the log" in text}


def test_an_inserted_event_is_named(db):
    """A copy of the abatement slipped in before the first event (notification id 0)."""
    source = ids_of(db, "B-T-1")[4]
    db.execute("INSERT INTO {events} (id, originator_id, originator_version, topic, state) "
               "VALUES (0, :o, 6, :t, :s)", o=source.originator_id, t=source.topic,
               s=bytes(source.state))
    code, _, found = verify(db)
    assert code == 1
    assert any(c == B1 and p == 6 and text.startswith("inserted") for c, p, text in found)


def rewrite_case_consistently(db, store, case_ref):
    """What an attacker with our own code can do: rename the owner, bill 9,999.00, and
    recompute the case's whole chain with cases/chain.py (through the event classes)."""
    mine = ids_of(db, case_ref)
    previous = GENESIS
    for version in sorted(mine):
        row = mine[version]
        event = store.mapper.to_domain_event(StoredEvent(
            originator_id=as_uuid(row.originator_id), originator_version=version,
            topic=row.topic, state=bytes(row.state)))
        fields = dict(vars(event))
        if "owner" in fields:
            fields["owner"] = {**fields["owner"], "name": "Mallory Forger"}
        if "amount" in fields:
            fields["amount"] = Decimal("9999.00")
        fields.update(prev_hash=previous, hash="")
        forged = type(event)(**fields)
        previous = forged.hash
        db.execute("UPDATE {events} SET state = :s WHERE id = :id",
                   s=store.mapper.to_stored_event(forged).state, id=row.id)


def test_a_case_rewritten_with_a_recomputed_chain_is_named(db, database):
    url, extra, _ = database
    store = CaseStore(url, extra_env=extra)
    try:
        rewrite_case_consistently(db, store, "B-T-1")
    finally:
        store.close()
    code, _, found = verify(db)
    assert code == 1
    assert not any("hash does not match" in text or "chain broken" in text for _, _, text in found)
    assert {1, 5} <= {p for c, p, text in found if c == B1 and "differs from seal 1" in text}
    shown = db.abate("case", "show", "--municipality", "belleville", "B-T-1")
    assert "Mallory" in shown.stdout  # the chain alone cannot tell: only the seal does


def test_case_show_on_a_tampered_case_prints_one_line_not_a_traceback(db):
    target = ids_of(db, "B-T-1")[2]
    db.execute("DELETE FROM {events} WHERE id = :id", id=target.id)
    done = db.abate("case", "show", "--municipality", "belleville", "B-T-1")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if "integrity" in line]
    assert lines == [lines[0]] and "B-T-1" in lines[0] and "position 3" in lines[0]


def test_case_show_on_an_unreadable_event_prints_one_line(db):
    target = ids_of(db, "B-T-1")[2]
    db.execute("UPDATE {events} SET state = :s WHERE id = :id", s=b"{not json", id=target.id)
    done = db.abate("case", "show", "--municipality", "belleville", "B-T-1")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "fails its integrity check" in done.stderr

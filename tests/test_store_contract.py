"""One contract, every store: in-memory, SQLite file and PostgreSQL (when configured)."""

import datetime as dt
import json

import pytest

from cases.application import CaseService, Outcome, UnitOfWork
from cases.commands import parse_command
from cases.errors import ConcurrentChangeError
from cases.history import case_at, replay
from cases.store import SNAPSHOT_INTERVAL, CaseStore
from tests.builders import CaseLines, as_lines, dumping_through_bill
from tests.conftest import NOW

case = CaseLines("belleville", "B-C-1")


def lifecycle():
    costs = [{"item": "crew", "amount": "150.00"}, {"item": "disposal", "amount": "45.50"}]
    return as_lines(*dumping_through_bill(case, costs),
                    case.cmd("record_payment", "2026-03-20T09:00:00-05:00", amount="95.50"))


def test_a_saved_case_reloads_to_the_same_state(any_store):
    service = CaseService(any_store)
    uow = UnitOfWork(any_store)
    outcome = Outcome()
    for line in lifecycle():
        service.execute(parse_command(json.loads(line)), NOW, uow, outcome)
    in_memory = next(iter(uow.cases.values()))
    expected = {k: v for k, v in vars(in_memory).items() if k != "_pending_events"}
    uow.commit()
    reloaded = any_store.get_case(in_memory.id)
    assert {k: v for k, v in vars(reloaded).items() if k != "_pending_events"} == expected
    assert str(reloaded.balance) == "100.00"
    assert reloaded.status == "billed"


def test_the_notification_log_keeps_every_event_in_order(any_store):
    CaseService(any_store).import_journal(lifecycle(), now=NOW)
    notifications = list(any_store.notifications())
    # The six facts and the clock's DeadlinePassed of the cure; before the payment of
    # 2026-03-20 the appeal window (closed 2026-03-19) is recorded as passed too.
    assert [n.originator_version for n in notifications] == [1, 2, 3, 4, 5, 6, 7]
    assert [n.id for n in notifications] == sorted(n.id for n in notifications)


def test_two_writers_on_one_case_one_wins_the_other_gets_a_conflict(store_url):
    url, extra = store_url
    first_store = CaseStore(url, extra_env=extra)
    second_store = first_store if url.startswith("memory") else CaseStore(url, extra_env=extra)
    try:
        CaseService(first_store).import_journal(lifecycle()[:2], now=NOW)
        pay = {"command": "record_inspection", "findings": "still there"}
        writers = []
        for store in (first_store, second_store):
            service = CaseService(store)
            uow = UnitOfWork(store)
            command = parse_command(case.cmd(pay["command"], "2026-03-03T09:00:00-06:00",
                                             findings=f"seen by writer {len(writers) + 1}"))
            service.execute(command, NOW, uow, Outcome())
            writers.append(uow)
        writers[0].commit()
        with pytest.raises(ConcurrentChangeError, match="nothing was recorded"):
            writers[1].commit()
        shown, events = case_at(first_store, "belleville", "B-C-1")
        assert [e.findings for e in events if type(e).__name__ == "InspectionRecorded"] == [
            "seen by writer 1"]
        # The loser reloads and retries: nothing is lost.
        CaseService(second_store).handle(parse_command(case.cmd(
            "record_inspection", "2026-03-03T09:30:00-06:00", findings="seen by writer 2")), NOW)
        _, events = case_at(first_store, "belleville", "B-C-1")
        assert [e.findings for e in events if type(e).__name__ == "InspectionRecorded"] == [
            "seen by writer 1", "seen by writer 2"]
    finally:
        first_store.close()
        if second_store is not first_store:
            second_store.close()


def test_long_cases_are_snapshotted_and_load_the_same_with_or_without_snapshots(store_url):
    url, extra = store_url
    store = CaseStore(url, extra_env=extra)
    try:
        service = CaseService(store)
        service.import_journal(lifecycle()[:1], now=NOW)
        uow = UnitOfWork(store)
        outcome = Outcome()
        start = dt.datetime(2026, 3, 3, 9, tzinfo=dt.timezone(dt.timedelta(hours=-6)))
        for i in range(SNAPSHOT_INTERVAL + 20):
            command = parse_command(case.cmd("record_inspection",
                                             (start + dt.timedelta(minutes=i)).isoformat(),
                                             findings=f"visit {i}"))
            service.execute(command, NOW, uow, outcome)
        uow.commit()
        case_key = next(iter(uow.cases))
        assert list(store.snapshots.get(case_key)), "a snapshot was taken"
        with_snapshot = store.get_case(case_key)
        without = replay(list(store.events.get(case_key)))  # every event, no snapshot
        assert with_snapshot.version == without.version == SNAPSHOT_INTERVAL + 21
        assert with_snapshot.inspections == without.inspections
        assert with_snapshot.last_hash == without.last_hash
    finally:
        store.close()


def test_a_store_reader_reads_what_the_store_holds_as_the_store_reads_it(store_url):
    """Read-only commands read through a StoreReader (Core and the Application's mapper),
    not the Application: every event, page and case state must come out the same."""
    from cases.store_reader import open_reader

    url, extra = store_url
    if url.startswith("memory"):
        assert open_reader(url, extra) is None  # nothing to read but the Application's own
        return
    assert open_reader(url, extra) is None, "no tables yet: the command opens CaseStore"
    store = CaseStore(url, extra_env=extra)
    try:
        CaseService(store).import_journal(lifecycle(), now=NOW)
        reader = open_reader(url, extra)
        assert reader is not None
        try:
            assert reader.log_head() == store.log_head() == 7
            rows = reader.log_page(2, 4, stop=5)
            assert [r.id for r in rows] == [2, 3, 4, 5]
            assert [reader.mapper.to_domain_event(r) for r in rows] == \
                [store.mapper.to_domain_event(r) for r in store.log_page(2, 4, stop=5)]
            key = rows[0].originator_id
            assert reader.case_events(key) == store.case_events(key)
            state = {k: v for k, v in vars(reader.get_case(key, version=4)).items()
                     if k != "_pending_events"}
            expected = store.get_case(key, version=4)
            assert state == {k: v for k, v in vars(expected).items() if k != "_pending_events"}
            assert case_at(reader, "belleville", "B-C-1")[0].balance == \
                case_at(store, "belleville", "B-C-1")[0].balance
            assert reader.integrity.seals() == store.integrity.seals() == []
        finally:
            reader.close()
    finally:
        store.close()

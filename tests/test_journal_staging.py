"""Large journals: staged as they go, saved at once, all or nothing, other writers not blocked.

The service is given tiny staging limits (a few commands in memory, a handful of cases
resident), so journals of a few dozen cases exercise every path a million-line journal
takes: events staged in many short transactions, cases leaving memory and being rebuilt
from the store and the staging table, repeat look-ups and corrections on such cases, and
the one final move into the event store.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
import sqlalchemy as sa

from bench.journal_generator import case_lines, journal_lines
from cases.application import CaseService
from cases.errors import JournalError
from cases.history import case_at, describe_case
from cases.staging import staged_index_table, staging_table
from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.lookups import ProjectedDueDeadlines, ProjectedRepeatOffenses
from projections.runner import ViewRunner
from tests.abate_command import database_env, run_abate
from tests.builders import CaseLines, as_lines

NOW = dt.datetime(2026, 12, 1, 12, tzinfo=dt.timezone.utc)


def tiny_limits(service: CaseService) -> CaseService:
    service.journal_stage_events = 7
    service.journal_resident_cases = 3
    service.journal_chunk_lines = 5
    return service


@pytest.fixture
def stores(database):
    """Two stores on one fresh database: one imports with tiny staging limits, the other
    with the defaults (its journals fit in memory), plus the views for both."""
    url, extra, schema = database
    opened = []

    def make(tiny: bool):
        store = CaseStore(url, extra_env=extra)
        runner = ViewRunner(store, ALL_VIEWS, schema=schema)
        service = CaseService(store, repeat_offenses=ProjectedRepeatOffenses(runner),
                              due_deadlines=ProjectedDueDeadlines(runner))
        opened.append((store, runner))
        return store, tiny_limits(service) if tiny else service

    yield make
    for store, runner in opened:
        runner.close()
        store.close()


def staged_rows(store: CaseStore) -> int:
    """Rows left in the staging tables (the staged events and the journal's case index)."""
    with store.recorder.datastore.engine.connect() as conn:
        return sum(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
                   for table in (staging_table(store), staged_index_table(store)))


def histories(store: CaseStore, refs: list[tuple[str, str]]) -> list[list[dict]]:
    """Every event of the given cases, without the recorded time (two imports differ in it)."""
    found = []
    for municipality, ref in refs:
        case, events = case_at(store, municipality, ref)
        described = describe_case(case, events)
        found.append([{k: v for k, v in e.items() if k != "recorded_at"}
                      for e in described["events"]])
    return found


def interleaved(cases: int) -> list[str]:
    """All cases opened first, then every case's later commands: each case is needed again
    long after it left memory."""
    per_case = [case_lines(i) for i in range(cases)]
    firsts = [lines[0] for lines in per_case]
    rests = [line for lines in per_case for line in lines[1:]]
    return [json.dumps(c) for c in firsts + rests]


def refs_of(cases: int) -> list[tuple[str, str]]:
    return [(c["municipality"], c["case_ref"]) for c in (case_lines(i)[0] for i in range(cases))]


def test_a_staged_journal_records_exactly_what_an_in_memory_one_records(database, tmp_path):
    url, extra, schema = database
    journal = interleaved(60)
    staged_store = CaseStore(url, extra_env=extra)
    other_url = f"sqlite:///{tmp_path / 'reference.sqlite3'}"
    reference = CaseStore(other_url)
    try:
        staged = tiny_limits(CaseService(staged_store)).import_journal(journal, now=NOW)
        whole = CaseService(reference).import_journal(journal, now=NOW)
        assert staged.as_dict() == whole.as_dict()
        assert staged.applied == sum(len(case_lines(i)) for i in range(60))
        assert histories(staged_store, refs_of(60)) == histories(reference, refs_of(60))
        assert staged_rows(staged_store) == 0
    finally:
        staged_store.close()
        reference.close()


def test_repeat_look_ups_see_the_journals_own_cases_after_they_left_memory(stores):
    store, service = stores(tiny=True)
    service.import_journal(interleaved(70), now=NOW)
    # Case 30 (a § 9.25 refuse case) is on the parcel of case 0, opened months before it
    # in the same journal; by the time its notice is served, case 0 has left memory.
    repeat, _ = case_at(store, "belleville", "BV-G-30")
    prior, _ = case_at(store, "belleville", "BV-G-0")
    evidence = repeat.notices[0].repeat_evidence
    assert prior.parcel == repeat.parcel
    expected = 1 if prior.observed_at.date() < repeat.observed_at.date() else 0
    assert evidence.count == expected
    assert evidence.case_refs == (["BV-G-0"] if expected else [])


def test_a_refused_line_after_many_staged_events_records_nothing(stores):
    store, service = stores(tiny=True)
    journal = list(journal_lines(40))
    bad = CaseLines("belleville", "BV-G-3").cmd("record_payment", "2026-11-30T09:00:00-06:00",
                                               amount="9999.00")
    with pytest.raises(JournalError) as caught:
        service.import_journal(journal + [json.dumps(bad)], now=NOW)
    assert caught.value.line == len(journal) + 1
    assert "is closed (paid in full)" in str(caught.value)
    assert (store.recorder.max_notification_id() or 0) == 0
    assert staged_rows(store) == 0


def test_a_correction_of_a_case_that_left_memory_knows_its_staged_events(stores):
    store, service = stores(tiny=True)
    journal = list(journal_lines(30))
    fix = CaseLines("mazomanie", "MZ-G-8").cmd(  # a case left open (its bill is unpaid)
        "correct", "2026-11-30T09:00:00-06:00", supersedes=2,
        changes={"served_on": "Owner 8 (in person)"}, reason="name as on the return of service")
    service.import_journal(journal + [json.dumps(fix)], now=NOW)
    case, _ = case_at(store, "mazomanie", "MZ-G-8")
    assert case.corrections[0].supersedes_type == "NoticeServed"


def test_another_writer_is_not_blocked_while_a_journal_is_staged(stores):
    store, service = stores(tiny=True)
    other_store, other_service = stores(tiny=False)
    clerk = CaseLines("belleville", "BV-CLERK-1")
    written = []

    def journal_while_a_clerk_works():
        for number, text in enumerate(journal_lines(30), start=1):
            if number == 100:  # the journal has staged events; the clerk records a case now
                other_service.import_journal(as_lines(
                    clerk.open("belleville:9.13", "2026-11-30T09:00:00-06:00")), now=NOW)
                written.append(other_store.recorder.max_notification_id())
            yield text

    outcome = service.import_journal(journal_while_a_clerk_works(), now=NOW)
    assert written == [1]
    assert outcome.applied == sum(len(case_lines(i)) for i in range(30))
    assert case_at(store, "belleville", "BV-CLERK-1")[0].status == "open"


def test_a_writer_that_changed_one_of_the_journals_cases_meanwhile_fails_the_whole_journal(stores):
    store, service = stores(tiny=True)
    other_store, other_service = stores(tiny=False)
    first = [json.dumps(c) for c in case_lines(0)]
    other_service.import_journal(first[:1], now=NOW)  # case 0 exists, opened by someone else

    def journal_racing_a_clerk():
        yield first[1]  # the journal's notice on case 0 (decided, then staged)
        yield from journal_lines(20, start=1)
        other_service.import_journal(first[1:2], now=NOW)  # the clerk serves it too, first

    with pytest.raises(JournalError) as caught:
        service.import_journal(journal_racing_a_clerk(), now=NOW)
    assert "another writer" in str(caught.value)
    assert store.recorder.max_notification_id() == 2  # the opening and the clerk's notice
    assert staged_rows(store) == 0


def test_abate_import_finds_prior_cases_recorded_earlier_in_the_same_journal(database, tmp_path):
    """More commands than one staging holds (5,000) lie between the prior cases and the new
    ones, so the prior cases' facts are read back from the staging database, not memory:
    by parcel, by party (names compared as the views compare them) and by person notified."""
    here, there = ({"county": "Dane", "number": f"0509-999-000{n}-0"} for n in (1, 2))

    def case(rule: str, ref: str, day: str, parcel: dict, owner: str) -> list[dict]:
        lines = CaseLines("belleville", ref)
        return [lines.open(rule, f"{day}T09:00:00-06:00", parcel=parcel,
                           owner={"name": owner, "mailing_address": "1 Elm St"}),
                lines.cmd("serve_notice", f"{day}T10:00:00-06:00", method="personal",
                          served_on=owner)]

    earlier = [*case("belleville:9.25", "R-PRIOR", "2026-02-02", here, "Pat Repeat"),
               *case("belleville:9.13", "D-PARCEL", "2026-02-03", here, "Ann Other"),
               *case("belleville:9.13", "D-PARTY", "2026-02-04", there, "Bo  Smith"),
               *case("belleville:9.13", "D-OLD", "2025-06-01", here, "Ann Other")]
    again = CaseLines("belleville", "D-AGAIN")  # dumping asks on abatement without notice
    later = [*case("belleville:9.25", "R-AGAIN", "2026-09-07", there, "pat repeat"),
             again.open("belleville:9.13", "2026-09-08T09:00:00-05:00", parcel=here,
                        owner={"name": "bo smith", "mailing_address": "2 Elm St"}),
             again.cmd("record_abatement", "2026-09-08T12:00:00-05:00",
                       costs=[{"item": "crew", "amount": "80.00"}],
                       without_notice_reason="repeat_offense")]
    filler = list(journal_lines(1_000))
    journal = tmp_path / "journal.jsonl"
    journal.write_text("\n".join([*as_lines(*earlier), *filler, *as_lines(*later)]) + "\n")
    env = database_env(database)
    done = run_abate("import", str(journal), env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["applied"] == len(filler) + len(earlier) + len(later)

    def evidence(ref: str, fact: str = "notices") -> tuple[int, list[str]]:
        shown = run_abate("case", "show", "--municipality", "belleville", ref, env=env)
        assert shown.returncode == 0, shown.stderr
        found = json.loads(shown.stdout)[fact][0]["repeat_evidence"]
        return found["count"], found["case_refs"]

    assert evidence("R-AGAIN") == (1, ["R-PRIOR"])  # the person notified, on another parcel
    # D-PARCEL on the same parcel, D-PARTY by the same owner; D-OLD is before the window.
    assert evidence("D-AGAIN", "abatements") == (2, ["D-PARCEL", "D-PARTY"])
    store = CaseStore(database[0], extra_env=database[1])
    try:
        assert staged_rows(store) == 0
    finally:
        store.close()

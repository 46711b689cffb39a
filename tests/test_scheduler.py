"""The deadline engine: catch-up after downtime (across a DST change), exactly once with
several instances, escalations, and a running scheduler process."""

import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from cases.application import CaseService
from cases.commands import parse_command
from cases.history import case_at
from cases.store import CaseStore
from scheduler.__main__ import main as scheduler_main
from scheduler.jobs import ATTEMPTS_PER_CASE, sweep_deadlines
from tests.builders import CaseLines, as_lines
from tests.stopping import StopAfterFirstCheck

ROOT = Path(__file__).resolve().parent.parent
# Entered right after the last fact of week_of_deadlines (2026-10-31T19:00-05:00).
RECORDED = dt.datetime(2026, 11, 1, 1, tzinfo=dt.timezone.utc)


def record(service, *commands, now=RECORDED):
    return service.import_journal(as_lines(*commands), now=now)


def passed_events(store, lines):
    _, events = case_at(store, lines.municipality, lines.case_ref)
    return [e for e in events if type(e).__name__ == "DeadlinePassed"]


def week_of_deadlines():
    """Cases whose deadlines fall in the week of 2026-10-29..11-04 (DST ends Nov 1, 02:00)."""
    snow = CaseLines("belleville", "S-DST")
    dump = CaseLines("belleville", "D-DST")
    obstruct = CaseLines("mazomanie", "O-DST")
    return snow, dump, obstruct, [
        # Snow stops Sat Oct 31 18:00 CDT: owner's 24 h and the 36 h forfeiture step cross the change.
        snow.open("belleville:9.09", "2026-10-31T19:00:00-05:00",
                  snow_ended_at="2026-10-31T18:00:00-05:00"),
        # Dumping notice delivered Thu Oct 29 10:00 CDT: 72 h ends Sun Nov 1 09:00 CST.
        dump.open("belleville:9.13", "2026-10-29T09:00:00-05:00"),
        dump.cmd("serve_notice", "2026-10-29T10:00:00-05:00", method="personal", served_on="O"),
        # Mazomanie obstruction notice Sat Oct 31 12:00 CDT: 24 h ends Sun Nov 1 11:00 CST.
        obstruct.open("mazomanie:360-8", "2026-10-31T11:00:00-05:00",
                      parcel={"county": "Dane", "number": "0806-083-3391-0"}),
        obstruct.cmd("serve_notice", "2026-10-31T12:00:00-05:00", method="personal", served_on="O"),
    ]


def test_after_a_week_down_the_first_sweep_records_every_missed_deadline_at_its_true_time(views):
    store, runner, service = views
    snow, dump, obstruct, commands = week_of_deadlines()
    record(service, *commands)
    sweep_time = dt.datetime(2026, 11, 5, 9, tzinfo=dt.timezone.utc)
    summary = sweep_deadlines(service, sweep_time)
    assert summary.deadlines_passed == 4

    snow_passed = passed_events(store, snow)
    assert [(e.name, e.occurred_at.isoformat()) for e in snow_passed] == [
        ("owner_duty", "2026-11-01T17:00:00-06:00"),  # 24 real hours after 18:00 CDT
        ("forfeiture_period_started", "2026-11-02T05:00:00-06:00"),  # 36 h, § 9.09(2)(a)2
    ]
    [dump_cure] = passed_events(store, dump)
    assert dump_cure.occurred_at.isoformat() == "2026-11-01T09:00:00-06:00"  # 72 h, § 9.13(2)
    [obstruct_cure] = passed_events(store, obstruct)
    assert obstruct_cure.occurred_at.isoformat() == "2026-11-01T11:00:00-06:00"  # 24 h, § 360-8
    for event in [*snow_passed, dump_cure, obstruct_cure]:
        assert event.timestamp == sweep_time  # recorded at the sweep
        assert event.occurred_at == event.due_at  # happened at the deadline
        assert event.actor == "abate-clock"
    # The notice a person must serve (§ 9.09(2)(a)1) stays on the worklist, never "passed".
    case, _ = case_at(store, "belleville", "S-DST")
    assert case.deadlines["notice_due"].state == "open"

    again = sweep_deadlines(service, sweep_time + dt.timedelta(hours=1))
    assert (again.deadlines_passed, again.events_recorded) == (0, 0)


def test_a_sweep_asked_to_stop_ends_after_its_batch_and_the_next_records_the_rest(views):
    store, runner, service = views
    snow, dump, obstruct, commands = week_of_deadlines()
    record(service, *commands)
    sweep_time = dt.datetime(2026, 11, 5, 9, tzinfo=dt.timezone.utc)

    first = sweep_deadlines(service, sweep_time, batch_cases=1, stop=StopAfterFirstCheck())
    assert (first.cases, first.cases_left) == (3, 2)
    assert first.deadlines_passed in (1, 2)  # one case's deadlines: snow has two
    second = sweep_deadlines(service, sweep_time)
    assert first.deadlines_passed + second.deadlines_passed == 4
    for lines in (snow, dump, obstruct):  # each at its own time, once
        passed = passed_events(store, lines)
        assert passed and all(e.occurred_at == e.due_at for e in passed)
        assert len({e.name for e in passed}) == len(passed)


def test_the_engine_asked_to_stop_mid_sweep_leaves_the_seal_to_the_next_sweep(database):
    """A store's first seal covers every event: a stop must not wait for it."""
    from cases.settings import Settings
    from scheduler.engine import DeadlineEngine

    url, _extra, schema = database
    env = {"ABATE_DATABASE_URL": url, **({"ABATE_DATABASE_SCHEMA": schema} if schema else {})}
    engine = DeadlineEngine(Settings.from_env(env), url)
    try:
        *_, commands = week_of_deadlines()
        record(engine.service, *commands)
        engine.stopping = StopAfterFirstCheck()  # asked while its one batch is recorded
        stopped = engine.sweep(dt.datetime(2026, 11, 1, 16, tzinfo=dt.timezone.utc))
        assert stopped.deadlines_passed == 1  # the dumping case's cure
        assert engine.store.integrity.seal_fields() == []
        engine.stopping = threading.Event()
        rest = engine.sweep(dt.datetime(2026, 11, 5, 9, tzinfo=dt.timezone.utc))
        assert rest.deadlines_passed == 3
        [seal] = engine.store.integrity.seal_fields()  # the next sweep seals it all
        assert seal["position"] == engine.store.log_head()
    finally:
        engine.close()


def test_a_sweep_only_records_deadlines_due_by_its_time(views):
    store, runner, service = views
    snow, dump, obstruct, commands = week_of_deadlines()
    record(service, *commands)
    sweep_deadlines(service, dt.datetime(2026, 11, 1, 16, tzinfo=dt.timezone.utc))  # 10:00 CST
    assert [e.name for e in passed_events(store, dump)] == ["cure"]
    assert passed_events(store, obstruct) == []  # due 11:00 CST
    assert passed_events(store, snow) == []


def test_the_journal_advance_clock_goes_through_the_same_sweep_code(views):
    store, runner, service = views
    snow, dump, obstruct, commands = week_of_deadlines()
    record(service, *commands,
           {"command": "advance_clock", "municipality": "belleville",
            "at": "2026-11-05T03:00:00-06:00", "actor": "clock"},
           now=dt.datetime(2026, 11, 5, 9, 30, tzinfo=dt.timezone.utc))
    assert [e.name for e in passed_events(store, dump)] == ["cure"]
    assert passed_events(store, obstruct) == []  # another municipality


def test_a_second_refuse_offense_within_a_year_records_the_rules_escalation(views):
    store, runner, service = views
    first, second = CaseLines("belleville", "R-1"), CaseLines("belleville", "R-2")
    record(service,
           first.open("belleville:9.25", "2026-03-01T09:00:00-06:00"),
           first.cmd("serve_notice", "2026-03-01T10:00:00-06:00", method="personal", served_on="O"),
           second.open("belleville:9.25", "2026-09-01T09:00:00-05:00"),
           second.cmd("serve_notice", "2026-09-01T10:00:00-05:00", method="personal", served_on="O"))
    first_case, _ = case_at(store, "belleville", "R-1")
    second_case, _ = case_at(store, "belleville", "R-2")
    assert first_case.notices[0].repeat_consequence is None  # first offense: a warning
    notice = second_case.notices[0]
    assert notice.repeat_evidence.case_refs == ["R-1"]
    assert notice.repeat_consequence.startswith("repeat offense (1 prior in 12 months)")
    assert "9.25(28)" in notice.repeat_consequence


# ---------------------------------------------------------------- processes


def scheduler_env(database, **extra):
    url, env_extra, schema = database
    env = {**os.environ, "ABATE_DATABASE_URL": url, **extra}
    if schema:
        env["ABATE_DATABASE_SCHEMA"] = schema
    return env


def many_due_cases(count):
    commands = []
    for number in range(count):
        lines = CaseLines("belleville", f"M-{number:03d}")
        commands += [lines.open("belleville:9.13", "2026-10-01T09:00:00-05:00"),
                     lines.cmd("serve_notice", "2026-10-01T10:00:00-05:00", method="personal",
                               served_on="O")]
    return commands


ON_POSTGRES = pytest.mark.parametrize(
    "database", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
ON_SQLITE = pytest.mark.parametrize("database", ["sqlite"], indirect=True)


@ON_POSTGRES
def test_two_scheduler_processes_record_each_deadline_exactly_once(views, database):
    store, runner, service = views
    record(service, *many_due_cases(120))
    runner.catch_up()
    env = scheduler_env(database)
    command = [str(Path(sys.executable).with_name("abate")), "scheduler", "--once", "--now", "2026-10-10T12:00:00+00:00"]
    first = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    second = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    outputs = [p.communicate(timeout=120)[1] for p in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, outputs
    counts = Counter()
    for notification in store.notifications(topics=("abate.case:Case.DeadlinePassed",)):
        event = store.mapper.to_domain_event(notification)
        counts[(event.originator_id, event.name)] += 1
    assert len(counts) == 120 and set(counts.values()) == {1}
    assert all("deadline_sweep" in output for output in outputs)


@ON_SQLITE
def test_scheduler_once_on_sqlite_through_the_command(views, database, capsys):
    store, runner, service = views
    record(service, *many_due_cases(3))
    assert scheduler_main(["--once", "--now", "2026-10-10T12:00:00+00:00",
                           "--database-url", store.database_url]) == 0
    assert "deadline_sweep" in capsys.readouterr().err
    assert sum(1 for _ in store.notifications(topics=("abate.case:Case.DeadlinePassed",))) == 3


@ON_SQLITE
def test_deadlines_pass_by_themselves_in_a_running_scheduler(views, database):
    store, runner, service = views
    record(service, *many_due_cases(2))
    process = subprocess.Popen([str(Path(sys.executable).with_name("abate")), "scheduler"], cwd=ROOT,
                               env=scheduler_env(database, ABATE_SWEEP_SECONDS="1"),
                               stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if sum(1 for _ in store.notifications(
                    topics=("abate.case:Case.DeadlinePassed",))) == 2:
                break
            time.sleep(0.5)
        else:
            pytest.fail("the running scheduler did not pass the deadlines within 60 s")
    finally:
        process.terminate()  # SIGTERM, as systemd or kill stops it
        _, err = process.communicate(timeout=30)
    assert "scheduler_started" in err and "deadline_sweep" in err
    assert process.returncode == 0 and "scheduler_stopped" in err, err[-2000:]


# ---------------------------------------------------------------- the sweep, case by case


class StoreWithAClerk(CaseStore):
    """The sweep's store; each time the sweep loads the victim case (up to ``times``), a
    clerk's real write lands on that case before the sweep saves, so the save conflicts."""

    name = CaseStore.name  # the same tables

    def __init__(self, url, clerk_service, victim, times, **kw):
        super().__init__(url, **kw)
        self.clerk, self.victim, self.times, self.writes = clerk_service, victim, times, 0

    def get_case(self, case_id, version=None):
        return self._loaded(super().get_case(case_id, version=version))

    def get_cases(self, keys):  # the sweep loads a batch's cases in one query
        return {key: self._loaded(case) for key, case in super().get_cases(keys).items()}

    def _loaded(self, case):
        if case.case_ref == self.victim and self.writes < self.times:
            self.writes += 1
            self.clerk.handle(parse_command({
                "command": "record_inspection", "municipality": "belleville",
                "case_ref": self.victim, "at": f"2026-10-02T0{self.writes}:00:00-05:00",
                "actor": "clerk", "findings": "still there"}), RECORDED)
        return case


@pytest.mark.parametrize(("clerk_writes", "given_up"), [(2, 0), (ATTEMPTS_PER_CASE + 1, 1)])
def test_a_sweep_retries_only_the_case_that_conflicted_and_gives_up_on_it_after_bounded_attempts(
        tmp_path, clerk_writes, given_up):
    url = f"sqlite:///{tmp_path / 'sweep.sqlite3'}"
    clerk_store = CaseStore(url)
    clerk = CaseService(clerk_store)
    record(clerk, *many_due_cases(30))
    sweep_store = StoreWithAClerk(url, clerk, "M-007", clerk_writes)
    try:
        summary = sweep_deadlines(CaseService(sweep_store),
                                  dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc), batch_cases=10)
        assert (summary.cases, summary.cases_given_up) == (30, given_up)
        assert summary.deadlines_passed == 30 - given_up
        # the batch of ten conflicted once, then M-007 alone each time the clerk wrote again
        assert summary.conflicts_retried == min(clerk_writes, ATTEMPTS_PER_CASE + 1)
        counts = Counter()
        for notification in clerk_store.notifications(topics=("abate.case:Case.DeadlinePassed",)):
            counts[clerk_store.mapper.to_domain_event(notification).originator_id] += 1
        assert len(counts) == 30 - given_up and set(counts.values()) == {1}
    finally:
        sweep_store.close()
        clerk_store.close()


@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
                         indirect=True)
def test_a_sweep_beside_a_clerk_recording_every_fifth_of_a_second_records_every_deadline_once(
        views, database, tmp_path):
    """Real processes: ~500 due cases swept by ``abate scheduler --once`` while another
    process records an inspection on those cases every 0.2 s."""
    store, runner, service = views
    cases = 500
    record(service, *many_due_cases(cases))  # cure due 2026-10-04 10:00 on each
    runner.catch_up()
    url, _, schema = database
    stop = tmp_path / "stop"
    clerk = subprocess.Popen(
        [sys.executable, "-m", "tests.clerk_worker", url, schema or "-", "M-", str(cases), "0.2",
         str(stop)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert clerk.stdout.readline().split()[0] in ("recorded", "conflict")  # at work
        sweep = subprocess.run([str(Path(sys.executable).with_name("abate")), "scheduler", "--once"], cwd=ROOT,
                               env=scheduler_env(database), capture_output=True, text=True,
                               timeout=600)
    finally:
        stop.touch()
        clerk_output = clerk.communicate(timeout=60)[0]
    assert sweep.returncode == 0, sweep.stderr
    counts = Counter()
    for notification in store.notifications(topics=("abate.case:Case.DeadlinePassed",)):
        event = store.mapper.to_domain_event(notification)
        assert event.actor == "abate-clock"
        counts[(event.originator_id, event.name)] += 1
    assert len(counts) == cases and set(counts.values()) == {1}
    summary = next(line for line in sweep.stderr.splitlines() if "deadline_sweep" in line)
    logged = json.loads(summary)  # a log line is JSON when stderr is not a terminal
    assert (logged["deadlines_passed"], logged["cases_given_up"]) == (cases, 0)
    clerk_lines = clerk_output.split()
    print(f"\nsweep: {summary.strip()}\nclerk: {clerk_lines.count('recorded') + 1} recorded, "
          f"{clerk_lines.count('conflict')} conflicts")

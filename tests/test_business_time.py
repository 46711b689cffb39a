"""Business times that make sense: none in the future, every pair the domain orders in
order (the message names both times), the municipality's zone and local dates whatever
offset was typed, deadlines that had run recorded as passed before the next fact, and
wrong times corrected (the corrected time then governs checks, deadlines and as-of)."""

import datetime as dt
import json
import sys
from pathlib import Path

import pytest

from cases.application import CaseService
from cases.commands import parse_command
from cases.errors import BusinessTimeOrderError, FutureTimeError, JournalError
from cases.history import case_at, describe_case
from projections import Worklist
from scheduler.jobs import sweep_deadlines
from tests.abate_command import run_abate
from tests.builders import CaseLines, as_lines, clock
from tests.conftest import NOW

ABATE = str(Path(sys.executable).with_name("abate"))


def run(service, *commands, now=NOW):
    return service.import_journal(as_lines(*commands), now=now)


def refused(service, *commands, now=NOW) -> str:
    with pytest.raises(JournalError) as caught:
        run(service, *commands, now=now)
    return str(caught.value)


def show(store, lines, **when):
    case, events = case_at(store, lines.municipality, lines.case_ref, **when)
    return describe_case(case, events)


def deadline(shown, name):
    return next(d for d in shown["deadlines"] if d["name"] == name)


def types(shown):
    return [e["type"] for e in shown["events"]]


def event_count(store) -> int:
    return store.recorder.max_notification_id() or 0


DUMP = CaseLines("belleville", "T-DUMP")
SNOW = CaseLines("belleville", "T-SNOW")
OBSTRUCT = CaseLines("belleville", "T-OBS")


def dumping_noticed():
    """§ 9.13: opened and noticed 2026-03-02; the 72-hour cure runs to 03-05 10:00."""
    return [DUMP.open("belleville:9.13", "2026-03-02T09:00:00-06:00"),
            DUMP.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal",
                     served_on="Ann Owner")]


def dumping_billed():
    return [*dumping_noticed(),
            DUMP.cmd("record_abatement", "2026-03-06T09:00:00-06:00",
                     costs=[{"item": "crew", "amount": "150.00"}]),
            DUMP.cmd("issue_bill", "2026-03-09T09:00:00-05:00")]


# ---------------------------------------------------------------- no business time in the future

LATER = (NOW + dt.timedelta(minutes=11)).isoformat()  # past the 10-minute tolerance
SOON = (NOW + dt.timedelta(minutes=9)).isoformat()  # within it


@pytest.mark.parametrize(("commands", "field"), [
    pytest.param([DUMP.open("belleville:9.13", LATER)], "field at", id="at of open_case"),
    pytest.param([*dumping_noticed(), DUMP.cmd("record_inspection", LATER, findings="x")],
                 "field at", id="at of a later fact"),
    pytest.param([DUMP.open("belleville:9.13", "2026-03-02T09:00:00-06:00"),
                  DUMP.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal",
                           served_on="Ann", delivered_at=LATER)],
                 "field delivered_at", id="delivered_at"),
    pytest.param([SNOW.open("belleville:9.09", "2026-11-30T08:00:00-06:00",
                            snow_ended_at=LATER)], "field snow_ended_at", id="snow_ended_at"),
    pytest.param([*dumping_billed()[:3],
                  DUMP.cmd("issue_bill", "2026-11-30T09:00:00-06:00", received_on="2026-12-02")],
                 "field received_on: 2026-12-02 is later than today (2026-12-01",
                 id="received_on"),
    pytest.param([*dumping_noticed(), DUMP.cmd("issue_citation", "2026-03-03T09:00:00-06:00",
                                               citation_number="C-1",
                                               offense_dates=["2026-03-02", "2027-01-01"])],
                 "field offense_dates.1", id="an offense date"),
    pytest.param([clock("belleville", LATER)], "field at", id="advance_clock"),
    pytest.param([*dumping_noticed(),
                  DUMP.cmd("correct", "2026-03-03T09:00:00-06:00", supersedes=2,
                           changes={"delivered_at": LATER}, reason="receipt")],
                 "field changes.delivered_at", id="a corrected time"),
])
def test_a_business_time_later_than_the_real_clock_plus_the_tolerance_is_refused(
        service, store, commands, field):
    message = refused(service, *commands)
    assert field in message
    assert "later than" in message and event_count(store) == 0


def test_a_time_in_the_last_representable_year_is_refused_by_name_not_an_overflow(service, store):
    message = refused(service, DUMP.open("belleville:9.13", "9999-12-31T20:00:00-06:00"))
    assert "field at" in message and "outside the times Abate accepts" in message
    assert event_count(store) == 0


def test_the_future_time_error_names_the_time_given_and_the_limit(service):
    command = parse_command(DUMP.open("belleville:9.13", "2026-12-01T07:00:00-06:00"))
    with pytest.raises(FutureTimeError) as caught:
        service.handle(command, now=NOW)  # 2026-12-01T06:00-06:00
    assert str(caught.value).startswith(
        "field at: 2026-12-01T07:00:00-06:00 is later than the real clock plus the tolerance "
        "(2026-12-01T06:10:00-06:00)")


def test_a_time_within_the_tolerance_is_accepted_and_the_tolerance_is_a_setting(store):
    assert run(CaseService(store), DUMP.open("belleville:9.13", SOON)).events_recorded == 1
    strict = CaseService(store, future_tolerance=dt.timedelta(0))
    other = CaseLines("belleville", "T-STRICT")
    assert "later than" in refused(strict, other.open("belleville:9.13", SOON))


def test_a_sweep_may_not_run_ahead_of_the_real_clock(service):
    with pytest.raises(FutureTimeError):
        sweep_deadlines(service, NOW, until=NOW + dt.timedelta(days=365))


# ---------------------------------------------------------------- times the domain orders

@pytest.mark.parametrize(("commands", "expected"), [
    pytest.param([DUMP.open("belleville:9.13", "2026-03-02T09:00:00-06:00"),
                  DUMP.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal",
                           served_on="Ann", delivered_at="2026-03-02T09:30:00-06:00")],
                 "delivered_at 2026-03-02 09:30 CST is before the notice was served (at "
                 "2026-03-02 10:00 CST)", id="delivery before service"),
    pytest.param([SNOW.open("belleville:9.09", "2026-01-10T08:00:00-06:00",
                            snow_ended_at="2026-01-10T09:00:00-06:00")],
                 "snow_ended_at 2026-01-10 09:00 CST is after the case was opened (at "
                 "2026-01-10 08:00 CST)", id="snowfall ending after the opening"),
    pytest.param([*dumping_billed()[:3],
                  DUMP.cmd("issue_bill", "2026-03-09T09:00:00-05:00", received_on="2026-03-08")],
                 "received_on 2026-03-08 is before the bill date 2026-03-09",
                 id="receipt before the bill"),
    pytest.param([*dumping_noticed(),
                  DUMP.cmd("record_abatement", "2026-03-02T09:30:00-06:00",
                           costs=[{"item": "crew", "amount": "150.00"}])],
                 "at 2026-03-02 09:30 CST is before the notice it depends on, served at "
                 "2026-03-02 10:00 CST", id="abatement before its notice"),
    pytest.param([*dumping_billed(),
                  DUMP.cmd("record_payment", "2026-03-08T09:00:00-05:00", amount="10.00")],
                 "at 2026-03-08 09:00 CDT is before the bill it pays, issued at "
                 "2026-03-09 09:00 CDT", id="payment before the bill"),
    pytest.param([*dumping_billed(),
                  DUMP.cmd("file_appeal", "2026-03-08T09:00:00-05:00", grounds="not mine")],
                 "at 2026-03-08 09:00 CDT is before the bill it appeals, issued at "
                 "2026-03-09 09:00 CDT", id="appeal before the bill"),
    pytest.param([*dumping_billed(),
                  DUMP.cmd("file_appeal", "2026-03-10T09:00:00-05:00", grounds="not mine"),
                  DUMP.cmd("decide_appeal", "2026-03-09T12:00:00-05:00", outcome="denied")],
                 "at 2026-03-09 12:00 CDT is before the appeal it decides, filed at "
                 "2026-03-10 09:00 CDT", id="decision before the appeal"),
    pytest.param([*dumping_noticed(),
                  DUMP.cmd("record_inspection", "2026-03-03T09:00:00-06:00", findings="still"),
                  DUMP.cmd("record_inspection", "2026-03-02T12:00:00-06:00", findings="x")],
                 "at 2026-03-02 12:00 CST is before the last fact recorded on case T-DUMP "
                 "(InspectionRecorded, event 3, at 2026-03-03 09:00 CST)",
                 id="any fact before the last one"),
])
def test_a_time_the_domain_orders_is_refused_naming_both_times(service, store, commands, expected):
    assert expected in refused(service, *commands)
    assert event_count(store) == 0


# ---------------------------------------------------------------- the municipality's zone

def test_every_instant_is_recorded_in_the_municipalitys_zone_whatever_offset_was_typed(service, store):
    run(service, DUMP.open("belleville:9.13", "2026-03-01T03:00:00Z"),
        DUMP.cmd("serve_notice", "2026-03-01T15:00:00+00:00", method="personal", served_on="Ann",
                 delivered_at="2026-03-01T17:30:00+01:00"))
    shown = show(store, DUMP)
    assert shown["observed_at"] == "2026-02-28T21:00:00-06:00"
    assert shown["events"][1]["occurred_at"] == "2026-03-01T09:00:00-06:00"
    assert shown["notices"][0]["delivered_at"] == "2026-03-01T10:30:00-06:00"


OTHER_PARCEL = {"county": "Dane", "number": "0509-999-0000-1"}


def repeat_answers(service, store):
    """The same prior § 9.13 dumping instant typed two ways, each on its own parcel; then a
    dumping on each parcel on 2026-03-01 (local), abated without notice as a repeat offense.
    Entered in two journals, so the second asks the repeat-offense view when there is one."""
    typed = {"T-PRIOR-CST": ("2026-02-28T21:00:00-06:00", None),
             "T-PRIOR-UTC": ("2026-03-01T03:00:00Z", OTHER_PARCEL)}
    for ref, (opened_at, parcel) in typed.items():
        prior = CaseLines("belleville", ref)
        run(service, prior.open("belleville:9.13", opened_at, parcel=parcel),
            prior.cmd("serve_notice", "2026-03-01T04:00:00Z", method="personal", served_on="A"))
    answers = {}
    for ref, (_, parcel) in typed.items():
        second = CaseLines("belleville", ref.replace("PRIOR", "SECOND"))
        run(service, second.open("belleville:9.13", "2026-03-01T10:00:00-06:00", parcel=parcel,
                                 owner={"name": f"Owner of {ref}"}),
            second.cmd("record_abatement", "2026-03-01T12:00:00-06:00",
                       costs=[{"item": "crew", "amount": "80.00"}],
                       without_notice_reason="repeat_offense"))
        case, _ = case_at(store, "belleville", second.case_ref)
        evidence = case.abatements[0].repeat_evidence
        answers[ref] = (evidence.count, evidence.window_end)
    return answers


def test_the_same_instant_typed_with_two_offsets_gives_the_same_repeat_offense_answer_by_scan(
        service, store):
    answers = repeat_answers(service, store)
    assert answers["T-PRIOR-CST"] == answers["T-PRIOR-UTC"] == (1, dt.date(2026, 3, 1))


def test_the_same_instant_typed_with_two_offsets_gives_the_same_repeat_offense_answer_by_view(views):
    store, runner, service = views
    answers = repeat_answers(service, store)
    assert answers["T-PRIOR-CST"] == answers["T-PRIOR-UTC"] == (1, dt.date(2026, 3, 1))


def test_the_repeat_offense_view_stores_local_dates_and_is_rebuilt_on_upgrade():
    from projections import RepeatOffenses

    assert RepeatOffenses.definition_version >= 2  # v3 adds notified_on, convicted_on


# ---------------------------------------------------------------- deadlines that had already run

def test_a_case_opened_after_the_owners_time_had_run_records_it_as_passed_right_after_opened(
        service, store):
    run(service, SNOW.open("belleville:9.09", "2026-01-12T08:00:00-06:00",
                           snow_ended_at="2026-01-10T06:00:00-06:00"),
        SNOW.cmd("serve_notice", "2026-01-12T09:00:00-06:00", method="personal", served_on="Ann"))
    shown = show(store, SNOW)
    assert types(shown)[:4] == ["Opened", "DeadlinePassed", "DeadlinePassed", "NoticeServed"]
    passed = shown["events"][1]
    assert (passed["facts"]["name"], passed["occurred_at"], passed["actor"]) == (
        "owner_duty", "2026-01-11T06:00:00-06:00", "abate-clock")  # § 9.09(1): 24 h
    assert deadline(shown, "owner_duty")["state"] == "passed"  # not "cancelled" by the notice
    assert deadline(shown, "forfeiture_period_started")["state"] == "passed"  # 36 h
    assert deadline(shown, "notice_due")["state"] == "cancelled"  # a person's step, served


def test_a_fact_after_a_deadline_first_records_the_deadline_as_passed_at_its_own_time(service, store):
    run(service, *dumping_noticed(),
        DUMP.cmd("record_inspection", "2026-03-05T09:59:00-06:00", findings="still there"))
    assert deadline(show(store, DUMP), "cure")["state"] == "open"  # a minute before it ends
    run(service, DUMP.cmd("record_abatement", "2026-03-06T09:00:00-06:00",
                          costs=[{"item": "crew", "amount": "150.00"}]))
    shown = show(store, DUMP)
    assert types(shown) == ["Opened", "NoticeServed", "InspectionRecorded", "DeadlinePassed",
                            "AbatementRecorded"]
    assert shown["events"][3]["occurred_at"] == "2026-03-05T10:00:00-06:00"  # § 9.13(2): 72 h
    assert deadline(shown, "cure")["state"] == "passed"  # not "cancelled" by the abatement


def test_case_show_as_of_works_when_a_deadline_passed_before_the_opening(tmp_path):
    """Through the abate command: the owner's time ran out before the case was opened."""
    journal = tmp_path / "snow.jsonl"
    journal.write_text("\n".join(as_lines(
        SNOW.open("belleville:9.09", "2026-01-12T08:00:00-06:00",
                  snow_ended_at="2026-01-10T06:00:00-06:00"),
        clock("belleville", "2026-01-12T08:30:00-06:00"))) + "\n")
    url = f"sqlite:///{tmp_path / 'a.sqlite3'}"
    base = ["--database-url", url]
    assert run_abate(*base, "import", str(journal)).returncode == 0

    def as_of(moment):
        done = run_abate(*base, "case", "show", "--municipality", "belleville",
                         "T-SNOW", "--as-of", moment)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert as_of("2026-01-11T12:00:00-06:00")["exists"] is False  # passed, but not yet opened
    opened = as_of("2026-01-12T08:00:00-06:00")
    assert deadline(opened, "owner_duty")["state"] == "passed"
    assert deadline(opened, "forfeiture_period_started")["state"] == "passed"


# ---------------------------------------------------------------- correcting a wrong time

def test_a_fact_wrongly_dated_years_ahead_no_longer_blocks_the_case_once_corrected(service, store):
    # Accepted by an Abate that had no future check (simulated with a clock in 2099).
    run(service, *dumping_noticed(),
        DUMP.cmd("record_inspection", "2099-03-03T09:00:00-06:00", findings="typo in the year"),
        now=dt.datetime(2099, 3, 4, tzinfo=dt.timezone.utc))
    abatement = DUMP.cmd("record_abatement", "2026-03-06T09:00:00-06:00",
                         costs=[{"item": "crew", "amount": "150.00"}])
    # Events: Opened, NoticeServed, DeadlinePassed (the cure, due before the inspection),
    # InspectionRecorded (4).
    assert "before the last fact recorded on case T-DUMP (InspectionRecorded, event 4, at " \
           "2099-03-03 09:00 CST)" in refused(service, abatement)
    run(service, DUMP.cmd("correct", "2026-11-30T09:00:00-06:00", supersedes=4,
                          changes={"at": "2026-03-03T09:00:00-06:00"},
                          reason="the year was typed wrong"), abatement)
    shown = show(store, DUMP)
    assert shown["status"] == "abated"
    inspection = shown["events"][3]
    assert inspection["occurred_at"] == "2099-03-03T09:00:00-06:00"  # the original stays
    assert inspection["effective_at"] == "2026-03-03T09:00:00-06:00"
    correction = shown["corrections"][0]
    assert correction["previous"] == {"at": "2099-03-03T09:00:00-06:00"}
    assert correction["changes"] == {"at": "2026-03-03T09:00:00-06:00"}
    as_of = show(store, DUMP, as_of=dt.datetime.fromisoformat("2026-03-04T00:00:00-06:00"))
    assert "InspectionRecorded" in types(as_of)  # as of its corrected time


def test_correcting_a_notices_delivery_moves_its_open_cure_deadline_with_the_cases_rule(views):
    store, runner, service = views
    run(service, *dumping_noticed(),
        DUMP.cmd("correct", "2026-03-03T09:00:00-06:00", supersedes=2,
                 changes={"delivered_at": "2026-03-03T08:00:00-06:00"},
                 reason="certified mail receipt came back"))
    shown = show(store, DUMP)
    cure = deadline(shown, "cure")
    assert (cure["due_at"], cure["state"]) == ("2026-03-06T08:00:00-06:00", "open")  # 72 h
    assert (cure["rule"], cure["rule_version"], cure["citation"]) == (
        "belleville:9.13", 1, "Belleville Code § 9.13(2)")
    recorded = shown["events"][-1]["facts"]
    assert recorded["deadlines"][0]["due_at"] == "2026-03-06T08:00:00-06:00"
    assert shown["notices"][0]["delivered_at"] == "2026-03-03T08:00:00-06:00"
    runner.catch_up()
    with runner.engine.connect() as conn:
        [row] = runner.active(Worklist.name).due(
            conn, until=dt.datetime(2026, 3, 7, tzinfo=dt.timezone.utc))
    assert row["due_at"] == "2026-03-06T14:00:00+00:00"


def passed_cure_then_corrected(service, corrected_at, delivered_at):
    run(service, *dumping_noticed(), clock("belleville", "2026-03-05T12:00:00-06:00"),
        DUMP.cmd("correct", corrected_at, supersedes=2, changes={"delivered_at": delivered_at},
                 reason="the notice reached the owner later"))


def test_a_passed_deadline_that_the_corrected_time_makes_later_is_open_again_and_passes_again(
        service, store):
    passed_cure_then_corrected(service, "2026-03-05T13:00:00-06:00", "2026-03-04T10:00:00-06:00")
    shown = show(store, DUMP)
    cure = deadline(shown, "cure")
    assert (cure["due_at"], cure["state"]) == ("2026-03-07T10:00:00-06:00", "open")
    assert shown["status"] == "notice_served"
    early = DUMP.cmd("record_abatement", "2026-03-06T09:00:00-06:00",
                     costs=[{"item": "crew", "amount": "150.00"}])
    assert "runs until 2026-03-07 10:00 CST" in refused(service, early)
    run(service, DUMP.cmd("record_abatement", "2026-03-07T11:00:00-06:00",
                          costs=[{"item": "crew", "amount": "150.00"}]))
    passings = [e for e in show(store, DUMP)["events"] if e["type"] == "DeadlinePassed"]
    assert [e["occurred_at"] for e in passings] == ["2026-03-05T10:00:00-06:00",
                                                    "2026-03-07T10:00:00-06:00"]
    as_of = show(store, DUMP, as_of=dt.datetime.fromisoformat("2026-03-05T12:00:00-06:00"))
    assert deadline(as_of, "cure")["state"] == "open"  # the first passing was voided


def test_a_passed_deadline_whose_corrected_time_has_run_too_stays_passed_at_the_corrected_time(
        service, store):
    passed_cure_then_corrected(service, "2026-03-10T09:00:00-05:00", "2026-03-03T10:00:00-06:00")
    cure = deadline(show(store, DUMP), "cure")
    assert (cure["due_at"], cure["state"]) == ("2026-03-06T10:00:00-06:00", "passed")
    before = show(store, DUMP, as_of=dt.datetime.fromisoformat("2026-03-05T12:00:00-06:00"))
    assert deadline(before, "cure")["state"] == "open"
    after = show(store, DUMP, as_of=dt.datetime.fromisoformat("2026-03-06T12:00:00-06:00"))
    assert deadline(after, "cure")["state"] == "passed"


def test_a_correction_that_would_put_a_recorded_abatement_inside_the_cure_period_is_refused(service):
    message = refused(service, *dumping_billed(),
                      DUMP.cmd("correct", "2026-03-10T09:00:00-05:00", supersedes=2,
                               changes={"delivered_at": "2026-03-04T10:00:00-06:00"},
                               reason="late receipt"))
    assert "the deadline cure would be 2026-03-07 10:00 CST" in message
    assert "AbatementRecorded (event 4) at 2026-03-06 09:00 CST relied on" in message


@pytest.mark.parametrize(("supersedes", "changes", "expected"), [
    pytest.param(3, {"at": "2026-03-02T08:00:00-06:00"},
                 "the corrected at 2026-03-02 08:00 CST of InspectionRecorded (event 3) is "
                 "before the fact recorded before it, NoticeServed (event 2) at "
                 "2026-03-02 10:00 CST", id="a fact moved before the one before it"),
    pytest.param(1, {"at": "2026-03-02T11:00:00-06:00"},
                 "is after the fact recorded after it, NoticeServed (event 2)",
                 id="the opening moved after the notice"),
    pytest.param(2, {"delivered_at": "2026-03-02T09:30:00-06:00"},
                 "delivered_at 2026-03-02 09:30 CST is before the notice was served",
                 id="a delivery moved before its service"),
    pytest.param(3, {"delivered_at": "2026-03-04T10:00:00-06:00"},
                 "cannot correct delivered_at on InspectionRecorded (its times: at)",
                 id="a time the event does not have"),
    pytest.param(1, {"at": "2026-03-02T08:00:00-06:00", "description": "x"},
                 "correct business times and other facts in separate corrections",
                 id="times and facts together"),
    pytest.param(2, {"delivered_at": "2026-03-02T10:00:00-06:00"},
                 "NoticeServed (event 2) already has delivered_at 2026-03-02 10:00 CST",
                 id="nothing changes"),
])
def test_a_time_correction_keeps_the_case_consistent(service, store, supersedes, changes, expected):
    commands = [*dumping_noticed(),
                DUMP.cmd("record_inspection", "2026-03-03T09:00:00-06:00", findings="still"),
                DUMP.cmd("correct", "2026-03-04T09:00:00-06:00", supersedes=supersedes,
                         changes=changes, reason="wrong time")]
    assert expected in refused(service, *commands)
    assert event_count(store) == 0


def test_a_deadline_passing_has_no_time_to_correct(service):
    message = refused(service, *dumping_noticed(), clock("belleville", "2026-03-06T00:00:00-06:00"),
                      DUMP.cmd("correct", "2026-03-06T09:00:00-06:00", supersedes=3,
                               changes={"at": "2026-03-05T11:00:00-06:00"}, reason="x"))
    assert "a DeadlinePassed event has no time to correct; a deadline passes at the time its " \
           "rule gives" in message


def test_correcting_the_opening_moves_the_deadlines_counted_from_the_observation(service, store):
    numbers = CaseLines("belleville", "T-HN")
    run(service, numbers.open("belleville:9.15", "2026-04-01T10:00:00-05:00"),
        numbers.cmd("correct", "2026-04-03T10:00:00-05:00", supersedes=1,
                    changes={"at": "2026-03-30T10:00:00-05:00"}, reason="observed earlier"))
    shown = show(store, numbers)
    assert deadline(shown, "notice_due")["due_at"] == "2026-04-19T23:59:59-05:00"  # 20 days
    assert shown["observed_at"] == "2026-03-30T10:00:00-05:00"


def test_correcting_when_a_bill_was_received_moves_its_due_date(service, store):
    obstruct = CaseLines("belleville", "T-OBS")
    run(service, obstruct.open("belleville:9.07", "2026-05-01T10:00:00-05:00"),
        obstruct.cmd("serve_notice", "2026-05-01T11:00:00-05:00", method="personal",
                     served_on="Owner"),
        obstruct.cmd("record_abatement", "2026-05-04T10:00:00-05:00",
                     costs=[{"item": "removal", "amount": "75.00"}]),
        obstruct.cmd("issue_bill", "2026-05-04T15:00:00-05:00"),
        # Opened, NoticeServed, DeadlinePassed (cure), AbatementRecorded, BillIssued (5).
        obstruct.cmd("correct", "2026-05-08T09:00:00-05:00", supersedes=5,
                     changes={"received_on": "2026-05-07"}, reason="receipt card returned"))
    shown = show(store, obstruct)
    assert deadline(shown, "bill_due")["due_at"] == "2026-05-17T23:59:59-05:00"  # § 9.07: 10 days
    assert shown["charge"]["received_on"] == "2026-05-07"
    assert shown["charge"]["due_basis"] == "10 calendar days from receipt on 2026-05-07"


def test_a_board_meeting_learned_after_the_appeal_gives_it_its_decision_deadline(service, store):
    run(service, *dumping_billed(),
        DUMP.cmd("file_appeal", "2026-03-12T09:00:00-05:00", grounds="not mine"),
        DUMP.cmd("correct", "2026-03-13T09:00:00-05:00", supersedes=6,  # AppealFiled
                 changes={"board_meeting_on": "2026-04-06"}, reason="agenda published"))
    shown = show(store, DUMP)
    assert deadline(shown, "appeal_hearing")["state"] == "cancelled"
    decision = deadline(shown, "appeal_decision")  # § 9.13(7): 30 days after the meeting
    assert (decision["due_at"], decision["state"]) == ("2026-05-06T23:59:59-05:00", "open")


def test_a_board_meeting_more_than_a_year_ahead_is_refused_as_a_typing_error(service):
    message = refused(service, *dumping_billed(),
                      DUMP.cmd("file_appeal", "2026-03-12T09:00:00-05:00", grounds="not mine",
                               board_meeting_on="2099-04-06"))
    assert "board_meeting_on 2099-04-06 is more than a year after the appeal was filed" in message


def test_case_show_as_of_uses_the_corrected_time_through_the_abate_command(tmp_path):
    journal = tmp_path / "j.jsonl"
    journal.write_text("\n".join(as_lines(
        *dumping_noticed(),
        DUMP.cmd("record_inspection", "2026-03-20T09:00:00-05:00", findings="re-inspected"),
        DUMP.cmd("correct", "2026-03-21T09:00:00-05:00", supersedes=4,
                 changes={"at": "2026-03-04T09:00:00-06:00"}, reason="date typed wrong"))) + "\n")
    url = f"sqlite:///{tmp_path / 'a.sqlite3'}"
    done = run_abate("--database-url", url, "import", str(journal))
    assert done.returncode == 0, done.stderr
    done = run_abate("--database-url", url, "case", "show", "--municipality",
                     "belleville", "T-DUMP", "--as-of", "2026-03-04T12:00:00-06:00")
    shown = json.loads(done.stdout)
    assert [(e["type"], e.get("effective_at")) for e in shown["events"]] == [
        ("Opened", None), ("NoticeServed", None),
        ("InspectionRecorded", "2026-03-04T09:00:00-06:00"), ("Corrected", None)]


def test_a_snapshot_taken_before_facts_remembered_their_kind_still_checks_the_order(service):
    """A snapshot of an older Abate knows only the last fact's time (Case v1)."""
    from eventsourcing.domain import Snapshot

    from cases.domain import Case, Stamp
    from cases.domain.values import LastFact

    def as_dicts(value):  # the case's values as the dicts an older Abate kept
        if hasattr(value, "as_dict"):
            return value.as_dict()
        if isinstance(value, list):
            return [as_dicts(item) for item in value]
        if isinstance(value, dict):
            return {key: as_dicts(item) for key, item in value.items()}
        return value

    run(service, *dumping_noticed())
    case = service.store.get_case(service.store.case_ids()[0])
    snapshot = Snapshot.take(case)
    old_state = {k: as_dicts(v) for k, v in snapshot.state.items()
                 if k not in ("class_version", "last_fact")}
    old_state["last_fact_at"] = case.last_fact.at
    old = Snapshot(originator_id=case.id, originator_version=case.version,
                   timestamp=snapshot.timestamp, topic=snapshot.topic, state=old_state).mutate(None)
    assert old.last_fact == LastFact(position=None, type=None, at=case.last_fact.at)
    assert old.deadlines == case.deadlines and old.notices == case.notices
    with pytest.raises(BusinessTimeOrderError, match=r"is before the last fact recorded on case T-DUMP "
                                        r"\(2026-03-02T10:00:00-06:00\)"):
        old.record_inspection(Stamp(actor="x", at=dt.datetime.fromisoformat(
            "2026-03-02T09:30:00-06:00"), now=NOW), findings="x", documents=[])
    assert isinstance(old, Case)

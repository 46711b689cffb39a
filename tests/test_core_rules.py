"""Each core rule of DOMAIN.md, through a journal, gives the deadlines, bills and statuses
its ordinance text gives. Test names and parameters cite the sections."""

import pytest

from cases.errors import JournalError
from cases.history import case_at, describe_case
from tests.builders import GREEN_PARCEL, CaseLines, as_lines, clock, grading_through_bill
from tests.conftest import NOW


def run(service, *commands):
    return service.import_journal(as_lines(*commands), now=NOW)


def show(store, lines: CaseLines, **when):
    case, events = case_at(store, lines.municipality, lines.case_ref, **when)
    return describe_case(case, events)


def position_of(store, lines: CaseLines, event_type: str) -> int:
    return next(e["position"] for e in show(store, lines)["events"] if e["type"] == event_type)


def deadline(shown, name):
    return next(d for d in shown["deadlines"] if d["name"] == name)


def refused(service, *commands) -> str:
    with pytest.raises(JournalError) as caught:
        run(service, *commands)
    return str(caught.value)


# ---------------------------------------------------------------- snow


def test_belleville_9_09_snow_owner_24h_notice_24h_forfeiture_36h_and_60_day_tax_roll(service, store):
    snow = CaseLines("belleville", "B-SNOW-1")
    run(service,
        snow.open("belleville:9.09", "2026-01-10T08:00:00-06:00",
                  snow_ended_at="2026-01-10T06:00:00-06:00"),
        clock("belleville", "2026-01-11T20:00:00-06:00"))
    shown = show(store, snow)
    assert deadline(shown, "owner_duty")["due_at"] == "2026-01-11T06:00:00-06:00"  # § 9.09(1)
    assert deadline(shown, "owner_duty")["state"] == "passed"
    forfeiture = deadline(shown, "forfeiture_period_started")  # § 9.09(2)(a)2: 36 h
    assert (forfeiture["due_at"], forfeiture["state"]) == ("2026-01-11T18:00:00-06:00", "passed")
    notice_due = deadline(shown, "notice_due")  # § 9.09(2)(a)1: a person must serve it
    assert (notice_due["due_at"], notice_due["state"]) == ("2026-01-11T06:00:00-06:00", "open")
    passed = [e for e in shown["events"] if e["type"] == "DeadlinePassed"]
    assert [e["occurred_at"] for e in passed] == ["2026-01-11T06:00:00-06:00",
                                                   "2026-01-11T18:00:00-06:00"]

    run(service,
        snow.cmd("serve_notice", "2026-01-11T20:30:00-06:00", method="personal",
                 served_on="Ann Owner"),
        snow.cmd("record_abatement", "2026-01-12T21:00:00-06:00",
                 costs=[{"item": "snow removal crew, 1 h", "amount": "85.00"}]),
        snow.cmd("issue_bill", "2026-01-13T09:00:00-06:00", received_on="2026-01-14"))
    shown = show(store, snow)
    cure = deadline(shown, "cure")
    assert cure["due_at"] == "2026-01-12T20:30:00-06:00"  # § 9.09(6): 24 h from delivery
    assert (cure["rule"], cure["rule_version"]) == ("belleville:9.09", 1)
    assert deadline(shown, "notice_due")["state"] == "cancelled"
    assert deadline(shown, "bill_due")["due_at"] == "2026-01-24T23:59:59-06:00"  # § 9.09(7) 10 days from receipt
    assert deadline(shown, "tax_roll_eligible")["due_at"] == "2026-03-13T23:59:59-05:00"  # 60 days after incurred (after DST)
    assert shown["status"] == "billed" and shown["balance"] == "85.00"


def test_belleville_9_09_abatement_before_the_notice_cure_period_is_refused(service):
    snow = CaseLines("belleville", "B-SNOW-2")
    message = refused(service,
        snow.open("belleville:9.09", "2026-01-10T08:00:00-06:00"),
        snow.cmd("serve_notice", "2026-01-11T09:00:00-06:00", method="personal", served_on="Ann"),
        snow.cmd("record_abatement", "2026-01-11T15:00:00-06:00",
                 costs=[{"item": "crew", "amount": "85.00"}]))
    assert "line 3" in message and "cure period under belleville:9.09 runs until 2026-01-12 09:00 CST" in message


def test_belleville_9_09_2_b_hazard_with_nobody_reachable_is_abated_at_once_and_the_notice_follows(service, store):
    snow = CaseLines("belleville", "B-SNOW-3")
    run(service,
        snow.open("belleville:9.09", "2026-02-02T07:00:00-06:00"),
        snow.cmd("declare_hazard", "2026-02-02T07:10:00-06:00", description="ice sheet at school crossing",
                 nobody_reachable=True),
        snow.cmd("record_abatement", "2026-02-02T08:00:00-06:00",
                 costs=[{"item": "salt and crew", "amount": "60.00"}],
                 without_notice_reason="hazard_nobody_reachable"))
    shown = show(store, snow)
    follow_up = deadline(shown, "notice_after_abatement")
    assert follow_up["needs_person"] is True and follow_up["state"] == "open"
    assert shown["status"] == "abated"


def test_belleville_9_09_2_b_hazard_notice_gives_two_hours(service, store):
    snow = CaseLines("belleville", "B-SNOW-4")
    run(service,
        snow.open("belleville:9.09", "2026-02-02T07:00:00-06:00"),
        snow.cmd("declare_hazard", "2026-02-02T07:10:00-06:00", description="ice at entrance"),
        snow.cmd("serve_notice", "2026-02-02T07:30:00-06:00", method="personal", served_on="Ann"))
    assert show(store, snow)["cure_deadline"] == "2026-02-02T09:30:00-06:00"


def test_belleville_9_09_abatement_without_notice_and_without_a_hazard_is_refused(service):
    snow = CaseLines("belleville", "B-SNOW-5")
    message = refused(service,
        snow.open("belleville:9.09", "2026-02-02T07:00:00-06:00"),
        snow.cmd("record_abatement", "2026-02-04T08:00:00-06:00",
                 costs=[{"item": "crew", "amount": "60.00"}]))
    assert "requires a written notice before village abatement" in message


def test_mazomanie_360_10_snow_48h_hazard_8h_door_tape_and_90_day_tax_roll(service, store):
    snow = CaseLines("mazomanie", "M-SNOW-1")
    hazard = CaseLines("mazomanie", "M-SNOW-2")
    run(service,
        snow.open("mazomanie:360-10", "2026-01-05T08:00:00-06:00",
                  snow_ended_at="2026-01-04T22:00:00-06:00"),
        snow.cmd("serve_notice", "2026-01-07T09:00:00-06:00", method="first_class_mail",
                 served_on="Owner", delivered_at="2026-01-08T12:00:00-06:00"),
        snow.cmd("record_abatement", "2026-01-10T13:00:00-06:00",
                 costs=[{"item": "crew", "amount": "120.00"}]),
        hazard.open("mazomanie:360-10", "2026-01-05T08:00:00-06:00"),
        hazard.cmd("declare_hazard", "2026-01-05T08:05:00-06:00", description="ice on ramp"),
        hazard.cmd("serve_notice", "2026-01-05T09:00:00-06:00", method="door_tape",
                   served_on="taped to front door, nobody there"))
    shown = show(store, snow)
    assert deadline(shown, "owner_duty")["due_at"] == "2026-01-06T22:00:00-06:00"  # 48 h after snow stops
    assert shown["cure_deadline"] == "2026-01-10T12:00:00-06:00"  # 48 h from delivery
    assert deadline(shown, "tax_roll_eligible")["due_at"] == "2026-04-10T23:59:59-05:00"  # 90 days
    assert show(store, hazard)["cure_deadline"] == "2026-01-05T17:00:00-06:00"  # 8 h from notice


# ---------------------------------------------------------------- obstructions


@pytest.mark.parametrize(
    ("rule", "bill_due", "eligible"),
    [
        ("belleville:9.07", "2026-05-15T23:59:59-05:00", "2026-07-03T23:59:59-05:00"),  # § 9.07(6): 10 days / 60 days
        ("mazomanie:360-8", "2026-05-15T23:59:59-05:00", "2026-07-03T23:59:59-05:00"),  # § 360-8: 10 days / 60 days
    ],
)
def test_obstructions_24h_cure_10_day_bill_and_60_day_tax_roll(service, store, rule, bill_due, eligible):
    lines = CaseLines(rule.split(":")[0], "OBS-1")
    run(service,
        lines.open(rule, "2026-05-01T10:00:00-05:00"),
        lines.cmd("serve_notice", "2026-05-01T11:00:00-05:00", method="personal", served_on="Owner"),
        clock(rule.split(":")[0], "2026-05-03T00:00:00-05:00"),
        lines.cmd("record_abatement", "2026-05-04T10:00:00-05:00",
                  costs=[{"item": "removal", "amount": "75.00"}]),
        lines.cmd("issue_bill", "2026-05-04T15:00:00-05:00", received_on="2026-05-05"))
    shown = show(store, lines)
    assert shown["cure_deadline"] == "2026-05-02T11:00:00-05:00"
    assert deadline(shown, "cure")["state"] == "passed"
    assert deadline(shown, "bill_due")["due_at"] == bill_due
    assert deadline(shown, "tax_roll_eligible")["due_at"] == eligible


def test_mazomanie_360_9_has_no_bill_the_cost_goes_on_the_next_annual_roll_as_a_special_charge(service, store):
    lines = CaseLines("mazomanie", "M-OBS-9")
    run(service,
        lines.open("mazomanie:360-9", "2026-06-01T10:00:00-05:00"),
        lines.cmd("serve_notice", "2026-06-01T11:00:00-05:00", method="personal", served_on="Owner"),
        lines.cmd("record_abatement", "2026-06-02T12:00:00-05:00",
                  costs=[{"item": "removal", "amount": "40.00"}]))
    shown = show(store, lines)
    assert shown["balance"] == "40.00"
    assert deadline(shown, "tax_roll_eligible")["due_at"] == "2026-06-02T12:00:00-05:00"
    message = refused(service, lines.cmd("issue_bill", "2026-06-03T09:00:00-05:00"))
    assert "mazomanie:360-9 has no bill" in message


# ---------------------------------------------------------------- dumping and ditches


def dumping_to_bill(lines: CaseLines, rule="belleville:9.13", parcel=None):
    return [
        lines.open(rule, "2026-03-02T09:00:00-06:00", parcel=parcel),
        lines.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal", served_on="Owner"),
        lines.cmd("record_abatement", "2026-03-05T10:00:00-06:00",
                  costs=[{"item": "crew", "amount": "150.00"}, {"item": "tipping fee", "amount": "45.50"}]),
        lines.cmd("issue_bill", "2026-03-09T09:00:00-05:00"),
    ]


def test_belleville_9_13_dumping_72h_cure_bill_due_in_30_days_and_eligible_when_unpaid(service, store):
    lines = CaseLines("belleville", "B-DUMP-1")
    run(service, *dumping_to_bill(lines))
    shown = show(store, lines)
    assert shown["cure_deadline"] == "2026-03-05T10:00:00-06:00"  # § 9.13(2): 72 h from delivery
    assert deadline(shown, "bill_due")["due_at"] == "2026-04-08T23:59:59-05:00"  # § 9.13(4): 30 days
    assert deadline(shown, "tax_roll_eligible")["due_at"] == "2026-04-08T23:59:59-05:00"
    assert deadline(shown, "appeal_window")["due_at"] == "2026-03-19T23:59:59-05:00"  # § 9.13(7): 10 days
    assert shown["balance"] == "195.50" and shown["status"] == "billed"


def test_belleville_9_13_timely_appeal_stays_the_charge_and_denial_makes_it_due_ten_days_later(service, store):
    lines = CaseLines("belleville", "B-DUMP-2")
    run(service, *dumping_to_bill(lines),
        lines.cmd("file_appeal", "2026-03-18T09:00:00-05:00", grounds="not my tires"))
    shown = show(store, lines)
    assert shown["status"] == "appealed"
    assert deadline(shown, "tax_roll_eligible")["state"] == "cancelled"  # stayed
    run(service, lines.cmd("decide_appeal", "2026-04-20T19:00:00-05:00", outcome="denied"))
    shown = show(store, lines)
    assert deadline(shown, "bill_due")["due_at"] == "2026-04-30T23:59:59-05:00"
    assert deadline(shown, "tax_roll_eligible")["due_at"] == "2026-04-30T23:59:59-05:00"
    assert shown["charge"]["appeal_state"] == "denied"


def test_belleville_9_13_appeal_after_ten_days_of_mailing_is_refused(service):
    lines = CaseLines("belleville", "B-DUMP-3")
    message = refused(service, *dumping_to_bill(lines),
                      lines.cmd("file_appeal", "2026-03-20T09:00:00-05:00", grounds="late"))
    assert "appeal window under belleville:9.13 closed at 2026-03-19 23:59 CDT" in message


def test_belleville_9_13_reduced_appeal_and_partial_payment_leave_the_balance(service, store):
    lines = CaseLines("belleville", "B-DUMP-4")
    run(service, *dumping_to_bill(lines),
        lines.cmd("file_appeal", "2026-03-10T09:00:00-05:00", grounds="too high"),
        lines.cmd("decide_appeal", "2026-04-20T19:00:00-05:00", outcome="reduced", amount="120.00"),
        lines.cmd("record_payment", "2026-04-25T09:00:00-05:00", amount="100.00"))
    shown = show(store, lines)
    assert shown["balance"] == "20.00" and shown["status"] == "billed"
    assert deadline(shown, "tax_roll_eligible")["state"] == "open"


def test_belleville_9_14_ditch_has_no_appeal_clause(service):
    lines = CaseLines("belleville", "B-DITCH-1")
    message = refused(service, *dumping_to_bill(lines, rule="belleville:9.14"),
                      lines.cmd("file_appeal", "2026-03-10T09:00:00-05:00", grounds="no"))
    assert "belleville:9.14 has no appeal clause" in message


def test_second_dumping_within_twelve_months_allows_abatement_without_notice(service, store):
    first = CaseLines("belleville", "B-DUMP-10")
    second = CaseLines("belleville", "B-DUMP-11")
    run(service, *dumping_to_bill(first),
        second.open("belleville:9.13", "2026-11-20T09:00:00-06:00"),
        second.cmd("record_abatement", "2026-11-20T13:00:00-06:00",
                   costs=[{"item": "crew", "amount": "150.00"}], without_notice_reason="repeat_offense"))
    abatement = show(store, second)["abatements"][0]
    assert abatement["repeat_evidence"] == {"count": 1, "window_start": "2025-11-20",
                                            "window_end": "2026-11-20", "case_refs": ["B-DUMP-10"],
                                            "counts": "parcel_or_party"}


def test_first_dumping_cannot_be_abated_without_notice_as_a_repeat(service, store):
    other_parcel = CaseLines("belleville", "B-DUMP-20")
    lone = CaseLines("belleville", "B-DUMP-21")
    message = refused(service, *dumping_to_bill(other_parcel, parcel=GREEN_PARCEL),
                      lone.open("belleville:9.13", "2026-11-20T09:00:00-06:00",
                                owner={"name": "Someone Else"}),
                      lone.cmd("record_abatement", "2026-11-20T13:00:00-06:00",
                               costs=[{"item": "crew", "amount": "150.00"}],
                               without_notice_reason="repeat_offense"))
    assert "needs a prior substantiated violation" in message
    assert "0 prior violations between 2025-11-20 and 2026-11-20" in message


# ---------------------------------------------------------------- the rest of the core table


def test_belleville_9_15_house_numbers_notice_after_20_days_and_forfeiture_10_days_after_service(service, store):
    lines = CaseLines("belleville", "B-HN-1")
    run(service, lines.open("belleville:9.15", "2026-04-01T10:00:00-05:00"))
    assert deadline(show(store, lines), "notice_due")["due_at"] == "2026-04-21T23:59:59-05:00"
    run(service, lines.cmd("serve_notice", "2026-04-22T10:00:00-05:00", method="personal",
                           served_on="Owner"),
        clock("belleville", "2026-05-03T00:00:00-05:00"))
    shown = show(store, lines)
    cure = deadline(shown, "cure")
    assert (cure["due_at"], cure["state"]) == ("2026-05-02T23:59:59-05:00", "passed")
    assert "forfeiture" in cure["consequence"]
    message = refused(service, lines.cmd("record_abatement", "2026-05-04T10:00:00-05:00",
                                         costs=[{"item": "numbers", "amount": "20.00"}]))
    assert "does not provide for abatement by the village" in message


def test_belleville_9_24_grading_notice_only_by_certified_mail_and_30_days_after_receipt(service, store):
    lines = CaseLines("belleville", "B-GRADE-1")
    message = refused(service, lines.open("belleville:9.24", "2026-06-01T10:00:00-05:00"),
                      lines.cmd("serve_notice", "2026-06-01T11:00:00-05:00", method="personal",
                                served_on="Permittee"))
    assert "service by personal is not allowed by belleville:9.24" in message
    run(service, lines.open("belleville:9.24", "2026-06-01T10:00:00-05:00"),
        lines.cmd("serve_notice", "2026-06-01T11:00:00-05:00", method="certified_mail",
                  served_on="Permittee", delivered_at="2026-06-03T14:00:00-05:00"))
    assert show(store, lines)["cure_deadline"] == "2026-07-03T23:59:59-05:00"


def test_belleville_11_013_correction_order_time_is_stated_in_the_notice_and_citation_cites_50_to_150(service, store):
    lines = CaseLines("belleville", "B-PM-1")
    message = refused(service, lines.open("belleville:11.013", "2026-06-01T10:00:00-05:00"),
                      lines.cmd("serve_notice", "2026-06-01T11:00:00-05:00",
                                method="certified_mail", served_on="Owner"))
    assert "give cure_days" in message
    run(service, lines.open("belleville:11.013", "2026-06-01T10:00:00-05:00"),
        lines.cmd("serve_notice", "2026-06-01T11:00:00-05:00", method="certified_mail",
                  served_on="Owner", cure_days=14),
        lines.cmd("issue_citation", "2026-06-20T10:00:00-05:00", citation_number="C-100"),
        lines.cmd("refer_to_attorney", "2026-06-21T10:00:00-05:00", reason="no compliance"))
    shown = show(store, lines)
    assert shown["cure_deadline"] == "2026-06-15T23:59:59-05:00"
    assert shown["citations"][0]["forfeiture"].startswith("$50–$150")
    assert shown["status"] == "referred"
    assert "Village Attorney" in shown["referrals"][0]["path"]


def test_unset_forfeiture_amounts_say_so_instead_of_a_number(service, store):
    lines = CaseLines("mazomanie", "M-SNOW-9")
    run(service, lines.open("mazomanie:360-10", "2026-01-05T08:00:00-06:00"),
        lines.cmd("issue_citation", "2026-01-08T10:00:00-06:00", citation_number="M-1"))
    assert show(store, lines)["citations"][0]["forfeiture"].startswith(
        "forfeiture amount not set for mazomanie")


def test_belleville_10_11_more_than_three_dogs_15_days_after_written_notice(service, store):
    lines = CaseLines("belleville", "B-DOG-1")
    run(service, lines.open("belleville:10.11", "2026-06-01T10:00:00-05:00"),
        lines.cmd("serve_notice", "2026-06-01T11:00:00-05:00", method="personal", served_on="Keeper"))
    assert show(store, lines)["cure_deadline"] == "2026-06-16T23:59:59-05:00"


def test_belleville_13_floodplain_has_no_cure_step_only_referral(service, store):
    lines = CaseLines("belleville", "B-FLOOD-1")
    message = refused(service, lines.open("belleville:13", "2026-06-01T10:00:00-05:00"),
                      lines.cmd("serve_notice", "2026-06-01T11:00:00-05:00", method="personal",
                                served_on="Owner"))
    assert "belleville:13 has no notice step" in message
    run(service, lines.open("belleville:13", "2026-06-01T10:00:00-05:00"),
        lines.cmd("refer_to_attorney", "2026-06-02T10:00:00-05:00", reason="fill in floodway"))
    shown = show(store, lines)
    assert shown["status"] == "referred" and "DNR" in shown["referrals"][0]["path"]


def test_a_second_referral_waits_for_the_first_ones_disposition(service, store):
    """Trial finding 16: a referred case was offered "Refer to attorney" again."""
    lines = CaseLines("belleville", "B-FLOOD-2")
    run(service, lines.open("belleville:13", "2026-06-01T10:00:00-05:00"),
        lines.cmd("refer_to_attorney", "2026-06-02T10:00:00-05:00", reason="fill in floodway"))
    message = refused(service, lines.cmd("refer_to_attorney", "2026-06-03T10:00:00-05:00",
                                         reason="again"))
    assert "already referred to the attorney" in message and "disposition" in message
    assert len(show(store, lines)["referrals"]) == 1  # nothing recorded
    run(service,
        lines.cmd("record_disposition", "2026-07-01T10:00:00-05:00", outcome="dismissed",
                  notes="refiled later"),
        lines.cmd("refer_to_attorney", "2026-07-02T10:00:00-05:00", reason="fill again"))
    assert len(show(store, lines)["referrals"]) == 2


def test_mazomanie_sidewalk_repair_30_days_or_20_when_life_threatening(service, store):
    ordinary = CaseLines("mazomanie", "M-SW-1")
    danger = CaseLines("mazomanie", "M-SW-2")
    run(service,
        ordinary.open("mazomanie:sidewalk-repair", "2026-05-01T10:00:00-05:00"),
        ordinary.cmd("serve_notice", "2026-05-01T11:00:00-05:00", method="certified_mail",
                     served_on="Owner", delivered_at="2026-05-04T12:00:00-05:00"),
        danger.open("mazomanie:sidewalk-repair", "2026-05-01T10:00:00-05:00"),
        danger.cmd("declare_hazard", "2026-05-01T10:30:00-05:00", description="heaved slab, 3 in"),
        danger.cmd("serve_notice", "2026-05-01T11:00:00-05:00", method="personal", served_on="Owner"))
    assert show(store, ordinary)["cure_deadline"] == "2026-06-03T23:59:59-05:00"
    assert show(store, danger)["cure_deadline"] == "2026-05-21T23:59:59-05:00"


def test_belleville_9_25_refuse_special_collection_bill_is_a_lien_when_unpaid(service, store):
    lines = CaseLines("belleville", "B-REF-1")
    run(service, lines.open("belleville:9.25", "2026-06-01T10:00:00-05:00"),
        lines.cmd("serve_notice", "2026-06-01T11:00:00-05:00", method="personal",
                  served_on="Resident"),
        lines.cmd("record_abatement", "2026-06-02T10:00:00-05:00",
                  costs=[{"item": "special collection", "amount": "35.00"}]),
        lines.cmd("issue_bill", "2026-06-03T10:00:00-05:00"))
    shown = show(store, lines)
    assert shown["charge"]["due_at"] is None  # no payment period in § 9.25(29)
    assert "not set" in shown["charge"]["due_basis"]
    assert deadline(shown, "tax_roll_eligible")["due_at"] == "2026-06-03T10:00:00-05:00"


# ---------------------------------------------------------------- lifecycle rules


def test_no_commands_on_a_closed_case_except_reopen(service, store):
    lines = CaseLines("belleville", "B-CL-1")
    run(service, lines.open("belleville:9.07", "2026-05-01T10:00:00-05:00"),
        lines.cmd("close_case", "2026-05-02T10:00:00-05:00", reason="unfounded"))
    message = refused(service, lines.cmd("record_inspection", "2026-05-03T10:00:00-05:00",
                                         findings="x"))
    assert "is closed (unfounded); only reopen_case is allowed" in message
    run(service, lines.cmd("reopen_case", "2026-05-03T10:00:00-05:00", reason="new complaint"),
        lines.cmd("record_inspection", "2026-05-03T11:00:00-05:00", findings="still there"))
    assert show(store, lines)["status"] == "reopened"


def test_no_bill_without_an_abatement(service):
    lines = CaseLines("belleville", "B-NB-1")
    message = refused(service, lines.open("belleville:9.07", "2026-05-01T10:00:00-05:00"),
                      lines.cmd("issue_bill", "2026-05-02T10:00:00-05:00"))
    assert "no recorded (and not yet billed) village abatement to bill" in message


def test_a_correction_supersedes_an_earlier_fact_with_a_reason_and_keeps_it(service, store):
    lines = CaseLines("belleville", "B-COR-1")
    run(service, lines.open("belleville:9.07", "2026-05-01T10:00:00-05:00"),
        lines.cmd("correct", "2026-05-02T10:00:00-05:00", supersedes=1,
                  changes={"owner": {"name": "Ann Owner", "mailing_address": "PO Box 5"}},
                  reason="mailing address taken from the tax roll"))
    shown = show(store, lines)
    assert shown["owner"]["mailing_address"] == "PO Box 5"
    assert shown["events"][0]["facts"]["owner"]["mailing_address"].startswith("12 Vine")
    assert shown["events"][1]["facts"]["supersedes"] == 1


def test_a_voided_payment_restores_the_balance(service, store):
    lines = CaseLines("belleville", "B-VOID-1")
    run(service, *dumping_to_bill(lines),
        lines.cmd("record_payment", "2026-03-10T09:00:00-05:00", amount="195.50"))
    assert show(store, lines)["balance"] == "0.00"
    payment = position_of(store, lines, "PaymentReceived")
    run(service, lines.cmd("correct", "2026-03-11T09:00:00-05:00", supersedes=payment,
                           changes={"void": True}, reason="cheque returned unpaid"))
    assert show(store, lines)["balance"] == "195.50"


def test_case_as_of_a_past_business_time_shows_it_as_it_stood(service, store):
    lines = CaseLines("belleville", "B-ASOF-1")
    run(service, *dumping_to_bill(lines))
    import datetime as dt

    before_bill = show(store, lines, as_of=dt.datetime.fromisoformat("2026-03-06T00:00:00-06:00"))
    assert before_bill["status"] == "abated" and before_bill["balance"] == "0.00"
    before_open = show(store, lines, as_of=dt.datetime.fromisoformat("2026-03-01T00:00:00-06:00"))
    assert before_open["exists"] is False


# ---------------------------------------------------------------- found while writing the demo


def test_the_notice_mailed_after_a_hazard_abatement_starts_no_new_cure_period(service, store):
    snow = CaseLines("belleville", "B-SNOW-6")
    run(service,
        snow.open("belleville:9.09", "2026-02-02T07:00:00-06:00"),
        snow.cmd("declare_hazard", "2026-02-02T07:10:00-06:00", description="ice", nobody_reachable=True),
        snow.cmd("record_abatement", "2026-02-02T08:00:00-06:00",
                 costs=[{"item": "salt", "amount": "60.00"}], without_notice_reason="hazard_nobody_reachable"),
        snow.cmd("serve_notice", "2026-02-02T12:00:00-06:00", method="first_class_mail",
                 served_on="owner's last known address"))
    shown = show(store, snow)
    assert shown["cure_deadline"] is None
    assert deadline(shown, "notice_after_abatement")["state"] == "cancelled"


def test_village_abatement_before_36_hours_cancels_the_forfeiture_step(service, store):
    snow = CaseLines("belleville", "B-SNOW-7")
    run(service,
        snow.open("belleville:9.09", "2026-02-02T07:00:00-06:00", snow_ended_at="2026-02-02T06:00:00-06:00"),
        snow.cmd("declare_hazard", "2026-02-02T07:10:00-06:00", description="ice", nobody_reachable=True),
        snow.cmd("record_abatement", "2026-02-02T08:00:00-06:00",
                 costs=[{"item": "salt", "amount": "60.00"}], without_notice_reason="hazard_nobody_reachable"),
        clock("belleville", "2026-02-04T00:00:00-06:00"))
    assert deadline(show(store, snow), "forfeiture_period_started")["state"] == "cancelled"


def test_a_reopened_case_moves_on_with_a_new_notice_and_cannot_be_reopened_back_in_time(service, store):
    lines = CaseLines("belleville", "B-RO-1")
    run(service, lines.open("belleville:9.07", "2026-05-01T10:00:00-05:00"),
        lines.cmd("close_case", "2026-05-02T10:00:00-05:00", reason="complied"))
    assert "before the last fact" in refused(
        service, lines.cmd("reopen_case", "2026-05-01T12:00:00-05:00", reason="x"))
    run(service, lines.cmd("reopen_case", "2026-05-03T10:00:00-05:00", reason="back again"),
        lines.cmd("serve_notice", "2026-05-03T11:00:00-05:00", method="personal", served_on="Owner"),
        clock("belleville", "2026-05-05T00:00:00-05:00"))
    assert show(store, lines)["status"] == "cure_period_passed"


def test_a_grading_bill_goes_to_the_permittee_not_the_lot_owner(service, store):
    lines = CaseLines("belleville", "B-GRADE-2")
    run(service, *grading_through_bill(lines))
    assert show(store, lines)["charge"]["bill_to"]["name"] == "Builder Co"


def test_certification_needs_an_eligible_charge_and_respects_the_november_15_cut_off(service, store):
    early = CaseLines("belleville", "B-CERT-1")
    assert "not eligible for the tax roll until 2026-04-08 23:59 CDT" in refused(
        service, *dumping_to_bill(early),
        early.cmd("certify_charge", "2026-03-20T10:00:00-05:00", tax_year=2026))
    late = CaseLines("belleville", "B-CERT-2")
    commands = [
        late.open("belleville:9.13", "2026-10-01T09:00:00-05:00"),
        late.cmd("serve_notice", "2026-10-01T10:00:00-05:00", method="personal", served_on="O"),
        late.cmd("record_abatement", "2026-10-05T10:00:00-05:00", costs=[{"item": "crew", "amount": "80.00"}]),
        late.cmd("issue_bill", "2026-10-20T10:00:00-05:00"),  # eligible 2026-11-19, after Nov 15
    ]
    message = refused(service, *commands,
                      late.cmd("certify_charge", "2026-11-25T10:00:00-06:00", tax_year=2026))
    assert "after the 11-15 cut-off: it goes on the 2027 roll, not 2026" in message
    run(service, *commands, late.cmd("certify_charge", "2026-11-25T10:00:00-06:00", tax_year=2027))
    shown = show(store, late)
    assert shown["status"] == "certified" and shown["charge"]["certified"]["tax_year"] == 2027


def test_a_voided_payment_reopens_what_the_payment_had_closed(service, store):
    lines = CaseLines("belleville", "B-VOID-2")
    # Positions: Opened, NoticeServed, DeadlinePassed (cure, before the abatement),
    # AbatementRecorded, BillIssued, PaymentReceived.
    run(service, *dumping_to_bill(lines),
        lines.cmd("record_payment", "2026-03-10T09:00:00-05:00", amount="195.50"),
        lines.cmd("correct", "2026-03-11T09:00:00-05:00", supersedes=6, changes={"void": True},
                  reason="cheque returned unpaid"))
    shown = show(store, lines)
    assert shown["status"] == "billed"
    assert deadline(shown, "tax_roll_eligible")["state"] == "open"


def test_a_correction_is_checked_like_the_original_fact(service):
    lines = CaseLines("belleville", "B-COR-2")
    message = refused(service, lines.open("belleville:9.07", "2026-05-01T10:00:00-05:00"),
                      lines.cmd("correct", "2026-05-02T10:00:00-05:00", supersedes=1,
                                changes={"parcel": {"county": "Dane", "number": "12345"}},
                                reason="typo"))
    assert "field changes.parcel: parcel number '12345' does not match the Dane County format" in message
    message = refused(service, lines.open("belleville:9.07", "2026-05-01T10:00:00-05:00"),
                      lines.cmd("correct", "2026-05-02T10:00:00-05:00", supersedes=1,
                                changes={"owner": "Bob"}, reason="typo"))
    assert "field changes.owner" in message


def test_cure_days_are_refused_where_the_rule_sets_the_period(service):
    lines = CaseLines("belleville", "B-CD-1")
    message = refused(service, lines.open("belleville:9.07", "2026-05-01T10:00:00-05:00"),
                      lines.cmd("serve_notice", "2026-05-01T11:00:00-05:00", method="personal",
                                served_on="Owner", cure_days=5))
    assert "cure_days is only given where the rule leaves the time to the notice" in message


def test_belleville_9_13_7_appeal_decision_is_due_30_days_after_the_boards_next_meeting(service, store):
    lines = CaseLines("belleville", "B-DUMP-30")
    run(service, *dumping_to_bill(lines),
        lines.cmd("file_appeal", "2026-03-12T09:00:00-05:00", grounds="not mine",
                  board_meeting_on="2026-04-06"),
        clock("belleville", "2026-05-08T00:00:00-05:00"))
    decision = deadline(show(store, lines), "appeal_decision")
    assert (decision["due_at"], decision["state"]) == ("2026-05-06T23:59:59-05:00", "passed")
    assert "appeal decision overdue" in decision["consequence"]


def test_an_appeal_without_a_known_meeting_puts_the_hearing_on_the_worklist_until_decided(service, store):
    lines = CaseLines("belleville", "B-DUMP-31")
    run(service, *dumping_to_bill(lines),
        lines.cmd("file_appeal", "2026-03-12T09:00:00-05:00", grounds="not mine"))
    hearing = deadline(show(store, lines), "appeal_hearing")
    assert hearing["needs_person"] is True and hearing["state"] == "open"
    run(service, lines.cmd("decide_appeal", "2026-04-20T19:00:00-05:00", outcome="upheld"))
    shown = show(store, lines)
    assert deadline(shown, "appeal_hearing")["state"] == "cancelled"
    assert shown["balance"] == "0.00" and shown["status"] == "paid"

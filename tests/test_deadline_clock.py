"""The deadline clock: hours, calendar days and business days in America/Chicago."""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from cases.rules.catalog import Period
from cases.rules.clock import deadline_after, is_business_day

CHICAGO = ZoneInfo("America/Chicago")


def local(*args) -> dt.datetime:
    return dt.datetime(*args, tzinfo=CHICAGO)


@pytest.mark.parametrize(
    ("citation", "start", "period", "expected"),
    [
        ("Belleville § 9.09(1) snow: 24 h after the snow stops",
         local(2026, 1, 10, 6, 0), Period(amount=24, unit="hours"), local(2026, 1, 11, 6, 0)),
        ("Belleville § 9.09(2)(b) hazard: 2 h from delivery",
         local(2026, 1, 10, 23, 30), Period(amount=2, unit="hours"), local(2026, 1, 11, 1, 30)),
        ("Mazomanie § 360-10 snow: 48 h after the snow stops",
         local(2026, 2, 27, 18, 0), Period(amount=48, unit="hours"), local(2026, 3, 1, 18, 0)),
        ("Belleville § 9.13(2) dumping: 72 h from notice delivery",
         local(2026, 3, 2, 10, 0), Period(amount=72, unit="hours"), local(2026, 3, 5, 10, 0)),
        # Spring forward (2026-03-08 02:00 CST -> 03:00 CDT): 24 real hours end an hour later on the wall clock.
        ("Belleville § 9.07(4) obstruction: 24 h across spring DST change",
         local(2026, 3, 7, 12, 0), Period(amount=24, unit="hours"), local(2026, 3, 8, 13, 0)),
        # Fall back (2026-11-01 02:00 CDT -> 01:00 CST): 24 real hours end an hour earlier on the wall clock.
        ("Mazomanie § 360-8 obstruction: 24 h across fall DST change",
         local(2026, 10, 31, 12, 0), Period(amount=24, unit="hours"), local(2026, 11, 1, 11, 0)),
        ("Belleville § 9.07(6) bill: 10 calendar days from receipt, end of the local day",
         local(2026, 3, 9, 15, 0), Period(amount=10, unit="calendar_days"), local(2026, 3, 19, 23, 59, 59)),
        ("Belleville § 9.13(4) bill: 30 days of billing across the DST change",
         local(2026, 3, 1, 9, 0), Period(amount=30, unit="calendar_days"), local(2026, 3, 31, 23, 59, 59)),
        ("Belleville § 9.09(7) tax roll: 60 days after cost incurred",
         local(2026, 1, 12, 14, 0), Period(amount=60, unit="calendar_days"), local(2026, 3, 13, 23, 59, 59)),
        ("Belleville § 9.24 grading: 30 days after receipt of the certified-mail notice",
         local(2026, 10, 20, 9, 0), Period(amount=30, unit="calendar_days"), local(2026, 11, 19, 23, 59, 59)),
        # Business days skip weekends and Wisconsin holidays: Wed 2026-11-25 + 2 business days
        # skips Thanksgiving (Thu 26th): Fri 27th is the first, Mon 30th the second.
        ("business days skip Thanksgiving and the weekend",
         local(2026, 11, 25, 10, 0), Period(amount=2, unit="business_days"), local(2026, 11, 30, 23, 59, 59)),
        ("business days skip Christmas Eve and Christmas (Wisconsin state holidays)",
         local(2026, 12, 23, 10, 0), Period(amount=1, unit="business_days"), local(2026, 12, 28, 23, 59, 59)),
        ("Belleville § 9.06(6) two business days before work, over a weekend",
         local(2026, 6, 5, 10, 0), Period(amount=2, unit="business_days"), local(2026, 6, 9, 23, 59, 59)),
    ],
)
def test_deadline_is_computed_as_the_section_gives(citation, start, period, expected):
    assert deadline_after(start, period, CHICAGO) == expected


def test_twenty_four_hours_across_spring_forward_are_twenty_four_real_hours():
    start = local(2026, 3, 7, 12, 0)
    end = deadline_after(start, Period(amount=24, unit="hours"), CHICAGO)
    assert end.astimezone(dt.timezone.utc) - start.astimezone(dt.timezone.utc) == dt.timedelta(hours=24)
    assert end.astimezone(CHICAGO).hour == 13


def test_a_utc_start_is_converted_to_the_local_day_before_counting_days():
    # 2026-01-15 03:00 UTC is still 2026-01-14 (21:00) in Chicago.
    start = dt.datetime(2026, 1, 15, 3, 0, tzinfo=dt.timezone.utc)
    end = deadline_after(start, Period(amount=1, unit="calendar_days"), CHICAGO)
    assert end == local(2026, 1, 15, 23, 59, 59)


def test_naive_start_is_refused():
    with pytest.raises(ValueError, match="timezone-aware"):
        deadline_after(dt.datetime(2026, 1, 1), Period(amount=1, unit="hours"), CHICAGO)


@pytest.mark.parametrize(
    ("day", "business"),
    [
        (dt.date(2026, 12, 25), False),  # Christmas
        (dt.date(2026, 12, 26), False),  # Saturday
        (dt.date(2026, 12, 28), True),   # Monday
        (dt.date(2026, 7, 3), False),    # Independence Day observed (July 4 is a Saturday)
        (dt.date(2026, 11, 26), False),  # Thanksgiving
    ],
)
def test_wisconsin_business_days(day, business):
    assert is_business_day(day) is business

"""The case's frozen values: ``replace`` (the fast copy views apply for most events) gives
what ``dataclasses.replace`` gives, and refuses a field the value does not have."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from cases.domain.values import Deadline, LastFact, replace

AT = dt.datetime(2026, 3, 2, 15, tzinfo=dt.timezone.utc)
DEADLINE = Deadline(name="cure", due_at=AT, consequence="village may abate",
                    rule="belleville:9.13", rule_version=1, citation="Belleville § 9.13(2)",
                    needs_person=False, set_by=3)


def test_replace_gives_what_the_library_gives_and_leaves_the_original_alone():
    passed = replace(DEADLINE, state="passed", passed_by=7)
    assert passed == dataclasses.replace(DEADLINE, state="passed", passed_by=7)
    assert type(passed) is Deadline and passed.as_dict()["state"] == "passed"
    assert DEADLINE.state == "open" and DEADLINE.passed_by is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        passed.state = "open"  # type: ignore[misc]


def test_replace_refuses_a_field_the_value_does_not_have():
    with pytest.raises(TypeError, match="LastFact has no field 'state'"):
        replace(LastFact(position=1, type="CaseOpened", at=AT), state="passed")


def test_replace_of_another_dataclass_is_the_librarys():
    @dataclasses.dataclass(frozen=True)
    class Other:
        a: int

    assert replace(Other(1), a=2) == Other(2)

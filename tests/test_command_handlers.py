"""Every command the journal knows is decided by exactly one handler of the case service."""

from __future__ import annotations

from cases import commands as c
from cases.application import HANDLERS


def test_every_command_on_a_case_has_a_handler_and_no_handler_is_for_an_unknown_command():
    known = set(c.Command.__origin__.__args__)  # type: ignore[attr-defined]
    not_on_one_case = {c.OpenCase, c.AdvanceClock}
    assert set(HANDLERS) == known - not_on_one_case

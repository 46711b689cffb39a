"""Every command the journal knows is decided by exactly one handler of the case service."""

from __future__ import annotations

from cases import commands as c
from cases.application import HANDLERS


def test_every_command_on_a_case_has_a_handler_and_no_handler_is_for_an_unknown_command():
    known = set(c.Command.__origin__.__args__)  # type: ignore[attr-defined]
    not_on_one_case = {c.OpenCase, c.AdvanceClock}
    assert set(HANDLERS) == known - not_on_one_case


def test_a_correction_of_several_fields_stores_them_in_the_order_given():
    """The changes were kept in a set's order, which differs between runs (string hashing
    is seeded per process), and so did the stored bytes and the seals over them."""
    import datetime as dt
    from zoneinfo import ZoneInfo

    from cases.application import CaseService
    from cases.store import CaseStore

    store = CaseStore("memory://")
    try:
        service = CaseService(store)
        changes = {"site_address": "14 Vine St", "description": "dumped tires",
                   "owner": {"name": "Ann Owner"}}
        picked = service._validated_changes(None, changes, ZoneInfo("America/Chicago"),
                                            dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc))
        assert list(picked) == list(changes)
        reordered = dict(reversed(list(changes.items())))
        assert list(service._validated_changes(
            None, reordered, ZoneInfo("America/Chicago"),
            dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc))) == list(reordered)
    finally:
        store.close()

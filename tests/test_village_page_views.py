"""What the village pages read, on each backend: cases opened and closed per month
(view case_months, a reopening clearing the close), charges certified per year and
county, and the repeat offenders of the trailing 12 months as of a date."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from cases.rules.clock import end_of_local_day
from projections.certified_totals import certified_totals
from projections.repeat_listing import repeat_listing
from tests.builders import CaseLines, as_lines, dumping_through_bill
from tests.conftest import NOW

CHICAGO = ZoneInfo("America/Chicago")
OTHER_PARCEL = {"county": "Dane", "number": "0509-123-4567-1"}


def _journal() -> list[str]:
    billed = CaseLines("belleville", "B-1")  # opened 2 March, billed, certified for 2026
    closed = CaseLines("belleville", "B-2")  # opened 31 March 23:30 local: March, not April
    reopened = CaseLines("belleville", "B-3")  # closed, reopened, closed again in June
    later = CaseLines("belleville", "B-4")  # another parcel, noticed in May
    return as_lines(
        *dumping_through_bill(billed),
        closed.open("belleville:9.13", "2026-03-31T23:30:00-05:00"),
        closed.cmd("serve_notice", "2026-04-01T10:00:00-05:00", method="personal",
                   served_on="Ann"),
        closed.cmd("close_case", "2026-04-20T10:00:00-05:00", reason="complied"),
        reopened.open("belleville:9.13", "2026-04-02T09:00:00-05:00"),
        reopened.cmd("close_case", "2026-04-03T09:00:00-05:00", reason="unfounded: no junk"),
        reopened.cmd("reopen_case", "2026-05-04T09:00:00-05:00", reason="it was junk"),
        reopened.cmd("close_case", "2026-06-05T09:00:00-05:00", reason="complied"),
        later.open("belleville:9.13", "2026-05-06T09:00:00-05:00", parcel=OTHER_PARCEL,
                   owner={"name": "Rex  REPEAT"}),
        later.cmd("serve_notice", "2026-05-06T10:00:00-05:00", method="personal",
                  served_on="Rex"),
        billed.cmd("certify_charge", "2026-11-02T09:00:00-06:00", tax_year=2026),
    )


def test_the_pages_views_on_each_backend(views):
    store, runner, service = views
    service.import_journal(_journal(), now=NOW)
    runner.catch_up()
    with runner.engine.connect() as conn:
        months = runner.active("case_months").per_month(
            conn, municipality="belleville", first_month="2026-01", last_month="2026-12")
        family = next(iter(months["opened"]))[1]
        assert dict(months["opened"]) == {("2026-03", family): 2, ("2026-04", family): 1,
                                          ("2026-05", family): 1}
        assert dict(months["closed"]) == {("2026-04", family): 1, ("2026-06", family): 1}
        narrow = runner.active("case_months").per_month(
            conn, municipality="belleville", first_month="2026-04", last_month="2026-04")
        assert dict(narrow["opened"]) == {("2026-04", family): 1}

        assert certified_totals(runner.active("tax_roll"), conn, municipality="belleville") \
            == [{"tax_year": 2026, "county": "Dane", "charges": 1, "amount": "150.00"}]
        assert certified_totals(runner.active("tax_roll"), conn, municipality="mazomanie") == []

        def listing(day: str, at_least: int = 1) -> dict:
            on = dt.date.fromisoformat(day)
            return repeat_listing(runner.active("repeat_offenses"), conn,
                                  municipality="belleville", as_of=on, at_least=at_least,
                                  known_by=end_of_local_day(on, CHICAGO))

        found = listing("2026-12-01")
        parcels = {(p["parcel_number"], p["rule_family"]): p for p in found["parcels"]}
        # B-1 and B-2 (noticed); B-3 was never substantiated (closed unfounded, no notice)
        assert parcels[("0509-123-4567-0", family)]["case_refs"] == ["B-1", "B-2"]
        assert parcels[("0509-123-4567-1", family)]["count"] == 1
        assert found["parcels"][0]["count"] == 2  # most first
        assert {p["party"] for p in found["parties"]} >= {"rex repeat"}
        assert found["window_start"] == "2025-12-01"
        assert found["parcels_left_out"] == 0
        repeats = listing("2026-12-01", at_least=2)  # B-4's parcel (one) is left out, counted
        assert [p["case_refs"] for p in repeats["parcels"]] == [["B-1", "B-2"]]
        assert repeats["parcels_left_out"] == len(found["parcels"]) - 1
        assert repeats["parties_left_out"] == sum(p["count"] < 2 for p in found["parties"])
        before = listing("2026-03-15")  # B-2's notice is not yet served
        assert [p["case_refs"] for p in before["parcels"]] == [["B-1"]]
        later = listing("2027-04-01")  # window from 1 April 2026: B-2 (31 March) is out
        assert [(p["parcel_number"], p["case_refs"]) for p in later["parcels"]] == [
            ("0509-123-4567-1", ["B-4"])]
        assert listing("2027-06-01")["parcels"] == []  # all older than 12 months

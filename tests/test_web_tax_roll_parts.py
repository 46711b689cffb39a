"""The tax-roll page shows its charges a page at a time (in-process, with pages of 2
instead of 100 so that five charges fill three): the heading and the totals count the whole
list, the links keep the tax year, and walking them shows every charge once."""

from __future__ import annotations

import re

import pytest

from tests.api_kit import HOME, earlier, make_api, page_section
from tests.builders import CaseLines, as_lines, dumping_through_bill
from tests.conftest import NOW

REFS = [f"T-{n}" for n in range(5)]


@pytest.fixture
def billed(tmp_path):
    """A store of five billed Belleville charges (REFS), unpaid."""
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    lines = [line for ref in REFS for line in dumping_through_bill(CaseLines(HOME, ref))]
    api.services.cases.import_journal(as_lines(*lines), NOW)
    yield api
    api.services.close()


@pytest.fixture
def signed_in(billed, monkeypatch):
    monkeypatch.setattr("api.web.tax_roll.CHARGE_ROWS", 2)
    return billed.pages("clerk")


def test_the_charges_page_alone_with_the_whole_lists_totals(signed_in):
    first = signed_in.get(f"/{HOME}/tax-roll", params={"tax_year": 2026})
    assert first.status_code == 200, first.text[:2000]
    assert '<dd id="total-charges">5</dd>' in first.text  # the whole list's totals
    part = page_section(first.text, "charges")
    assert 'Charges <span class="count">(5)</span>' in part and "1–2 of 5" in part
    seen, offset = [], 0
    while True:
        shown = signed_in.get(f"/{HOME}/tax-roll", params={"tax_year": 2026, "offset": offset})
        part = page_section(shown.text, "charges")
        seen += re.findall(r'<a href="/belleville/cases/(T-\d)">', part)
        assert '<dd id="total-charges">5</dd>' in shown.text
        following = re.search(r'href="\?([^"]+)#charges" rel="next"', part)
        if not following:
            break
        link = following.group(1).replace("&amp;", "&")
        assert link.startswith("tax_year=2026&section=charges&offset=")
        offset = int(link.rsplit("=", 1)[1])
    assert sorted(seen) == REFS and len(seen) == len(set(seen))
    past = signed_in.get(f"/{HOME}/tax-roll", params={"tax_year": 2026, "offset": 40})
    assert "back to the first 2" in page_section(past.text, "charges")


@pytest.fixture
def late_payments(billed, monkeypatch):
    """Five charges certified, then each paid (a payment after certification)."""
    monkeypatch.setattr("api.web.tax_roll.LATE_ROWS", 2)
    api = billed
    roll = f"/api/v1/{HOME}/tax-roll"
    done = api.client.post(f"{roll}/certify", json={"tax_year": 2026, "county": "Dane"},
                           headers=api.as_("clerk"))
    assert done.status_code == 200, done.text
    for n, ref in enumerate(REFS):
        paid = api.client.post(f"/api/v1/{HOME}/cases/{ref}/record_payment",
                               json={"at": earlier(0), "amount": f"{10 + n}.00"},
                               headers=api.as_("clerk"))
        assert paid.status_code == 200, paid.text
    return api


def test_payments_after_certification_come_a_page_at_a_time_at_each_door(late_payments):
    api = late_payments
    pages = api.pages("clerk")
    seen, offset = [], 0
    while offset is not None:
        shown = pages.get(f"/{HOME}/tax-roll", params={"tax_year": 2026,
                                                      "section": "reconcile", "offset": offset})
        assert shown.status_code == 200, shown.text[:2000]
        part = page_section(shown.text, "reconcile")
        assert "Payments after certification" in part and "(5)" in part
        assert "Dane County $60.00" in part  # every payment, whatever the page
        rows = re.findall(r'<td class="unbroken">(T-\d)</td>', part)
        assert 1 <= len(rows) <= 2
        seen += rows
        following = re.search(r'section=reconcile&amp;offset=(\d+)#reconcile" rel="next"', part)
        offset = int(following.group(1)) if following else None
    assert sorted(seen) == REFS and len(seen) == len(REFS)
    charges = page_section(pages.get(f"/{HOME}/tax-roll", params={
        "tax_year": 2026, "section": "reconcile", "offset": 2}).text, "charges")
    assert len(re.findall(r'<a href="/belleville/cases/(T-\d)">', charges)) == 5  # from its first
    assert pages.get(f"/{HOME}/tax-roll", params={"tax_year": 2026,
                                                  "section": "nope"}).status_code == 404

    roll = f"/api/v1/{HOME}/tax-roll/reconcile"
    first = api.client.get(roll, params={"tax_year": 2026, "limit": 2},
                           headers=api.as_("auditor")).json()
    assert (first["total"], first["next_offset"], len(first["payments_after_certification"])) \
        == (5, 2, 2)
    assert first["to_credit_or_refund_by_county"] == {"Dane": "60.00"}
    last = api.client.get(roll, params={"tax_year": 2026, "limit": 2, "offset": 4},
                          headers=api.as_("auditor")).json()
    assert len(last["payments_after_certification"]) == 1 and last["next_offset"] is None
    every = api.client.get(roll, params={"tax_year": 2026}, headers=api.as_("auditor")).json()
    assert every["payments_after_certification"] == \
        first["payments_after_certification"] + api.client.get(roll, params={
            "tax_year": 2026, "limit": 3, "offset": 2},
            headers=api.as_("auditor")).json()["payments_after_certification"]

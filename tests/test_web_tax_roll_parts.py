"""The tax-roll page shows its charges a page at a time (in-process, with pages of 2
instead of 100 so that five charges fill three): the heading and the totals count the whole
list, the links keep the tax year, and walking them shows every charge once."""

from __future__ import annotations

import re

import pytest

from tests.api_kit import HOME, make_api, page_section
from tests.builders import CaseLines, as_lines, dumping_through_bill
from tests.conftest import NOW

REFS = [f"T-{n}" for n in range(5)]


@pytest.fixture
def signed_in(tmp_path, monkeypatch):
    monkeypatch.setattr("api.web.tax_roll.CHARGE_ROWS", 2)
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    lines = [line for ref in REFS for line in dumping_through_bill(CaseLines(HOME, ref))]
    api.services.cases.import_journal(as_lines(*lines), NOW)
    yield api.pages("clerk")
    api.services.close()


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

"""The worklist page shows each part a page at a time (in-process, with parts of 2 rows
instead of 50 so that a few cases fill several): the heading counts the whole part, the
links page that part alone, and walking them shows every row once."""

from __future__ import annotations

import re

import pytest

from tests.api_kit import HOME, make_api, open_body, page_section

REFS = [f"B-P{n}" for n in range(1, 6)]


@pytest.fixture
def signed_in(tmp_path, monkeypatch):
    monkeypatch.setattr("api.web.worklist.SECTION_ROWS", 2)
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    for ref in REFS:  # a § 9.13 case opened without a notice: its notice is to serve
        done = api.client.post(f"/api/v1/{HOME}/cases", json=open_body(ref, days_ago=5),
                               headers=api.as_("clerk"))
        assert done.status_code == 201, done.text
    yield api.pages("inspector")
    api.services.close()



def _cases(part: str) -> list[str]:
    return re.findall(r'<a href="/belleville/cases/([^"]+)">', part)


def test_each_part_pages_alone_and_every_row_is_shown_once(signed_in):
    first = signed_in.get(f"/{HOME}/")
    assert first.status_code == 200, first.text[:2000]
    overdue = page_section(first.text, "overdue")
    assert f"Overdue <span class=\"count\">({len(REFS)})</span>" in overdue
    assert len(_cases(overdue)) == 2 and "1–2 of 5" in overdue
    seen, offset = [], 0
    while True:
        shown = signed_in.get(f"/{HOME}/", params={"section": "overdue", "offset": offset})
        part = page_section(shown.text, "overdue")
        seen += _cases(part)
        # the other parts start from their beginning whatever page this one is on
        assert page_section(shown.text, "deadlines") == page_section(first.text, "deadlines")
        following = re.search(r'offset=(\d+)#overdue" rel="next"', part)
        if not following:
            break
        offset = int(following.group(1))
    assert sorted(seen) == REFS and len(seen) == len(set(seen))
    assert 'rel="prev"' in part


def test_an_unknown_part_is_a_404_page_and_a_page_past_the_end_leads_back(signed_in):
    unknown = signed_in.get(f"/{HOME}/", params={"section": "nothing"})
    assert unknown.status_code == 404 and "the worklist has no part" in unknown.text
    past = signed_in.get(f"/{HOME}/", params={"section": "overdue", "offset": 40})
    assert "back to the first 2" in page_section(past.text, "overdue")

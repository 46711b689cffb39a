"""A case page shows its timeline a page at a time (in-process, with pages of 2 events
instead of 50 so that a short case fills several): the heading counts every event, the
links page the timeline alone, walking them shows each event once, and a correction links
to the page that shows the event it corrects."""

from __future__ import annotations

import re

import pytest

from tests.api_kit import HOME, make_api
from tests.builders import CaseLines, as_lines
from tests.conftest import NOW

CASE = "TL-1"


@pytest.fixture
def signed_in(tmp_path, monkeypatch):
    monkeypatch.setattr("api.web.cases.TIMELINE_ROWS", 2)
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    case = CaseLines(HOME, CASE)
    lines = [case.open("belleville:9.13", "2026-05-01T09:00:00-05:00")]
    lines += [case.cmd("record_inspection", f"2026-05-0{n}T10:00:00-05:00",
                       findings=f"visit {n}") for n in range(2, 6)]
    lines.append(case.cmd("correct", "2026-05-06T09:00:00-05:00", supersedes=2,
                          changes={"findings": "visit 2, the shed too"}, reason="notes"))
    api.services.cases.import_journal(as_lines(*lines), NOW)
    yield api.pages("inspector")
    api.services.close()


def _positions(html: str) -> list[int]:
    return [int(p) for p in re.findall(r'<li id="event-(\d+)"', html)]


def test_the_timeline_pages_alone_and_every_event_is_shown_once(signed_in):
    first = signed_in.get(f"/{HOME}/cases/{CASE}")
    assert first.status_code == 200, first.text[:2000]
    assert "Timeline (6 events)" in first.text and "1–2 of 6" in first.text
    assert _positions(first.text) == [1, 2]
    seen, offset = [], 0
    while offset is not None:
        shown = signed_in.get(f"/{HOME}/cases/{CASE}",
                              params={"section": "timeline", "offset": offset})
        assert shown.status_code == 200
        seen += _positions(shown.text)
        found = re.search(r'href="\?section=timeline&amp;offset=(\d+)#timeline" rel="next"',
                          shown.text)
        offset = int(found.group(1)) if found else None
    assert seen == [1, 2, 3, 4, 5, 6]
    # the correction (event 6, on the last page) links to the first page, which shows event 2
    last = signed_in.get(f"/{HOME}/cases/{CASE}", params={"section": "timeline", "offset": 4})
    assert 'href="?section=timeline&amp;offset=0#event-2"' in last.text
    assert "Corrected by event 6" in first.text
    past = signed_in.get(f"/{HOME}/cases/{CASE}", params={"section": "timeline", "offset": 40})
    assert past.status_code == 200 and _positions(past.text) == []
    assert "No more here" in past.text


def test_a_part_the_case_page_has_not_is_404(signed_in):
    answer = signed_in.get(f"/{HOME}/cases/{CASE}", params={"section": "nothing"})
    assert answer.status_code == 404
    assert "no part &#39;nothing&#39;" in answer.text

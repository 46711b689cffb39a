"""The audit page shows a case's history and the store's seals a page at a time
(in-process, with pages of 2 events and 1 seal so that a short case and a few seals fill
several): the headings count them all, seals come newest first, and each part's links page
it alone and keep the dates the auditor asked for."""

from __future__ import annotations

import re

import pytest

from cases.seals import seal_store
from tests.api_kit import HOME, make_api
from tests.builders import CaseLines, as_lines
from tests.conftest import NOW

CASE = "AU-1"
ASKED = {"as_of": "2026-05-20"}


@pytest.fixture
def signed_in(tmp_path, monkeypatch):
    monkeypatch.setattr("api.web.audit.HISTORY_ROWS", 2)
    monkeypatch.setattr("api.web.audit.SEAL_ROWS", 1)
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    case = CaseLines(HOME, CASE)
    visits = [case.cmd("record_inspection", f"2026-05-0{n}T10:00:00-05:00",
                       findings=f"visit {n}") for n in range(2, 5)]
    api.services.cases.import_journal(as_lines(case.open(
        "belleville:9.13", "2026-05-01T09:00:00-05:00")), NOW)
    for visit in visits:  # a seal after each: three seals
        api.services.cases.import_journal(as_lines(visit), NOW)
        seal_store(api.services.store, "clerk.belleville", "after a visit")
    yield api.pages("auditor")
    api.services.close()


def _part(html: str, key: str) -> str:
    start = html.index(f'<section aria-labelledby="{key}">')
    return html[start:html.index("</section>", start)]


def _walk(client, key: str, pattern: str) -> list[str]:
    seen, offset = [], 0
    while offset is not None:
        shown = client.get(f"/{HOME}/audit/cases/{CASE}",
                           params={**ASKED, "section": key, "offset": offset})
        assert shown.status_code == 200, shown.text[:2000]
        part = _part(shown.text, key)
        seen += re.findall(pattern, part)
        found = re.search(rf'href="\?as_of=2026-05-20&amp;section={key}&amp;offset=(\d+)#{key}" '
                          r'rel="next"', part)
        offset = int(found.group(1)) if found else None
    return seen


def test_history_and_seals_page_alone_keeping_the_date(signed_in):
    first = signed_in.get(f"/{HOME}/audit/cases/{CASE}", params=ASKED)
    assert first.status_code == 200, first.text[:2000]
    assert "History <span class=\"count\">(4 events)</span>" in first.text
    assert "Seals <span class=\"count\">(3)</span>" in first.text
    assert _walk(signed_in, "history", r"<tr>\s*<td>(\d+)</td>") == ["1", "2", "3", "4"]
    assert _walk(signed_in, "seals", r"<tr><td>(\d+)</td>") == ["3", "2", "1"]  # newest first


def test_a_part_the_audit_page_has_not_or_a_bad_offset_is_refused(signed_in):
    assert signed_in.get(f"/{HOME}/audit/cases/{CASE}",
                         params={"section": "other"}).status_code == 404
    assert signed_in.get(f"/{HOME}/audit/cases/{CASE}",
                         params={"section": "seals", "offset": "-1"}).status_code == 422


def test_the_whole_store_is_checked_only_when_the_auditor_asks(signed_in, monkeypatch):
    calls = []
    import api.web.audit as audit

    real = audit.integrity_report
    monkeypatch.setattr(audit, "integrity_report",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    shown = signed_in.get(f"/{HOME}/audit/cases/{CASE}", params=ASKED)
    assert shown.status_code == 200 and calls == []
    assert 'href="?as_of=2026-05-20&amp;check=1#verify"' in shown.text
    checked = signed_in.get(f"/{HOME}/audit/cases/{CASE}", params={**ASKED, "check": 1})
    assert checked.status_code == 200 and calls == [1]
    assert 'id="verify-result" class="ok"' in checked.text
    odd = signed_in.get(f"/{HOME}/audit/cases/{CASE}", params={**ASKED, "check": "2"})
    assert odd.status_code == 422 and "yes or no (1 or 0)" in odd.text and calls == [1]

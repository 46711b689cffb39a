"""The repeat offenders page shows parcels and parties a page at a time (in-process, with
parts of 2 rows instead of 50 so that a few cases fill several): the heading counts the
whole part, the links page that part alone and keep the date and threshold asked for, and
walking them shows every parcel once."""

from __future__ import annotations

import re

import pytest

from tests.api_kit import HOME, make_api, page_section
from tests.builders import CaseLines, as_lines
from tests.conftest import NOW

PARCELS = [f"0509-123-4567-{n}" for n in range(5)]
AS_OF = "2026-12-01"


def _journal() -> list[str]:
    """One noticed § 9.13 case on each parcel, each owner another person; the first parcel
    and its owner twice (the repeat)."""
    lines = []
    for n, number in enumerate([*PARCELS, PARCELS[0]]):
        case = CaseLines(HOME, f"R-{n}")
        lines += [case.open("belleville:9.13", f"2026-05-0{n + 1}T09:00:00-05:00",
                            parcel={"county": "Dane", "number": number},
                            owner={"name": f"Owner {number[-1]}"}),
                  case.cmd("serve_notice", f"2026-05-0{n + 1}T10:00:00-05:00",
                           method="personal", served_on="the owner")]
    return as_lines(*lines)


@pytest.fixture
def signed_in(tmp_path, monkeypatch):
    monkeypatch.setattr("api.web.repeat_offenders.SECTION_ROWS", 2)
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    api.services.cases.import_journal(_journal(), NOW)
    yield api.pages("inspector")
    api.services.close()



def _parcels(part: str) -> list[str]:
    return re.findall(r'<td class="unbroken">Dane ([^<]+)</td>', part)


def test_parcels_page_alone_keeping_the_date_and_every_parcel_is_shown_once(signed_in):
    asked = {"as_of": AS_OF, "at_least": "1"}
    first = signed_in.get(f"/{HOME}/repeat-offenders", params=asked)
    assert first.status_code == 200, first.text[:2000]
    parcels = page_section(first.text, "parcels")
    assert 'Parcels <span class="count">(5)</span>' in parcels and "1–2 of 5" in parcels
    assert _parcels(parcels)[0] == PARCELS[0]  # the repeat first: most violations first
    seen, offset = [], 0
    while True:
        shown = signed_in.get(f"/{HOME}/repeat-offenders",
                              params={**asked, "section": "parcels", "offset": offset})
        part = page_section(shown.text, "parcels")
        seen += _parcels(part)
        # the parties start from their beginning whatever page the parcels are on
        assert page_section(shown.text, "parties") == page_section(first.text, "parties")
        following = re.search(r'href="\?([^"]+)#parcels" rel="next"', part)
        if not following:
            break
        link = following.group(1).replace("&amp;", "&")
        assert link.startswith(f"as_of={AS_OF}&at_least=1&section=parcels&offset=")
        offset = int(link.rsplit("=", 1)[1])
    assert sorted(seen) == PARCELS and len(seen) == len(set(seen))
    parties = page_section(first.text, "parties")
    assert 'Parties <span class="count">(5)</span>' in parties and 'rel="next"' in parties


def test_a_threshold_counts_what_it_leaves_out_and_a_bad_part_is_a_404(signed_in):
    repeats = signed_in.get(f"/{HOME}/repeat-offenders", params={"as_of": AS_OF})
    parcels = page_section(repeats.text, "parcels")  # at least 2 by default: one parcel
    assert _parcels(parcels) == [PARCELS[0]] and "4 parcels with fewer than 2" in parcels
    unknown = signed_in.get(f"/{HOME}/repeat-offenders", params={"section": "cases"})
    assert unknown.status_code == 404 and "has no part" in unknown.text
    past = signed_in.get(f"/{HOME}/repeat-offenders",
                         params={"as_of": AS_OF, "section": "parcels", "offset": 40})
    assert "back to the first 2" in page_section(past.text, "parcels")

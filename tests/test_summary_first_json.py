"""``abate tax-roll export --format json`` writes its summary before its charges without
holding the list: the bytes must be those ``json.dump(..., indent=2)`` gives for the whole."""

import io
import json

import pytest

from abate.reports import summary_first_json

CHARGE = {"case_ref": "BV-1", "owner": "Zoë Ångström", "amounts": {"total": "150.00"},
          "parts": ["a", {"b": None}], "certified": False}


@pytest.mark.parametrize("count", [0, 1, 3])
def test_the_streamed_answer_is_the_whole_answer_dumped(count):
    charges = [{**CHARGE, "case_ref": f"BV-{n}"} for n in range(count)]
    taken = []

    def info():
        taken.append(len(charges))  # made once every charge has passed
        return {"charges": len(charges), "note": "§ 66.0627", "by_county": {"Dane": count}}

    out = io.StringIO()
    summary_first_json(iter(charges), info, out)
    expected = io.StringIO()
    json.dump({"summary": info(), "charges": charges}, expected, indent=2, ensure_ascii=False)
    assert out.getvalue() == expected.getvalue() + "\n"
    assert taken[0] == count

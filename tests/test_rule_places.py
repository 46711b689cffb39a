"""The municipalities read from the rule files without the catalog (cases/rules/places.py)
say what the validated catalog says, and leave to it whatever they cannot read plainly."""

from __future__ import annotations

import shutil

import pytest

from cases.deadlines import deadline_names
from cases.errors import UnknownRuleError
from cases.rules import places
from cases.rules.catalog import default_catalog
from cases.rules.files import RULES_DIR


@pytest.mark.parametrize("name", sorted(default_catalog().municipalities))
def test_a_place_read_from_its_file_is_what_the_catalog_says(name):
    catalog = default_catalog().municipality(name)
    place = places.place(name)
    assert isinstance(place, places.Place)  # read from the file, not the catalog
    assert (place.municipality, place.name, place.time_zone, place.counties,
            place.certification_cutoff) == (
        catalog.municipality, catalog.name, catalog.time_zone, catalog.counties,
        catalog.certification_cutoff)
    assert {r.key for r in place.rules} == {r.key for r in catalog.rules}
    assert {r.family for r in place.rules} == {r.family for r in catalog.rules}
    assert deadline_names(place.rules) == deadline_names(catalog.rules)  # the worklist's filter
    assert places.known_place(name)


def test_an_unknown_municipality_gets_the_catalogs_error():
    with pytest.raises(UnknownRuleError) as light:
        places.place("springfield")
    with pytest.raises(UnknownRuleError) as catalog:
        default_catalog().municipality("springfield")
    assert str(light.value) == str(catalog.value)
    assert not places.known_place("springfield")


@pytest.mark.parametrize("breakage", [
    ("time_zone: America/Chicago", "time_zone: [America/Chicago]"),  # not a text
    ("municipality: belleville", "municipality: bellevile"),         # not the file's name
    ("counties:", "countries:"),                                     # missing
    ("rules:", "rules: {}\nold_rules:"),                             # not a list
    ('certification_cutoff: "11-15"', "certification_cutoff: 11-15-2026"),  # not MM-DD
    ("name: Village of Belleville", "name: [unclosed"),              # not YAML
    ("- name: notice_due", "- name: [notice_due]"),                  # a step not named by a text
])
def test_a_file_not_plainly_readable_is_left_to_the_catalog(tmp_path, breakage):
    for path in RULES_DIR.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    old, new = breakage
    path = tmp_path / "belleville.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    assert places._places(tmp_path) is None
    assert places._places(RULES_DIR) is not None

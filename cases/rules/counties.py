"""One check, one text, for a county a person typed: the catalog, the light reader of the
rule files (places.py), the command line's filters and the pages all answer with it."""

from __future__ import annotations

from typing import Any

from cases.errors import UnknownRuleError


def county_named(place: Any, name: str) -> str:
    """The county as the catalog spells it, for a name typed (``dane`` -> ``Dane``): the
    county is the same whatever the capitals. ``place`` is a ``Place`` or the catalog's
    ``Municipality``; one text for a county the village is not in, whichever door asked
    (the CLI's exit 2, the API's 422, the page's error beside the field)."""
    for county in place.counties:
        if county.casefold() == name.casefold():
            return county
    raise UnknownRuleError(f"county {name!r} is not one of the {place.name}'s counties: "
                           f"{', '.join(place.counties)}")

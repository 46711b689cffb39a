"""What a read asks of a municipality without its rule versions: its name, time zone,
counties (with their parcel-number formats), tax-roll cut-off and the keys, families and
escalation steps of its rules.

Argument checks, the case list, the worklist's filters and the tax-roll list need only these;
building the validated catalog
(cases/rules/catalog.py: pydantic and its models) cost them 0.11 s of CPU per command
(docs/benchmarks.md), so they are read here from the rule files as they stand. Anything this
light reading cannot vouch for (a file that cannot be read, a field missing or of the wrong
type, a municipality that is not there) is answered by the catalog itself, so every error
is worded exactly as the catalog words it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from cases.rules.files import RULES_DIR, YAMLError, read_rule_file, rule_files


class Step(NamedTuple):
    """An escalation step as the worklist's deadline filter names it (``notice_due``)."""

    name: str


class RuleName(NamedTuple):
    """A rule as the filters name it (``belleville:9.13``, family ``snow``) and the steps
    that follow by themselves (the deadlines it adds to the worklist)."""

    key: str
    family: str
    escalations: tuple[Step, ...] = ()


@dataclass(frozen=True)
class Place:
    """The parts of ``catalog.Municipality`` a read checks arguments against."""

    municipality: str
    name: str
    time_zone: str
    counties: dict[str, str]  # county name -> parcel-number pattern, as in the file
    certification_cutoff: str  # MM-DD
    rules: tuple[RuleName, ...]


def _place(path: Path) -> Place | None:
    """The file's place, or None when a field the catalog would check is not as expected."""
    data: Any = read_rule_file(path)
    if not isinstance(data, dict):
        return None
    municipality, name, zone = data.get("municipality"), data.get("name"), data.get("time_zone")
    counties, rules = data.get("counties"), data.get("rules")
    cutoff = data.get("certification_cutoff")
    if not all(isinstance(v, str) for v in (municipality, name, zone)) or municipality != path.stem:
        return None
    if not isinstance(cutoff, str) or not re.fullmatch(r"[0-9]{2}-[0-9]{2}", cutoff):
        return None
    if not isinstance(counties, dict) or not counties or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in counties.items()):
        return None
    if not isinstance(rules, list) or not all(
            isinstance(r, dict) and isinstance(r.get("id"), str) and isinstance(r.get("family"), str)
            and _step_names(r) is not None for r in rules):
        return None
    return Place(municipality, name, zone, dict(counties), cutoff,
                 tuple(RuleName(f"{municipality}:{r['id']}", r["family"],
                                tuple(Step(n) for n in _step_names(r))) for r in rules))


def _step_names(rule: dict) -> list[str] | None:
    """The names of the rule's escalation steps, or None when they are not plainly given."""
    steps = rule.get("escalations", [])
    if not isinstance(steps, list) or not all(
            isinstance(s, dict) and isinstance(s.get("name"), str) for s in steps):
        return None
    return [s["name"] for s in steps]


@cache
def _places(directory: Path = RULES_DIR) -> dict[str, Place] | None:
    found = {}
    try:
        for path in rule_files(directory):
            place = _place(path)
            if place is None:
                return None
            found[place.municipality] = place
    except (OSError, YAMLError):
        return None
    return found or None


def known_place(name: str) -> bool:
    """Whether ``name`` is a municipality of the rule files (the catalog decides when they
    cannot be read lightly)."""
    places = _places()
    if places is not None:
        return name in places
    from cases.rules.catalog import default_catalog

    return name in default_catalog().municipalities


def place(name: str) -> Place | Any:
    """The municipality ``name``; the catalog's ``Municipality`` (and its error, naming the
    known ones) when the files do not answer plainly."""
    places = _places()
    if places is not None and name in places:
        return places[name]
    from cases.rules.catalog import default_catalog

    return default_catalog().municipality(name)

"""The village settings file (``ABATE_VILLAGE_SETTINGS``): each village's letterhead address
and phone, kept outside the installed package so an operator never edits the rules files.

Read once at start-up by ``cases.settings`` (only when the setting is given) and checked
here (unknown village, unknown key, wrong type, empty, too long, control characters: one
line naming the file, the village's ``[section]`` and the key). A value given here wins over the rules file's; the catalog takes
it through ``Catalog.with_letterhead`` where a service builds its catalog.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from cases.errors import ConfigurationError
from cases.text_policy import ADDRESS_MAX, PHONE_MAX, one_line



class VillageLetterhead(BaseModel):
    """The letterhead keys a village may set here (the rules file's limits)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    address: one_line(ADDRESS_MAX) | None = None  # type: ignore[valid-type]
    phone: one_line(PHONE_MAX) | None = None  # type: ignore[valid-type]

    def set_values(self) -> dict[str, str]:
        return self.model_dump(exclude_none=True)


def _problem(error: ValidationError) -> tuple[str, str]:
    """(key, what was wrong) of the first problem, in words an operator acts on."""
    item = error.errors()[0]
    key = ".".join(str(part) for part in item["loc"]) or "(section)"
    kind = item["type"]
    if kind == "extra_forbidden":
        return key, "not a setting here (allowed: address, phone)"
    if kind == "string_type":
        return key, "must be a quoted string"
    if kind == "string_too_short":
        return key, "must not be empty"
    if kind == "string_too_long":
        return key, f"must be at most {item['ctx']['max_length']} characters"
    return key, item["msg"].removeprefix("Value error, ")


def read_village_settings(path: Path, villages: Collection[str],
                          setting: str) -> dict[str, dict[str, str]]:
    """Each village's letterhead values from the TOML file at ``path`` (``villages``: the
    ones the rules catalog has; ``setting``: the name that gave the path, for the errors); a
    problem is a ConfigurationError naming file and key.
    (``cases.settings`` imports this module only when the setting is given: pydantic and the
    catalog are not what a read-only command should wait for.)"""
    where = f"{setting}={path}"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigurationError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{where}: cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{where}: not valid TOML: {exc}") from None
    found: dict[str, dict[str, str]] = {}
    for village, values in data.items():
        if not isinstance(values, dict):
            raise ConfigurationError(f"{where}: {village} is outside a village's section "
                                     "(write it under [village], e.g. [belleville])")
        if village not in villages:
            raise ConfigurationError(f"{where}: [{village}] is not a village of the rules "
                                     f"catalog (known: {', '.join(sorted(villages))})")
        try:
            letterhead = VillageLetterhead.model_validate(values)
        except ValidationError as exc:
            key, wrong = _problem(exc)
            raise ConfigurationError(f"{where}: [{village}] {key}: {wrong}") from None
        found[village] = letterhead.set_values()
    return found

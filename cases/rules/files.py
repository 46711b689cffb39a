"""Reading the rule files (``*.yaml`` beside this module).

PyYAML's C loader parses them about ten times faster than its pure-Python one (0.28 s of
every command's start before, docs/benchmarks.md); the pure-Python loader is the fallback
where PyYAML was built without libyaml. The command line also needs the rule families for
its choices before any command runs, so they are read here without validating the catalog
(cases/rules/catalog.py validates it when a command uses it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

RULES_DIR = Path(__file__).parent
# What the files say of a value the ordinance does not give (an interest rate, a fee): here,
# so a read that only compares with it (the tax-roll list) need not load the catalog.
NOT_SET = "not set"
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
YAMLError = yaml.YAMLError


def rule_files(directory: Path = RULES_DIR) -> list[Path]:
    return sorted(directory.glob("*.yaml"))


def read_rule_file(path: Path) -> Any:
    """The parsed file (raises ``YAMLError`` when it is not YAML)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)


def rule_families(directory: Path = RULES_DIR) -> list[str] | None:
    """The families the rule files name, or None when a file cannot be read: the command
    then loads the catalog, which says what is wrong with the file."""
    families = set()
    try:
        for path in rule_files(directory):
            data = read_rule_file(path)
            for rule in data.get("rules") or []:
                families.add(rule["family"])
    except (OSError, YAMLError, AttributeError, TypeError, KeyError):
        return None
    return sorted(families)

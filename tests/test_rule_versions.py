"""A case uses the rule version in force on its violation date; a new version changes no old case."""

import shutil
from pathlib import Path

import yaml

from cases.application import CaseService
from cases.history import case_at
from cases.rules.catalog import RULES_DIR, Catalog
from tests.builders import CaseLines, as_lines
from tests.conftest import NOW


def amended_catalog(tmp_path: Path) -> Catalog:
    """Belleville with a (hypothetical) v2 of § 9.13 giving 48 h from 2026-07-01."""
    for path in RULES_DIR.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    data = yaml.safe_load((tmp_path / "belleville.yaml").read_text())
    v1 = next(r for r in data["rules"] if r["id"] == "9.13")
    v2 = {**v1, "version": 2, "effective_from": "2026-07-01",
          "cure": {**v1["cure"], "period": "48 hours"}}
    data["rules"].append(v2)
    (tmp_path / "belleville.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return Catalog.load(tmp_path)


def test_each_case_keeps_the_rule_version_in_force_on_its_violation_date(store, tmp_path):
    old_case = CaseLines("belleville", "B-V-1")
    original = CaseService(store)
    original.import_journal(as_lines(old_case.open("belleville:9.13", "2026-06-20T09:00:00-05:00")),
                            now=NOW)

    amended = CaseService(store, catalog=amended_catalog(tmp_path))
    new_case = CaseLines("belleville", "B-V-2")
    amended.import_journal(as_lines(
        old_case.cmd("serve_notice", "2026-07-02T10:00:00-05:00", method="personal", served_on="A"),
        new_case.open("belleville:9.13", "2026-07-02T09:00:00-05:00"),
        new_case.cmd("serve_notice", "2026-07-02T10:00:00-05:00", method="personal", served_on="B"),
    ), now=NOW)

    old, _ = case_at(store, "belleville", "B-V-1")
    new, _ = case_at(store, "belleville", "B-V-2")
    assert (old.rule_version, old.deadlines["cure"].rule_version) == (1, 1)
    assert old.cure_deadline.isoformat() == "2026-07-05T10:00:00-05:00"  # v1: 72 h
    assert (new.rule_version, new.deadlines["cure"].rule_version) == (2, 2)
    assert new.cure_deadline.isoformat() == "2026-07-04T10:00:00-05:00"  # v2: 48 h

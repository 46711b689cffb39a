"""A record an older Abate accepted that a view cannot store as it is (a NUL character, a
name longer than the view's column) does not stop the other cases: the view stores what it
can, records the problem (case, position, what was wrong) and goes on. Through the command."""

import csv
import datetime as dt
import io
import json
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

from cases.domain import Case, Stamp
from cases.rules.catalog import default_catalog
from cases.store import CaseStore
from tests.abate_command import database_env, run_abate
from tests.builders import DANE_PARCEL, CaseLines, clock

ROOT = Path(__file__).resolve().parent.parent
ABATE = str(Path(sys.executable).with_name("abate"))
LONG_NAME = "Long " + "x" * 245  # 250 characters; the views hold 200
OPENED_AT = "2026-03-02T09:00:00-06:00"


def abate_env(database) -> dict[str, str]:
    return database_env(database)


def abate(database, *args: str) -> subprocess.CompletedProcess:
    return run_abate(*args, env=abate_env(database))


def open_as_an_older_abate_did(store: CaseStore, case_ref: str, owner_name: str) -> None:
    """Save an opening straight through the domain and the store, past today's input policy
    (cases/text_policy.py), as a store kept by an older Abate may hold it."""
    municipality = default_catalog().municipality("belleville")
    at = dt.datetime.fromisoformat(OPENED_AT)
    rule = municipality.rule_in_force("9.13", at.date())
    stamp = Stamp(actor="inspector", at=at, now=dt.datetime(2026, 3, 2, 16, tzinfo=dt.timezone.utc))
    case = Case.open(stamp, municipality="belleville", case_ref=case_ref, rule=rule,
                     tz=ZoneInfo(municipality.time_zone), parcel=dict(DANE_PARCEL),
                     site_address="12 Vine St",
                     owner={"name": owner_name, "mailing_address": "12 Vine St"},
                     responsible=None, description="violation observed", source="complaint",
                     snow_ended_at=None)
    store.save_atomically(case)


def through_bill(case_ref: str) -> list[dict]:
    case = CaseLines("belleville", case_ref)
    return [case.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal",
                     served_on="Ann"),
            clock("belleville", "2026-03-06T00:00:00-06:00"),
            case.cmd("record_abatement", "2026-03-06T09:00:00-06:00",
                     costs=[{"item": "crew", "amount": "150.00"}]),
            case.cmd("issue_bill", "2026-03-09T09:00:00-05:00")]


def test_an_unstorable_old_record_is_recorded_and_the_other_cases_go_on(database, tmp_path):
    url, extra, _schema = database
    store = CaseStore(url, extra_env=extra)
    try:
        open_as_an_older_abate_did(store, "P-NUL", "Ann\x00Owner")
        open_as_an_older_abate_did(store, "P-LONG", LONG_NAME)
    finally:
        store.close()
    journal = tmp_path / "journal.jsonl"
    clean = CaseLines("belleville", "C-1")
    lines = [clean.open("belleville:9.13", OPENED_AT)]
    for ref in ("C-1", "P-NUL", "P-LONG"):
        steps = through_bill(ref)
        lines += [steps[0]]
    lines += [clock("belleville", "2026-03-06T00:00:00-06:00")]  # the clock over every case
    for ref in ("C-1", "P-NUL", "P-LONG"):
        lines += through_bill(ref)[2:]
    journal.write_text("\n".join(json.dumps(line) for line in lines) + "\n")

    imported = abate(database, "import", str(journal))
    assert imported.returncode == 0, imported.stderr

    listed = abate(database, "cases", "list", "--municipality", "belleville")
    assert listed.returncode == 0, listed.stderr
    for ref in ("C-1", "P-NUL", "P-LONG"):
        assert ref in listed.stdout
    assert "Ann\ufffdOwner" in listed.stdout  # cleaned visibly, not silently

    export = abate(database, "tax-roll", "export", "--municipality", "belleville",
                   "--tax-year", "2026", "--as-of", "2026-11-15")
    assert export.returncode == 0, export.stderr
    rows = {row["case_ref"]: row for row in csv.DictReader(io.StringIO(export.stdout))}
    assert set(rows) == {"C-1", "P-NUL", "P-LONG"}
    assert "\x00" not in export.stdout

    # The scheduler as cron runs it (docs/operations.md).
    swept = subprocess.run([str(Path(sys.executable).with_name("abate")), "scheduler", "--once", "--now",
                            "2026-11-20T12:00:00+00:00"], cwd=ROOT, env=abate_env(database),
                           capture_output=True, text=True, timeout=180)
    assert swept.returncode == 0, swept.stderr

    rebuilt = abate(database, "projections", "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr

    status = abate(database, "projections", "status")
    assert status.returncode == 0, status.stderr
    shown = {s["view"]: s for s in json.loads(status.stdout)}
    problems = shown["case_summaries"]["problems"]
    assert {p["case_ref"] for p in problems} == {"P-NUL", "P-LONG"}
    nul = next(p for p in problems if p["case_ref"] == "P-NUL")
    assert nul["problem"] == "rows.owner_name: 1 NUL character(s) replaced by U+FFFD"
    assert nul["position"] >= 1
    long = next(p for p in problems if p["case_ref"] == "P-LONG")
    assert long["problem"].startswith("rows.owner_name: 250 characters, longer than the 200")
    assert {p["case_ref"] for p in shown["tax_roll"]["problems"]} == {"P-NUL", "P-LONG"}
    assert all(s["lag"] == 0 for s in shown.values())

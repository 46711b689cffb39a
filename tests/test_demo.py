"""The demo journal: what `python3.11 dev.py demo` loads must import cleanly and idempotently."""

import json

from abate.cli import main
from abate.demo_store import demo_journal_path
from abate.demo_users import demo_users
from api.roles import may
from cases.application import CaseService
from cases.domain import CLOCK_ACTOR
from cases.history import case_at
from cases.store import CaseStore
from cases.verify import verify_store
from tests.abate_command import abate_env, run_abate
from tests.conftest import NOW


def test_the_demo_journal_imports_once_and_records_nothing_the_second_time(tmp_path):
    store = CaseStore(f"sqlite:///{tmp_path / 'demo.sqlite3'}")
    try:
        service = CaseService(store)
        lines = demo_journal_path().read_text().splitlines()
        first = service.import_journal(lines, now=NOW)
        assert first.events_recorded > 250
        again = service.import_journal(lines, now=NOW)
        assert again.events_recorded == 0
        cases, _, problems = verify_store(store)
        assert cases == 39 and problems == []
        repeat, _ = case_at(store, "belleville", "BV-2026-022")
        evidence = repeat.abatements[0].repeat_evidence
        assert evidence.count == 1 and evidence.case_refs == ["BV-2026-009"]
    finally:
        store.close()


def test_abate_demo_prints_the_case_summary(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    assert main(["--database-url", url, "demo"]) == 0
    out = capsys.readouterr().out
    assert "BV-2026-001" in out and "MZ-2026-010" in out
    assert out.rstrip().endswith("39 cases")


def _demo_commands() -> list[tuple[int, dict]]:
    lines = demo_journal_path().read_text(encoding="utf-8").splitlines()
    return [(number, json.loads(line)) for number, line in enumerate(lines, start=1)
            if line.strip() and not line.lstrip().startswith("#")]


def test_every_demo_line_is_recorded_by_a_demo_user_whose_role_may_run_it():
    """The demo reads as the demo users' work: each line's actor is the demo user of its
    village with a role the API's matrix lets run that command (the clock's lines are
    ``abate-clock``), so what the demo shows could have been done through the API."""
    users = {name: (role, villages) for name, role, villages in demo_users()}
    wrong = []
    for number, command in _demo_commands():
        name, actor = command["command"], command["actor"]
        if name == "advance_clock":
            if actor != CLOCK_ACTOR:
                wrong.append(f"line {number}: advance_clock by {actor}")
            continue
        route = "cases.open" if name == "open_case" else f"command.{name}"
        role, villages = users.get(actor, (None, ()))
        if command["municipality"] not in villages or not may(role or "", route):
            wrong.append(f"line {number}: {name} in {command['municipality']} by {actor}")
    assert not wrong, wrong
    roles = {users[c["actor"]][0] for _, c in _demo_commands() if c["actor"] in users}
    assert roles == {"inspector", "clerk", "attorney"}  # the demo shows each role's work


def test_the_demo_load_says_what_it_did_in_a_sentence(tmp_path):
    url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    env = abate_env(url, ABATE_LOG_FORMAT="json")
    first, again = run_abate("demo", env=env), run_abate("demo", env=env)
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    said = [json.loads(line) for line in first.stderr.splitlines() if line.startswith("{")]
    loaded = next(line for line in said if line["event"].startswith("Demo loaded"))
    journal = loaded["journal"]
    assert loaded["event"] == (
        f"Demo loaded into {url} (the file {tmp_path / 'demo.sqlite3'}): "
        f"{journal['applied']} journal commands recorded {journal['events_recorded']} events, "
        f"{journal['deadlines_passed']} of them deadlines passing as the journal's dates went "
        "by; a seal was taken.")
    assert "The demo was already in sqlite:///" in again.stderr
    assert "nothing was recorded twice." in again.stderr

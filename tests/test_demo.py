"""The demo journal: what `python3.11 dev.py demo` loads must import cleanly and idempotently."""

from abate.cli import main
from abate.demo_store import demo_journal_path
from cases.application import CaseService
from cases.history import case_at
from cases.store import CaseStore
from cases.verify import verify_store
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
        evidence = repeat.abatements[0]["repeat_evidence"]
        assert evidence["count"] == 1 and evidence["case_refs"] == ["BV-2026-009"]
    finally:
        store.close()


def test_abate_demo_prints_the_case_summary(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    assert main(["--database-url", url, "demo"]) == 0
    out = capsys.readouterr().out
    assert "BV-2026-001" in out and "MZ-2026-010" in out
    assert out.rstrip().endswith("39 cases")

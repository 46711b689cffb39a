"""Repeat-offense counts (and the decision that uses them) and the worklist, from the views."""

import datetime as dt
import json

from abate.cli import main
from projections import RepeatOffenses, Worklist
from tests.builders import DANE_PARCEL, CaseLines, as_lines, clock
from tests.conftest import NOW


def record(service, *commands, now=NOW):
    return service.import_journal(as_lines(*commands), now=now)


def dumping(lines, opened_at, parcel=None, owner=None):
    extra = {"owner": owner} if owner else {}
    return [
        lines.open("belleville:9.13", opened_at, parcel=parcel, **extra),
        lines.cmd("serve_notice", opened_at.replace("09:00", "10:00"), method="personal",
                  served_on="O"),
    ]


def count(runner, **question):
    runner.catch_up()
    view = runner.active(RepeatOffenses.name)
    defaults = dict(municipality="belleville", family="dumping", parcel=DANE_PARCEL, party=None,
                    window_months=12)
    with runner.engine.connect() as conn:
        return view.prior_violations(conn, **{**defaults, **question})


def test_prior_substantiated_violations_in_the_twelve_months_before_count(views):
    store, runner, service = views
    record(service,
           *dumping(CaseLines("belleville", "P-1"), "2025-10-01T09:00:00-05:00"),
           *dumping(CaseLines("belleville", "P-2"), "2026-02-01T09:00:00-06:00"),
           CaseLines("belleville", "P-3").open("belleville:9.13", "2026-03-01T09:00:00-06:00"))
    evidence = count(runner, violation_date=dt.date(2026, 11, 1))
    # P-1 is older than 12 months before 2026-11-01; P-3 was never substantiated.
    assert (evidence.count, evidence.case_refs) == (1, ["P-2"])
    assert (evidence.window_start, evidence.window_end) == (dt.date(2025, 11, 1), dt.date(2026, 11, 1))
    assert count(runner, violation_date=dt.date(2026, 2, 1)).count == 1  # only P-1 before P-2


def test_a_case_closed_as_unfounded_never_counts_and_the_count_is_answerable_as_of_a_date(views):
    store, runner, service = views
    lines = CaseLines("belleville", "P-4")
    record(service, *dumping(lines, "2026-03-01T09:00:00-06:00"),
           lines.cmd("close_case", "2026-04-01T09:00:00-05:00", reason="unfounded: owner's own tires"))
    assert count(runner, violation_date=dt.date(2026, 6, 1)).count == 0
    as_of_march = count(runner, violation_date=dt.date(2026, 3, 15),
                        as_of=dt.datetime(2026, 3, 15, tzinfo=dt.timezone.utc))
    assert as_of_march.case_refs == ["P-4"]  # what an auditor sees as it stood in March


def test_repeat_offenses_by_party_across_parcels(views):
    store, runner, service = views
    other_parcel = {"county": "Dane", "number": "0509-999-0000-1"}
    record(service, *dumping(CaseLines("belleville", "P-5"), "2026-03-01T09:00:00-06:00",
                             parcel=other_parcel, owner={"name": "Dan  Dumper"}))
    evidence = count(runner, parcel=None, party="dan dumper", violation_date=dt.date(2026, 9, 1))
    assert evidence.case_refs == ["P-5"]


def test_abatement_without_notice_uses_the_view_and_records_what_it_saw(views):
    store, runner, service = views
    record(service, *dumping(CaseLines("belleville", "P-6"), "2026-03-01T09:00:00-06:00"))
    second = CaseLines("belleville", "P-7")
    record(service, second.open("belleville:9.13", "2026-09-01T09:00:00-05:00"),
           second.cmd("record_abatement", "2026-09-01T12:00:00-05:00",
                      costs=[{"item": "crew", "amount": "80.00"}], without_notice_reason="repeat_offense"))
    case = store.get_case(next(iter(store.case_ids()[1:])))
    assert case.abatements[0].repeat_evidence.as_dict() == {
        "count": 1, "window_start": dt.date(2025, 9, 1), "window_end": dt.date(2026, 9, 1),
        "case_refs": ["P-6"], "counts": "parcel_or_party"}


def test_abate_repeat_offenses_command(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'r.sqlite3'}"
    journal = tmp_path / "j.jsonl"
    journal.write_text("\n".join(as_lines(*dumping(CaseLines("belleville", "P-8"),
                                                   "2026-03-01T09:00:00-06:00"))) + "\n")
    assert main(["--database-url", url, "import", str(journal)]) == 0
    capsys.readouterr()
    assert main(["--database-url", url, "repeat-offenses", "--municipality", "belleville",
                 "--parcel", "Dane/0509-123-4567-0", "--rule-family", "dumping",
                 "--as-of", "2026-10-01"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert (answer["count"], answer["window_start"], answer["window_end"], answer["case_refs"]) == (
        1, "2025-10-01", "2026-10-01", ["P-8"])


def test_the_worklist_lists_open_deadlines_with_their_consequences(views):
    store, runner, service = views
    lines = CaseLines("belleville", "W-1")
    record(service, *dumping(lines, "2026-03-02T09:00:00-06:00"))
    runner.catch_up()
    view = runner.active(Worklist.name)
    with runner.engine.connect() as conn:
        before = view.deadline_page(conn, municipality="belleville",
                                    as_of=dt.datetime(2026, 3, 4, tzinfo=dt.timezone.utc)).rows
        assert [(r["deadline"], r["overdue"]) for r in before] == [("cure", False)]
        assert before[0]["due_at"] == "2026-03-05T16:00:00+00:00"  # 72 h, § 9.13(2)
        assert "abatement" in before[0]["consequence"]
        due = view.due(conn, until=dt.datetime(2026, 3, 6, tzinfo=dt.timezone.utc))
        assert [r["case_ref"] for r in due] == ["W-1"]
    record(service, clock("belleville", "2026-03-06T00:00:00-06:00"))
    runner.catch_up()
    with runner.engine.connect() as conn:
        assert view.deadline_page(conn, municipality="belleville",
                                  as_of=dt.datetime(2026, 3, 7, tzinfo=dt.timezone.utc)).rows == []


def test_abate_worklist_overdue(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'w.sqlite3'}"
    journal = tmp_path / "j.jsonl"
    journal.write_text("\n".join(as_lines(*dumping(CaseLines("belleville", "W-2"),
                                                   "2026-03-02T09:00:00-06:00"))) + "\n")
    assert main(["--database-url", url, "import", str(journal)]) == 0
    capsys.readouterr()
    assert main(["--database-url", url, "worklist", "--municipality", "belleville",
                 "--as-of", "2026-03-10", "--overdue"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [(d["case_ref"], d["deadline"], d["overdue"]) for d in listing["deadlines"]] == [
        ("W-2", "cure", True)]
    assert main(["--database-url", url, "cases", "list", "--municipality", "belleville",
                 "--status", "notice_served"]) == 0
    assert [c["case_ref"] for c in json.loads(capsys.readouterr().out)["cases"]] == ["W-2"]

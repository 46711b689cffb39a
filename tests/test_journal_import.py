"""The command journal: all or nothing, line-numbered errors, idempotent re-import."""

import json

import pytest

from abate.cli import main
from cases.errors import JournalError
from tests.builders import CaseLines, as_lines, clock
from tests.conftest import NOW

dumping = CaseLines("belleville", "B-2026-001")


def good_journal():
    return as_lines(
        dumping.open("belleville:9.13", "2026-03-02T09:00:00-06:00", id="j1"),
        dumping.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal",
                    served_on="Ann Owner", id="j2"),
        clock("belleville", "2026-03-06T00:00:00-06:00"),
        dumping.cmd("record_abatement", "2026-03-06T09:00:00-06:00",
                    costs=[{"item": "crew", "amount": "150.00"}], id="j3"),
    )


def event_count(store) -> int:
    return store.recorder.max_notification_id() or 0


def test_journal_applies_every_line_in_one_transaction(service, store):
    outcome = service.import_journal(good_journal(), now=NOW)
    assert outcome.applied == 4
    assert outcome.deadlines_passed == 1
    assert event_count(store) == 4


def test_reimporting_the_same_journal_records_nothing_twice(service, store):
    service.import_journal(good_journal(), now=NOW)
    again = service.import_journal(good_journal(), now=NOW)
    assert again.skipped_duplicates == 3
    assert again.events_recorded == 0
    assert event_count(store) == 4


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ({"command": "dance", "municipality": "belleville", "case_ref": "B-2026-001",
          "at": "2026-03-07T09:00:00-06:00", "actor": "x"}, "unknown command 'dance'"),
        (dumping.cmd("record_payment", "2026-03-07T09:00:00-06:00"), "field amount: Field required"),
        (dumping.cmd("record_payment", "2026-03-07T09:00:00-06:00", amount=[1]), "field amount"),
        (dumping.cmd("issue_bill", "2026-03-07T09:00:00"), "field at: Input should have timezone info"),
        (dumping.cmd("issue_bill", "2026-03-07T09:00:00-06:00", color="red"),
         "field color: not a field of this command"),
        (dumping.cmd("file_appeal", "2026-03-07T09:00:00-06:00", grounds="too high"),
         "an appeal needs an issued bill"),
        (dumping.cmd("record_payment", "2026-03-07T09:00:00-06:00", amount="10.005"),
         "more than two decimals"),
        (dumping.cmd("record_inspection", "2026-03-01T09:00:00-06:00", findings="x"),
         "before the last fact recorded"),
    ],
)
def test_a_bad_line_rejects_the_whole_journal_with_its_line_number(service, store, bad_line, message):
    lines = good_journal() + [json.dumps(bad_line)]
    with pytest.raises(JournalError) as caught:
        service.import_journal(lines, now=NOW)
    assert caught.value.line == 5
    assert message in str(caught.value)
    assert event_count(store) == 0


def test_a_domain_refusal_in_the_middle_leaves_the_store_unchanged(service, store):
    early = dumping.cmd("record_abatement", "2026-03-03T09:00:00-06:00",
                        costs=[{"item": "crew", "amount": "150.00"}])
    lines = good_journal()[:2] + [json.dumps(early)]
    with pytest.raises(JournalError) as caught:
        service.import_journal(lines, now=NOW)
    assert caught.value.line == 3
    assert "cure period under belleville:9.13 runs until 2026-03-05 10:00 CST" in str(caught.value)
    assert event_count(store) == 0


def test_invalid_json_is_reported_with_its_line(service, store):
    lines = good_journal()[:1] + ["{not json"]
    with pytest.raises(JournalError, match=r"line 2: not valid JSON"):
        service.import_journal(lines, now=NOW)


def test_blank_lines_and_comments_are_skipped_but_counted(service):
    lines = ["# demo", ""] + good_journal()[:1] + ['{"command": "nope"}']
    with pytest.raises(JournalError) as caught:
        service.import_journal(lines, now=NOW)
    assert caught.value.line == 4


def test_a_parcel_number_in_the_wrong_county_format_is_refused_not_normalised(service):
    case = CaseLines("belleville", "B-X")
    line = case.open("belleville:9.13", "2026-03-02T09:00:00-06:00",
                     parcel={"county": "Green", "number": "0509-123-4567-0"})
    with pytest.raises(JournalError, match="does not match the Green County format"):
        service.import_journal(as_lines(line), now=NOW)


def test_abate_import_command_rejects_a_bad_file_and_records_nothing(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'a.sqlite3'}"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(good_journal() + ['{"command": "open_case"}']) + "\n")
    assert main(["--database-url", url, "import", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "line 5" in err and "nothing was recorded" in err

    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(good_journal()) + "\n")
    assert main(["--database-url", url, "import", str(good)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["events_recorded"] == 4

    assert main(["--database-url", url, "case", "show", "--municipality", "belleville",
                 "B-2026-001"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [e["type"] for e in shown["events"]] == [
        "Opened", "NoticeServed", "DeadlinePassed", "AbatementRecorded"]

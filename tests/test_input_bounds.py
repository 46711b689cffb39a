"""Input that cannot poison: amounts that are not money, integers out of range and hostile
journal lines each give a clear, line-numbered error naming the field, never a traceback,
and record nothing."""

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from cases.application import CaseService
from cases.errors import JournalError
from cases.journal import parse_journal_line
from cases.rules.catalog import RULES_DIR, Catalog, default_catalog
from tests.abate_command import run_abate
from tests.builders import CaseLines, as_lines
from tests.conftest import NOW

ABATE = str(Path(sys.executable).with_name("abate"))
DUMP = CaseLines("belleville", "I-DUMP")
OPENED = [DUMP.open("belleville:9.13", "2026-03-02T09:00:00-06:00"),
          DUMP.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal", served_on="Ann")]


def abatement_line(amount_json: str) -> str:
    """A record_abatement line whose cost amount is written exactly as given (raw JSON)."""
    line = json.dumps(DUMP.cmd("record_abatement", "2026-03-06T09:00:00-06:00",
                               costs=[{"item": "crew", "amount": "AMOUNT"}]))
    return line.replace('"AMOUNT"', amount_json)


def refused(service, *lines: str) -> JournalError:
    with pytest.raises(JournalError) as caught:
        service.import_journal([*as_lines(*OPENED), *lines], now=NOW)
    return caught.value


def event_count(store) -> int:
    return store.recorder.max_notification_id() or 0


# ---------------------------------------------------------------- amounts

@pytest.mark.parametrize(("amount_json", "expected"), [
    pytest.param("1e400", "field costs.0.amount: 1E+400 has more than 15 digits before the "
                          "decimal point", id="1e400 as a JSON number"),
    pytest.param('"1e400"', "field costs.0.amount: 1E+400 has more than 15 digits",
                 id="1e400 as text"),
    pytest.param('"Infinity"', "field costs.0.amount: Infinity is not a finite amount",
                 id="Infinity as text"),
    pytest.param('"-Infinity"', "field costs.0.amount: -Infinity is not a finite amount",
                 id="-Infinity as text"),
    pytest.param('"NaN"', "field costs.0.amount: NaN is not a finite amount", id="NaN as text"),
    pytest.param("1" * 4000, "has more than 15 digits before the decimal point",
                 id="a 4,000-digit JSON number"),
    pytest.param("0." + "1" * 5000, "field costs.0.amount: 0." + "1" * 10,
                 id="5,000 digits after the point"),
    pytest.param('"' + "9" * 40 + '"', "an amount is at most 32 characters", id="long text"),
    pytest.param('"100000.01"', "field costs.0.amount: 100000.01 is more than the largest amount "
                                "this municipality accepts (100000.00, catalog setting "
                                "max_amount)", id="above max_amount"),
    pytest.param("true", "field costs.0.amount: give money as a string like \"125.00\", not "
                         "true", id="a boolean"),
])
def test_an_amount_that_is_not_money_is_a_clear_field_error(service, store, amount_json, expected):
    error = refused(service, abatement_line(amount_json))
    assert error.line == 3 and expected in error.reason
    assert event_count(store) == 0


@pytest.mark.parametrize("amount_json", ["Infinity", "-Infinity", "NaN"])
def test_non_finite_json_constants_are_refused_before_any_command_sees_them(service, amount_json):
    error = refused(service, abatement_line(amount_json))
    assert error.line == 3
    assert f"{amount_json} is not a JSON number" in error.reason


def test_a_number_too_long_for_pythons_int_parser_is_a_journal_error(service):
    error = refused(service, abatement_line("1" * 5000))
    assert error.line == 3 and "too many digits to read" in error.reason


@pytest.mark.parametrize("command", [
    DUMP.cmd("record_payment", "2026-03-20T09:00:00-05:00", amount="100000.01"),
    DUMP.cmd("record_disposition", "2026-03-20T09:00:00-05:00", outcome="guilty",
             forfeiture_amount="100000.01"),
])
def test_every_amount_a_command_carries_is_bounded_by_max_amount(service, command):
    assert "is more than the largest amount" in refused(service, json.dumps(command)).reason


def test_max_amount_is_a_municipality_setting_of_the_rules_catalog(store, tmp_path):
    for path in RULES_DIR.glob("*.yaml"):
        (tmp_path / path.name).write_text(path.read_text())
    data = yaml.safe_load((tmp_path / "belleville.yaml").read_text())
    data["max_amount"] = "250000.00"
    (tmp_path / "belleville.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert default_catalog().municipality("belleville").max_amount == Decimal("100000.00")
    service = CaseService(store, catalog=Catalog.load(tmp_path))
    service.import_journal([*as_lines(*OPENED), abatement_line('"200000.00"')], now=NOW)
    assert event_count(store) == 4  # opened, notice, cure passed, abatement


@pytest.mark.parametrize("field, value", [
    ("at", "0001-01-01T00:00:00+14:00"), ("at", "1899-12-31T12:00:00-06:00"),
    ("received_on", "0001-01-01"), ("received_on", "2201-01-01"),
    ("at", 1772000000), ("received_on", 20260309), ("received_on", "20260309")])
def test_a_time_or_date_outside_1900_to_2200_or_a_number_is_a_field_error(service, field,
                                                                              value):
    fields = {"at": "2026-03-09T09:00:00-05:00", field: value}
    at = fields.pop("at")
    error = refused(service, json.dumps(DUMP.cmd("issue_bill", at, **fields)))
    assert error.line == 3 and f"field {field}:" in str(error), str(error)
    assert ("ISO 8601" if str(value).isdigit() else "1900-01-01 to 2200-12-31") in str(error)
    if str(value).isdigit():  # the example is one the field takes: a time, or a date
        example = "2026-01-07T08:35:00-06:00" if field == "at" else "2026-01-07"
        assert f"e.g. {example} (a number" in str(error), str(error)


def test_an_event_position_is_bounded_like_every_other_integer_field(service):
    """tax_year (2000-2200) and cure_days (1-366) were bounded already; supersedes was not."""
    command = DUMP.cmd("correct", "2026-03-03T09:00:00-06:00", supersedes=10 ** 7,
                       changes={"description": "x"}, reason="x")
    assert "field supersedes: Input should be less than or equal to 1000000" in refused(
        service, json.dumps(command)).reason


# ---------------------------------------------------------------- journal lines

def parse(text: str, max_line_bytes: int = 65_536, max_depth: int = 10):
    return parse_journal_line(7, text, max_line_bytes, max_depth)


@pytest.mark.parametrize("text", ["", "   ", "# a comment", "   # indented comment"])
def test_blank_and_comment_lines_are_none(text):
    assert parse(text) is None


@pytest.mark.parametrize(("text", "limits", "expected"), [
    pytest.param('{"a": "' + "x" * 2000 + '"}', {"max_line_bytes": 1024},
                 "the line is 2,009 bytes, longer than the limit of 1,024 "
                 "(ABATE_JOURNAL_MAX_LINE_BYTES)", id="too long"),
    pytest.param('{"a": "' + "é" * 600 + '"}', {"max_line_bytes": 1024},
                 "the line is 1,209 bytes", id="too long in UTF-8 bytes, not characters"),
    pytest.param('{"a": ' + "[" * 11 + "]" * 11 + "}", {},
                 "the JSON is nested 12 levels deep, deeper than the limit of 10 "
                 "(ABATE_JOURNAL_MAX_DEPTH)", id="too deep"),
    pytest.param("[" * 100_000 + "]" * 100_000, {"max_line_bytes": 10 ** 6},
                 "nested 100000 levels deep", id="deep enough to exhaust recursion"),
    pytest.param('{"a": ' + "1" * 5000 + "}", {}, "too many digits to read", id="huge integer"),
    pytest.param('{"a": NaN}', {}, "NaN is not a JSON number", id="NaN"),
    pytest.param('{"a": Infinity}', {}, "Infinity is not a JSON number", id="Infinity"),
    pytest.param('{"a": 1,}', {}, "not valid JSON: Expecting property name enclosed in double "
                                  "quotes at column 9", id="not JSON"),
    pytest.param('[1, 2]', {}, "a command must be a JSON object", id="not an object"),
    pytest.param('{"amount": "100.00", "amount": "1.00"}', {},
                 "the field 'amount' is given twice in one object: give each field once",
                 id="a field twice"),
    pytest.param('{"owner": {"name": "A", "name": "B"}}', {}, "the field 'name' is given twice",
                 id="a field twice in an inner object"),
])
def test_a_hostile_line_is_a_journal_error_with_its_line_number(text, limits, expected):
    with pytest.raises(JournalError) as caught:
        parse(text, **limits)
    assert caught.value.line == 7 and expected in caught.value.reason


def test_very_deep_json_within_the_depth_setting_still_gives_a_journal_error():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(JournalError, match="nested too deeply to read"):
        parse_journal_line(1, deep, 10 ** 6, 10 ** 6)


def test_brackets_inside_text_are_not_nesting_and_numbers_are_decimals():
    line = '{"description": "[[[[[[[[[[[[{{{{{{ \\" ]]", "amount": 12.50}'
    assert parse(line, max_depth=1) == {"description": '[[[[[[[[[[[[{{{{{{ " ]]',
                                        "amount": Decimal("12.50")}


def test_the_journal_bounds_are_service_settings(store):
    service = CaseService(store, journal_max_line_bytes=1024, journal_max_depth=3)
    long_line = json.dumps({**OPENED[0], "description": "x" * 2000})
    with pytest.raises(JournalError, match="line 1: the line is"):
        service.import_journal([long_line], now=NOW)
    with pytest.raises(JournalError, match="line 1: the JSON is nested 4 levels deep"):
        service.import_journal([json.dumps({**OPENED[0], "parcel": {"x": [[1]]}})], now=NOW)


def _abate_import(tmp_path, *lines: str) -> tuple[subprocess.CompletedProcess, bool]:
    """``abate import`` of ``lines`` as a journal file, and whether case I-DUMP exists after."""
    journal = tmp_path / "journal.jsonl"
    journal.write_text("\n".join(lines) + "\n")
    url = f"sqlite:///{tmp_path / 'a.sqlite3'}"
    done = run_abate("--database-url", url, "import", str(journal))
    assert "Traceback" not in done.stderr
    shown = run_abate("--database-url", url, "case", "show", "--municipality", "belleville",
                      "I-DUMP")
    return done, shown.returncode == 0


def test_abate_import_of_a_line_giving_a_field_twice_refuses_it_and_records_nothing(tmp_path):
    """JSON parsers keep the last of two equal names silently: a payment line merged from
    two edits would record an amount nobody checked."""
    twice = abatement_line('"100.00"').replace('"amount": "100.00"',
                                               '"amount": "100.00", "amount": "1.00"')
    assert twice.count('"amount"') == 2
    done, recorded = _abate_import(tmp_path, *as_lines(*OPENED), twice)
    assert done.returncode == 2 and not recorded
    assert "line 3: the field 'amount' is given twice in one object" in done.stderr


def test_abate_import_of_hostile_lines_prints_one_line_and_records_nothing(tmp_path):
    done, recorded = _abate_import(tmp_path, *as_lines(*OPENED),
                                   "[" * 100_000 + "]" * 100_000, abatement_line("1e400"))
    assert done.returncode == 2  # a line that cannot be read: unreadable input
    assert "line 3:" in done.stderr and not recorded
    done, recorded = _abate_import(tmp_path, *as_lines(*OPENED), abatement_line("1e400"))
    assert done.returncode == 1 and not recorded
    assert "line 3: field costs.0.amount: 1E+400 has more than 15 digits" in done.stderr

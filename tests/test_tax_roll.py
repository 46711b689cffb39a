"""Tax-roll certification lists follow each rule (DOMAIN.md "Tax roll facts" and readings)."""

import csv
import datetime as dt
import io
import json
import re
import shlex
from uuid import UUID
from zoneinfo import ZoneInfo

import pytest
import sqlalchemy as sa

from abate.cli import main
from cases.rules.clock import end_of_local_day
from projections import TaxRoll
from projections.database import utc
from projections.runner import ViewRunner
from tests.builders import GREEN_PARCEL, CaseLines, as_lines, hedge_through_bill
from tests.conftest import NOW
from tests.test_projections import runner_schema
from tests.test_reports import Abate

MAZO_PARCEL = {"county": "Dane", "number": "0806-083-3391-0"}


def record(service, *commands, now=NOW):
    return service.import_journal(as_lines(*commands), now=now)


def listed(runner, municipality, tax_year=2026, as_of=dt.date(2026, 11, 15), county=None,
           known_at=None):
    runner.catch_up()
    view = runner.active(TaxRoll.name)
    with runner.engine.connect() as conn:
        rows = view.charges(conn, municipality=municipality, tax_year=tax_year, as_of=as_of,
                            county=county, known_at=known_at)
    return {r["case_ref"]: r for r in rows}


def snow(lines, rule, abated_at, parcel=None):
    return [
        lines.open(rule, "2026-01-05T08:00:00-06:00", parcel=parcel),
        lines.cmd("serve_notice", "2026-01-07T09:00:00-06:00", method="personal", served_on="O"),
        lines.cmd("record_abatement", abated_at, costs=[{"item": "crew", "amount": "90.00"}]),
        lines.cmd("issue_bill", "2026-01-12T09:00:00-06:00", received_on="2026-01-13"),
    ]


def dumping(lines, billed_at="2026-03-09T09:00:00-05:00", parcel=None):
    return [
        lines.open("belleville:9.13", "2026-03-02T09:00:00-06:00", parcel=parcel),
        lines.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal", served_on="O"),
        lines.cmd("record_abatement", "2026-03-05T10:00:00-06:00",
                  costs=[{"item": "crew", "amount": "150.00"}]),
        lines.cmd("issue_bill", billed_at),
    ]


def test_snow_goes_on_the_roll_60_days_after_cost_in_belleville_and_90_in_mazomanie(views):
    store, runner, service = views
    record(service,
           *snow(CaseLines("belleville", "B-S1"), "belleville:9.09", "2026-01-10T13:00:00-06:00"),
           *snow(CaseLines("mazomanie", "M-S1"), "mazomanie:360-10", "2026-01-10T13:00:00-06:00",
                 parcel=MAZO_PARCEL))
    # Belleville § 9.09(7): 60 days after 2026-01-10 is 2026-03-11; Mazomanie § 360-10: 90 days, 2026-04-10.
    on_march_20 = dt.date(2026, 3, 20)
    belleville = listed(runner, "belleville", as_of=on_march_20)
    assert belleville["B-S1"]["eligible_on"] == "2026-03-11"
    assert (belleville["B-S1"]["charge_type"], belleville["B-S1"]["statute"]) == (
        "special_tax", "Wis. Stat. § 66.0907(5)")
    assert "M-S1" not in listed(runner, "mazomanie", as_of=on_march_20)
    assert listed(runner, "mazomanie", as_of=dt.date(2026, 4, 10))["M-S1"]["eligible_on"] == "2026-04-10"


def test_belleville_lists_dane_and_green_county_charges_separately(views):
    store, runner, service = views
    dane, green = CaseLines("belleville", "B-O-DANE"), CaseLines("belleville", "B-O-GREEN")
    for lines, parcel in ((dane, None), (green, GREEN_PARCEL)):
        record(service,
               lines.open("belleville:9.07", "2026-05-01T10:00:00-05:00", parcel=parcel),
               lines.cmd("serve_notice", "2026-05-01T11:00:00-05:00", method="personal", served_on="O"),
               lines.cmd("record_abatement", "2026-05-04T10:00:00-05:00",
                         costs=[{"item": "removal", "amount": "75.00"}]),
               lines.cmd("issue_bill", "2026-05-04T15:00:00-05:00", received_on="2026-05-05"))
    assert set(listed(runner, "belleville", county="Dane")) == {"B-O-DANE"}
    assert set(listed(runner, "belleville", county="Green")) == {"B-O-GREEN"}
    row = listed(runner, "belleville", county="Green")["B-O-GREEN"]
    assert row["eligible_on"] == "2026-07-03"  # § 9.07(6): 60 days after 2026-05-04
    assert row["parcel_number"] == "23002 0100.0000"


def test_dumping_is_eligible_30_days_after_billing_and_an_appeal_stays_it_until_denied(views):
    store, runner, service = views
    plain, appealed = CaseLines("belleville", "B-D1"), CaseLines("belleville", "B-D2")
    record(service, *dumping(plain), *dumping(appealed),
           appealed.cmd("file_appeal", "2026-03-12T09:00:00-05:00", grounds="not mine"))
    may_1 = listed(runner, "belleville", as_of=dt.date(2026, 5, 1))
    assert may_1["B-D1"]["eligible_on"] == "2026-04-08"  # § 9.13(4): 30 days of billing
    assert (may_1["B-D1"]["charge_type"], may_1["B-D1"]["statute"]) == (
        "special_charge", "Wis. Stat. § 66.0627(4)")
    assert "B-D2" not in may_1  # § 9.13(7): a timely appeal stays the charge
    record(service, appealed.cmd("decide_appeal", "2026-05-12T19:00:00-05:00", outcome="denied"))
    assert "B-D2" not in listed(runner, "belleville", as_of=dt.date(2026, 5, 20))
    after = listed(runner, "belleville", as_of=dt.date(2026, 5, 23))
    assert after["B-D2"]["eligible_on"] == "2026-05-22"  # due 10 days after the decision


def test_a_partial_payment_leaves_the_balance_on_the_list(views):
    store, runner, service = views
    lines = CaseLines("belleville", "B-D3")
    record(service, *dumping(lines),
           lines.cmd("record_payment", "2026-04-01T09:00:00-05:00", amount="100.00"))
    row = listed(runner, "belleville")["B-D3"]
    assert (row["principal"], row["total"], row["original_principal"], row["paid"]) == (
        "50.00", "50.00", "150.00", "100.00")
    assert row["interest"] == "" and row["interest_rate"] == "not set"


def test_a_charge_paid_in_full_is_not_listed(views):
    store, runner, service = views
    lines = CaseLines("belleville", "B-D4")
    record(service, *dumping(lines),
           lines.cmd("record_payment", "2026-04-01T09:00:00-05:00", amount="150.00"))
    assert "B-D4" not in listed(runner, "belleville")


def test_a_charge_eligible_after_the_november_15_cut_off_waits_for_next_years_roll(views):
    store, runner, service = views
    lines = CaseLines("belleville", "B-D5")
    record(service, *dumping(lines, billed_at="2026-10-20T10:00:00-05:00"))  # eligible Nov 19
    assert "B-D5" not in listed(runner, "belleville", tax_year=2026, as_of=dt.date(2026, 12, 1))
    next_year = listed(runner, "belleville", tax_year=2027, as_of=dt.date(2026, 12, 1))
    assert next_year["B-D5"]["eligible_on"] == "2026-11-19"


def test_mazomanie_360_9_obstruction_without_bill_goes_on_the_next_roll_as_a_special_charge(views):
    store, runner, service = views
    lines = CaseLines("mazomanie", "M-O9")
    record(service,
           lines.open("mazomanie:360-9", "2026-06-01T10:00:00-05:00", parcel=MAZO_PARCEL),
           lines.cmd("serve_notice", "2026-06-01T11:00:00-05:00", method="personal", served_on="O"),
           lines.cmd("record_abatement", "2026-06-02T12:00:00-05:00",
                     costs=[{"item": "removal", "amount": "40.00"}]))
    row = listed(runner, "mazomanie")["M-O9"]
    assert (row["charge_type"], row["billed_on"], row["principal"]) == ("special_charge", "", "40.00")


def test_known_at_before_and_after_a_late_entry_gives_the_two_lists(views):
    store, runner, service = views
    lines = CaseLines("belleville", "B-D6")
    first_known = dt.datetime(2026, 11, 10, 12, tzinfo=dt.timezone.utc)
    record(service, *dumping(lines), now=first_known)
    late = dt.datetime(2026, 11, 20, 12, tzinfo=dt.timezone.utc)
    # A payment made in April is entered only in late November.
    record(service, lines.cmd("record_payment", "2026-04-02T09:00:00-05:00", amount="150.00"),
           now=late)
    then = listed(runner, "belleville", known_at=dt.datetime(2026, 11, 15, tzinfo=dt.timezone.utc))
    now = listed(runner, "belleville", known_at=late)
    assert "B-D6" in then and "B-D6" not in now


def test_an_export_as_of_a_past_date_equals_the_export_taken_then(views):
    store, runner, service = views
    a, b = CaseLines("belleville", "B-D7"), CaseLines("belleville", "B-D8")
    taken_at = dt.datetime(2026, 5, 1, 17, tzinfo=dt.timezone.utc)
    record(service, *dumping(a), *dumping(b), now=taken_at)
    export_then = listed(runner, "belleville", as_of=dt.date(2026, 5, 1))
    # Later: b pays, a new case appears, a is corrected to a new owner address.
    record(service, b.cmd("record_payment", "2026-06-01T09:00:00-05:00", amount="150.00"),
           a.cmd("correct", "2026-06-02T09:00:00-05:00", supersedes=1,
                 changes={"owner": {"name": "Ann Owner", "mailing_address": "PO Box 9"}},
                 reason="new address from the county"),
           *dumping(CaseLines("belleville", "B-D9"), billed_at="2026-06-09T09:00:00-05:00"),
           now=dt.datetime(2026, 7, 1, tzinfo=dt.timezone.utc))
    assert listed(runner, "belleville", as_of=dt.date(2026, 5, 1), known_at=taken_at) == export_then
    assert listed(runner, "belleville", as_of=dt.date(2026, 5, 1)) == export_then
    assert set(listed(runner, "belleville", as_of=dt.date(2026, 7, 15))) == {"B-D7", "B-D9"}


def test_a_list_is_read_a_batch_at_a_time_in_list_order(views, monkeypatch):
    """Never the whole list at once: batches of at most ``_FETCH_ROWS`` charges, in the
    list's order, the same charges as the list read whole."""
    store, runner, service = views
    record(service, *(c for i in (2, 0, 1) for c in dumping(CaseLines("belleville", f"B-D{i}"))))
    whole = listed(runner, "belleville")
    monkeypatch.setattr("projections.tax_roll._FETCH_ROWS", 2)
    view = runner.active(TaxRoll.name)
    with runner.engine.connect() as conn:
        batches = list(view.iter_row_batches(conn, municipality="belleville", tax_year=2026,
                                             as_of=dt.date(2026, 11, 15)))
    assert [len(batch) for batch in batches] == [2, 1]
    assert [row[16] for batch in batches for row in batch] == ["B-D0", "B-D1", "B-D2"]
    assert sorted(whole) == ["B-D0", "B-D1", "B-D2"]


def test_only_events_that_change_a_charge_add_a_tax_roll_version(views):
    """Closing a paid case changes no charge column; closing an unpaid one before it is
    eligible cancels its tax-roll eligibility (Closed cancels every open deadline), which
    keeps it off the list; one closed after its eligibility had run stays on it (the
    eligibility is recorded as passed before the closing)."""
    store, runner, service = views
    paid, unpaid = CaseLines("belleville", "B-X1"), CaseLines("belleville", "B-X2")
    eligible = CaseLines("belleville", "B-X3")
    record(service, *dumping(paid), *dumping(unpaid), *dumping(eligible),
           paid.cmd("record_payment", "2026-04-20T09:00:00-05:00", amount="150.00"),
           paid.cmd("close_case", "2026-04-21T09:00:00-05:00", reason="paid"),
           # Eligible 30 days after the bill of 2026-03-09: at the end of 2026-04-08.
           unpaid.cmd("close_case", "2026-04-07T09:00:00-05:00", reason="owner moved away"),
           eligible.cmd("close_case", "2026-04-22T09:00:00-05:00", reason="owner moved away"))
    runner.catch_up()
    view = runner.active(TaxRoll.name)
    with runner.engine.connect() as conn:
        versions = conn.execute(sa.select(view.versions.c.case_ref, view.versions.c.case_id,
                                          view.versions.c.position)).all()
    kinds = {}
    for ref, case_id, position in versions:
        stored = store.recorder.select_events(UUID(case_id), gt=position - 1, lte=position)
        kinds.setdefault(ref, []).append(stored[0].topic.rsplit(".", 1)[-1])
    assert "Closed" not in kinds["B-X1"] and "PaymentReceived" in kinds["B-X1"]
    assert kinds["B-X2"][-1] == "Closed"
    assert "B-X2" not in listed(runner, "belleville", as_of=dt.date(2026, 4, 23))
    assert "Closed" not in kinds["B-X3"]
    assert "B-X3" in listed(runner, "belleville", as_of=dt.date(2026, 4, 23))


def in_force_by_rank(runner, municipality, tax_year, as_of, known_at):
    """The definition, by brute force: per charge the latest version (by position) that had
    happened by the end of ``as_of`` and been recorded by ``known_at``, then listable."""
    view = runner.active(TaxRoll.name)
    end = utc(end_of_local_day(as_of, ZoneInfo("America/Chicago")))
    last_day = min(as_of, dt.date(tax_year, 11, 15)).isoformat()
    with runner.engine.connect() as conn:
        rows = conn.execute(sa.select(view.versions)).mappings().all()
    latest = {}
    for row in sorted(rows, key=lambda r: r["position"]):
        if row["occurred_at"] <= end and (known_at is None or row["recorded_at"] <= utc(known_at)):
            latest[row["case_id"]] = row
    return {r["case_ref"]: (r["certified_amount"] if r["certified_year"] == tax_year
                            else r["balance"])
            for r in latest.values()
            if r["municipality"] == municipality and (
                r["certified_year"] == tax_year or (
                    r["certified_year"] is None and r["eligible_on"] is not None
                    and r["eligible_on"] <= last_day))
            and float(r["certified_amount"] if r["certified_year"] == tax_year
                      else r["balance"]) > 0}


def test_every_past_list_takes_the_version_in_force_then_across_pages(views):
    store, runner, service = views
    small_pages = ViewRunner(store, [TaxRoll], schema=runner_schema(runner), page_size=2)
    cases = [CaseLines("belleville", f"B-V{i}") for i in range(4)]
    entered = [dt.datetime(2026, m, d, 12, tzinfo=dt.timezone.utc)
               for m, d in ((3, 10), (5, 1), (7, 1), (9, 1), (11, 1))]  # each after its facts
    record(service, *dumping(cases[0]), *dumping(cases[1]), now=entered[0])
    small_pages.catch_up()
    record(service, cases[0].cmd("record_payment", "2026-04-20T09:00:00-05:00", amount="50.00"),
           *dumping(cases[2], billed_at="2026-04-09T09:00:00-05:00"), now=entered[1])
    small_pages.catch_up()
    record(service, cases[1].cmd("record_payment", "2026-06-01T09:00:00-05:00", amount="150.00"),
           cases[0].cmd("correct", "2026-06-02T09:00:00-05:00", supersedes=1,
                        changes={"owner": {"name": "Ann Owner", "mailing_address": "PO Box 9"}},
                        reason="new address from the county"), now=entered[2])
    record(service, cases[2].cmd("record_payment", "2026-05-10T09:00:00-05:00", amount="150.00"),
           *dumping(cases[3], billed_at="2026-08-09T09:00:00-05:00"), now=entered[3])
    small_pages.catch_up()
    record(service, cases[0].cmd("record_payment", "2026-10-01T09:00:00-05:00", amount="100.00"),
           now=entered[4])
    try:
        small_pages.catch_up()
        for rebuilt_in_one_page in (False, True):  # superseded across pages, then within one
            if rebuilt_in_one_page:
                small_pages.page_size = 10_000
                small_pages.rebuild()
            view = small_pages.active(TaxRoll.name)
            checked = 0
            for as_of in (dt.date(2026, m, d) for m in range(3, 13) for d in (1, 15)):
                for known_at in (None, *entered, *(t + dt.timedelta(days=20) for t in entered)):
                    with small_pages.engine.connect() as conn:
                        rows = view.charges(conn, municipality="belleville", tax_year=2026,
                                            as_of=as_of, known_at=known_at)
                    got = {r["case_ref"]: r["principal"] for r in rows}
                    assert got == in_force_by_rank(small_pages, "belleville", 2026, as_of,
                                                   known_at), (as_of, known_at)
                    assert_listed_in_order_and_formatted(rows)
                    checked += bool(got)
            assert checked > 20  # the grid is not all empty lists
    finally:
        small_pages.close()


def test_sqlite_hands_a_past_list_over_in_order_from_its_listing_indexes(views):
    """No temporary B-tree sorts the list: SQLite walks the two listing indexes in order and
    merges them (the list's time on SQLite was mostly sorting its parts; docs/benchmarks.md)."""
    store, runner, service = views
    if runner.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL plans by its statistics")
    lines = CaseLines("belleville", "B-PLAN")
    taken_at = dt.datetime(2026, 5, 1, 17, tzinfo=dt.timezone.utc)
    record(service, *dumping(lines), now=taken_at)
    record(service, lines.cmd("record_payment", "2026-06-01T09:00:00-05:00", amount="50.00"),
           now=dt.datetime(2026, 7, 1, tzinfo=dt.timezone.utc))
    runner.catch_up()
    view = runner.active(TaxRoll.name)
    statements = []
    sa.event.listen(runner.engine, "before_cursor_execute",
                    lambda conn, cursor, sql, params, *_: statements.append((sql, params)))
    with runner.engine.connect() as conn:
        for known_at in (None, taken_at):  # two parts: the latest and superseded versions
            listed_rows = view.charges(conn, municipality="belleville", tax_year=2026,
                                       as_of=dt.date(2026, 5, 1), known_at=known_at)
            assert [r["case_ref"] for r in listed_rows] == ["B-PLAN"]
            sql, params = statements[-1]
            plan = [row[-1] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params)]
            assert not [step for step in plan if "TEMP B-TREE" in step], plan
            assert {step.split(" USING INDEX ")[1].split()[0] for step in plan
                    if " USING INDEX " in step} == {f"abate_tax_roll_listing_g{view.generation}",
                                                    f"abate_tax_roll_listing_superseded_g"
                                                    f"{view.generation}"}, plan


def assert_listed_in_order_and_formatted(rows):
    """A list is in code-point order of (county, parcel, case), and the cells the CSV writer
    does not check for formulas (``FORMATTED_COLUMNS``) are as Abate formats them."""
    from projections.tax_roll_file import FORMATTED_COLUMNS, NUMERIC_COLUMNS

    order = [(r["county"], r["parcel_number"], r["case_ref"]) for r in rows]
    assert order == sorted(order)
    for row in rows:
        for name in FORMATTED_COLUMNS & row.keys():
            shape = r"(-?\d+(\.\d+)?)?" if name in NUMERIC_COLUMNS else r"(\d{4}-\d{2}-\d{2})?"
            assert re.fullmatch(shape, str(row[name])), (name, row[name])


# ---------------------------------------------------------------- through the abate command


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'roll.sqlite3'}"


def run_cli(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_certify_records_each_charge_once_and_reconcile_shows_later_payments(sqlite_url, tmp_path, capsys):
    journal = tmp_path / "j.jsonl"
    a, b = CaseLines("belleville", "B-C1"), CaseLines("belleville", "B-C2")
    journal.write_text("\n".join(as_lines(*dumping(a), *dumping(b, parcel=GREEN_PARCEL))) + "\n")
    assert run_cli(capsys, "--database-url", sqlite_url, "import", str(journal))[0] == 0

    code, out, _ = run_cli(capsys, "--database-url", sqlite_url, "tax-roll", "export",
                           "--municipality", "belleville", "--tax-year", "2026", "--county", "Dane",
                           "--as-of", "2026-11-15")
    assert code == 0
    assert out.splitlines()[0] == ("tax_year,county,municipality,parcel_number,owner_name,"
                                   "owner_mailing_address,site_address,charge_type,statute,principal,"
                                   "interest,total,incurred_on,billed_on,due_on,eligible_on,case_ref,"
                                   "rule,rule_version")
    assert [r["case_ref"] for r in csv.DictReader(io.StringIO(out))] == ["B-C1"]

    certified_csv = tmp_path / "dane-2026.csv"
    code, _, err = run_cli(capsys, "--database-url", sqlite_url, "tax-roll", "certify",
                           "--municipality", "belleville", "--tax-year", "2026", "--county", "Dane",
                           "--actor", "treasurer.lund", "--output", str(certified_csv))
    assert code == 0 and "certified 1 new charge;" in err
    rows = list(csv.DictReader(io.StringIO(certified_csv.read_text(encoding="utf-8"))))
    assert [r["case_ref"] for r in rows] == ["B-C1"]  # no totals line: they are in the summary
    totals = json.loads((tmp_path / "dane-2026.summary.json").read_text(encoding="utf-8"))
    assert (totals["charges"], totals["total"]) == (1, "150.00")
    code, _, err = run_cli(capsys, "--database-url", sqlite_url, "tax-roll", "certify",
                           "--municipality", "belleville", "--tax-year", "2026", "--county", "Dane",
                           "--actor", "treasurer.lund", "--output", str(certified_csv))
    assert "certified 0 new charges; 1 on the 2026 Dane County list, total 150.00" in err

    payment = tmp_path / "pay.jsonl"
    paid_at = dt.datetime.now(ZoneInfo("America/Chicago")).isoformat()  # after certifying
    payment.write_text(json.dumps(a.cmd("record_payment", paid_at, amount="150.00")) + "\n")
    assert run_cli(capsys, "--database-url", sqlite_url, "import", str(payment))[0] == 0
    code, out, _ = run_cli(capsys, "--database-url", sqlite_url, "tax-roll", "reconcile",
                           "--municipality", "belleville", "--tax-year", "2026")
    report = json.loads(out)
    assert [p["case_ref"] for p in report["payments_after_certification"]] == ["B-C1"]
    assert report["to_credit_or_refund_by_county"] == {"Dane": "150.00"}
    # The certified list itself never changes.
    code, out, _ = run_cli(capsys, "--database-url", sqlite_url, "tax-roll", "export",
                           "--municipality", "belleville", "--tax-year", "2026", "--county", "Dane",
                           "--format", "json")
    assert json.loads(out)["charges"][0]["total"] == "150.00"
    assert json.loads(out)["summary"]["total"] == "150.00"


# ---------------------------------------------------------------- certifying the list reviewed
# Through the installed ``abate`` (tests/test_reports.Abate), on SQLite and PostgreSQL.


def _certify_command(stderr: str) -> list[str]:
    """The certify command the export printed, as its words (with who certifies filled in)."""
    [line] = [line for line in stderr.splitlines() if line.startswith("to certify this list: ")]
    words = shlex.split(line.removeprefix("to certify this list: "))
    assert words[:3] == ["abate", "tax-roll", "certify"] and words[-2:] == ["--actor", "YOUR-NAME"]
    return words[1:-1] + ["clerk.moe"]


def _exported(abate, *extra: str) -> tuple[str, list[str]]:
    """(digest, certify command) printed by the export of Belleville's Dane County list."""
    done = abate.run("tax-roll", "export", "--municipality", "belleville", "--tax-year", "2026",
                     "--county", "Dane", *extra)
    stderr = done.stderr.decode()
    [digest] = re.findall(r"^list SHA-256 ([0-9a-f]{64}) ", stderr, re.M)
    return digest, _certify_command(stderr)


def _billed(case_ref: str) -> list[dict]:
    return dumping(CaseLines("belleville", case_ref))


def test_the_export_prints_its_digest_and_the_certify_command_that_certifies_it(database, tmp_path):
    abate = Abate(database)
    abate.load(tmp_path, *_billed("B-R1"), *_billed("B-R2"))
    digest, command = _exported(abate, "--as-of", "2026-11-15")
    assert command[command.index("--as-of") + 1] == "2026-11-15"
    assert command[command.index("--expect-sha256") + 1] == digest
    printed = abate.json("tax-roll", "export", "--municipality", "belleville", "--tax-year",
                         "2026", "--county", "Dane", "--as-of", "2026-11-15", "--format", "json")
    assert printed["summary"]["list_sha256"] == digest
    out = tmp_path / "certified.csv"
    done = abate.run(*command, "--output", str(out))
    summary = json.loads(done.stdout)
    assert summary["certification"]["newly_certified"] == 2
    assert summary["list_sha256"] == digest


def test_a_list_changed_since_review_is_refused_exit_1_naming_the_cases(database, tmp_path):
    abate = Abate(database)
    abate.load(tmp_path, *_billed("B-R1"), *_billed("B-R2"), *_billed("B-R3"))
    digest, command = _exported(abate)
    now = dt.datetime.now(dt.timezone.utc).isoformat()
    abate.load(tmp_path, CaseLines("belleville", "B-R1").cmd("record_payment", now,
                                                             amount="40.00"),
               CaseLines("belleville", "B-R3").cmd("record_payment", now, amount="150.00"),
               *_billed("B-R4"))
    refused = abate.run(*command, ok=False)
    assert refused.returncode == 1, refused.stderr.decode()
    said = refused.stderr.decode()
    assert "nothing was certified" in said
    assert "  B-R1: amount changed (principal 150.00 -> 110.00; total 150.00 -> 110.00)" in said
    assert "  B-R3: removed (total 150.00)" in said
    assert "  B-R4: added (total 150.00)" in said
    certified = abate.json("tax-roll", "export", "--municipality", "belleville", "--tax-year",
                           "2026", "--format", "json")["summary"]["certification"]
    assert certified["certified_charges"] == 0
    # Only the digest: still refused, the changes unnamed; reviewed again, certified.
    blind = abate.run(*command[:command.index("--known-at")],
                      *command[command.index("--expect-sha256"):], ok=False)
    assert blind.returncode == 1
    assert "give --known-at (printed with the reviewed export)" in blind.stderr.decode()
    assert "B-R1" not in blind.stderr.decode()  # the changes cannot be named without it
    _, command = _exported(abate)
    assert abate.run(*command).returncode == 0


def test_a_bad_digest_is_refused_with_exit_2(database, tmp_path):
    abate = Abate(database)
    done = abate.run("tax-roll", "certify", "--municipality", "belleville", "--tax-year", "2026",
                     "--county", "Dane", "--actor", "clerk.moe", "--expect-sha256", "12ab",
                     ok=False)
    assert done.returncode == 2
    assert "--expect-sha256: '12ab' is not a SHA-256: 64 hexadecimal digits" in \
        done.stderr.decode()


def test_a_list_with_a_charge_whose_statute_is_not_set_is_refused_whole_exit_1(database,
                                                                                tmp_path):
    abate = Abate(database)
    abate.load(tmp_path, *_billed("B-R1"), *hedge_through_bill(CaseLines("belleville", "B-H1")))
    exported = abate.run("tax-roll", "export", "--municipality", "belleville", "--tax-year",
                         "2026", "--county", "Dane")
    assert ("B-H1: statute not set — cannot be certified (belleville:9.07 v1)"
            in exported.stderr.decode())
    printed = abate.json("tax-roll", "export", "--municipality", "belleville", "--tax-year",
                         "2026", "--county", "Dane", "--format", "json")
    assert [c["case_ref"] for c in printed["summary"]["not_certifiable"]] == ["B-H1"]
    _, command = _exported(abate)
    refused = abate.run(*command, ok=False)
    said = refused.stderr.decode()
    assert refused.returncode == 1, said
    assert ("1 of the listed charges cannot be certified: the statute that authorises the "
            "charge is not set in its rule: B-H1 (special tax under belleville:9.07 v1)") in said
    assert "nothing was certified" in said and "B-R1" not in said
    certified = abate.json("tax-roll", "export", "--municipality", "belleville", "--tax-year",
                           "2026", "--format", "json")["summary"]["certification"]
    assert certified["certified_charges"] == 0  # not even B-R1, whose statute is set

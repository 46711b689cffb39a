"""What Abate prints and writes for people, through the installed ``abate`` command: local
times (with UTC beside them in JSON), the tax-roll CSV and its summary file, --excel, and
cells a spreadsheet cannot run as formulas, even from a record an older Abate accepted."""

import csv
import datetime as dt
import hashlib
import io
import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path
from zoneinfo import ZoneInfo

from cases.rules.catalog import default_catalog
from tests.abate_command import run_abate
from tests.builders import CaseLines, as_lines, dumping_through_bill

CHICAGO = ZoneInfo("America/Chicago")
HOSTILE_OWNERS = ['=HYPERLINK("http://x","y")', "+cmd|' /C calc'!A0", "@SUM(A1)", "-2+3"]


class Abate:
    """The ``abate`` command (in this process) on one database (SQLite file or a fresh
    PostgreSQL schema)."""

    def __init__(self, database):
        url, _, schema = database
        self.env = {**os.environ, "ABATE_DATABASE_URL": url}
        if schema:
            self.env["ABATE_DATABASE_SCHEMA"] = schema

    def run(self, *argv: str, ok: bool = True) -> subprocess.CompletedProcess:
        done = run_abate(*argv, env=self.env, text=False)
        if ok:
            assert done.returncode == 0, done.stderr.decode()
        return done

    def json(self, *argv: str):
        return json.loads(self.run(*argv).stdout)

    def text(self, *argv: str) -> str:
        return self.run(*argv).stdout.decode("utf-8")

    def load(self, tmp_path: Path, *commands: dict) -> None:
        journal = tmp_path / f"journal-{len(list(tmp_path.glob('journal-*')))}.jsonl"
        journal.write_text("\n".join(as_lines(*commands)) + "\n", encoding="utf-8")
        self.run("import", str(journal))


def billed(case_ref: str, owner: str | None = None) -> list[dict]:
    lines = CaseLines("belleville", case_ref)
    commands = dumping_through_bill(lines)
    if owner is not None:
        commands[0] = lines.open("belleville:9.13", "2026-03-02T09:00:00-06:00",
                                 owner={"name": owner, "mailing_address": "1 Main St"})
    return commands


def local(text: str) -> str:
    """The same instant in Belleville's zone, as Abate must show it."""
    return dt.datetime.fromisoformat(text).astimezone(CHICAGO).isoformat()


# ---------------------------------------------------------------- local time


def test_every_time_a_person_reads_is_in_the_villages_zone_with_utc_beside_it(database, tmp_path):
    abate = Abate(database)
    case = CaseLines("belleville", "B-LOCAL")
    # The notice is typed in UTC: 02:00Z on 3 March is 8 pm on 2 March in Belleville.
    abate.load(tmp_path, case.open("belleville:9.13", "2026-03-02T19:00:00-06:00"),
               case.cmd("serve_notice", "2026-03-03T02:00:00Z", method="personal",
                        served_on="Ann"))

    work = abate.json("worklist", "--municipality", "belleville", "--as-of", "2026-03-04")
    cure = next(d for d in work["deadlines"] if d["case_ref"] == "B-LOCAL")
    assert cure["due_at"] == "2026-03-05T20:00:00-06:00"  # § 9.13(2): 72 hours, 8 pm local
    assert cure["due_at_utc"] == "2026-03-06T02:00:00+00:00"
    assert work["as_of"] == "2026-03-04T23:59:59-06:00"

    [listed] = abate.json("cases", "list", "--municipality", "belleville")["cases"]
    assert listed["observed_at"] == "2026-03-02T19:00:00-06:00"
    assert listed["next_deadline_at"] == "2026-03-05T20:00:00-06:00"
    assert listed["next_deadline_at_utc"] == "2026-03-06T02:00:00+00:00"

    shown = abate.json("case", "show", "--municipality", "belleville", "B-LOCAL")
    notice = shown["events"][-1]
    assert notice["occurred_at"] == "2026-03-02T20:00:00-06:00"
    assert notice["occurred_at_utc"] == "2026-03-03T02:00:00+00:00"
    assert notice["recorded_at"] == local(notice["recorded_at_utc"])  # the real clock, local
    assert notice["recorded_at"] != notice["recorded_at_utc"]
    assert shown["deadlines"][0]["due_at"] == "2026-03-05T20:00:00-06:00"

    table = abate.text("worklist", "--municipality", "belleville", "--as-of", "2026-03-06",
                       "--format", "table").splitlines()
    header = next(i for i, line in enumerate(table) if line.split()[:3] == ["due", "case", "deadline"])
    assert table[header + 1].split()[:6] == ["2026-03-05", "20:00", "CST", "B-LOCAL", "cure", "yes"]
    table = abate.text("cases", "list", "--municipality", "belleville", "--format", "table")
    [row] = [line.split() for line in table.splitlines() if "B-LOCAL" in line]
    assert row[-5:] == ["cure", "2026-03-05", "20:00", "CST", "0.00"]


def test_reconcile_shows_payment_times_in_local_time(database, tmp_path):
    abate = Abate(database)
    abate.load(tmp_path, *billed("B-PAID"))
    abate.run("tax-roll", "certify", "--municipality", "belleville", "--tax-year", "2026",
              "--county", "Dane", "--actor", "treasurer.lund")
    paid_at = dt.datetime.now(dt.timezone.utc)  # after the certification
    abate.load(tmp_path, CaseLines("belleville", "B-PAID").cmd(
        "record_payment", paid_at.isoformat(), amount="150.00"))
    paid_at = paid_at.replace(microsecond=0)  # shown to the second
    report = abate.json("tax-roll", "reconcile", "--municipality", "belleville",
                        "--tax-year", "2026")
    [payment] = report["payments_after_certification"]
    assert payment["paid_at"] == paid_at.astimezone(CHICAGO).isoformat()
    assert payment["paid_at_utc"] == paid_at.isoformat()
    assert payment["recorded_at"] == local(payment["recorded_at_utc"])
    assert (report["total"], report["limit"], report["next_offset"]) == (1, 100, None)
    past = abate.json("tax-roll", "reconcile", "--municipality", "belleville", "--tax-year",
                      "2026", "--limit", "1", "--offset", "1")
    assert past["payments_after_certification"] == [] and past["total"] == 1
    assert past["to_credit_or_refund_by_county"] == {"Dane": "150.00"}  # whatever the page


def test_the_demo_table_shows_local_time_with_the_zone(tmp_path):
    abate = Abate((f"sqlite:///{tmp_path / 'demo.sqlite3'}", {}, None))
    printed = abate.text("demo").splitlines()
    table = printed[next(i for i, line in enumerate(printed) if line.startswith("municipality")):]
    times = [re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d(.{4})", line) for line in table[1:]]
    shown = [t.group(1) for t in times if t]
    assert "due" in table[0].split() and shown, table
    assert set(shown) <= {" CST", " CDT"}, table


# ---------------------------------------------------------------- the tax-roll files


def test_certified_list_is_a_plain_csv_with_a_summary_file_beside_it(database, tmp_path):
    abate = Abate(database)
    abate.load(tmp_path, *billed("B-C1"), *billed("B-C2"))
    out = tmp_path / "dane-2026.csv"
    printed = abate.json("tax-roll", "certify", "--municipality", "belleville", "--tax-year",
                         "2026", "--county", "Dane", "--actor", "treasurer.lund",
                         "--output", str(out))

    raw = out.read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf")  # no byte-order mark unless --excel
    text = raw.decode("utf-8")
    assert not any(line.startswith("#") for line in text.splitlines())
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["case_ref"] for r in rows] == ["B-C1", "B-C2"]
    assert {r["municipality"] for r in rows} == {"Village of Belleville"}
    assert rows[0]["statute"] == "Wis. Stat. § 66.0627(4)"

    summary_file = json.loads((tmp_path / "dane-2026.summary.json").read_text(encoding="utf-8"))
    assert printed["written"] == {"csv": str(out), "summary": str(tmp_path / "dane-2026.summary.json")}
    for totals in (summary_file, {k: v for k, v in printed.items() if k != "written"}):
        assert totals == summary_file
    assert (summary_file["charges"], summary_file["principal"], summary_file["total"]) == \
        (2, "300.00", "300.00")
    assert summary_file["interest"] is None  # no rule sets an interest rate
    assert summary_file["municipality_name"] == "Village of Belleville"
    assert (summary_file["tax_year"], summary_file["county"], summary_file["list"]) == \
        (2026, "Dane", "certified")
    assert summary_file["by_charge_type"] == [
        {"charge_type": "special_charge", "statute": "Wis. Stat. § 66.0627(4)", "charges": 2,
         "principal": "300.00", "interest": None, "total": "300.00"}]
    certification = summary_file["certification"]
    assert certification["certified_by"] == ["treasurer.lund"]
    assert certification["newly_certified"] == 2
    assert certification["last_certified_at"] == local(certification["last_certified_at_utc"])
    assert summary_file["produced_at"] == local(summary_file["produced_at_utc"])
    assert summary_file["csv"]["sha256"] == hashlib.sha256(raw).hexdigest()
    # The certification sealed the store: the list and its summary carry the seal, and the
    # seal line kept from the summary proves the store later.
    seal = summary_file["seal"]
    assert {(r["seal_id"], r["seal_position"], r["seal_digest"]) for r in rows} == \
        {(str(seal["id"]), str(seal["position"]), seal["digest"])}
    assert seal["line"].startswith(f"abate-seal {seal['id']} position {seal['position']} ")
    assert seal["line"].endswith(f"digest {seal['digest']}")
    checked = abate.json("verify", "--seal", seal["line"])
    assert checked["matches"] is True


def test_excel_option_writes_a_byte_order_mark_and_export_takes_output_too(tmp_path):
    abate = Abate((f"sqlite:///{tmp_path / 'x.sqlite3'}", {}, None))
    abate.load(tmp_path, *billed("B-X1"))
    out = tmp_path / "list.csv"
    abate.run("tax-roll", "export", "--municipality", "belleville", "--tax-year", "2026",
              "--as-of", "2026-11-15", "--excel", "--output", str(out))
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert rows[0]["statute"] == "Wis. Stat. § 66.0627(4)" and rows[0]["tax_year"] == "2026"
    listed = json.loads((tmp_path / "list.summary.json").read_text(encoding="utf-8"))
    assert listed["list"] == "export" and listed["charges"] == 1
    assert listed["csv"]["encoding"].startswith("utf-8 with byte-order mark")
    # On stdout as well.
    assert abate.run("tax-roll", "export", "--municipality", "belleville", "--tax-year", "2026",
                     "--excel").stdout.startswith(b"\xef\xbb\xbf")


def test_an_output_folder_that_does_not_exist_certifies_nothing(tmp_path):
    abate = Abate((f"sqlite:///{tmp_path / 'x.sqlite3'}", {}, None))
    abate.load(tmp_path, *billed("B-X1"))
    done = abate.run("tax-roll", "certify", "--municipality", "belleville", "--tax-year", "2026",
                     "--county", "Dane", "--actor", "t", "--output",
                     str(tmp_path / "no" / "such.csv"), ok=False)
    assert done.returncode == 2
    assert b"does not exist; nothing was" in done.stderr and b"Traceback" not in done.stderr
    listed = abate.json("tax-roll", "export", "--municipality", "belleville", "--tax-year",
                        "2026", "--format", "json")
    assert listed["charges"][0]["certified"] is False


def test_a_batch_checks_only_the_cells_that_can_hold_typed_text():
    """Cells Abate formats itself (``formatted``: numbers, ISO dates) are left out of a
    batch's check; every other cell is checked, and the bytes are those of safe_cell."""
    import itertools

    from projections.csv_cells import SafeCsvWriter, safe_cell

    texts = ["", None, "=1", "+x", "-12.50", "@a", "\tx", "\r=1", "a\x00b", "\x1b[31m",
             "O'Neil\nl2", "x\ty", "§ 9.13", *HOSTILE_OWNERS]
    numbers, days = ["", None, 42, "12.50", "-1.00", "0.00"], ["", None, "2026-05-01"]
    columns = ["text", "number", "day", "more_text"]
    for text, number, day in itertools.product(texts, numbers, days):
        for batch in ([(text, number, day, "plain")],
                      [("plain", "1.00", "2026-01-02", "x"), ("y", number, day, text)]):
            out, expected = io.StringIO(), io.StringIO()
            SafeCsvWriter(out, columns, numeric={"number"},
                          formatted={"number", "day"}).writerows_values(batch)
            csv.writer(expected, lineterminator="\n").writerows(
                [safe_cell(t), safe_cell(n, numeric=True), safe_cell(d), safe_cell(m)]
                for t, n, d, m in batch)
            assert out.getvalue() == expected.getvalue(), batch


# ---------------------------------------------------------------- formulas and old records


def test_owner_names_that_look_like_formulas_are_kept_as_text(database, tmp_path):
    abate = Abate(database)
    abate.load(tmp_path, *[line for n, owner in enumerate(HOSTILE_OWNERS)
                           for line in billed(f"B-F{n}", owner)])
    text = abate.text("tax-roll", "export", "--municipality", "belleville", "--tax-year", "2026",
                      "--as-of", "2026-11-15")
    rows = {r["case_ref"]: r for r in csv.DictReader(io.StringIO(text))}
    for n, owner in enumerate(HOSTILE_OWNERS):
        cell = rows[f"B-F{n}"]["owner_name"]
        assert cell == "'" + owner  # the text kept whole, a quote in front: never a formula
        assert rows[f"B-F{n}"]["total"] == "150.00"  # Abate's own numbers stay numbers
    for row in rows.values():
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r"))


def test_a_control_character_an_older_abate_accepted_is_shown_and_the_export_goes_on(tmp_path):
    """The input policy now refuses a NUL; a record from before it is simulated in the view."""
    path = tmp_path / "old.sqlite3"
    abate = Abate((f"sqlite:///{path}", {}, None))
    abate.load(tmp_path, *billed("B-OLD"), *billed("B-NEW"))
    abate.run("tax-roll", "export", "--municipality", "belleville", "--tax-year", "2026")
    with sqlite3.connect(path) as db:
        [table] = [name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'abate_tax_roll_versions_g%'")]
        db.execute(f"UPDATE {table} SET owner_name = ? WHERE case_ref = 'B-OLD'",
                   ("Ann\x00Owner\x1b[31m",))
    raw = abate.run("tax-roll", "export", "--municipality", "belleville", "--tax-year",
                    "2026").stdout
    assert b"\x00" not in raw and b"\x1b" not in raw
    rows = {r["case_ref"]: r for r in csv.DictReader(io.StringIO(raw.decode("utf-8")))}
    assert rows["B-OLD"]["owner_name"] == "Ann\\x00Owner\\x1b[31m"
    assert rows["B-NEW"]["owner_name"] == "Ann Owner" and rows["B-NEW"]["total"] == "150.00"


def test_cells_and_the_seal_columns():
    from projections.csv_cells import safe_cell
    from projections.tax_roll_file import csv_text, summary

    assert safe_cell("\tx") == "'\tx" and safe_cell("\r=1") == "'\r=1"
    assert safe_cell("-12.50", numeric=True) == "-12.50"
    assert safe_cell("-1+2", numeric=True) == "'-1+2"  # not a plain number: neutralised
    assert safe_cell("-12.50") == "'-12.50"  # text columns: neutralised whatever it looks like
    assert safe_cell("O'Neil\nline 2") == "O'Neil\nline 2"
    place = default_catalog().municipality("mazomanie")
    charge = {"tax_year": 2026, "county": "Dane", "case_ref": "M-1", "total": "5.00",
              "principal": "5.00", "interest": "", "charge_type": "t", "statute": "s",
              "certified": True, "certified_at": "2026-12-03T02:00:00+00:00",
              "certified_by": "clerk"}
    seal = {"id": "seal-7", "position": 42, "digest": "ab" * 32}
    [row] = list(csv.DictReader(io.StringIO(csv_text([charge], place, seal=seal))))
    assert row["municipality"] == "Village of Mazomanie"
    assert (row["seal_id"], row["seal_position"], row["seal_digest"]) == ("seal-7", "42", "ab" * 32)
    info = summary([charge], place, tax_year=2026, county="Dane", as_of=dt.date(2026, 12, 2),
                   known_at=None, certified=True,
                   produced_at=dt.datetime(2026, 12, 3, 2, tzinfo=dt.timezone.utc), seal=seal)
    assert info["seal"] == seal and info["produced_at"] == "2026-12-02T20:00:00-06:00"
    assert info["certification"]["first_certified_at"] == "2026-12-02T20:00:00-06:00"


def test_a_list_that_cannot_be_written_leaves_no_half_and_says_why(tmp_path):
    abate = Abate((f"sqlite:///{tmp_path / 'x.sqlite3'}", {}, None))
    abate.load(tmp_path, *billed("B-X1"))
    (tmp_path / "roll.summary.json").mkdir()  # the summary would replace a folder
    done = abate.run("tax-roll", "export", "--municipality", "belleville", "--tax-year", "2026",
                     "--output", str(tmp_path / "roll.csv"), ok=False)
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert b"roll.summary.json would overwrite a folder" in done.stderr
    (tmp_path / "roll.summary.json").rmdir()
    (tmp_path / "roll.summary.json.partial").mkdir()  # the summary cannot be written at all
    done = abate.run("tax-roll", "export", "--municipality", "belleville", "--tax-year", "2026",
                     "--output", str(tmp_path / "roll.csv"), ok=False)
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert b"roll.summary.json.partial" in done.stderr and b"nothing was written" in done.stderr
    assert not (tmp_path / "roll.csv").exists() and not (tmp_path / "roll.csv.partial").exists()


def test_the_row_writer_neutralises_exactly_as_cell_by_cell():
    """SafeCsvWriter checks a row, or a batch of rows, at once (for speed); the cells are
    those of safe_cell."""
    import itertools

    from projections.csv_cells import SafeCsvWriter, safe_cell

    values = ["", None, "=1", "+x", "-12.50", "-1+2", "@a", "\tx", "\r=1", "a\x00b",
              "\x1b[31m", "O'Neil\nl2", 42, "12", "§ 9.13", "x\ty", *HOSTILE_OWNERS]
    for text, number in itertools.product(values, repeat=2):
        out, expected = io.StringIO(), io.StringIO()
        SafeCsvWriter(out, ["text", "number"], numeric={"number"}).writerow(
            {"text": text, "number": number})
        csv.writer(expected, lineterminator="\n").writerow([safe_cell(text),
                                                            safe_cell(number, numeric=True)])
        assert out.getvalue() == expected.getvalue(), (text, number)
        # A batch of rows checked at once (the large exports): the same cells, whether the
        # batch holds a cell that needs care or not.
        for batch in ([(text, number)], [("plain", "1.00"), (text, number), ("x", 7)]):
            out, expected = io.StringIO(), io.StringIO()
            SafeCsvWriter(out, ["text", "number"], numeric={"number"}).writerows_values(batch)
            csv.writer(expected, lineterminator="\n").writerows(
                [safe_cell(t), safe_cell(n, numeric=True)] for t, n in batch)
            assert out.getvalue() == expected.getvalue(), batch

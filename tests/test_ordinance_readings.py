"""Four ordinance sections read as their text says (issue 9, item 7), each table-driven
and quoting the text: through `abate import` and read back through `abate case show`,
`abate repeat-offenses` and `abate tax-roll export`, run as the installed command.

Each quote is checked to be in the rule's own data (cases/rules/*.yaml) and, where the
ordinance texts are at hand, in the ordinance itself.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cases.repeat_scan import ScanRepeatOffenses
from cases.rules.catalog import RULES_DIR
from tests.abate_command import run_abate
from tests.builders import DANE_PARCEL, CaseLines, as_lines

ORDINANCES = Path("/work/shared/ordinances")
OTHER_PARCEL = {"county": "Dane", "number": "0509-222-3333-4"}


def words(text: str) -> str:
    return " ".join(text.replace("’", "'").split())


def check_quote(quote: str, municipality: str) -> None:
    """The quote is in the rule data, and in the ordinance text when it is at hand."""
    assert words(quote) in words((RULES_DIR / f"{municipality}.yaml").read_text())
    texts = sorted(ORDINANCES.glob("*.txt")) if ORDINANCES.is_dir() else []
    if texts:
        assert any(words(quote) in words(t.read_text(encoding="utf-8")) for t in texts), quote


class Store:
    """A fresh SQLite store driven through the `abate` command (in this process)."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.base = ["--database-url", f"sqlite:///{tmp_path / 'abate.sqlite3'}"]
        self.journals = 0

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return run_abate(*self.base, *args)

    def load(self, *commands: dict) -> subprocess.CompletedProcess:
        self.journals += 1
        journal = self.tmp / f"j{self.journals}.jsonl"
        journal.write_text("\n".join(as_lines(*commands)) + "\n")
        return self.run("import", str(journal))

    def ok(self, *commands: dict) -> None:
        done = self.load(*commands)
        assert done.returncode == 0, done.stderr

    def refused(self, *commands: dict) -> str:
        done = self.load(*commands)
        assert done.returncode == 1, done.stdout
        assert "nothing was recorded" in done.stderr and "Traceback" not in done.stderr
        return done.stderr

    def show(self, municipality: str, case_ref: str) -> dict:
        done = self.run("case", "show", "--municipality", municipality, case_ref)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def json(self, *args: str) -> dict:
        done = self.run(*args)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


@pytest.fixture
def abate(tmp_path) -> Store:
    return Store(tmp_path)


# ---------------------------------------------------------------- § 9.24(8): bond, then the roll

BOND_TEXT = ("These costs and expenses will be billed to the permit holder and may be drawn from "
             "the performance bond if left unpaid. Where such performance bond is insufficient to "
             "cover these costs, the costs and expenses shall be entered on the tax roll as a "
             "special charge against the property pursuant to Section 66.0627, Wis. Stats., and "
             "collected with any other taxes levied thereon for the year in which the work is "
             "completed.")


def grading_case(ref: str, completed_at: str) -> tuple[CaseLines, list[dict]]:
    """A § 9.24 case whose Village work is completed at ``completed_at``, then billed."""
    lines = CaseLines("belleville", ref, actor="engineer")
    return lines, [
        lines.open("belleville:9.24", "2025-10-01T09:00:00-05:00",
                   responsible={"name": "Dig Co (permittee)"}),
        lines.cmd("serve_notice", "2025-10-01T10:00:00-05:00", method="certified_mail",
                  served_on="Dig Co", delivered_at="2025-10-03T10:00:00-05:00"),
        lines.cmd("record_abatement", completed_at, costs=[{"item": "silt fence", "amount": "2000.00"}]),
        lines.cmd("issue_bill", completed_at.replace("T16", "T17")),
    ]


def listed(abate: Store, tax_year: int, as_of: str) -> dict[str, str]:
    rows = abate.json("tax-roll", "export", "--municipality", "belleville", "--tax-year",
                      str(tax_year), "--as-of", as_of, "--format", "json")["charges"]
    return {r["case_ref"]: r["principal"] for r in rows}


@pytest.mark.parametrize("quote", [BOND_TEXT])
@pytest.mark.parametrize("drawn, on_2025_roll, status", [
    pytest.param("1500.00", "500.00", "billed", id="bond insufficient: the remainder, 2025 roll"),
    pytest.param("0.00", "2000.00", "billed", id="bond waived: the whole bill, 2025 roll"),
    pytest.param("2000.00", None, "paid", id="bond covers the bill: never on the roll"),
    pytest.param(None, None, "billed", id="no draw yet: not on the roll"),
])
def test_grading_costs_are_drawn_from_the_bond_and_the_rest_goes_on_the_completion_years_roll(
        abate, quote, drawn, on_2025_roll, status):
    check_quote(quote, "belleville")
    # Work completed on 2025-12-10, after the 11-15 cut-off: the text names the year of
    # completion (2025), not the next roll.
    lines, commands = grading_case("G-1", "2025-12-10T16:00:00-06:00")
    if drawn is not None:
        commands.append(lines.cmd("record_bond_draw", "2026-01-20T10:00:00-06:00", amount=drawn))
    abate.ok(*commands)
    assert listed(abate, 2025, "2026-02-01").get("G-1") == on_2025_roll
    assert "G-1" not in listed(abate, 2026, "2026-11-30")
    shown = abate.show("belleville", "G-1")
    assert shown["status"] == status
    if drawn is not None:
        draw = shown["events"][-1]
        assert draw["type"] == "BondDrawn"
        assert shown["charge"]["bond_drawn"] == drawn and shown["charge"]["roll_year"] == 2025
        assert draw["facts"]["citation"] == "Belleville Code § 9.24(6), (8)"


def test_a_bond_draw_before_the_bill_and_certifying_for_another_year_are_refused(abate):
    check_quote("for the year in which the work is completed", "belleville")
    lines, commands = grading_case("G-2", "2025-12-10T16:00:00-06:00")
    early = abate.refused(*commands[:3], lines.cmd("record_bond_draw", "2025-12-10T16:30:00-06:00",
                                                   amount="100.00"))
    assert "issue the bill first" in early and "§ 9.24" in early
    abate.ok(*commands, lines.cmd("record_bond_draw", "2026-01-20T10:00:00-06:00", amount="1500.00"))
    wrong_year = abate.refused(lines.cmd("certify_charge", "2026-11-20T10:00:00-06:00", tax_year=2026))
    assert "for the year in which the work is completed" in wrong_year and "2025, not 2026" in wrong_year
    abate.ok(lines.cmd("certify_charge", "2026-11-20T10:00:00-06:00", tax_year=2025))
    assert abate.show("belleville", "G-2")["charge"]["certified"]["amount"] == "500.00"


# ---------------------------------------------------------------- repeat windows: whom they count

REPEAT_TEXTS = {
    "9.13": "A second or subsequent violation within any twelve (12)-month period may result in "
            "an additional forfeiture",
    "9.14": "A second or subsequent violation within any twelve (12)-month period may result in "
            "a forfeiture and the Village may act without further notice.",
    "9.25": "Any person found guilty of violating any part of this ordinance who has previously "
            "been notified of being in violation or has been convicted of violating the same "
            "ordinance within one (1) year",
    "11.013": "Any subsequent and similar violations of this Ordinance within a twelve (12) "
              "month period shall be considered a continued offense",
}


def prior_case(rule: str, ref: str, at: str, person: str, parcel: dict) -> list[dict]:
    lines = CaseLines("belleville", ref)
    notice = {"cure_days": 10} if rule == "11.013" else {}
    return [lines.open(f"belleville:{rule}", at, parcel=parcel, responsible={"name": person}),
            lines.cmd("serve_notice", at.replace("T09", "T10"), method="personal",
                      served_on=person, **notice)]


@pytest.mark.parametrize("rule, family, counts, same_parcel_new_person, other_parcel_same_person", [
    pytest.param("9.13", "dumping", "parcel_or_party", 1, 1, id="9.13 counts the violation"),
    pytest.param("9.14", "ditch", "parcel_or_party", 1, 1, id="9.14 counts the violation"),
    pytest.param("9.25", "refuse", "person_notified_or_convicted", 0, 1,
                 id="9.25 counts the person notified"),
    pytest.param("11.013", "property_maintenance", "responsible_party", 0, 1,
                 id="11.013 counts the responsible person"),
])
def test_each_repeat_window_counts_whom_its_text_names(
        abate, rule, family, counts, same_parcel_new_person, other_parcel_same_person):
    check_quote(REPEAT_TEXTS[rule], "belleville")
    abate.ok(*prior_case(rule, "R-1", "2026-03-02T09:00:00-06:00", "Pat Prior", DANE_PARCEL))

    def ask(*who: str) -> dict:
        return abate.json("repeat-offenses", "--municipality", "belleville", "--rule-family",
                          family, *who, "--as-of", "2026-09-01")

    same_person = ask("--party", "Pat Prior")
    assert (same_person["counts"], same_person["count"]) == (counts, other_parcel_same_person)
    assert ask("--party", "Nina New")["count"] == 0
    by_parcel = abate.run("repeat-offenses", "--municipality", "belleville", "--rule-family",
                          family, "--parcel", "Dane/0509-123-4567-0", "--as-of", "2026-09-01")
    if counts == "parcel_or_party":
        assert json.loads(by_parcel.stdout)["count"] == same_parcel_new_person
    else:  # the text counts a person: a parcel is not an answer to its question
        assert by_parcel.returncode == 1 and "give --party" in by_parcel.stderr
        assert "Traceback" not in by_parcel.stderr


@pytest.mark.parametrize("quote", [REPEAT_TEXTS["9.25"]])
@pytest.mark.parametrize("new_person, parcel, expected_refs", [
    pytest.param("Nina New", DANE_PARCEL, [], id="new tenant on the same parcel, never notified"),
    pytest.param("Pat Prior", OTHER_PARCEL, ["R-1"], id="the same person on another parcel"),
])
def test_a_refuse_notice_escalates_only_for_a_person_previously_notified(
        abate, quote, new_person, parcel, expected_refs):
    check_quote(quote, "belleville")
    abate.ok(*prior_case("9.25", "R-1", "2026-03-02T09:00:00-06:00", "Pat Prior", DANE_PARCEL),
             *prior_case("9.25", "R-2", "2026-09-01T09:00:00-05:00", new_person, parcel))
    notice = abate.show("belleville", "R-2")["notices"][0]
    assert notice["repeat_evidence"]["case_refs"] == expected_refs
    assert notice["repeat_evidence"]["counts"] == "person_notified_or_convicted"
    assert (notice["repeat_consequence"] is not None) == bool(expected_refs)


@pytest.mark.parametrize("quote", [REPEAT_TEXTS["9.25"]])
@pytest.mark.parametrize("convicted, expected", [
    pytest.param(True, 1, id="convicted within one year"),
    pytest.param(None, 0, id="notified more than a year before, not convicted"),
])
def test_a_conviction_within_the_year_counts_though_the_notice_was_earlier(
        abate, quote, convicted, expected):
    check_quote(quote, "belleville")
    prior = CaseLines("belleville", "R-OLD")
    flag = {"convicted": convicted} if convicted is not None else {}
    abate.ok(*prior_case("9.25", "R-OLD", "2025-06-02T09:00:00-05:00", "Pat Prior", DANE_PARCEL),
             prior.cmd("record_disposition", "2026-02-02T09:00:00-06:00",
                       outcome="found guilty", **flag))
    answer = abate.json("repeat-offenses", "--municipality", "belleville", "--rule-family",
                        "refuse", "--party", "Pat Prior", "--as-of", "2026-09-01")
    assert answer["count"] == expected


@pytest.mark.parametrize("rule, same_parcel_new_person", [
    ("9.13", 1), ("9.25", 0), ("11.013", 0)])
def test_the_fallback_scan_answers_by_the_same_setting(service, rule, same_parcel_new_person):
    """Without a view (cases.repeat_scan): the same reading as the projection."""
    from tests.conftest import NOW

    service.import_journal(as_lines(*prior_case(rule, "S-1", "2026-03-02T09:00:00-06:00",
                                                "Pat Prior", DANE_PARCEL)), now=NOW)
    rule_data = service.catalog.rule_version(f"belleville:{rule}", 1)
    scan = ScanRepeatOffenses(lambda: [service.store.get_case(k) for k in service.store.case_ids()])
    import datetime as dt

    evidence = scan.prior_violations(
        municipality="belleville", family=rule_data.family, parcel=DANE_PARCEL, party="Nina New",
        violation_date=dt.date(2026, 9, 1), window_months=12, exclude_case_ref="S-2",
        counts=rule_data.repeat.counts)
    assert evidence.count == same_parcel_new_person


# ---------------------------------------------------------------- § 11.013(2): posting is a fallback

NOT_FOUND = ("by certified mail or by delivering the order to him or her personally. If the "
             "owner, his or her agent, or other responsible person cannot be found, an "
             "authorized agent of the Village shall do one (1) or more of the following")


@pytest.mark.parametrize("quote", [NOT_FOUND])
@pytest.mark.parametrize("attempt, method, accepted", [
    pytest.param(None, "posting", False, id="posting, no attempt recorded: refused"),
    pytest.param(None, "abode", False, id="abode delivery, no attempt recorded: refused"),
    pytest.param("certified_mail", "posting", True, id="certified letter returned, then posting"),
    pytest.param("personal", "abode", True, id="nobody at the door, then abode delivery"),
    pytest.param(None, "certified_mail", True, id="a primary method needs no attempt"),
])
def test_posting_or_abode_delivery_needs_a_recorded_attempt_to_find_the_owner(
        abate, quote, attempt, method, accepted):
    check_quote(quote, "belleville")
    lines = CaseLines("belleville", "PM-1")
    commands = [lines.open("belleville:11.013", "2026-06-01T10:00:00-05:00")]
    if attempt:
        commands.append(lines.cmd("record_service_attempt", "2026-06-03T10:00:00-05:00",
                                  method=attempt, attempted_by="Officer Lee",
                                  result="returned unclaimed" if attempt == "certified_mail"
                                  else "nobody at the house"))
    commands.append(lines.cmd("serve_notice", "2026-06-10T10:00:00-05:00", method=method,
                              served_on="posted on the front door", cure_days=14))
    if not accepted:
        message = abate.refused(*commands)
        assert "belleville:11.013" in message and "cannot be found" in message
        assert "record_service_attempt" in message
        assert abate.run("case", "show", "--municipality", "belleville", "PM-1").returncode == 1
        return
    abate.ok(*commands)
    notice = abate.show("belleville", "PM-1")["notices"][0]
    if attempt:
        assert [(a["method"], a["attempted_by"], a["at"]) for a in notice["after_attempts"]] == [
            (attempt, "Officer Lee", "2026-06-03T10:00:00-05:00")]
        assert notice["fallback_citation"] == "Belleville Code § 11.013(2)(a)"
    else:
        assert "after_attempts" not in notice


def test_an_attempt_by_a_fallback_method_is_not_an_attempt_to_find_the_owner(abate):
    lines = CaseLines("belleville", "PM-2")
    message = abate.refused(lines.open("belleville:11.013", "2026-06-01T10:00:00-05:00"),
                            lines.cmd("record_service_attempt", "2026-06-03T10:00:00-05:00",
                                      method="posting", attempted_by="Officer Lee", result="x"))
    assert "primary method" in message and "certified_mail, personal" in message


# ---------------------------------------------------------------- separate offenses

SNOW_24H = ("Each twenty-four (24) hour period where a violation occurs shall constitute a "
            "separate offense under this section for enforcement purposes.")
MAZO_24H = ("Each twenty-four-hour period where a violation occurs shall constitute a separate "
            "offense under this section for enforcement purposes.")
REFUSE_DAY = ("Each violation and each day a violation continues or occurs shall constitute a "
              "separate offense.")
PM_DAY = "Each day of continued violation shall constitute a separate offense."


def snow(municipality: str, rule: str, ref: str) -> tuple[CaseLines, list[dict]]:
    lines = CaseLines(municipality, ref, actor="officer")
    return lines, [lines.open(rule, "2026-01-12T08:00:00-06:00",
                              snow_ended_at="2026-01-10T06:00:00-06:00")]


def refuse(ref: str) -> tuple[CaseLines, list[dict]]:
    lines = CaseLines("belleville", ref, actor="officer")
    return lines, [lines.open("belleville:9.25", "2026-10-05T10:00:00-05:00")]


def maintenance(ref: str) -> tuple[CaseLines, list[dict]]:
    lines = CaseLines("belleville", ref, actor="officer")
    return lines, [lines.open("belleville:11.013", "2026-06-01T10:00:00-05:00"),
                   lines.cmd("record_compliance", "2026-06-05T09:00:00-05:00", notes="repaired")]


@pytest.mark.parametrize("quote, municipality, build, cited_at, began, dates, forfeiture", [
    pytest.param(SNOW_24H, "belleville", lambda: snow("belleville", "belleville:9.09", "O-1"),
                 "2026-01-13T20:00:00-06:00", "2026-01-11T18:00:00-06:00",
                 ["2026-01-11", "2026-01-12", "2026-01-13"], "forfeiture amount not set",
                 id="9.09: 24-hour periods from the 36-hour forfeiture threshold to the citation"),
    pytest.param(MAZO_24H, "mazomanie", lambda: snow("mazomanie", "mazomanie:360-10", "O-2"),
                 "2026-01-12T09:00:00-06:00", "2026-01-12T06:00:00-06:00",
                 ["2026-01-12"], "forfeiture amount not set",
                 id="360-10: 24-hour periods from the owner's 48 hours"),
    pytest.param(REFUSE_DAY, "belleville", lambda: refuse("O-3"),
                 "2026-10-07T09:30:00-05:00", "2026-10-05T10:00:00-05:00",
                 ["2026-10-05", "2026-10-06", "2026-10-07"], "forfeiture amount not set",
                 id="9.25: each day from the violation observed"),
    pytest.param(PM_DAY, "belleville", lambda: maintenance("O-4"),
                 "2026-06-20T10:00:00-05:00", "2026-06-01T10:00:00-05:00",
                 ["2026-06-01", "2026-06-02", "2026-06-03", "2026-06-04", "2026-06-05"],
                 "$50–$150", id="11.013: each day to the compliance, $50-$150 per offense"),
])
def test_a_citation_states_the_separate_offenses_from_the_violations_start_to_its_end(
        abate, quote, municipality, build, cited_at, began, dates, forfeiture):
    check_quote(quote, municipality)
    lines, commands = build()
    abate.ok(*commands, lines.cmd("issue_citation", cited_at, citation_number="C-1"))
    citation = abate.show(municipality, lines.case_ref)["citations"][0]
    assert [o["date"] for o in citation["offenses"]] == dates
    assert citation["offense_count"] == len(dates)
    basis = citation["offense_basis"]
    assert basis["began_at"] == began and basis["text"] == quote
    assert (basis["rule"], basis["rule_version"]) == (commands[0]["rule"], 1)
    assert citation["forfeiture"].startswith(forfeiture)
    assert f"{len(dates)} separate offenses" in citation["forfeiture"]


@pytest.mark.parametrize("quote, municipality, build, cited_at, typed, error", [
    pytest.param(SNOW_24H, "belleville", lambda: snow("belleville", "belleville:9.09", "D-1"),
                 "2026-01-13T20:00:00-06:00", ["2026-01-11", "2026-01-10"],
                 "field offense_dates.1: 2026-01-10 is before the violation began (2026-01-11 18:00 CST",
                 id="9.09: a date before the forfeiture threshold"),
    pytest.param(REFUSE_DAY, "belleville", lambda: refuse("D-2"),
                 "2026-10-07T09:30:00-05:00", ["2026-10-01"],
                 "field offense_dates.0: 2026-10-01 is before the violation began",
                 id="9.25: a date before the violation was observed"),
    pytest.param(PM_DAY, "belleville", lambda: maintenance("D-3"),
                 "2026-06-20T10:00:00-05:00", ["2026-06-04", "2026-06-19"],
                 "field offense_dates.1: 2026-06-19 is after the violation ended",
                 id="11.013: a date after the compliance"),
])
def test_offense_dates_outside_the_violation_are_refused(
        abate, quote, municipality, build, cited_at, typed, error):
    check_quote(quote, municipality)
    lines, commands = build()
    message = abate.refused(*commands, lines.cmd("issue_citation", cited_at,
                                                 citation_number="C-1", offense_dates=typed))
    assert error in message
    # all or nothing: not even the case was recorded
    assert abate.run("case", "show", "--municipality", municipality, lines.case_ref).returncode == 1

"""The worklist's actions: every state in which a person must act is an item, with who
acts and the rule that says so, and it leaves the list when the action is recorded.

One row per kind of action (and per office where the office differs by rule). Each row
is a journal imported through ``abate import`` and read back through ``abate worklist``
(SQLite, the installed command), and the same journal through the view on every real
backend (PostgreSQL too). Each row quotes the ordinance words that make it an action.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cases.action_kinds import UNDATED
from projections import Worklist
from tests.abate_command import run_abate
from tests.builders import CaseLines, as_lines, clock

ABATE = str(Path(sys.executable).with_name("abate"))
BELLEVILLE_CH9 = "000_58ac701ea68635c3.txt"
MAZOMANIE_CH360 = "004_6c25047bfe1e71f7.txt"

DUMP = CaseLines("belleville", "A-DUMP")
SNOW_LATE = CaseLines("belleville", "A-SNOW-LATE")
BLOCK = CaseLines("belleville", "A-BLOCK")
HAZARD = CaseLines("belleville", "A-HAZARD")
APPEAL = CaseLines("belleville", "A-APPEAL")
MAZ = CaseLines("mazomanie", "A-MAZ")
MAZ_LATE = CaseLines("mazomanie", "A-MAZ-LATE")
CREW = [{"item": "crew", "amount": "150.00"}]

# ------------------------------------------------------------------ case histories

BLOCK_CURE_RAN = [
    BLOCK.open("belleville:9.07", "2026-02-02T09:00:00-06:00"),
    BLOCK.cmd("serve_notice", "2026-02-02T10:00:00-06:00", method="personal", served_on="Ann"),
    clock("belleville", "2026-02-04T00:00:00-06:00"),  # § 9.07(4): 24 h ran 02-03 10:00
]
BLOCK_ABATED = [*BLOCK_CURE_RAN,
                BLOCK.cmd("record_abatement", "2026-02-04T09:00:00-06:00", costs=CREW)]
BLOCK_UNPAID_60_DAYS = [*BLOCK_ABATED,
                        BLOCK.cmd("issue_bill", "2026-02-05T09:00:00-06:00"),
                        clock("belleville", "2026-04-10T00:00:00-05:00")]
HAZARD_DECLARED = [
    HAZARD.open("belleville:9.09", "2026-01-12T08:00:00-06:00",
                snow_ended_at="2026-01-12T07:00:00-06:00"),
    HAZARD.cmd("declare_hazard", "2026-01-12T08:30:00-06:00", description="ice sheet at the school",
               nobody_reachable=True),
]
HAZARD_ABATED = [*HAZARD_DECLARED,
                 HAZARD.cmd("record_abatement", "2026-01-12T09:00:00-06:00", costs=CREW,
                            without_notice_reason="hazard_nobody_reachable")]
HAZARD_UNPAID_60_DAYS = [
    *HAZARD_ABATED,
    HAZARD.cmd("serve_notice", "2026-01-12T12:00:00-06:00", method="first_class_mail",
               served_on="Ann Owner"),
    HAZARD.cmd("issue_bill", "2026-01-13T09:00:00-06:00"),
    clock("belleville", "2026-03-16T00:00:00-05:00"),  # § 9.09(7): 60 days after 01-12
]
APPEAL_FILED = [
    APPEAL.open("belleville:9.13", "2026-03-02T09:00:00-06:00"),
    APPEAL.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal", served_on="Ann"),
    clock("belleville", "2026-03-06T00:00:00-06:00"),
    APPEAL.cmd("record_abatement", "2026-03-06T09:00:00-06:00", costs=CREW),
    APPEAL.cmd("issue_bill", "2026-03-09T09:00:00-05:00"),
    APPEAL.cmd("file_appeal", "2026-03-12T09:00:00-05:00", grounds="not my tires"),
]
MAZ_UNPAID_90_DAYS = [
    MAZ.open("mazomanie:360-10", "2026-01-12T08:00:00-06:00",
             snow_ended_at="2026-01-12T07:00:00-06:00"),
    MAZ.cmd("serve_notice", "2026-01-12T09:00:00-06:00", method="personal", served_on="Ann"),
    clock("mazomanie", "2026-01-15T00:00:00-06:00"),  # § 360-10A: 48 h from delivery
    MAZ.cmd("record_abatement", "2026-01-15T09:00:00-06:00", costs=CREW),
    MAZ.cmd("issue_bill", "2026-01-16T09:00:00-06:00"),
    clock("mazomanie", "2026-04-20T00:00:00-05:00"),  # 90 days after 01-15
]


@dataclass
class Row:
    """A case history, the action it must put on the worklist, and what takes it off."""

    name: str
    history: list[dict]
    expected: dict  # fields of the one item of this kind on this case
    quote: tuple[str, str]  # (ordinance file, the words that make it an action)
    done: list[dict] = field(default_factory=list)  # the action recorded

    @property
    def case(self) -> tuple[str, str]:
        first = self.history[0]
        return first["municipality"], first["case_ref"]


ROWS = [
    Row("notice when dumping is observed",
        [DUMP.open("belleville:9.13", "2026-03-02T09:00:00-06:00")],
        {"action": "serve_notice", "by": "the Village", "citation": "Belleville Code § 9.13(2)",
         "due_at": "2026-03-02T15:00:00+00:00", "rule": "belleville:9.13", "rule_version": 1},
        (BELLEVILLE_CH9, "When unlawful dumping is observed or reported, the Village shall issue "
                         "a written notice to the property owner or responsible party."),
        [DUMP.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal", served_on="Ann")]),
    Row("snow notice after 24 hours, case opened after the owner's time ran",
        [SNOW_LATE.open("belleville:9.09", "2026-01-12T08:00:00-06:00",
                        snow_ended_at="2026-01-10T06:00:00-06:00")],
        {"action": "serve_notice", "by": "Police Department or other designated Village officials",
         "citation": "Belleville Code § 9.09(2)(a)1", "due_at": "2026-01-11T12:00:00+00:00",
         "rule": "belleville:9.09"},
        (BELLEVILLE_CH9, "After twenty-four (24) hours, notice shall be given by the Police "
                         "Department or other designated Village officials to the person in "
                         "charge of the applicable property"),
        [SNOW_LATE.cmd("serve_notice", "2026-01-12T09:00:00-06:00", method="personal",
                       served_on="Ann")]),
    Row("re-inspection after the cure period ran",
        BLOCK_CURE_RAN,
        {"action": "reinspect", "by": "inspector", "citation": "Belleville Code § 9.07(4), (5)",
         "due_at": "2026-02-03T16:00:00+00:00"},
        (BELLEVILLE_CH9, "If the owner or occupant fails to remove the obstruction within the "
                         "time period established in Section 9.07(4) or (5) respectively"),
        [BLOCK.cmd("record_inspection", "2026-02-04T08:00:00-06:00", findings="still blocked")]),
    Row("village abatement after the cure period ran",
        BLOCK_CURE_RAN,
        {"action": "abate", "by": "any Village enforcement official",
         "citation": "Belleville Code § 9.07(6)(a)", "due_at": "2026-02-03T16:00:00+00:00"},
        (BELLEVILLE_CH9, "any Village enforcement official shall cause the removal of the "
                         "obstruction"),
        [BLOCK.cmd("record_abatement", "2026-02-04T09:00:00-06:00", costs=CREW)]),
    Row("immediate abatement of a hazard when nobody can be reached",
        HAZARD_DECLARED,
        {"action": "abate",
         "by": "Village law enforcement officers and other designated Village officials and employees",
         "citation": "Belleville Code § 9.09(2)(b)", "due_at": "2026-01-12T14:30:00+00:00"},
        (BELLEVILLE_CH9, "the police officer and other designated Village officials and "
                         "employees shall immediately cause the removal of the snow and/or ice"),
        [HAZARD.cmd("record_abatement", "2026-01-12T09:00:00-06:00", costs=CREW,
                    without_notice_reason="hazard_nobody_reachable")]),
    Row("notice to mail after an immediate hazard abatement",
        HAZARD_ABATED,
        {"action": "notice_after_abatement",
         "by": "police officer and other designated Village officials and employees",
         "citation": "Belleville Code § 9.09(2)(b)", "due_at": "2026-01-12T15:00:00+00:00"},
        (BELLEVILLE_CH9, "shall send a written notice to the last known address of the property "
                         "owner notifying him/her that a hazardous condition existed which "
                         "required immediate abatement"),
        [HAZARD.cmd("serve_notice", "2026-01-12T12:00:00-06:00", method="first_class_mail",
                    served_on="Ann Owner")]),
    Row("bill to issue after a village abatement",
        BLOCK_ABATED,
        {"action": "issue_bill", "by": "Village Clerk", "citation": "Belleville Code § 9.07(6)(a)",
         "by_citation": "Belleville Code § 9.07(6)(b)", "due_at": "2026-02-04T15:00:00+00:00",
         "what": "bill the abatement cost ($150.00) to the owner"},
        (BELLEVILLE_CH9, "Notice of the bill for abatement of the obstruction shall be mailed to "
                         "the owner of the premises"),
        [BLOCK.cmd("issue_bill", "2026-02-05T09:00:00-06:00")]),
    Row("appeal to decide",
        APPEAL_FILED,
        {"action": "decide_appeal", "by": "Village Board or its designee",
         "due_at": "2026-03-12T14:00:00+00:00"},
        (BELLEVILLE_CH9, "the matter referred to the Village Board or its designee for review "
                         "at the next regularly scheduled meeting"),
        [APPEAL.cmd("decide_appeal", "2026-03-20T09:00:00-05:00", outcome="denied")]),
    Row("obstruction charge whose statute the village attorney must name",
        BLOCK_UNPAID_60_DAYS,
        {"action": "name_statute", "by": "village attorney",
         "citation": "Belleville Code § 9.07(6)(a), (b)",
         "what": "name the statute under which the unpaid $150.00 can go on the 2026 tax "
                 "roll (Dane County) as a special tax: the ordinance names none, so it cannot "
                 "be certified until then"},
        (BELLEVILLE_CH9, "the Village Clerk shall enter those charges onto the tax roll as a "
                         "special tax as provided by the state statutes"),
        # § 9.07(6) names no statute, so the charge cannot be certified: paying it is what
        # ends the action (certifying it is refused: tests/test_statute_guard.py)
        [BLOCK.cmd("record_payment", "2026-04-11T09:00:00-05:00", amount="150.00")]),
    Row("snow charge for the tax roll (Finance Director/Treasurer)",
        HAZARD_UNPAID_60_DAYS,
        {"action": "enter_tax_roll", "by": "Village Finance Director/Treasurer",
         "citation": "Belleville Code § 9.09(7)",
         # due by the 2026 roll's cut-off (11-15, end of the local day), not when eligible
         "due_at": "2026-11-16T05:59:59+00:00",
         "what": "enter the unpaid $150.00 on the 2026 tax roll (Dane County) as a special tax, "
                 "Wis. Stat. § 66.0907(5)"},
        (BELLEVILLE_CH9, "the Village Finance Director/Treasurer shall enter those charges onto "
                         "the tax roll as a special tax"),
        [HAZARD.cmd("record_payment", "2026-03-17T09:00:00-05:00", amount="150.00")]),
    Row("Mazomanie snow charge for the tax roll (Clerk-Treasurer)",
        MAZ_UNPAID_90_DAYS,
        {"action": "enter_tax_roll", "by": "Village Clerk-Treasurer",
         "citation": "Mazomanie Code § 360-10 'Expense'", "rule": "mazomanie:360-10",
         "what": "enter the unpaid $150.00 on the 2026 tax roll (Dane County) as a special tax, "
                 "Wis. Stat. § 66.0907(5)"},
        (MAZOMANIE_CH360, "Within 90 days after such costs and expenses are incurred and remain "
                          "unpaid, the Village Clerk-Treasurer shall enter those charges onto the "
                          "tax roll"),
        [MAZ.cmd("certify_charge", "2026-04-21T09:00:00-05:00", tax_year=2026)]),
    Row("Mazomanie snow notice once the owner's 48 hours ran",
        [MAZ_LATE.open("mazomanie:360-10", "2026-01-15T08:00:00-06:00",
                       snow_ended_at="2026-01-12T07:00:00-06:00")],
        {"action": "serve_notice", "due_at": "2026-01-14T13:00:00+00:00",
         "citation": "Mazomanie Code § 360-10B(1)"},
        (MAZOMANIE_CH360, "shall fail to keep said sidewalk clear of snow and ice as set forth in "
                          "Subsection A, the Village shall take the following action"),
        [MAZ_LATE.cmd("serve_notice", "2026-01-15T09:00:00-06:00", method="personal",
                      served_on="Ann")]),
]
IDS = [r.name for r in ROWS]


def _items(listing: list[dict], row: Row) -> list[dict]:
    municipality, case_ref = row.case
    return [i for i in listing if i["case_ref"] == case_ref and i["municipality"] == municipality
            and i["action"] == row.expected["action"]]


def _check(listing: list[dict], row: Row) -> None:
    [item] = _items(listing, row)
    same_instant = {**item, "due_at": row.expected["due_at"]} if "due_at" in row.expected and (
        dt.datetime.fromisoformat(item["due_at"])
        == dt.datetime.fromisoformat(row.expected["due_at"])) else item
    assert {k: same_instant[k] for k in row.expected} == row.expected
    assert item["by"] and item["by_citation"] and item["what"]


# ------------------------------------------------------------------ through the abate command

def _abate(url: str, *args: str) -> subprocess.CompletedProcess:
    done = run_abate("--database-url", url, *args)
    assert done.returncode == 0, done.stderr
    return done


def _import(url: str, path: Path, commands: list[dict]) -> None:
    path.write_text("\n".join(as_lines(*commands)) + "\n")
    _abate(url, "import", str(path))


def _worklist(url: str, municipality: str, *extra: str) -> dict:
    return json.loads(_abate(url, "worklist", "--municipality", municipality, *extra).stdout)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_abate_worklist_lists_the_action_with_who_acts_until_it_is_recorded(row, tmp_path):
    url = f"sqlite:///{tmp_path / 'w.sqlite3'}"
    municipality, _ = row.case
    _import(url, tmp_path / "history.jsonl", row.history)
    listing = _worklist(url, municipality)
    _check(listing["actions"], row)
    [shown] = _items(listing["actions"], row)  # a person reads the village's local time
    assert shown["due_at"].endswith(("-06:00", "-05:00")) and shown["due_at_utc"].endswith("+00:00")
    overdue = _worklist(url, municipality, "--overdue", "--as-of", "2026-11-30")["actions"]
    if row.expected["action"] in UNDATED:  # no due time: never overdue
        assert _items(overdue, row) == [] and shown["overdue"] is False
    else:
        assert [i["overdue"] for i in _items(overdue, row)] == [True]
    _import(url, tmp_path / "done.jsonl", row.done)
    assert _items(_worklist(url, municipality)["actions"], row) == []


# ------------------------------------------------------------------ the view, every backend

@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_the_worklist_view_holds_the_action_until_it_is_recorded(row, views):
    store, runner, service = views
    municipality, _ = row.case
    as_of = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)

    def listing():
        runner.catch_up()
        with runner.engine.connect() as conn:
            return runner.active(Worklist.name).action_page(
                conn, municipality=municipality, as_of=as_of).rows

    service.import_journal(as_lines(*row.history), now=as_of)
    _check(listing(), row)
    service.import_journal(as_lines(*row.done), now=as_of)
    assert _items(listing(), row) == []


# ------------------------------------------------------------------ the ordinance words

def _ordinances() -> Path | None:
    here = Path(__file__).resolve()
    for candidate in (*(p / "shared" / "ordinances" for p in here.parents),
                      Path("/work/shared/ordinances")):
        if candidate.is_dir():
            return candidate
    return None


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_each_row_quotes_the_ordinance_words_that_make_it_an_action(row):
    folder = _ordinances()
    if folder is None:
        pytest.skip("the ordinance texts (shared/ordinances) are not beside this checkout")
    words = lambda text: re.sub(r"\s+", " ", text).strip()  # noqa: E731
    name, quote = row.quote
    assert words(quote) in words((folder / name).read_text(encoding="utf-8"))


# ------------------------------------------------------------------ deadlines that had run

def test_a_deadline_that_had_run_when_the_case_was_opened_is_passed_at_its_true_time(tmp_path):
    """§ 9.09(1): the owner's 24 hours ran on 01-11 06:00; the case was opened on 01-12 and
    the notice served after it. Through the abate command the owner's time shows as passed,
    at 01-11 06:00, not cancelled by the notice."""
    url = f"sqlite:///{tmp_path / 'w.sqlite3'}"
    row = ROWS[1]
    _import(url, tmp_path / "j.jsonl", [*row.history, *row.done])
    shown = json.loads(_abate(url, "case", "show", "--municipality", "belleville",
                              SNOW_LATE.case_ref).stdout)
    passed = [e for e in shown["events"]
              if e["type"] == "DeadlinePassed" and e["facts"]["name"] == "owner_duty"]
    assert [e["occurred_at"] for e in passed] == ["2026-01-11T06:00:00-06:00"]
    owner_duty = next(d for d in shown["deadlines"] if d["name"] == "owner_duty")
    assert owner_duty["state"] == "passed"


# ------------------------------------------------------------------ due by the roll's cut-off

def test_a_charge_for_next_years_roll_is_due_by_that_rolls_cut_off_not_overdue_before(tmp_path):
    """A § 9.09 charge eligible on 2025-12-09, after Belleville's 11-15 cut-off, goes on the
    2026 roll: entering it is due by 2026-11-15 (end of the local day). In June it is
    listed but not overdue; after the cut-off it is."""
    late = CaseLines("belleville", "A-LATE-ROLL")
    url = f"sqlite:///{tmp_path / 'w.sqlite3'}"
    _import(url, tmp_path / "j.jsonl", [
        late.open("belleville:9.09", "2025-10-10T08:00:00-05:00",
                  snow_ended_at="2025-10-10T07:00:00-05:00"),
        late.cmd("declare_hazard", "2025-10-10T08:30:00-05:00", description="ice sheet",
                 nobody_reachable=True),
        late.cmd("record_abatement", "2025-10-10T09:00:00-05:00", costs=CREW,
                 without_notice_reason="hazard_nobody_reachable"),
        late.cmd("serve_notice", "2025-10-10T12:00:00-05:00", method="first_class_mail",
                 served_on="Ann Owner"),
        late.cmd("issue_bill", "2025-10-11T09:00:00-05:00"),
        clock("belleville", "2025-12-15T00:00:00-06:00"),
    ])
    [june] = [a for a in _worklist(url, "belleville", "--as-of", "2026-06-01")["actions"]
              if a["case_ref"] == late.case_ref]
    assert june["action"] == "enter_tax_roll" and "on the 2026 tax roll" in june["what"]
    assert june["due_at"] == "2026-11-15T23:59:59-06:00" and june["overdue"] is False
    assert [a for a in _worklist(url, "belleville", "--overdue", "--as-of", "2026-06-01")[
        "actions"] if a["case_ref"] == late.case_ref] == []
    december = _worklist(url, "belleville", "--overdue", "--as-of", "2026-11-30")["actions"]
    assert [a["overdue"] for a in december if a["case_ref"] == late.case_ref] == [True]


def test_the_table_gives_the_attorneys_statute_action_no_due_time(tmp_path):
    """§ 9.07(6) names no statute: ``abate worklist --format table`` prints the attorney's
    action with "none" for its due time and not overdue, even in late November."""
    url = f"sqlite:///{tmp_path / 'w.sqlite3'}"
    _import(url, tmp_path / "j.jsonl", BLOCK_UNPAID_60_DAYS)
    table = _abate(url, "worklist", "--municipality", "belleville", "--as-of", "2026-11-30",
                   "--format", "table").stdout
    [line] = [line for line in table.splitlines() if "name_statute" in line]
    cells = re.split(r"\s{2,}", line.strip())
    assert cells[:4] == ["none", BLOCK.case_ref, "name_statute", "village attorney"]
    assert "yes" not in cells


# ------------------------------------------------------------------ rebuilt equals incremental

def test_a_worklist_rebuilt_from_scratch_equals_the_one_built_event_by_event(tmp_path):
    url = f"sqlite:///{tmp_path / 'w.sqlite3'}"
    # One journal per row (what earlier rows did not record), each read, so the view is
    # built a little at a time as the cases change; then some actions are recorded.
    seen: set[str] = set()
    for index, row in enumerate(ROWS):
        new = [c for c in row.history if json.dumps(c) not in seen]
        seen.update(json.dumps(c) for c in new)
        if new:
            _import(url, tmp_path / f"{index}.jsonl", new)
        _worklist(url, row.case[0])
    _import(url, tmp_path / "done.jsonl", [*ROWS[0].done, *ROWS[7].done])
    before = {m: _worklist(url, m, "--as-of", "2026-11-30") for m in ("belleville", "mazomanie")}
    listed = {(i["case_ref"], i["action"]) for b in before.values() for i in b["actions"]}
    assert listed == {("A-SNOW-LATE", "serve_notice"), ("A-BLOCK", "name_statute"),
                      ("A-HAZARD", "enter_tax_roll"), ("A-MAZ", "enter_tax_roll"),
                      ("A-MAZ-LATE", "serve_notice")}
    _abate(url, "projections", "rebuild", "worklist")
    after = {m: _worklist(url, m, "--as-of", "2026-11-30") for m in ("belleville", "mazomanie")}
    assert after == before


def test_every_office_the_catalog_names_for_an_action_is_quoted_from_its_ordinance():
    """``acted_by`` quotes the words that name who acts; each part (split at …) is in the
    municipality's ordinance texts."""
    from cases.rules.catalog import Catalog

    folder = _ordinances()
    if folder is None:
        pytest.skip("the ordinance texts (shared/ordinances) are not beside this checkout")
    words = lambda text: re.sub(r"\s+", " ", text).strip()  # noqa: E731
    texts = {"belleville": " ".join(words((folder / n).read_text(encoding="utf-8"))
                                    for n in ("000_58ac701ea68635c3.txt", "001_18c6a5e4775c3b9f.txt",
                                              "002_565c54af680ef125.txt", "003_0d8721f2d5c3fa01.txt")),
             "mazomanie": words((folder / MAZOMANIE_CH360).read_text(encoding="utf-8"))}
    quoted = 0
    for municipality in Catalog.load().municipalities.values():
        for rule in municipality.rules:
            for kind, actor in rule.acted_by.items():
                for part in actor.text.split("…"):
                    assert words(part) in texts[municipality.municipality], (rule.key, kind, part)
                    quoted += 1
    assert quoted >= 8

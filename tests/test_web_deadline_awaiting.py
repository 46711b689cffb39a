"""A deadline whose time has come but that the scheduler has not recorded yet, on the case
page and the worklist in a real browser (issue 12): it says when it passed (village time),
that the scheduler's next sweep records it and how often that is (the served
``ABATE_SWEEP_SECONDS``), and which worklist steps follow once it is recorded; after
``abate scheduler --once`` it reads "passed" and the village abatement is on the worklist.

The server runs without its in-process scheduler, so nothing records the deadline behind
the test's back: the test runs the scheduler itself, through the installed command.

Sweeps are late counting from when the deadline could first be swept: a notice entered
now with an earlier date (its cure period long over) gets the usual wording; only the
case whose notice was recorded days ago (by a clerk's service then, since a served
process has no past) says the scheduler may not be running."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from cases.application import SCHEDULER_ACTOR, CaseService
from cases.commands import parse_command
from cases.localtime import table_time
from cases.store import CaseStore
from tests.abate_command import run_abate
from tests.api_kit import HOME, open_body
from tests.web_kit import serious_violations, sign_in, site

pytestmark = pytest.mark.slow
ZONE = "America/Chicago"  # Belleville's (cases/rules/belleville.yaml)
CURE = dt.timedelta(hours=72)  # § 9.13(2): 72 hours from the notice's delivery
SOON, LONG_AGO, BACKDATED = "BV-AW-001", "BV-AW-002", "BV-AW-003"


def _noticed(site_, ref: str, cure_due: dt.datetime) -> None:
    """A § 9.13 case whose notice was served so that its cure period ends at ``cure_due``."""
    site_.open_case(ref, days_ago=(dt.datetime.now(dt.timezone.utc) - cure_due + CURE
                                   ).total_seconds() / 86400 + 1)
    done = site_.api("inspector.belleville", "POST", f"/{HOME}/cases/{ref}/serve_notice",
                     json={"at": (cure_due - CURE).isoformat(), "method": "personal",
                           "served_on": "Ann Owner"})
    assert done.status_code == 200, done.text


def _noticed_back_then(database_url: str, ref: str, cure_due: dt.datetime) -> None:
    """As ``_noticed``, but opened and served when the notice was delivered (recorded
    then, as a clerk's service did it), so the scheduler has had days to sweep."""
    served = cure_due - CURE
    store = CaseStore(database_url)
    try:
        service = CaseService(store)
        body = {**open_body(ref), "at": (served - dt.timedelta(hours=1)).isoformat()}
        for command, recorded in (
                ({"command": "open_case", **body}, served - dt.timedelta(hours=1)),
                ({"command": "serve_notice", "case_ref": ref, "at": served.isoformat(),
                  "method": "personal", "served_on": "Ann Owner"}, served)):
            service.handle(parse_command({**command, "municipality": HOME,
                                          "actor": "clerk.belleville"}), recorded)
    finally:
        store.close()


@pytest.fixture(scope="module")
def waiting(tmp_path_factory):
    """(site, {case: cure due}), sweeps every 2 h: one cure period ended ten minutes ago
    (within the next sweep); one six days ago, recorded nine days ago (sweeps missed);
    one six days ago by a notice entered now with its earlier date (the next sweep)."""
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    due = {SOON: now - dt.timedelta(minutes=10), LONG_AGO: now - dt.timedelta(days=6),
           BACKDATED: now - dt.timedelta(days=6)}
    with site(tmp_path_factory.mktemp("awaiting"), "--without-scheduler",
              ABATE_SWEEP_SECONDS="7200") as running:
        _noticed(running, SOON, due[SOON])
        _noticed(running, BACKDATED, due[BACKDATED])
        _noticed_back_then(running.database_url, LONG_AGO, due[LONG_AGO])
        yield running, due


def _cure_row(page):
    return page.locator("table[aria-labelledby=deadlines] tr", has=page.locator(
        "code.name", has_text=re.compile("^cure$")))


def _section(page, title: str):
    return page.locator("section", has=page.get_by_role("heading", name=re.compile(title)))


def test_a_due_deadline_says_it_awaits_the_scheduler_until_a_sweep_records_it(page, waiting):
    site_, due = waiting
    sign_in(page, site_, "clerk.belleville")
    page.goto(f"{site_.base}/{HOME}/cases/{SOON}")
    row = _cure_row(page)
    cells = row.locator("td")
    assert cells.nth(2).locator(".awaiting").inner_text() == (
        f"passed at {table_time(due[SOON], ZONE)}; recorded by the scheduler's next sweep "
        "(every 2 h)")
    # no "overdue by 10 min" countdown: the clerk has nothing to do about it
    assert row.locator(".countdown").count() == 0 and "overdue" not in row.inner_text()
    assert cells.nth(2).locator(".hint").inner_text() == (
        "Once it is recorded, the worklist offers: village abatement permitted without "
        "further notice; re-inspect: verify compliance now that the cure period has run.")
    assert serious_violations(page) == []

    # a deadline long past, recorded long ago, with sweeps missed: the page no longer
    # promises the next one
    page.goto(f"{site_.base}/{HOME}/cases/{LONG_AGO}")
    assert _cure_row(page).locator(".awaiting").inner_text() == (
        f"passed at {table_time(due[LONG_AGO], ZONE)}; not recorded yet, although the "
        "scheduler sweeps every 2 h: it may not be running (tell whoever runs Abate)")

    # as long past, but recorded just now (a notice entered with its earlier date): no
    # sweep was missed yet
    page.goto(f"{site_.base}/{HOME}/cases/{BACKDATED}")
    assert _cure_row(page).locator(".awaiting").inner_text() == (
        f"passed at {table_time(due[BACKDATED], ZONE)}; recorded by the scheduler's next "
        "sweep (every 2 h)")

    page.goto(f"{site_.base}/{HOME}/")
    listed = _section(page, "Open deadlines").locator("tr", has_text=SOON)
    assert "recorded by the scheduler's next sweep (every 2 h)" in listed.inner_text()
    assert listed.locator(".countdown").count() == 0
    deadlines = _section(page, "Open deadlines")
    assert "recorded by the scheduler's next sweep (every 2 h)" in deadlines.locator(
        "tr", has_text=BACKDATED).inner_text()
    assert "it may not be running" in deadlines.locator("tr", has_text=LONG_AGO).inner_text()
    assert "3 deadlines have passed but are not recorded yet" in page.locator(
        "#awaiting-sweep").inner_text()
    assert _section(page, "Village abatement due").locator("a", has_text=SOON).count() == 0

    swept = run_abate("scheduler", "--once", database_url=site_.database_url)
    assert swept.returncode == 0, swept.stderr
    passed = [e for e in site_.events(SOON) if e["type"] == "DeadlinePassed"]
    assert len(passed) == 1 and passed[0]["actor"] == SCHEDULER_ACTOR

    page.goto(f"{site_.base}/{HOME}/cases/{SOON}")
    assert _cure_row(page).locator("td").nth(2).inner_text() == "passed"
    assert page.locator(".awaiting").count() == 0
    page.goto(f"{site_.base}/{HOME}/")
    assert _section(page, "Village abatement due").locator("a", has_text=SOON).count() == 1
    assert page.locator("#awaiting-sweep, .awaiting").count() == 0

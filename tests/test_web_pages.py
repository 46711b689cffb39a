"""The web pages in a real browser (headless Chromium through Playwright) against
``abate serve``: signing in and out, the worklist, the case pages and their forms, the
role and village checks, CSRF, accessibility (axe-core) and a 768 px wide screen."""

from __future__ import annotations

import datetime as dt
import socket
import subprocess
from zoneinfo import ZoneInfo

import pytest

from tests.abate_command import ABATE, abate_env
from tests.api_kit import HOME, OTHER, earlier, open_body
from tests.web_kit import (
    csrf_of,
    lines_of,
    post_without_form,
    scrolls_sideways,
    serious_violations,
    sign_in,
    site,
)

pytestmark = pytest.mark.slow
CHICAGO = ZoneInfo("America/Chicago")  # both villages' zone (cases/rules/*.yaml)


@pytest.fixture(scope="module")
def served_site(tmp_path_factory):
    with site(tmp_path_factory.mktemp("web")) as running:
        for ref in ("BV-WEB-001", "BV-WEB-002", "BV-WEB-003", "BV-WEB-004"):
            running.open_case(ref)
        running.open_case("MZ-WEB-001", OTHER)
        yield running


def test_sign_in_shows_the_worklist_and_sign_out_ends_the_session(page, served_site):
    page.goto(f"{served_site.base}/{HOME}/")
    assert "/sign-in" in page.url  # nobody signed in: the sign-in form, then back here
    sign_in(page, served_site, "clerk.belleville", password="not the password at all",
            then=f"/{HOME}/")
    error = page.locator("#password-error")
    assert "do not sign anyone in" in error.inner_text()
    assert page.get_by_label("Password", exact=True).get_attribute(
        "aria-describedby") == "password-error"

    sign_in(page, served_site, "clerk.belleville", then=f"/{HOME}/")
    assert page.url.endswith(f"/{HOME}/")
    heading = page.get_by_role("heading", level=1).inner_text()
    assert "Belleville" in heading and "worklist" in heading
    assert page.locator("table a", has_text="BV-WEB-001").count() >= 1  # a notice is due
    assert page.locator("table a", has_text="MZ-WEB-001").count() == 0

    kept = [c for c in page.context.cookies() if c["name"] == "abate_session"]
    assert kept  # a copy of the signed cookie, as another tab or a cache would keep it
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_load_state()
    assert "/sign-in" in page.url
    page.goto(f"{served_site.base}/{HOME}/")
    assert "/sign-in" in page.url  # the session is over
    page.context.add_cookies(kept)  # ... and the copy signs nobody in either
    page.goto(f"{served_site.base}/{HOME}/")
    assert "/sign-in" in page.url
    sign_in(page, served_site, "clerk.belleville", then=f"/{HOME}/")  # a new session works
    assert page.url.endswith(f"/{HOME}/")


def test_a_token_signs_in_too(page, served_site):
    page.goto(f"{served_site.base}/sign-in")
    page.get_by_label("Token", exact=True).fill(served_site.tokens["auditor.belleville"])
    page.get_by_role("button", name="Sign in with the token").click()
    page.wait_for_load_state()
    assert page.url.endswith(f"/{HOME}/")
    assert "auditor.belleville (auditor)" in page.locator(".who").inner_text()


def _local_now() -> str:
    return dt.datetime.now(CHICAGO).strftime("%Y-%m-%dT%H:%M")


def test_an_inspector_serves_a_notice_from_the_case_page(page, served_site):
    sign_in(page, served_site, "inspector.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-WEB-001")
    # the rule by its title, citation and version, not Abate's key for it
    rule = page.locator("dt:text-is('Rule') + dd").inner_text()
    assert "version 1, in force from" in rule and f"{HOME}:" not in rule
    form = page.locator("#form-serve_notice")
    form.get_by_label("When it happened (village time)").fill(_local_now())
    form.get_by_label("Method").select_option("personal")
    form.get_by_label("Served on (person)").fill("Ann Owner")
    form.get_by_role("button", name="Serve notice").click()
    page.wait_for_load_state()
    assert "Recorded: serve notice." in page.get_by_role("status").inner_text()
    # the event's plain-English name, the recorded one beside it for an auditor
    assert page.locator("#event-2 strong").inner_text() == "2. Notice served"
    assert page.locator("#event-2 code.name").inner_text() == "NoticeServed"
    assert "Ann Owner" in page.locator("#event-2").inner_text()
    assert page.locator("dl.facts").inner_text().count("Notice served") == 1
    # the cure deadline the notice started, in village time with its countdown
    deadlines = page.locator("table[aria-labelledby=deadlines]").inner_text()
    assert "cure" in deadlines and ("CST" in deadlines or "CDT" in deadlines)
    assert "in " in page.locator("table[aria-labelledby=deadlines] .countdown").first.inner_text()
    events = served_site.events("BV-WEB-001")
    assert [e["type"] for e in events][:2] == ["Opened", "NoticeServed"]
    assert events[1]["actor"] == "inspector.belleville"


def test_a_form_error_shows_beside_its_field_and_records_nothing(page, served_site):
    before = len(served_site.events("BV-WEB-002"))
    sign_in(page, served_site, "inspector.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-WEB-002")
    form = page.locator("#form-serve_notice")
    form.get_by_label("Method").select_option("personal")
    form.get_by_label("Served on (person)").fill("")  # required
    form.get_by_role("button", name="Serve notice").click()
    page.wait_for_load_state()
    field = page.locator("#form-serve_notice").get_by_label("Served on (person)")
    assert field.get_attribute("aria-invalid") == "true"
    beside = page.locator("#" + field.get_attribute("aria-describedby"))
    assert beside.inner_text() == "required: enter served on"
    assert "Not recorded" in page.get_by_role("alert").first.inner_text()
    assert page.locator("#form-serve_notice").get_by_label("Method").input_value() == "personal"
    # the address bar still shows the case page's own address: going to it again reads
    # the page (no 405, nothing posted), without the error
    assert page.url == f"{served_site.base}/{HOME}/cases/BV-WEB-002"
    page.goto(page.url)
    assert page.get_by_role("heading", level=1).inner_text().startswith("Case BV-WEB-002")
    assert page.locator(".form-error").count() == 0

    # an error the domain finds (a time in the future) goes beside that field too
    form = page.locator("#form-serve_notice")
    later = (dt.datetime.now(CHICAGO) + dt.timedelta(days=3)).strftime("%Y-%m-%dT%H:%M")
    form.get_by_label("When it happened (village time)").fill(later)
    form.get_by_label("Served on (person)").fill("Ann Owner")
    form.get_by_role("button", name="Serve notice").click()
    page.wait_for_load_state()
    at = page.locator("#form-serve_notice").get_by_label("When it happened (village time)")
    assert at.get_attribute("aria-invalid") == "true"
    error = page.locator("#" + at.get_attribute("aria-describedby")).inner_text()
    assert "cannot be later than now" in error and ("CST" in error or "CDT" in error)
    assert "ABATE_" not in error and "-06:00" not in error  # the village's time, no setting
    assert len(served_site.events("BV-WEB-002")) == before


def test_an_abatement_with_cost_lines_then_a_bill_from_the_case_page(page, served_site):
    served_site.open_case("BV-WEB-010", days_ago=10)
    served = served_site.api("inspector.belleville", "POST",
                             f"/{HOME}/cases/BV-WEB-010/serve_notice", json={
                                 "at": earlier(9), "method": "personal",
                                 "served_on": "Ann Owner"})
    assert served.status_code == 200, served.text
    sign_in(page, served_site, "inspector.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-WEB-010")
    form = page.locator("#form-record_abatement")
    form.get_by_label("Item 1").fill("Hauling")
    form.get_by_label("Amount ($) 1").fill("1120.00")
    form.get_by_label("Item 2").fill("Landfill fee")
    form.get_by_label("Amount ($) 2").fill("35.50")
    form.get_by_role("button", name="Record abatement").click()
    page.wait_for_load_state()
    assert "Recorded: record abatement." in page.get_by_role("status").inner_text()
    assert "Abated by the village" in page.locator("dl.facts").inner_text()
    abatement = page.locator("ol.timeline li", has_text="Abatement recorded").inner_text()
    assert "$1,120.00" in abatement and "$35.50" in abatement and "$1,155.50" in abatement
    assert page.locator("#form-issue_bill").count() == 0  # billing is the clerk's

    page.goto(f"{served_site.base}/{HOME}/")  # the worklist lists it as awaiting a bill
    awaiting = page.locator("section", has=page.get_by_role("heading", name="Awaiting billing"))
    assert awaiting.locator("a", has_text="BV-WEB-010").count() == 1

    page.get_by_role("button", name="Sign out").click()
    sign_in(page, served_site, "clerk.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-WEB-010")
    page.locator("#form-issue_bill").get_by_role("button", name="Issue bill").click()
    page.wait_for_load_state()
    facts = page.locator("dl.facts").inner_text()
    assert "Billed" in facts and "$1,155.50" in facts
    assert page.locator("#form-record_payment").count() == 1  # what comes next: paying...
    assert page.locator("#form-issue_bill").count() == 0  # ...not a second bill
    events = [e["type"] for e in served_site.events("BV-WEB-010")]
    assert events.count("AbatementRecorded") == 1 and events.count("BillIssued") == 1


def test_another_villages_case_by_url_is_the_same_404_as_a_missing_one(page, served_site):
    sign_in(page, served_site, "clerk.belleville")
    missing = page.goto(f"{served_site.base}/{HOME}/cases/BV-NO-SUCH")
    missing_text = page.locator("main").inner_text()
    assert missing.status == 404
    other = page.goto(f"{served_site.base}/{OTHER}/cases/MZ-WEB-001")
    assert other.status == 404
    assert "MZ-WEB-001" not in page.locator("main").inner_text().replace("'MZ-WEB-001'", "")
    assert page.locator("main").inner_text().replace("MZ-WEB-001", "BV-NO-SUCH").replace(
        OTHER, HOME) == missing_text
    assert page.goto(f"{served_site.base}/{OTHER}/").status == 404
    assert "Traceback" not in page.content()


def test_an_auditor_sees_no_write_forms_and_a_forged_post_is_refused(page, served_site):
    before = len(served_site.events("BV-WEB-003"))
    sign_in(page, served_site, "auditor.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-WEB-003")
    assert page.locator("form.command").count() == 0
    assert "Nothing that your role (auditor) records" in page.locator("main").inner_text()
    status = post_without_form(page, f"/{HOME}/cases/BV-WEB-003", {
        "command": "serve_notice", "csrf_token": csrf_of(page), "at": _local_now(), "method": "personal",
        "served_on": "Ann Owner"})
    assert status == 403
    assert len(served_site.events("BV-WEB-003")) == before


def test_a_post_without_its_csrf_token_is_refused(page, served_site):
    before = len(served_site.events("BV-WEB-003"))
    sign_in(page, served_site, "inspector.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-WEB-003")
    fields = {"command": "serve_notice", "at": _local_now(), "method": "personal",
              "served_on": "Ann Owner"}
    assert post_without_form(page, f"/{HOME}/cases/BV-WEB-003", fields) == 403
    assert post_without_form(page, f"/{HOME}/cases/BV-WEB-003",
                             {**fields, "csrf_token": "forged" + csrf_of(page)}) == 403
    assert post_without_form(page, "/sign-out", {}) == 403
    # a command no case page has is refused by name, with the page's token too
    assert post_without_form(page, f"/{HOME}/cases/BV-WEB-003",
                             {**fields, "command": "no_such", "csrf_token": csrf_of(page)}) == 422
    assert len(served_site.events("BV-WEB-003")) == before
    # the same post with the page's token is recorded (the refusals were the token's)
    assert post_without_form(page, f"/{HOME}/cases/BV-WEB-003",
                             {**fields, "csrf_token": csrf_of(page)}) == "redirect"
    assert len(served_site.events("BV-WEB-003")) == before + 1
    posts = [e for e in _access_log(served_site, user="inspector.belleville",
                                    case_ref="BV-WEB-003") if e["method"] == "POST"]
    # in the access log as the API's command route would be: the refusals too
    assert [(e["route"], e["action"], e["status"]) for e in posts] == [
        ("page.command", "write", 303), ("page.command", "write", 422),
        ("page.command", "write", 403), ("page.command", "write", 403)]


def _access_log(site, **params: str) -> list[dict]:
    """The access log as an auditor reads it (``GET /api/v1/audit/access-log``)."""
    answer = site.api("auditor.belleville", "GET", "/audit/access-log", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()["entries"]


def test_a_page_view_of_a_case_is_in_the_access_log(page, served_site):
    """Who looked at which case, when: the case page, its audit page and the lists, each a
    row of the access log, read by the auditor through the API."""
    sign_in(page, served_site, "clerk.belleville")
    for path in (f"/{HOME}/cases", f"/{HOME}/cases/BV-WEB-002",
                 f"/{HOME}/audit/cases/BV-WEB-002", f"/{HOME}/"):
        assert page.goto(served_site.base + path).status == 200, path
    assert page.goto(f"{served_site.base}/{OTHER}/cases/MZ-WEB-001").status == 404
    viewed = _access_log(served_site, user="clerk.belleville", case_ref="BV-WEB-002")
    assert {(e["route"], e["action"], e["status"], e["municipality"]) for e in viewed} >= {
        ("page.cases.show", "read", 200, HOME), ("page.audit", "read", 200, HOME)}
    assert all(e["requested_at"].endswith(("-06:00", "-05:00")) for e in viewed)  # local
    routes = [e["route"] for e in _access_log(served_site, user="clerk.belleville",
                                              municipality=HOME)]
    assert "page.cases.list" in routes and "page.worklist" in routes
    # the try at another village's case is a row for that village's auditors only
    assert not [e for e in _access_log(served_site, user="clerk.belleville")
                if e["case_ref"] == "MZ-WEB-001"]


def test_the_case_list_finds_by_owner_status_rule_and_dates(page, served_site):
    sign_in(page, served_site, "auditor.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases")
    listed = page.locator("tbody tr td:first-child").all_inner_texts()
    assert {"BV-WEB-001", "BV-WEB-002", "BV-WEB-003", "BV-WEB-004"} <= set(listed)
    assert "MZ-WEB-001" not in listed

    def found(**filters: str) -> set[str]:
        page.goto(f"{served_site.base}/{HOME}/cases")
        for label, value in filters.items():
            field = page.get_by_label(label.replace("_", " ").capitalize(), exact=False).first
            if field.evaluate("e => e.tagName") == "SELECT":
                field.select_option(value)
            else:
                field.fill(value)
        page.get_by_role("button", name="Find").click()
        page.wait_for_load_state()
        return set(page.locator("tbody tr td:first-child").all_inner_texts())

    assert {"BV-WEB-001"} <= found(owner="ann ow")
    assert found(owner="Nobody Of That Name") == set()
    assert found(rule="belleville:9.13") >= {"BV-WEB-001", "BV-WEB-004"}
    assert found(status="closed") == set()
    opened = (dt.datetime.now(CHICAGO) - dt.timedelta(days=3)).date()
    assert {"BV-WEB-004"} <= found(observed_from=opened.isoformat(),
                                   observed_to=opened.isoformat())
    earlier_only = found(observed_to=(opened - dt.timedelta(days=1)).isoformat())
    assert not earlier_only & {"BV-WEB-001", "BV-WEB-002", "BV-WEB-003", "BV-WEB-004"}
    assert found(parcel="0509-123-4567-0") >= {"BV-WEB-004"}


def test_the_case_list_names_rules_finds_part_of_a_parcel_and_counts(page, served_site):
    other_parcel = {**open_body("BV-WEB-020"), "parcel": {"county": "Dane",
                                                          "number": "0509-123-4999-1"}}
    opened = served_site.api("clerk.belleville", "POST", f"/{HOME}/cases", json=other_parcel)
    assert opened.status_code == 201, opened.text
    for n in range(6):  # more than one page of 10
        served_site.open_case(f"BV-WEB-03{n}")
    sign_in(page, served_site, "auditor.belleville")

    def listed(query: str) -> list[str]:
        page.goto(f"{served_site.base}/{HOME}/cases?{query}")
        return page.locator("tbody tr td:first-child").all_inner_texts()

    # the rule filter names each rule by its section and title, and filters by its key
    page.goto(f"{served_site.base}/{HOME}/cases")
    rule = page.get_by_label("Rule")
    assert "§ 9.13 Unlawful dumping" in rule.locator("option").all_inner_texts()
    rule.select_option(label="§ 9.13 Unlawful dumping")
    page.get_by_label("Parcel number (all or any part of it)").fill("4999")
    page.get_by_role("button", name="Find").click()
    page.wait_for_load_state()
    assert page.locator("tbody tr td:first-child").all_inner_texts() == ["BV-WEB-020"]
    assert "rule=belleville%3A9.13" in page.url
    # a part of a parcel number: its start, its end; a wildcard matches only itself
    assert "BV-WEB-020" in listed("parcel=0509-123") and "BV-WEB-004" in listed("parcel=0509-123")
    assert "BV-WEB-004" not in listed("parcel=4999-1")
    assert listed("parcel=%25") == [] and listed("parcel=0509_123") == []
    # the whole count of the matching cases, and which page of them this is
    every = listed("per_page=100")
    assert page.locator("#found-count").inner_text() == \
        f"({len(every)} cases, page 1 of 1: 1–{len(every)})"
    assert len(every) > 10
    pages = -(-len(every) // 10)
    assert len(listed("per_page=10&offset=10")) == min(10, len(every) - 10)
    assert page.locator("#found-count").inner_text().startswith(
        f"({len(every)} cases, page 2 of {pages}: 11–")
    listed("parcel=4999")
    assert page.locator("#found-count").inner_text() == "(1 case, page 1 of 1: 1–1)"
    # a page past the end (an old link) says so and leads back, not "No case matches"
    assert listed("per_page=10&offset=1000") == []
    past = page.locator("#past-the-end")
    assert f"past the end of the list ({len(every)} cases)" in past.inner_text()
    past.get_by_role("link", name="back to the first page").click()
    page.wait_for_load_state()
    assert len(page.locator("tbody tr").all()) == 10
    assert listed("parcel=no-such-parcel") == []
    assert page.locator("#past-the-end").count() == 0
    assert "No case matches." in page.locator("main").inner_text()
    # a rule the village does not have is refused by name, not answered "none found"
    assert page.goto(f"{served_site.base}/{HOME}/cases?rule=belleville:99").status == 422
    assert "rule" in page.locator("main").inner_text()


PAGES = ("/sign-in", f"/{HOME}/", f"/{HOME}/cases", f"/{HOME}/cases?status=open",
         f"/{HOME}/cases?status=nope&observed_from=2026-11-20&observed_to=2026-11-10",
         f"/{HOME}/cases/BV-WEB-004", f"/{HOME}/cases/BV-NO-SUCH")


@pytest.mark.parametrize("width", [1280, 768])
def test_every_page_passes_axe_and_fits_the_width(page, served_site, width):
    page.set_viewport_size({"width": width, "height": 1000})
    for path in PAGES:
        if path == f"/{HOME}/":
            sign_in(page, served_site, "inspector.belleville")
        page.goto(served_site.base + path)
        assert serious_violations(page) == [], path
        assert not scrolls_sideways(page), (path, width)
        if path == f"/{HOME}/cases":  # a case number, parcel, date, amount: each on one line
            rows = page.locator("#main table tbody tr").all()
            assert len(rows) >= 4
            for row in rows:
                cells = row.locator("td")
                parcel = cells.nth(3).locator("span").last
                for value in (cells.nth(0), parcel, cells.nth(5), cells.nth(7)):
                    assert lines_of(value) == 1, (value.inner_text(), width)
    # a form shown again with its errors beside the fields
    page.goto(f"{served_site.base}/{HOME}/cases/BV-WEB-004")
    page.locator("#form-record_abatement").get_by_role(
        "button", name="Record abatement").click()
    page.wait_for_load_state()
    assert page.locator(".field-error").count() >= 1
    assert serious_violations(page) == []
    assert not scrolls_sideways(page)


def test_every_field_has_a_label_and_the_keyboard_reaches_the_forms(page, served_site):
    sign_in(page, served_site, "inspector.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-WEB-004")
    unlabelled = page.evaluate("""() => [...document.querySelectorAll(
        'input:not([type=hidden]), select, textarea')].filter(e => !e.labels || !e.labels.length)
        .map(e => e.name)""")
    assert unlabelled == []
    page.keyboard.press("Tab")  # the skip link first, visible when focused
    assert page.evaluate("() => document.activeElement.textContent") == "Skip to the content"
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", "")
    for _ in range(60):  # Tab alone reaches a form's first field
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.closest('form.command') !== null"):
            break
    else:
        raise AssertionError("the keyboard never reached a command form")


def test_sign_in_attempts_are_rate_limited(page, tmp_path):
    with site(tmp_path, ABATE_WEB_SIGN_IN_LIMIT="3/minute") as limited:
        for _ in range(3):
            sign_in(page, limited, "clerk.belleville", password="wrong password, sorry")
            assert page.locator("#password-error").count() == 1
        sign_in(page, limited, "clerk.belleville")  # the right one, but too late
        assert "Too many attempts" in page.get_by_role("heading", level=1).inner_text()
        assert "/sign-in" in page.url


def test_the_demo_banner_says_how_to_sign_in_and_a_printed_token_does(page, tmp_path):
    """`abate serve --demo` (what `python3.11 dev.py demo` runs): the banner points to the
    pages and a demo user's printed token signs in; the demo's cases pass axe too."""
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(tmp_path / "serve.log", "w") as log:
        server = subprocess.Popen([ABATE, "serve", "--demo", "--port", str(port)],
                                  env=abate_env(url), stdout=subprocess.PIPE, stderr=log,
                                  text=True)
    try:
        banner = []
        for line in server.stdout:
            banner.append(line.rstrip("\n"))
            if line.rstrip().endswith("Ctrl-C stops it"):
                break
        base = f"http://127.0.0.1:{port}"
        says = next(line for line in banner if line.startswith("Web pages:"))
        assert f"open {base}/" in says and "sign in with a user's token" in says
        token = next(line.split()[-1] for line in banner
                     if line.strip().startswith("demo.belleville.clerk "))
        page.goto(f"{base}/sign-in")
        page.get_by_label("Token", exact=True).fill(token)
        page.get_by_role("button", name="Sign in with the token").click()
        page.wait_for_load_state()
        assert page.url == f"{base}/{HOME}/"
        assert page.locator("table a").count() > 0  # the demo's worklist is not empty
        assert serious_violations(page) == []
        page.goto(f"{base}/{HOME}/cases")
        page.get_by_label("Per page").select_option("10")
        page.get_by_role("button", name="Find").click()
        page.wait_for_load_state()
        shown = page.locator("tbody tr td:first-child").all_inner_texts()
        assert len(shown) == 10
        page.get_by_role("link", name="Next 10").click()
        page.wait_for_load_state()
        following = page.locator("tbody tr td:first-child").all_inner_texts()
        assert following and not set(following) & set(shown) and following > shown
        page.get_by_role("link", name="Previous 10").click()
        page.wait_for_load_state()
        assert page.locator("tbody tr td:first-child").all_inner_texts() == shown
        first = page.locator("table a").first
        first.click()
        page.wait_for_load_state()
        assert page.locator("ol.timeline li").count() >= 2
        assert serious_violations(page) == []
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_case_list_says_what_is_wrong_beside_each_filter_in_words(page, served_site):
    """A filter that can match nothing is refused beside its field (422), in words: the
    statuses and rules by their labels, a period that ends before it starts, and a paging
    error that says what is accepted."""
    sign_in(page, served_site, "auditor.belleville")
    answer = page.goto(f"{served_site.base}/{HOME}/cases?status=nope&rule=belleville:99"
                       "&observed_from=2026-11-20&observed_to=2026-11-10")
    assert answer.status == 422
    said = {name: page.locator(f"#{name}-error").inner_text()
            for name in ("status", "rule", "observed_to")}
    assert "Notice served" in said["status"] and "notice_served" not in said["status"]
    assert "§ 9.07" in said["rule"] and "§ 9.13 Unlawful dumping" in said["rule"]
    assert "belleville:" not in said["rule"]
    assert said["observed_to"].startswith("2026-11-10 is before the day observed from "
                                          "(2026-11-20)")
    assert page.get_by_label("Observed to").get_attribute("aria-describedby") \
        == "observed_to-error"
    assert page.get_by_label("Observed to").get_attribute("aria-invalid") == "true"
    summary = page.locator("#error-summary")
    assert summary.get_attribute("role") == "alert"
    assert page.evaluate("document.activeElement.id") == "error-summary"
    summary.get_by_role("link", name="Observed to").click()
    assert page.evaluate("document.activeElement.id") == "f-to"
    assert "No case matches" not in page.locator("main").inner_text()

    # a period the right way round finds again, and 0 is a good offset, -1 is not
    assert page.goto(f"{served_site.base}/{HOME}/cases?observed_from=2026-11-10"
                     "&observed_to=2026-11-20&offset=0").status == 200
    assert page.goto(f"{served_site.base}/{HOME}/cases?offset=-1").status == 422
    assert "offset: a number of at least 0" in page.locator("main").inner_text()

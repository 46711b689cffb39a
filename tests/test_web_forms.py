"""The pages' forms and timeline in people's words, in a real browser against ``abate
serve``: every error of an empty new-case form at once and in a clerk's words, what was
typed kept, amounts typed as "$1,200.50", six cost lines side by side, and the timeline's
facts in local time, yes/no and labels (a future time's words: tests/test_web_pages.py)."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest

from tests.api_kit import HOME, HOME_CASE, earlier, make_api, open_body, with_cases
from tests.web_kit import add_user, serious_violations, sign_in, site

pytestmark = pytest.mark.slow
CHICAGO = ZoneInfo("America/Chicago")  # Belleville's zone (cases/rules/belleville.yaml)


@pytest.fixture(scope="module")
def served_site(tmp_path_factory):
    with site(tmp_path_factory.mktemp("forms")) as running:
        yield running


def _served(served_site, ref: str) -> None:
    served_site.open_case(ref, days_ago=10)
    done = served_site.api("inspector.belleville", "POST", f"/{HOME}/cases/{ref}/serve_notice",
                           json={"at": earlier(9), "method": "personal", "served_on": "Ann Owner"})
    assert done.status_code == 200, done.text


def _new_case(page, served_site, ref: str, parcel: str = "0509-123-4567-2") -> None:
    """The clerk's new-case page with a § 9.13 case filled in (what was found left to fill)."""
    sign_in(page, served_site, "clerk.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/new")
    page.locator(".rule-choice", has_text="9.13").first.get_by_role("radio").check()
    page.get_by_label("Case number").fill(ref)
    page.get_by_label("Parcel number").fill(parcel)
    page.get_by_label("Site address").fill("3 Elm St")
    page.get_by_label("Owner (required)", exact=True).fill("Olga Owner")


def test_an_empty_new_case_shows_every_error_at_once_in_a_clerks_words(page, served_site):
    sign_in(page, served_site, "clerk.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/new")
    page.get_by_label("Observed (village time)").fill("")
    page.get_by_role("button", name="Open the case").click()
    page.wait_for_load_state()
    errors = {name: page.locator(f"#{name}-error").inner_text() for name in (
        "rule", "case_ref", "at", "parcel_number", "site_address", "owner_name", "description")}
    assert "choose the rule" in errors["rule"]
    assert errors["case_ref"] == "required: enter case number"
    assert errors["owner_name"] == "required: enter owner"
    assert errors["description"] == "required: enter what was found"
    assert errors["at"] == "required: enter observed"
    assert errors["parcel_number"] == "required: enter parcel number"
    shown = page.locator("main").inner_text()
    for technical in ("String should", "pattern", "^", "List should"):
        assert technical not in shown
    # above the form, every problem in the form's order, each a link to its field; the list
    # has the focus, so a screen reader reads it first
    summary = page.locator("#error-summary")
    assert summary.get_attribute("role") == "alert"
    assert page.evaluate("document.activeElement.id") == "error-summary"
    assert "see the fields marked below" not in shown
    links = summary.get_by_role("link")
    assert links.all_inner_texts() == ["Rule", "Case number", "Observed", "What was found",
                                       "Parcel number", "Site address", "Owner"]
    assert "required: enter case number" in summary.locator("li").nth(1).inner_text()
    links.filter(has_text="Parcel number").click()
    assert page.evaluate("document.activeElement.id") == "parcel_number"
    links.filter(has_text="Rule").click()
    assert page.evaluate("document.activeElement.id") == "rule-1"
    assert serious_violations(page) == []
    assert "(up to 4,000 characters)" in page.locator("label[for=description]").inner_text()


def test_new_case_words_a_bad_parcel_and_case_number_and_keeps_what_was_typed(
        page, served_site):
    _new_case(page, served_site, "BV NEW!", parcel="12-34")
    page.get_by_label("What was found").fill("x" * 4001)  # a paste past the limit is cut...
    assert len(page.get_by_label("What was found").input_value()) == 4000  # ...as the hint says
    page.get_by_role("button", name="Open the case").click()
    page.wait_for_load_state()
    assert "letters, digits and . _ / - only" in page.locator("#case_ref-error").inner_text()
    page.get_by_label("Case number").fill("BV-FORM-1")
    page.get_by_role("button", name="Open the case").click()
    page.wait_for_load_state()
    parcel = page.locator("#parcel_number-error").inner_text()
    assert "like 0123-456-7890-1" in parcel and "\\d" not in parcel
    assert page.get_by_label("Parcel number").input_value() == "12-34"  # kept
    assert page.get_by_label("Owner (required)", exact=True).input_value() == "Olga Owner"
    # Green County's format has a space and a dot: an example too, never the pattern
    page.get_by_label("County").select_option("Green")
    page.get_by_role("button", name="Open the case").click()
    page.wait_for_load_state()
    parcel = page.locator("#parcel_number-error").inner_text()
    assert "not as Green County writes it (like 01234 5678.9012)" in parcel, parcel
    assert "\\d" not in parcel
    missing = served_site.api("clerk.belleville", "GET", f"/{HOME}/cases/BV-FORM-1")
    assert missing.status_code == 404  # nothing recorded
    # the API names the pattern, for programs, and the same example, for people
    body = open_body("BV-FORM-1", HOME, 1)
    body["parcel"] = {"county": "Green", "number": "12-34"}
    refused = served_site.api("clerk.belleville", "POST", f"/{HOME}/cases", json=body)
    assert refused.status_code == 422
    assert "Green County format ^\\d{5} \\d{4}\\.\\d{4}$ (like 01234 5678.9012)" in \
        refused.json()["detail"]


def test_cost_lines_take_dollars_and_separators_and_six_lines_in_a_row(page, served_site):
    _served(served_site, "BV-FORM-3")
    sign_in(page, served_site, "inspector.belleville")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{served_site.base}/{HOME}/cases/BV-FORM-3")
    form = page.locator("#form-record_abatement")
    assert form.get_by_label("Item 6").count() == 1
    first, second = (form.get_by_label(f"Item {n}").bounding_box() for n in (1, 2))
    assert abs(first["y"] - second["y"]) < 2 and second["x"] > first["x"]  # side by side

    form.get_by_role("button", name="Record abatement").click()  # no line at all
    page.wait_for_load_state()
    form = page.locator("#form-record_abatement")
    assert "add at least one cost line" in form.inner_text()

    form.get_by_label("Item 1").fill("Hauling")
    form.get_by_label("Amount ($) 1").fill("-120")
    form.get_by_role("button", name="Record abatement").click()
    page.wait_for_load_state()
    form = page.locator("#form-record_abatement")
    assert "an amount above $0.00" in form.locator("#record_abatement-costs-0-amount-error") \
        .inner_text()
    assert form.get_by_label("Amount ($) 1").input_value() == "-120"  # kept

    form.get_by_label("Amount ($) 1").fill("$1,200.50")
    form.get_by_label("Item 6").fill("Landfill fee")
    form.get_by_label("Amount ($) 6").fill("35")
    form.get_by_role("button", name="Record abatement").click()
    page.wait_for_load_state()
    assert "Recorded: record abatement." in page.get_by_role("status").inner_text()
    recorded = served_site.events("BV-FORM-3")[-1]["facts"]
    assert [c["amount"] for c in recorded["costs"]] == ["1200.50", "35.00"]


def test_the_timeline_shows_facts_in_local_time_yes_no_and_labels(page, served_site):
    _served(served_site, "BV-FORM-4")
    sign_in(page, served_site, "clerk.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-FORM-4")
    timeline = page.locator("ol.timeline").inner_text()
    assert "municipality:" not in timeline.lower()
    assert "-06:00" not in timeline and "-05:00" not in timeline
    assert "True" not in timeline and "False" not in timeline
    nested = page.locator("ol.timeline > li ul li").first
    assert nested.evaluate("e => getComputedStyle(e).borderLeftStyle") == "none"


def test_the_timeline_says_codes_rules_and_a_forfeiture_in_words(page, served_site):
    """A notice by certified mail and a citation under § 9.15, whose ordinance sets no
    amount but names the section that provides it: the timeline says so, never "not set",
    a program's code or a rule key."""
    attorney = add_user(served_site.database_url, "attorney.belleville", "attorney", HOME)
    served_site.tokens["attorney.belleville"] = attorney
    opened = served_site.api("clerk.belleville", "POST", f"/{HOME}/cases", json={
        **open_body("BV-FORM-5", days_ago=6), "rule": "belleville:9.15"})
    assert opened.status_code == 201, opened.text
    for user, command, body in (
            ("inspector.belleville", "record_inspection", {
                "at": earlier(5.5), "findings": "no number on the house",
                "documents": ["site_photo_1"]}),  # typed: shown as given
            ("inspector.belleville", "serve_notice", {
                "at": earlier(5), "method": "certified_mail", "served_on": "Ann Owner",
                "delivered_at": earlier(4)}),
            ("attorney.belleville", "issue_citation", {
                "at": earlier(1), "citation_number": "C-15"})):
        done = served_site.api(user, "POST", f"/{HOME}/cases/BV-FORM-5/{command}", json=body)
        assert done.status_code == 200, done.text
    recorded = served_site.events("BV-FORM-5")[-1]["facts"]["forfeiture"]
    assert "not set" in recorded  # the stored words are the program's; the page says them
    sign_in(page, served_site, "clerk.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-FORM-5")
    timeline = page.locator("ol.timeline").inner_text()
    citation = page.locator("ol.timeline > li", has_text="Citation issued").inner_text()
    assert "forfeiture: a forfeiture under § 1.08 of the Village Code; the ordinance texts " \
        "give no amount" in citation
    assert "method: certified mail" in timeline
    assert "rule: § 9.15 House number not affixed or maintained (version 1)" in timeline
    assert "not set" not in timeline and "belleville:" not in timeline
    assert "rule family" not in timeline and "rule version" not in timeline
    inspection = page.locator("ol.timeline > li", has_text="Inspection recorded").inner_text()
    assert "documents: site_photo_1" in inspection
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", timeline.replace("site_photo_1", "")), \
        timeline
    assert "{" not in timeline and "[" not in timeline and "'" not in timeline

    # § 11.013(1) gives its amounts and counts each day a separate offense
    opened = served_site.api("clerk.belleville", "POST", f"/{HOME}/cases", json={
        **open_body("BV-FORM-7", days_ago=3), "rule": "belleville:11.013"})
    assert opened.status_code == 201, opened.text
    for user, command, body in (
            ("inspector.belleville", "serve_notice", {
                "at": earlier(2.9), "method": "certified_mail", "served_on": "Ann Owner",
                "cure_days": 14}),
            ("attorney.belleville", "issue_citation", {
                "at": earlier(0.1), "citation_number": "C-11"})):
        done = served_site.api(user, "POST", f"/{HOME}/cases/BV-FORM-7/{command}", json=body)
        assert done.status_code == 200, done.text
    page.goto(f"{served_site.base}/{HOME}/cases/BV-FORM-7")
    citation = page.locator("ol.timeline > li", has_text="Citation issued").inner_text()
    assert re.search(r"forfeiture: \$50\.00 to \$150\.00 per offense; \d+ separate offenses",
                     citation), citation
    assert "unit calendar day" in citation and "calendar_day" not in citation


def _sections(texts: list[str]) -> list[str]:
    return [re.match(r"§ (\S+)", text).group(1) for text in texts]


def test_the_rule_picker_and_filter_go_by_section_and_say_amounts_and_statutes(
        page, served_site):
    sign_in(page, served_site, "clerk.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/new")
    picker = page.locator(".rule-choice")
    numbers = [radio.get_attribute("value").removeprefix(f"{HOME}:")
               for radio in picker.get_by_role("radio").all()]
    assert numbers.index("9.07") < numbers.index("10.11") < numbers.index("13")
    maintenance = picker.filter(has_text="11.013(1)").first.inner_text()
    assert "forfeiture: $50.00 to $150.00" in maintenance
    assert "special assessment (the ordinance names no statute; the village attorney " \
        "names it; Belleville Code § 11.013(2)(b))" in maintenance
    shown = page.locator("fieldset").inner_text()
    assert "not set" not in shown and not re.search(r"\b[a-z]+_[a-z_]+\b", shown)

    page.goto(f"{served_site.base}/{HOME}/cases")
    options = page.locator("#f-rule option").all_inner_texts()
    sections = _sections([o for o in options if o.startswith("§")])
    assert sections.index("9.07") < sections.index("9.25") < sections.index("10.11") \
        < sections.index("11.013") < sections.index("13")


def test_a_cost_line_missing_a_part_is_named_at_its_line_and_now_is_the_real_now(
        page, served_site):
    _served(served_site, "BV-FORM-6")
    sign_in(page, served_site, "inspector.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-FORM-6")
    form = page.locator("#form-record_abatement")
    form.get_by_label("Item 1").fill("Hauling")
    form.get_by_label("Amount ($) 1").fill("100")
    form.get_by_label("Item 2").fill("Landfill fee")
    form.get_by_label("Amount ($) 2").fill("20")
    form.get_by_label("Amount ($) 3").fill("$40")  # an amount with no item
    form.get_by_label("Item 5").fill("Dumpster")  # an item with no amount, after a gap
    later = dt.datetime.now(CHICAGO) + dt.timedelta(days=1)
    form.get_by_label("When it happened (village time)").fill(later.strftime("%Y-%m-%dT%H:%M"))
    form.get_by_role("button", name="Record abatement").click()
    page.wait_for_load_state()
    form = page.locator("#form-record_abatement")
    assert form.locator("#record_abatement-costs-2-item-error").inner_text() == \
        "line 3: enter what the $40.00 was for"
    assert form.get_by_label("Item 3").get_attribute("aria-invalid") == "true"
    assert form.locator("#record_abatement-costs-4-amount-error").inner_text() == \
        "line 5: enter the amount for Dumpster"
    assert form.locator("#record_abatement-costs-0-item-error").count() == 0
    assert "enter costs" not in form.inner_text()
    assert len([e for e in served_site.events("BV-FORM-6")
                if e["type"] == "AbatementRecorded"]) == 0

    form.get_by_label("Item 3").fill("Tipping fee")
    form.get_by_label("Item 5").fill("")
    form.get_by_role("button", name="Record abatement").click()  # now only the time is wrong
    page.wait_for_load_state()
    at = page.locator("#form-record_abatement").get_by_label("When it happened (village time)")
    said = page.locator("#" + at.get_attribute("aria-describedby")).inner_text()
    shown = re.search(r"cannot be later than now \((\d{4}-\d\d-\d\d \d\d:\d\d) C[SD]T\)", said)
    assert shown, said
    now = dt.datetime.now(CHICAGO).replace(tzinfo=None)
    said_now = dt.datetime.strptime(shown[1], "%Y-%m-%d %H:%M")
    assert abs((said_now - now).total_seconds()) < 120, (said_now, now)  # not now + 10 min


def test_a_time_the_clocks_skipped_is_refused_beside_its_field_not_moved_an_hour(
        page, served_site):
    """2:30 on 8 March 2026 never happened in Belleville (clocks went from 2:00 to 3:00):
    read as typed it became 3:30 CDT without a word. Now the field says so; nothing is
    recorded."""
    _new_case(page, served_site, "BV-DST-1")
    page.get_by_label("Observed (village time)").fill("2026-03-08T02:30")
    page.get_by_label("What was found").fill("a couch on the terrace")
    page.get_by_role("button", name="Open the case").click()
    page.wait_for_load_state()
    error = page.locator("#at-error").inner_text()
    assert "2026-03-08 02:30 never happened in the village's time (America/Chicago)" in error
    assert "1 hour forward" in error
    assert served_site.api("clerk.belleville", "GET", f"/{HOME}/cases/BV-DST-1").status_code == 404

    _served(served_site, "BV-DST-2")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-DST-2")
    form = page.locator("#form-record_inspection")
    form.locator("[name=at]").fill("2026-03-08T02:15")
    form.locator("[name=findings]").fill("still there")
    form.get_by_role("button", name="Record inspection").click()
    page.wait_for_load_state()
    form = page.locator("#form-record_inspection")
    assert "2026-03-08 02:15 never happened" in form.locator(".field-error").inner_text()
    assert form.locator("[name=at]").input_value() == "2026-03-08T02:15"  # kept
    assert "InspectionRecorded" not in [e["type"] for e in served_site.events("BV-DST-2")]


def test_a_delivery_before_its_service_is_said_beside_delivered_by_its_label(page, served_site):
    """The domain names the field (``delivered_at 2026-... is before the notice was
    served``); the page says it beside "Delivered", in its label's word."""
    served_site.open_case("BV-FORM-DLV", days_ago=10)
    sign_in(page, served_site, "inspector.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-FORM-DLV")
    form = page.locator("#form-serve_notice")
    served = (dt.datetime.now(CHICAGO) - dt.timedelta(days=5)).replace(hour=10, minute=0)
    form.locator("[name=at]").fill(served.strftime("%Y-%m-%dT%H:%M"))
    form.locator("[name=method]").select_option("personal")
    form.locator("[name=served_on]").fill("Ann Owner")
    form.locator("[name=delivered_at]").fill((served - dt.timedelta(hours=1))
                                             .strftime("%Y-%m-%dT%H:%M"))
    form.get_by_role("button", name="Serve notice").click()
    page.wait_for_load_state()
    form = page.locator("#form-serve_notice")
    beside = form.locator("#serve_notice-delivered_at-error").inner_text()
    assert beside.startswith("Delivered ") and "is before the notice was served" in beside
    assert "delivered_at" not in form.locator(".form-error, .field-error").all_inner_texts()[0]
    assert "NoticeServed" not in [e["type"] for e in served_site.events("BV-FORM-DLV")]


def test_a_refused_cost_amount_is_shown_beside_the_forms_own_line(tmp_path):
    """The domain names the second cost item sent ``costs.1.amount``; with the form's line 2
    left empty that item is the form's line 3, and its error stands there (in-process)."""
    api = with_cases(make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}"))
    client = api.pages("inspector")
    page = client.get(f"/{HOME}/cases/{HOME_CASE}")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    at = (dt.datetime.now(CHICAGO) - dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    refused = client.post(f"/{HOME}/cases/{HOME_CASE}", data={
        "csrf_token": token, "command": "record_abatement", "at": at,
        "without_notice_reason": "", "costs-0-item": "Hauling", "costs-0-amount": "100",
        "costs-2-item": "Truck", "costs-2-amount": "-5"})
    assert refused.status_code == 422, refused.text[:2000]
    beside = re.search(r'id="record_abatement-costs-2-amount-error">([^<]*)<', refused.text)
    assert beside and "an amount above $0.00" in beside.group(1), refused.text[:3000]
    assert 'id="record_abatement-costs-1-amount-error"' not in refused.text

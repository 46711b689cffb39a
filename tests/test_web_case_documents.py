"""The case page's documents and corrections in a real browser (headless Chromium through
Playwright) against ``abate serve``: issuing a notice and a bill as PDF and downloading them
(read back with pypdf), what an auditor sees, a correction shown beside what it corrects,
its errors beside their fields, and axe-core on the page."""

from __future__ import annotations

import datetime as dt
import io
from zoneinfo import ZoneInfo

import pytest
from pypdf import PdfReader

from tests.api_kit import HOME, earlier
from tests.web_kit import post_without_form, serious_violations, sign_in, site

pytestmark = pytest.mark.slow
CHICAGO = ZoneInfo("America/Chicago")


@pytest.fixture(scope="module")
def served_site(tmp_path_factory):
    with site(tmp_path_factory.mktemp("web-docs")) as running:
        running.open_case("BV-DOC-001")
        running.open_case("BV-DOC-002", days_ago=10)
        served = running.api("inspector.belleville", "POST",
                             f"/{HOME}/cases/BV-DOC-002/serve_notice", json={
                                 "at": earlier(9), "method": "personal",
                                 "served_on": "Ann Owner"})
        assert served.status_code == 200, served.text
        abated = running.api("inspector.belleville", "POST",
                             f"/{HOME}/cases/BV-DOC-002/record_abatement", json={
                                 "at": earlier(1), "costs": [
                                     {"item": "Hauling", "amount": "120.00"}]})
        assert abated.status_code == 200, abated.text
        running.open_case("BV-DOC-003")
        for command, body in (("serve_notice", {"at": earlier(1), "method": "personal",
                                                "served_on": "Ann Owner"}),
                              ("issue_notice_document", {"at": earlier(0.5)})):
            done = running.api("inspector.belleville", "POST",
                               f"/{HOME}/cases/BV-DOC-003/{command}", json=body)
            assert done.status_code == 200, done.text
        yield running


def _pdf_text(download) -> str:
    content = open(download.path(), "rb").read()
    assert content.startswith(b"%PDF-")
    return "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(content)).pages)


def _download(page, link):
    with page.expect_download() as info:
        link.click()
    return info.value


def test_an_inspector_serves_a_notice_issues_its_document_and_downloads_it(page, served_site):
    sign_in(page, served_site, "inspector.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-DOC-001")
    assert page.locator("#form-issue_notice_document").count() == 0  # nothing served yet
    assert "No documents issued." in page.locator("main").inner_text()
    form = page.locator("#form-serve_notice")
    form.get_by_label("When it happened (village time)").fill(
        dt.datetime.now(CHICAGO).strftime("%Y-%m-%dT%H:%M"))
    form.get_by_label("Method").select_option("personal")
    form.get_by_label("Served on (person)").fill("Ann Owner")
    form.get_by_role("button", name="Serve notice").click()
    page.wait_for_load_state()
    assert page.locator("#form-issue_bill_document").count() == 0  # the clerk's
    # Belleville has not set its letterhead address and phone: said beside the issue button.
    unset = page.locator("#letterhead-unset")
    assert unset.is_visible()
    assert "has not set its letterhead address and phone: letters leave them out" in \
        unset.inner_text() and "section [belleville] of the file ABATE_VILLAGE_SETTINGS names" \
        in unset.inner_text()
    page.locator("#form-issue_notice_document").get_by_role(
        "button", name="Issue notice document").click()
    page.wait_for_load_state()
    assert "Recorded: issue notice document." in page.get_by_role("status").inner_text()
    table = page.locator("table[aria-labelledby=documents]")
    row = table.locator("tbody tr").first
    events = served_site.events("BV-DOC-001")
    issued = [e for e in events if e["type"] == "DocumentIssued"]
    assert len(issued) == 1 and issued[0]["actor"] == "inspector.belleville"
    text = row.inner_text()
    assert "Notice of violation" in text and "inspector.belleville" in text
    assert ("CST" in text or "CDT" in text)
    download = _download(page, row.get_by_role("link"))
    assert download.suggested_filename.endswith(".pdf")
    pdf = _pdf_text(download)
    assert "9.13" in pdf and "Ann Owner" in pdf  # the ordinance cited, the person served
    assert "BV-DOC-001" in pdf
    assert "not set" not in pdf  # a letter that can be mailed


def test_a_clerk_bills_and_downloads_the_bill(page, served_site):
    sign_in(page, served_site, "clerk.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-DOC-002")
    assert page.locator("#form-issue_bill_document").count() == 0  # no bill yet
    page.locator("#form-issue_bill").get_by_role("button", name="Issue bill").click()
    page.wait_for_load_state()
    page.locator("#form-issue_bill_document").get_by_role(
        "button", name="Issue bill document").click()
    page.wait_for_load_state()
    row = page.locator("table[aria-labelledby=documents] tbody tr", has_text="Bill")
    assert "clerk.belleville" in row.inner_text()
    pdf = _pdf_text(_download(page, row.get_by_role("link")))
    assert "120.00" in pdf and "9.13" in pdf
    # an issue form posted without its CSRF token is refused and records nothing
    before = len(served_site.events("BV-DOC-002"))
    refused = post_without_form(page, f"/{HOME}/cases/BV-DOC-002",
                                {"command": "issue_bill_document", "at": dt.datetime.now(CHICAGO).strftime("%Y-%m-%dT%H:%M")})
    assert refused == 403
    assert len(served_site.events("BV-DOC-002")) == before


def test_the_auditor_sees_the_downloads_but_no_issue_or_correct_forms(page, served_site):
    sign_in(page, served_site, "auditor.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-DOC-003")
    links = page.locator("table[aria-labelledby=documents] a")
    assert links.count() >= 1
    assert page.locator("form[id^=form-issue_]").count() == 0
    assert page.locator("#form-correct").count() == 0
    pdf = _pdf_text(_download(page, links.first))
    assert "9.13" in pdf
    log = served_site.api("auditor.belleville", "GET", "/audit/access-log",
                          params={"user": "auditor.belleville", "case_ref": "BV-DOC-003"})
    assert log.status_code == 200, log.text
    rows = log.json()
    rows = rows.get("entries", rows.get("rows", rows)) if isinstance(rows, dict) else rows
    exports = [r for r in rows if r["action"] == "export" and "/documents/" in r["path"]]
    assert exports, rows  # the page's download is in the access log as an export
    # a document position that is not a document is a friendly 404, not a traceback
    answer = page.goto(f"{served_site.base}/{HOME}/cases/BV-DOC-003/documents/1")
    assert answer.status == 404 and "Traceback" not in page.content()


def test_a_referral_packet_is_listed_for_the_inspector_without_its_download(page, served_site):
    """The timeline and the API's list name the packet to an inspector; the documents list
    did not ("No documents issued"). It names it, and who may open it."""
    for command, body in (("refer_to_attorney", {"at": earlier(0.4), "reason": "no cure"}),
                          ("issue_referral_packet", {"at": earlier(0.3)})):
        done = served_site.api("clerk.belleville", "POST",
                               f"/{HOME}/cases/BV-DOC-003/{command}", json=body)
        assert done.status_code == 200, done.text
    sign_in(page, served_site, "inspector.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-DOC-003")
    rows = page.locator("table[aria-labelledby=documents] tbody tr")
    packet = rows.filter(has_text="Referral packet")
    assert packet.count() == 1
    assert "opened by the attorney, auditor, clerk only" in packet.inner_text()
    assert packet.locator("a").count() == 0
    assert rows.filter(has_text="Notice of violation").locator("a").count() == 1
    page.context.clear_cookies()  # signed out; the clerk reads packets
    sign_in(page, served_site, "clerk.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-DOC-003")
    packet = page.locator("table[aria-labelledby=documents] tbody tr",
                          has_text="Referral packet")
    assert packet.locator("a").count() == 1


def test_a_correction_shows_beside_what_it_corrects_and_an_error_beside_its_field(
        page, served_site):
    before = len(served_site.events("BV-DOC-001"))
    sign_in(page, served_site, "clerk.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-DOC-001")
    form = page.locator("#form-correct")
    form.get_by_label("Event to correct").select_option("1")
    form.get_by_label("Field").select_option("served_on")  # not a field of Opened
    form.get_by_label("New value").fill("Bob Owner")
    form.get_by_label("Reason").fill("wrong person")
    form.get_by_role("button", name="Record correction").click()
    page.wait_for_load_state()
    field = page.locator("#form-correct").get_by_label("Field")
    assert field.get_attribute("aria-invalid") == "true"
    said = page.locator("#correct-field-error").inner_text()
    assert said.startswith("the case opened (event 1) cannot have 'served on' corrected; "
                           "what can be: owner, responsible, site address, description"), said
    events_offered = page.locator("#form-correct").get_by_label("Event to correct") \
        .locator("option").all_inner_texts()
    assert events_offered[1].startswith("1. Case opened: owner")
    assert not any("Opened" in o or "NoticeServed" in o or "_" in o for o in events_offered)
    assert len(served_site.events("BV-DOC-001")) == before  # nothing recorded
    assert page.locator("#form-correct").get_by_label("New value").input_value() == "Bob Owner"

    # a value the domain refuses (a parcel number not in Dane County's format): beside it
    form = page.locator("#form-correct")
    form.get_by_label("Field").select_option("parcel")
    form.get_by_label("New value").fill("Dane\n12-34")
    form.get_by_role("button", name="Record correction").click()
    page.wait_for_load_state()
    value = page.locator("#form-correct").get_by_label("New value")
    assert value.get_attribute("aria-invalid") == "true"
    said = page.locator("#correct-value-error").inner_text()
    assert "parcel number not as Dane County writes it (like" in said, said
    assert "\\d" not in said and not said.startswith("field")
    assert len(served_site.events("BV-DOC-001")) == before

    # a time the clocks skipped (daylight saving time began): beside the time, not moved
    form = page.locator("#form-correct")
    now = form.locator("#correct-at").input_value()  # the form's own time: now
    form.get_by_label("Field").select_option("owner")
    form.get_by_label("New value").fill("Bob Owner")
    form.locator("#correct-at").fill("2026-03-08T02:30")
    form.get_by_role("button", name="Record correction").click()
    page.wait_for_load_state()
    assert "2026-03-08 02:30 never happened" in page.locator("#correct-at-error").inner_text()
    assert len(served_site.events("BV-DOC-001")) == before
    page.locator("#form-correct #correct-at").fill(now)

    form = page.locator("#form-correct")
    form.get_by_label("Field").select_option("owner")
    form.get_by_label("New value").fill("Bob Owner\n14 Vine St, Belleville WI")
    form.get_by_label("Reason").fill("the owner's name was taken from an old roll")
    form.get_by_role("button", name="Record correction").click()
    page.wait_for_load_state()
    assert "Recorded: correct." in page.get_by_role("status").inner_text()
    opened = page.locator("#event-1")
    assert "Bob Owner" in opened.locator(".correction").inner_text()
    assert "old roll" in opened.locator(".correction").inner_text()
    assert "Bob Owner" in page.locator("dl.facts").inner_text()
    events = served_site.events("BV-DOC-001")
    assert events[-1]["type"] == "Corrected" and events[-1]["actor"] == "clerk.belleville"


@pytest.mark.parametrize("width", [1280, 768])
def test_the_case_page_with_documents_and_forms_passes_axe(page, served_site, width):
    page.set_viewport_size({"width": width, "height": 1000})
    sign_in(page, served_site, "clerk.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/BV-DOC-002")
    assert serious_violations(page) == []
    page.locator("#form-correct").get_by_role("button", name="Record correction").click()
    page.wait_for_load_state()
    assert page.locator("#correct-supersedes-error").count() == 1
    assert serious_violations(page) == []

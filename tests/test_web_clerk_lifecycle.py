"""Trial finding 3 in a real browser: in a village of 2,000 the clerk-treasurer records the
whole case. A clerk alone opens a case on the new-case page and takes it through
inspection, notice, the village's abatement with its cost lines and the bill; the case
page says who records each next step the signed-in role cannot (finding 3), offers no
second referral and no referral packet before a referral (finding 16)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from tests.api_kit import HOME
from tests.web_kit import add_user, sign_in, site

pytestmark = pytest.mark.slow
CHICAGO = ZoneInfo("America/Chicago")  # Belleville's zone (cases/rules/belleville.yaml)
CASE = "BV-CLERK-001"
ATTORNEY = "attorney.belleville"


@pytest.fixture(scope="module")
def served_site(tmp_path_factory):
    with site(tmp_path_factory.mktemp("clerk"), "--without-scheduler") as running:
        running.tokens[ATTORNEY] = add_user(running.database_url, ATTORNEY, "attorney", HOME)
        yield running


def _days_ago(days: float) -> str:
    """A time ``days`` ago as a datetime-local field takes it, in village time."""
    return (dt.datetime.now(CHICAGO) - dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M")


def _submit(page, command: str, button: str, **fields: str) -> None:
    """Fill the case page's form of ``command`` (fields by their names) and send it."""
    form = page.locator(f"#form-{command}")
    for name, value in fields.items():
        control = form.locator(f"[name={name}]")
        if control.evaluate("e => e.tagName") == "SELECT":
            control.select_option(value)
        else:
            control.fill(value)
    form.get_by_role("button", name=button).click()
    page.wait_for_load_state()
    assert f"Recorded: {command.replace('_', ' ')}." in page.get_by_role("status").inner_text()


def _others(page) -> list[str]:
    """The case page's lines saying who records the next steps the user cannot."""
    return page.locator("#recorded-by-others li").all_inner_texts()


def test_a_clerk_alone_takes_a_new_case_to_its_bill(page, served_site):
    sign_in(page, served_site, "clerk.belleville")
    page.goto(f"{served_site.base}/{HOME}/cases/new")
    page.locator(".rule-choice", has_text="9.13").first.get_by_role("radio").check()
    page.get_by_label("Case number").fill(CASE)
    page.locator("#at").fill(_days_ago(10))
    page.get_by_label("Parcel number").fill("0509-123-4567-2")
    page.get_by_label("Site address").fill("3 Elm St")
    page.get_by_label("Owner (required)", exact=True).fill("Olga Owner")
    page.get_by_label("What was found").fill("two mattresses and a couch on the lawn")
    page.get_by_role("button", name="Open the case").click()
    page.wait_for_load_state()
    assert page.url.endswith(f"/{HOME}/cases/{CASE}")

    # the inspector's forms are the clerk's too; the attorney's step says whose it is
    for command in ("record_inspection", "serve_notice", "record_abatement"):
        assert page.locator(f"#form-{command}").count() == 1, command
    assert page.locator("#form-issue_citation").count() == 0
    assert "Next, recorded by an attorney: issue citation" in _others(page)
    # a referral packet is the prosecution's file: not before a referral or citation
    assert page.locator("#form-issue_referral_packet").count() == 0

    _submit(page, "record_inspection", "Record inspection", at=_days_ago(9.9),
            findings="two mattresses and a couch on the front lawn")
    _submit(page, "serve_notice", "Serve notice", at=_days_ago(9.8), method="personal",
            served_on="Olga Owner")
    assert page.locator("#form-issue_notice_document").count() == 1  # the clerk prints it
    form = page.locator("#form-record_abatement")
    form.get_by_label("Item 1").fill("Hauling")
    form.get_by_label("Amount ($) 1").fill("$1,200.50")
    form.get_by_label("Item 2").fill("Landfill fee")
    form.get_by_label("Amount ($) 2").fill("85")
    _submit(page, "record_abatement", "Record abatement", at=_days_ago(2))
    abatement = page.locator("ol.timeline li", has_text="Abatement recorded").inner_text()
    assert "$1,200.50" in abatement and "$85.00" in abatement and "$1,285.50" in abatement
    _submit(page, "issue_bill", "Issue bill")
    facts = page.locator("dl.facts").inner_text()
    assert "Billed" in facts and "$1,285.50" in facts
    assert page.locator("#form-record_payment").count() == 1  # what comes next
    # billed just now: the appeal window is open, the tax roll not yet (the page says when)
    assert page.locator("#form-file_appeal").count() == 1
    assert page.locator("#form-certify_charge").count() == 0
    assert "can be certified to the tax roll from" in page.locator(
        "#not-offered-certify_charge").inner_text()
    payment = page.locator("#form-record_payment")
    payment.locator("[name=amount]").fill("$5.999")
    payment.get_by_role("button", name="Record payment").click()
    page.wait_for_load_state()
    refusal = page.locator("#form-record_payment .form-error, #form-record_payment .field-error")
    assert "at most two decimals ($5.999 was typed)" in " ".join(refusal.all_inner_texts())

    events = served_site.events(CASE)
    assert [e["type"] for e in events if e["type"] not in ("DeadlinePassed",)] == [
        "Opened", "InspectionRecorded", "NoticeServed", "AbatementRecorded", "BillIssued"]
    assert {e["actor"] for e in events if e["type"] != "DeadlinePassed"} == {"clerk.belleville"}


def test_the_attorney_is_told_who_records_and_is_not_offered_a_second_referral(
        page, served_site):
    opened = served_site.api("clerk.belleville", "POST", f"/{HOME}/cases", json={
        "case_ref": "BV-CLERK-002", "at": (dt.datetime.now(CHICAGO) - dt.timedelta(days=3))
        .isoformat(), "rule": "belleville:9.13", "parcel": {"county": "Dane",
                                                            "number": "0509-123-4567-0"},
        "site_address": "12 Vine St", "owner": {"name": "Ann Owner"},
        "description": "dumped furniture"})
    assert opened.status_code == 201, opened.text
    sign_in(page, served_site, ATTORNEY)
    page.goto(f"{served_site.base}/{HOME}/cases/BV-CLERK-002")
    others = _others(page)
    assert "Next, recorded by an inspector or clerk: serve notice" in others
    assert "Next, recorded by an inspector or clerk: record inspection" in others
    assert page.locator("#form-serve_notice").count() == 0
    assert page.locator("#form-issue_referral_packet").count() == 0  # nothing referred yet

    _submit(page, "refer_to_attorney", "Refer to attorney", at=_days_ago(1),
            reason="furniture still on the lot after the notice")
    assert page.locator("#form-refer_to_attorney").count() == 0  # one referral at a time
    assert page.locator("#form-record_disposition").count() == 1
    assert page.locator("#form-issue_referral_packet").count() == 1  # now it has a referral

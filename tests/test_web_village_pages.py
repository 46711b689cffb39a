"""The new-case, tax-roll, repeat-offenders, audit and chart pages in a real browser
(headless Chromium through Playwright) against ``abate serve``: a clerk's autumn
certification (the list grows when the clock advances, the CSV download, certify after a
confirmation, the seal), an auditor who may read but not certify, the rule picker and its
errors beside the fields, counts as of a date, a case then and today, and axe-core and a
768 px window on every page."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from zoneinfo import ZoneInfo

import pytest
import sqlalchemy as sa
from pypdf import PdfReader

from cases.rules.catalog import default_catalog

from tests.api_kit import HOME, OTHER, earlier
from tests.abate_command import run_abate
from tests.builders import GREEN_PARCEL, CaseLines, clock, hedge_through_bill
from tests.web_kit import csrf_of, post_without_form, scrolls_sideways, serious_violations, \
    sign_in, site
from tests.web_pages_kit import import_journal

pytestmark = pytest.mark.slow

ROLL = f"/{HOME}/tax-roll?tax_year=2026&county=Dane"
REPEAT_PARCEL = {"county": "Dane", "number": "0509-123-4567-1"}
ONCE_PARCEL = {"county": "Dane", "number": "0509-123-4567-4"}  # one violation: no repeat


def _noticed(ref: str, day: str, **open_fields) -> list[dict]:
    lines = CaseLines(HOME, ref)
    return [lines.open("belleville:9.13", f"{day}T09:00:00-05:00", **open_fields),
            lines.cmd("serve_notice", f"{day}T10:00:00-05:00", method="personal",
                      served_on="Ann Owner")]


@pytest.fixture(scope="module")
def served_site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("village-pages")
    with site(folder) as running:
        import_journal(running.database_url, folder,
                       *_noticed("BV-TR-1", "2026-03-02"), *_noticed("BV-AU-1", "2026-03-03"),
                       *_noticed("BV-RP-1", "2026-05-04", parcel=REPEAT_PARCEL,
                                 owner={"name": "REX  repeat"}),  # the same party
                       *_noticed("BV-RP-2", "2026-08-03", parcel=REPEAT_PARCEL,
                                 owner={"name": "Rex Repeat"}),
                       *_noticed("BV-RP-3", "2026-07-01", parcel=ONCE_PARCEL,
                                 owner={"name": "Una Once"}))
        running.open_case("MZ-PAGES-1", OTHER)
        running.folder = folder
        yield running


def _open_as(page, served_site, user: str, path: str) -> None:
    sign_in(page, served_site, user)
    page.goto(served_site.base + path)


def _rows(page, table: str) -> list[list[str]]:
    return [[cell.strip() for cell in row] for row in page.eval_on_selector_all(
        f"#{table} tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))")]


def test_a_clerk_sees_the_charge_after_the_clock_advances_downloads_and_certifies(
        page, served_site):
    _open_as(page, served_site, "clerk.belleville", ROLL)
    assert "tax roll 2026" in page.get_by_role("heading", level=1).inner_text()
    assert page.locator("#charge-table").count() == 0  # served, not yet abated nor billed

    # the cure period runs out with the clock; the village abates and bills
    lines = CaseLines(HOME, "BV-TR-1")
    import_journal(served_site.database_url, served_site.folder,
                   clock(HOME, "2026-03-06T00:00:00-06:00"),
                   lines.cmd("record_abatement", "2026-03-06T09:00:00-06:00",
                             costs=[{"item": "crew", "amount": "150.00"}]),
                   lines.cmd("issue_bill", "2026-03-09T09:00:00-05:00"))
    page.reload()
    rows = _rows(page, "charge-table")
    assert [r[0] for r in rows] == ["BV-TR-1"] and rows[0][4] == "$150.00"
    assert rows[0][6] == "not yet"
    assert page.locator("#total-amount").inner_text() == "$150.00"

    with page.expect_download() as download:
        page.get_by_role("link", name="Download the list (CSV)").click()
    body = open(download.value.path(), "rb").read()
    same = served_site.api("clerk.belleville", "GET", f"/{HOME}/tax-roll",
                           params={"tax_year": 2026, "county": "Dane"})
    assert body == same.content  # the API's export, byte for byte
    assert [r["case_ref"] for r in csv.DictReader(io.StringIO(body.decode()))] == ["BV-TR-1"]

    page.get_by_role("link", name="Certify the Dane County list…").click()
    page.wait_for_load_state()
    assert page.locator("#confirm-charges").inner_text() == "1"
    assert page.locator("#confirm-total").inner_text() == "$150.00"
    # the list's digest, as the API's export gives it (not the CSV file's SHA-256)
    assert page.locator("#confirm-digest").inner_text() == same.headers["x-abate-list-sha256"]
    assert served_site.events("BV-TR-1")[-1]["type"] != "ChargeCertified"  # not before yes
    page.get_by_role("button", name="Yes, certify this charge ($150.00)").click()
    page.wait_for_load_state()
    assert "certified=" in page.url
    assert "was certified and sealed" in page.get_by_role("status").inner_text()
    seal_line = page.locator("code.seal-line").first.inner_text()
    assert seal_line.startswith("abate-seal ")
    assert _rows(page, "charge-table")[0][6].startswith("yes, 20")
    assert "clerk.belleville" in _rows(page, "charge-table")[0][6]
    assert [e["type"] for e in served_site.events("BV-TR-1")].count("ChargeCertified") == 1

    # the certified list for the county treasurer, as the API gives it
    with page.expect_download() as download:
        page.get_by_role("link", name="Certified list for the county treasurer (PDF)").click()
    pdf = open(download.value.path(), "rb").read()
    assert pdf.startswith(b"%PDF-")
    text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    assert "BV-TR-1" in text and "150.00" in text and "Dane" in text
    same = served_site.api("clerk.belleville", "GET", f"/{HOME}/tax-roll/certified-list.pdf",
                           params={"tax_year": 2026, "county": "Dane"})
    assert same.content == pdf

    # the access log holds the download as an export and the certification
    log = served_site.api("auditor.belleville", "GET", "/audit/access-log",
                          params={"user": "clerk.belleville"}).json()["entries"]
    actions = {(e["path"], e["action"]) for e in log}
    assert (f"/{HOME}/tax-roll.csv", "export") in actions
    assert (f"/{HOME}/tax-roll/certify", "certify") in actions
    assert (f"/{HOME}/tax-roll/certified-list.pdf", "export") in actions

    # a payment after certification: the county credits it (reconciliation)
    assert "No payment received after a certification" in page.locator("#reconcile + *").inner_text()
    paid = served_site.api("clerk.belleville", "POST", f"/{HOME}/cases/BV-TR-1/record_payment",
                           json={"at": earlier(0), "amount": "40.00"})
    assert paid.status_code == 200, paid.text
    page.reload()
    assert [r[0] for r in _rows(page, "late-payments")] == ["BV-TR-1"]
    assert "Dane County $40.00" in page.locator("#to-credit").inner_text()

    # and the chart of certified charges counts it
    page.goto(f"{served_site.base}/{HOME}/charts")
    assert ["2026", "Dane", "1", "$150.00"] in _rows(page, "table-certified")


def test_a_stale_or_repeated_confirmation_certifies_and_seals_nothing(page, served_site):
    _open_as(page, served_site, "clerk.belleville", ROLL)
    seals = page.locator("code.seal-line").count()  # a certification always adds one
    fields = {"csrf_token": csrf_of(page), "tax_year": "2026", "county": "Dane"}
    stale = post_without_form(page, f"/{HOME}/tax-roll/certify", {**fields, "digest": "0" * 64})
    assert stale == 409  # the confirmation again, saying the list changed
    # the list the first test certified: every charge certified, nothing left to certify
    assert "nothing to certify" in page.locator("main").inner_text()
    assert page.get_by_role("link", name="Certify the Dane County list…").count() == 0
    page.goto(f"{served_site.base}/{HOME}/tax-roll/certify?tax_year=2026&county=Dane")
    assert "nothing to certify" in page.get_by_role("status").inner_text()
    assert page.get_by_role("button", name="Yes, certify").count() == 0
    digest = page.locator("#confirm-digest").inner_text()
    again = post_without_form(page, f"/{HOME}/tax-roll/certify", {**fields, "digest": digest})
    assert again == "redirect"
    page.goto(served_site.base + ROLL)
    assert page.locator("code.seal-line").count() == seals


def test_an_auditor_reads_the_tax_roll_but_has_no_certify_form(page, served_site):
    _open_as(page, served_site, "auditor.belleville", ROLL)
    assert page.get_by_role("heading", level=1).count() == 1
    assert page.get_by_role("link", name="Certify the Dane County list…").count() == 0
    assert page.locator("form[method=post][action$='/certify']").count() == 0
    page.goto(f"{served_site.base}/{HOME}/tax-roll/certify?tax_year=2026&county=Dane")
    assert "Not allowed" in page.get_by_role("heading", level=1).inner_text()
    page.goto(f"{served_site.base}{ROLL}")
    forged = {"csrf_token": csrf_of(page), "tax_year": "2026", "county": "Dane", "digest": "x"}
    assert post_without_form(page, f"/{HOME}/tax-roll/certify", forged) == 403
    page.goto(f"{served_site.base}/{OTHER}/tax-roll")
    assert "Not found" in page.get_by_role("heading", level=1).inner_text()


def test_the_new_case_form_shows_each_rule_and_its_errors_beside_the_fields(page, served_site):
    _open_as(page, served_site, "inspector.belleville", f"/{HOME}/cases/new")
    picker = page.locator(".rule-choice", has_text="9.13")
    assert picker.count() >= 1
    facts = picker.first.inner_text()
    assert "Cure period" in facts and "Notice to" in facts and "Billed to" in facts
    assert "If not done" in facts
    page.get_by_label("Case number").fill("BV-NEW-1")
    page.get_by_label("Parcel number").fill("not a parcel")
    page.get_by_label("Site address").fill("3 Elm St")
    page.get_by_label("Owner (required)", exact=True).fill("Olga Owner")
    page.get_by_label("What was found").fill("tires in the yard")
    page.get_by_role("button", name="Open the case").click()
    page.wait_for_load_state()
    assert "choose the rule" in page.locator("#rule-error").inner_text()
    picker.first.get_by_role("radio").check()
    page.get_by_role("button", name="Open the case").click()
    page.wait_for_load_state()
    error = page.locator("#parcel_number-error")
    assert "like 0123-456-7890-1" in error.inner_text()
    assert page.get_by_label("Parcel number").get_attribute("aria-describedby") == \
        "parcel_number-error"
    assert page.get_by_label("Owner (required)", exact=True).input_value() == "Olga Owner"  # kept
    missing = served_site.api("clerk.belleville", "GET", f"/{HOME}/cases/BV-NEW-1")
    assert missing.status_code == 404  # nothing recorded
    page.get_by_label("Parcel number").fill("0509-123-4567-2")
    page.get_by_role("button", name="Open the case").click()
    page.wait_for_load_state()
    assert page.url.endswith(f"/{HOME}/cases/BV-NEW-1")
    assert "BV-NEW-1" in page.get_by_role("heading", level=1).inner_text()  # the case page
    opened = served_site.events("BV-NEW-1")
    assert [e["type"] for e in opened] == ["Opened"]
    assert opened[0]["actor"] == "inspector.belleville"
    assert opened[0]["facts"]["parcel"] == {"county": "Dane", "number": "0509-123-4567-2"}


def test_a_snow_case_takes_the_time_the_snowfall_ended(page, served_site):
    _open_as(page, served_site, "inspector.belleville", f"/{HOME}/cases/new")
    page.locator(".rule-choice", has_text="9.09").first.get_by_role("radio").check()
    page.get_by_label("Case number").fill("BV-SNOW-1")
    page.get_by_label("Observed (village time)").fill("2026-12-01T10:00")
    page.get_by_label("Snowfall ended", exact=False).fill("2026-12-01T04:00")
    page.get_by_label("Parcel number").fill("0509-123-4567-3")
    page.get_by_label("Site address").fill("5 Elm St")
    page.get_by_label("Owner (required)", exact=True).fill("Sam Shovel")
    page.get_by_label("What was found").fill("walk not cleared")
    page.get_by_role("button", name="Open the case").click()
    page.wait_for_load_state()
    assert page.url.endswith(f"/{HOME}/cases/BV-SNOW-1"), page.url
    facts = served_site.events("BV-SNOW-1")[0]["facts"]
    assert dt.datetime.fromisoformat(facts["snow_ended_at"]) == dt.datetime.fromisoformat(
        "2026-12-01T04:00:00-06:00")  # read in the village's time


def test_an_auditor_may_not_open_a_case(page, served_site):
    _open_as(page, served_site, "auditor.belleville", f"/{HOME}/cases/new")
    assert "Not allowed" in page.get_by_role("heading", level=1).inner_text()


def _left_out(page, noun: str) -> int:
    """How many rows the page says it left out below the threshold (0: no such line)."""
    line = page.locator(f"#{noun}-left-out")
    if not line.count():
        return 0
    said = re.fullmatch(r"(\d+) \w+ with fewer than 2 violations of a rule family (is|are) "
                        r"not shown \(set \"At least\" to 1 to see them\)\.",
                        line.inner_text().strip())
    assert said, line.inner_text()
    return int(said.group(1))


def test_repeat_offenders_are_counted_as_of_the_chosen_date(page, served_site):
    _open_as(page, served_site, "inspector.belleville", f"/{HOME}/repeat-offenders")
    parcels = {r[0]: r[1:] for r in _rows(page, "parcel-table")}
    assert parcels["Dane 0509-123-4567-1"][1:] == ["2", "BV-RP-1, BV-RP-2"]
    assert parcels["Dane 0509-123-4567-0"][1:] == ["2", "BV-AU-1, BV-TR-1"]
    parties = {r[0]: r[1:] for r in _rows(page, "party-table")}
    # one party whatever its capitals and spaces, named as its latest case writes it (not
    # the lower-case key it is compared by)
    assert parties["Rex Repeat"][1:] == ["2", "BV-RP-1, BV-RP-2"]
    assert "rex repeat" not in parties and "REX  repeat" not in parties
    # by default repeats only: BV-RP-3's parcel and owner (one violation) are left out,
    # and each table says how many it left out
    assert "Dane 0509-123-4567-4" not in parcels and "Una Once" not in parties
    assert min(int(r[1]) for r in [*parcels.values(), *parties.values()]) >= 2
    hidden = {"parcel": _left_out(page, "parcel"), "party": _left_out(page, "party")}
    text = page.locator("main").inner_text()
    assert "/api/" not in text and "abate repeat-offenses" not in text  # no API/CLI advice
    assert "decided by its rule's own section of the ordinance" in text

    page.get_by_label("At least (violations)").fill("1")
    page.get_by_role("button", name="Show").click()
    page.wait_for_load_state()
    assert "at_least=1" in page.url  # linkable
    for table, noun, once in (("parcel-table", "parcel", "Dane 0509-123-4567-4"),
                              ("party-table", "party", "Una Once")):
        every = {r[0]: r[1:] for r in _rows(page, table)}
        assert every[once][1:] == ["1", "BV-RP-3"]
        ones = [r for r in _rows(page, table) if r[2] == "1"]
        assert len(ones) == hidden[noun] >= 1, (noun, ones)  # the count said was right
        assert _left_out(page, noun) == 0
    assert {r[0] for r in _rows(page, "parcel-table") if int(r[2]) >= 2} == set(parcels)

    page.get_by_label("As of (date)").fill("2026-06-01")
    page.get_by_role("button", name="Show").click()
    page.wait_for_load_state()
    assert "as_of=2026-06-01" in page.url and "at_least=1" in page.url  # the filter kept
    counted = {r[0]: r[2] for r in _rows(page, "parcel-table")}
    assert counted["Dane 0509-123-4567-1"] == "1"
    page.goto(f"{served_site.base}/{HOME}/repeat-offenders?as_of=2026-06-01")
    assert "Dane 0509-123-4567-1" not in {r[0] for r in _rows(page, "parcel-table")}
    assert _left_out(page, "parcel") >= 1

    page.goto(f"{served_site.base}/{HOME}/repeat-offenders?as_of=2026-13-40")
    assert "give a date as YYYY-MM-DD" in page.locator("#as_of-error").inner_text()
    for bad in ("0", "abc", "100", "-2", "1.5"):
        answer = page.goto(f"{served_site.base}/{HOME}/repeat-offenders?at_least={bad}")
        assert answer.status == 422, bad
        field = page.get_by_label("At least (violations)")
        assert field.get_attribute("aria-describedby") == "at_least-error"
        assert field.get_attribute("aria-invalid") == "true"
        assert page.locator("#at_least-error").inner_text() == \
            "give a whole number from 1 to 99", bad


def test_the_audit_page_shows_a_case_then_and_today_the_history_verify_and_seals(
        page, served_site):
    _open_as(page, served_site, "auditor.belleville", f"/{HOME}/cases/BV-AU-1")
    page.get_by_role("link", name="Audit: this case as of a date").click()  # from its page
    page.wait_for_load_state()
    assert page.url.endswith(f"/{HOME}/audit/cases/BV-AU-1")
    page.get_by_label("As of (business date)").fill("2026-03-02")
    page.get_by_role("button", name="Show").click()
    page.wait_for_load_state()
    compared = {r[0]: r[1:] for r in _rows(page, "compare-table")}
    assert compared["Status"][0] == "not yet opened"  # opened on 3 March
    assert compared["Notices served"][1] == "1 (changed)"  # then: not yet opened
    page.get_by_label("As of (business date)").fill("2026-03-03")
    page.get_by_role("button", name="Show").click()
    page.wait_for_load_state()
    compared = {r[0]: r[1:] for r in _rows(page, "compare-table")}
    assert compared["Notices served"][0] == "1"
    assert compared["Status"][0] == "Notice served"  # in words, as the timeline says it
    assert compared["Balance"][0] == "$0.00"
    history = _rows(page, "history-table")
    # each event in plain English, the name Abate records beside it for the auditor
    assert [r[1] for r in history][:2] == ["Case opened Opened", "Notice served NoticeServed"]
    assert page.locator("#history-table code.name").first.inner_text() == "Opened"
    assert history[0][2] == "2026-03-03 08:00 CST"  # typed 09:00-05:00; shown in village time
    assert page.locator("#verify-result").count() == 0  # the whole store: when asked
    page.get_by_role("link", name="Check the whole store now").click()
    page.wait_for_load_state()
    assert "check=1" in page.url and "as_of=2026-03-03" in page.url  # the date kept
    verified = page.locator("#verify-result").inner_text()
    assert "no problem found" in verified and "the whole store, every village" in verified
    assert {r[0]: r[1:] for r in _rows(page, "compare-table")}["Balance"][0] == "$0.00"
    # as known at a moment before anything was recorded: nothing yet
    page.goto(f"{served_site.base}/{HOME}/audit/cases/BV-AU-1?as_of=2026-03-03"
              "&known_at=2026-01-01T00:00")
    compared = {r[0]: r[1:] for r in _rows(page, "compare-table")}
    assert compared["Status"][0] == "not yet opened"


def test_the_audit_page_names_a_view_row_changed_in_the_database_until_it_is_rebuilt(
        page, served_site):
    """A case summary edited in the database: the auditor's integrity check says which view
    and which case, what it shows and what the records give, and how to repair it."""
    engine = sa.create_engine(served_site.database_url)
    with engine.begin() as conn:
        generation = conn.execute(sa.text(
            "SELECT generation FROM abate_view_positions "
            "WHERE view = 'case_summaries' AND active")).scalar_one()
        conn.execute(sa.text(
            f"UPDATE abate_case_summaries_rows_g{generation} SET owner_name = 'Tampered Owner', "
            "balance = '999.00' WHERE case_ref = 'BV-AU-1'"))
    engine.dispose()
    try:
        _open_as(page, served_site, "auditor.belleville",
                 f"/{HOME}/audit/cases/BV-AU-1?check=1")
        assert "Problems found" in page.locator("#verify-result").inner_text()
        assert "do not show what the records say" in page.locator("#views-result").inner_text()
        assert page.locator("#view-differences li").all_inner_texts() == [
            "The case summaries (the case lists and search) view, case belleville:BV-AU-1: "
            "the owner name shows \u201cTampered Owner\u201d where the records give "
            "\u201cAnn Owner\u201d; the balance shows \u201c999.00\u201d where the records "
            "give \u201c0.00\u201d."]
        assert "abate projections rebuild case_summaries" in \
            page.locator(".view-repair").inner_text()
    finally:
        rebuilt = run_abate("projections", "rebuild", "case_summaries",
                            database_url=served_site.database_url)
        assert rebuilt.returncode == 0, rebuilt.stderr
    page.reload()
    assert "no problem found" in page.locator("#verify-result").inner_text()
    assert "Every view" in page.locator("#views-result").inner_text()
    assert page.locator("#view-differences").count() == 0


def test_as_known_at_the_minute_a_page_shows_takes_in_what_was_recorded_in_it(
        page, served_site):
    """The history shows "Recorded 09:54"; typing 09:54 in "As known at" must find the case
    (it meant 09:54:00, before a fact recorded at 09:54:56)."""
    served_site.open_case("BV-AU-9", days_ago=3)
    recorded = dt.datetime.fromisoformat(served_site.events("BV-AU-9")[0]["recorded_at"])
    minute = recorded.astimezone(ZoneInfo("America/Chicago")).replace(second=0, microsecond=0)
    audit = f"/{HOME}/audit/cases/BV-AU-9?as_of={minute.date().isoformat()}&known_at="
    _open_as(page, served_site, "auditor.belleville", audit + minute.strftime("%Y-%m-%dT%H:%M"))
    compared = {r[0]: r[1:] for r in _rows(page, "compare-table")}
    assert compared["Status"][0] != "not yet opened"
    shown = [r[3] for r in _rows(page, "history-table")][0]
    assert shown.startswith(minute.strftime("%Y-%m-%d %H:%M"))
    page.goto(served_site.base + audit + (minute - dt.timedelta(minutes=1))
              .strftime("%Y-%m-%dT%H:%M"))
    compared = {r[0]: r[1:] for r in _rows(page, "compare-table")}
    assert compared["Status"][0] == "not yet opened"


def test_the_charts_count_cases_opened_per_month(page, served_site):
    _open_as(page, served_site, "inspector.belleville", f"/{HOME}/charts")
    opened = {r[0]: r[-1] for r in _rows(page, "table-opened")}
    assert opened["2026-03"] == "2" and opened["2026-05"] == "1" and opened["2026-08"] == "1"
    families = page.locator("#table-opened thead th").count() - 2  # less Month and All
    assert families >= 10
    # one small chart per rule family, each wide enough to read, on a desk and a tablet;
    # no legend or label cut short
    for width, across in ((1280, 4), (768, 2)):
        page.set_viewport_size({"width": width, "height": 1000})
        charts = page.locator("#chart-opened svg")
        assert charts.count() == families
        widths = [charts.nth(n).bounding_box()["width"] for n in range(families)]
        assert min(widths) >= 240, (width, widths)
        tops = [round(charts.nth(n).bounding_box()["y"]) for n in range(across + 1)]
        # the first row holds ``across`` charts, and no more
        assert len(set(tops[:across])) == 1 and tops[across] > tops[0], (width, tops)
    titles = page.locator("#chart-opened svg .plot_title").all_text_contents()
    assert "Property maintenance" in titles and "House numbers" in titles
    assert not [t for t in page.locator("svg text").all_text_contents() if "…" in t]
    assert page.locator("script").count() == 0  # drawn on the server


PAGES = (f"/{HOME}/cases/new", ROLL, f"/{HOME}/tax-roll/certify?tax_year=2026&county=Dane",
         f"/{HOME}/repeat-offenders", f"/{HOME}/audit/cases/BV-AU-1?as_of=2026-03-02",
         f"/{HOME}/charts")


@pytest.mark.parametrize("width", [1280, 768])
def test_every_page_passes_axe_and_fits_the_width(page, served_site, width):
    page.set_viewport_size({"width": width, "height": 1000})
    sign_in(page, served_site, "clerk.belleville")
    for path in PAGES:
        page.goto(served_site.base + path)
        assert serious_violations(page) == [], path
        assert not scrolls_sideways(page), (path, width)
    page.goto(f"{served_site.base}/{HOME}/cases/new")
    page.get_by_role("button", name="Open the case").click()  # errors beside the fields
    page.wait_for_load_state()
    assert page.locator(".field-error").count() >= 1
    assert serious_violations(page) == []
    assert not scrolls_sideways(page)


def test_the_keyboard_alone_picks_a_rule_and_reaches_the_certify_button(page, served_site):
    _open_as(page, served_site, "clerk.belleville", f"/{HOME}/cases/new")
    for _ in range(40):  # Tab reaches the rule picker; Space chooses the rule in focus
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.name") == "rule":
            break
    else:
        raise AssertionError("the keyboard never reached the rule picker")
    page.keyboard.press("Space")
    assert page.evaluate("() => document.querySelector('input[name=rule]:checked') !== null")
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", "")  # a visible focus ring
    lines = CaseLines(HOME, "BV-TR-3")  # a charge not certified yet, so there is a button
    import_journal(served_site.database_url, served_site.folder,
                   *_noticed("BV-TR-3", "2026-03-10"), clock(HOME, "2026-03-20T00:00:00-05:00"),
                   lines.cmd("record_abatement", "2026-03-20T09:00:00-05:00",
                             costs=[{"item": "crew", "amount": "90.00"}]),
                   lines.cmd("issue_bill", "2026-03-23T09:00:00-05:00"))
    page.goto(served_site.base + f"/{HOME}/tax-roll/certify?tax_year=2026&county=Dane")
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.type") == "submit" and \
                "certify" in page.evaluate("() => document.activeElement.innerText"):
            break
    else:
        raise AssertionError("the keyboard never reached the certify button")



GREEN_ROLL = f"/{HOME}/tax-roll?tax_year=2026&county=Green"


def _exported_digest(served_site, county: str) -> str:
    """The list SHA-256 ``abate tax-roll export`` prints for the county's 2026 list."""
    done = run_abate("tax-roll", "export", "--municipality", HOME, "--tax-year", "2026",
                     "--county", county, database_url=served_site.database_url)
    assert done.returncode == 0, done.stderr
    [digest] = re.findall(r"^list SHA-256 ([0-9a-f]{64}) ", done.stderr, re.M)
    return digest


def test_the_pages_digest_is_the_one_abate_tax_roll_export_prints(page, served_site):
    _open_as(page, served_site, "clerk.belleville", ROLL)
    digest = page.locator("#list-digest").inner_text()
    assert digest == _exported_digest(served_site, "Dane")
    page.goto(served_site.base + f"/{HOME}/tax-roll/certify?tax_year=2026&county=Dane")
    assert page.locator("#confirm-digest").inner_text() == digest
    # a county the village is not in: the text the CLI and the API give, beside the field
    page.goto(served_site.base + f"/{HOME}/tax-roll?tax_year=2026&county=Rock")
    assert "county 'Rock' is not one of the Village of Belleville's counties: Dane, Green" in \
        page.locator("#county-error").inner_text()


def test_a_list_changed_after_confirmation_or_holding_a_charge_without_statute_is_refused(
        page, served_site):
    lines = CaseLines(HOME, "BV-GR-1")  # a Green County dumping charge: certifiable
    import_journal(served_site.database_url, served_site.folder,
                   lines.open("belleville:9.13", "2026-03-02T09:00:00-06:00",
                              parcel=GREEN_PARCEL),
                   lines.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal",
                             served_on="Ann"),
                   clock(HOME, "2026-03-06T00:00:00-06:00"),
                   lines.cmd("record_abatement", "2026-03-06T09:00:00-06:00",
                             costs=[{"item": "crew", "amount": "150.00"}]),
                   lines.cmd("issue_bill", "2026-03-09T09:00:00-05:00"))
    _open_as(page, served_site, "clerk.belleville",
             f"/{HOME}/tax-roll/certify?tax_year=2026&county=Green")
    shown = page.locator("#confirm-digest").inner_text()
    assert shown == _exported_digest(served_site, "Green")

    # between the confirmation and the click, a § 9.07 charge (statute not set) arrives
    import_journal(served_site.database_url, served_site.folder,
                   *hedge_through_bill(CaseLines(HOME, "BV-GR-2"), parcel=GREEN_PARCEL))
    page.get_by_role("button", name="Yes, certify this charge ($150.00)").click()
    page.wait_for_load_state()
    refused = page.locator("#refused").inner_text()
    assert "Nothing was certified: the list changed since" in refused
    assert "BV-GR-2 added" in refused
    assert "ChargeCertified" not in [e["type"] for e in served_site.events("BV-GR-1")]

    # shown again, the list cannot be certified: the charge without its statute is named
    alert = page.locator("#not-certifiable").inner_text()
    assert "BV-GR-2 (special tax under § 9.07" in alert
    assert "statute not set — cannot be certified" in alert and "village attorney" in alert
    assert page.get_by_role("button", name="Yes, certify").count() == 0
    digest = page.locator("#confirm-digest").inner_text()
    assert digest != shown and digest == _exported_digest(served_site, "Green")
    forged = post_without_form(page, f"/{HOME}/tax-roll/certify", {
        "csrf_token": csrf_of(page), "tax_year": "2026", "county": "Green", "digest": digest})
    assert forged == 409
    page.goto(served_site.base + GREEN_ROLL)
    for ref in ("BV-GR-1", "BV-GR-2"):
        assert "ChargeCertified" not in [e["type"] for e in served_site.events(ref)]
    rows = {r[0]: r for r in _rows(page, "charge-table")}
    assert "statute not set — cannot be certified" in rows["BV-GR-2"][3]
    assert "statute not set" not in rows["BV-GR-1"][3]
    assert "BV-GR-2" in page.locator("#not-certifiable").inner_text()
    statutes = [r[1] for r in _rows(page, "statute-table")]
    assert "none named yet (the village attorney names it)" in statutes
    assert "not set" not in statutes

    # its case page offers no certify form and says why, in the domain's words; a forged
    # post of one is refused (409) and records nothing
    page.goto(f"{served_site.base}/{HOME}/cases/BV-GR-1")  # § 9.13 names its statute
    assert page.locator("form:has(input[name=command][value=certify_charge])").count() == 1
    assert page.locator("#not-offered-certify_charge").count() == 0
    # its appeal window closed long ago: no appeal form (the domain would refuse it), and why
    assert page.locator("#form-file_appeal").count() == 0
    closed = page.locator("#not-offered-file_appeal").inner_text()
    assert re.search(r"No appeal can be filed: the time to appeal closed at 2026-\d\d-\d\d "
                     r"23:59 C[SD]T \(Belleville Code § 9\.13", closed), closed
    page.goto(f"{served_site.base}/{HOME}/cases/BV-GR-2")
    assert page.locator("form:has(input[name=command][value=certify_charge])").count() == 0
    why = page.locator("#not-offered-certify_charge").inner_text()
    assert ("This charge can't be certified yet: its rule (§ 9.07) does not name the statute "
            "that authorises it") in why and "village attorney" in why
    forged = post_without_form(page, f"/{HOME}/cases/BV-GR-2", {
        "csrf_token": csrf_of(page), "command": "certify_charge", "at": "2026-11-20T10:00",
        "tax_year": "2026"})
    assert forged == 409
    assert "ChargeCertified" not in [e["type"] for e in served_site.events("BV-GR-2")]


def _charge(ref: str, parcel: dict, day: str, cost: str, billed_at: str | None,
            paid: tuple[str, str] | None = None) -> list[dict]:
    """A § 9.13 dumping case from ``day``: notice, abatement four days later costing
    ``cost``, then (if ``billed_at``) the bill and (if ``paid``) a partial payment (at, amount)
    after the charge became eligible for the tax roll, which records that it did."""
    lines = CaseLines(HOME, ref)
    abated = (dt.date.fromisoformat(day) + dt.timedelta(days=4)).isoformat()
    found = [lines.open("belleville:9.13", f"{day}T09:00:00-05:00", parcel=parcel,
                        owner={"name": "Wes Worklist"}),
             lines.cmd("serve_notice", f"{day}T10:00:00-05:00", method="personal",
                       served_on="Wes"),
             lines.cmd("record_abatement", f"{abated}T09:00:00-05:00",
                       costs=[{"item": "crew", "amount": cost}])]
    if billed_at:
        found.append(lines.cmd("issue_bill", billed_at))
    if paid:
        found.append(lines.cmd("record_payment", paid[0], amount=paid[1]))
    return found


# Last in this module: its charges would join the lists the tests above count (the Green
# one is on the 2026 roll; the Dane one, eligible after the 11-15 cut-off, is on 2027's).
def test_the_worklist_says_each_amount_in_dollars_and_the_roll_a_charge_goes_on(
        page, served_site):
    import_journal(
        served_site.database_url, served_site.folder,
        # billed 06-08, eligible 30 days later (07-08): on or before 11-15, the 2026 roll
        *_charge("BV-WL-1", GREEN_PARCEL, "2026-06-01", "1250.00", "2026-06-08T09:00:00-05:00",
                 ("2026-07-20T09:00:00-05:00", "15.50")),
        # billed 10-20, eligible 11-19: after the cut-off, the 2027 roll
        *_charge("BV-WL-2", {"county": "Dane", "number": "0509-123-4567-9"}, "2026-10-01",
                 "495.00", "2026-10-20T09:00:00-05:00", ("2026-11-25T09:00:00-06:00", "10.00")),
        *_charge("BV-WL-3", GREEN_PARCEL, "2026-06-02", "2000.00", None),
        # § 9.07(6) names no statute: eligible (07-03) but nobody can certify it
        *hedge_through_bill(CaseLines(HOME, "BV-WL-4"), {"county": "Dane",
                                                          "number": "0509-123-4567-8"}),
        CaseLines(HOME, "BV-WL-4").cmd("record_payment", "2026-07-20T09:00:00-05:00",
                                       amount="5.00"))
    _open_as(page, served_site, "clerk.belleville", f"/{HOME}/")

    def what(section: str) -> dict[str, str]:
        rows = page.locator("section", has=page.get_by_role("heading", name=section)) \
            .locator("tbody tr")
        return {rows.nth(n).locator("td").nth(0).inner_text().strip():
                rows.nth(n).locator("td").nth(1).inner_text().strip()
                for n in range(rows.count())}

    roll = what("Eligible for the tax roll")
    assert roll["BV-WL-1"] == ("enter the unpaid $1,234.50 on the 2026 tax roll (Green County) "
                               "as a special charge, Wis. Stat. § 66.0627(4)")
    assert roll["BV-WL-2"] == ("enter the unpaid $485.00 on the 2027 tax roll (Dane County) "
                               "as a special charge, Wis. Stat. § 66.0627(4)")
    assert what("Awaiting billing")["BV-WL-3"] == "bill the abatement cost ($2,000.00) to the owner"
    # entering a charge is due by its roll's 11-15 cut-off: the 2026 one is overdue, the
    # 2027 one is not (a year away), and the one without a statute is the attorney's, undated
    overdue = what("Overdue")
    assert "BV-WL-1" in overdue and "BV-WL-2" not in overdue and "BV-WL-4" not in overdue
    next_year = page.locator("section", has=page.get_by_role(
        "heading", name="Eligible for the tax roll")).locator("tr", has_text="BV-WL-2")
    assert "2027-11-15" in next_year.inner_text()
    assert next_year.locator(".countdown").inner_text().startswith("in ")
    attorney = page.locator("section", has=page.get_by_role(
        "heading", name="Needs the village attorney: the statute is not named"))
    assert what("Needs the village attorney")["BV-WL-4"] == (
        "name the statute under which the unpaid $70.00 can go on the 2026 tax roll (Dane "
        "County) as a special tax: the ordinance names none, so it cannot be certified until "
        "then")
    row = attorney.locator("tr", has_text="BV-WL-4")
    assert "village attorney" in row.inner_text() and "no due time" in row.inner_text()
    assert row.locator(".countdown").count() == 0 and "overdue" not in row.inner_text()
    assert "BV-WL-4" not in what("Eligible for the tax roll") and "BV-WL-4" not in what("Due today")

    # the API and the tax-roll lists say the same: the Dane charge is on 2027's, not 2026's
    listed = served_site.api("clerk.belleville", "GET", f"/{HOME}/worklist").json()["actions"]
    assert {a["case_ref"]: a["what"] for a in listed if a["action"] == "enter_tax_roll"
            and a["case_ref"].startswith("BV-WL-")} == {
        ref: what for ref, what in roll.items() if ref.startswith("BV-WL-")}  # this test's
    assert [(a["action"], a["overdue"]) for a in listed if a["case_ref"] == "BV-WL-4"] == [
        ("name_statute", False)]
    for year, county, ref in (("2026", "Green", "BV-WL-1"), ("2027", "Dane", "BV-WL-2")):
        page.goto(f"{served_site.base}/{HOME}/tax-roll?tax_year={year}&county={county}")
        assert ref in [r[0] for r in _rows(page, "charge-table")]
    page.goto(f"{served_site.base}/{HOME}/tax-roll?tax_year=2026&county=Dane")
    assert "BV-WL-2" not in [r[0] for r in _rows(page, "charge-table")]


def test_the_audit_page_names_the_rule_version_and_the_catalogs_note_on_its_citation(
        page, served_site):
    """An auditor sees which rule version a case runs under, and the catalog's note on how
    its citation was read (left out of letters): Belleville § 11.013's subsection numbers
    are reconstructed."""
    lines = CaseLines(HOME, "BV-AU-NOTE")
    import_journal(served_site.database_url, served_site.folder,
                   lines.open("belleville:11.013", "2025-10-06T09:00:00-05:00",
                              parcel={"county": "Dane", "number": "0509-123-4567-7"}))
    rules = default_catalog().municipality(HOME)
    noted, plain = rules.rule_version("11.013", 1), rules.rule_version("9.13", 1)
    _open_as(page, served_site, "auditor.belleville", f"/{HOME}/audit/cases/BV-AU-NOTE")
    shown = page.locator("#rule-in-force").inner_text()
    assert f"version 1 (in force from {noted.effective_from}): {noted.citation}." in shown
    assert f"Rules catalog note on this citation: {noted.citation_note}" in shown
    page.goto(f"{served_site.base}/{HOME}/audit/cases/BV-AU-1")
    shown = page.locator("#rule-in-force").inner_text()
    assert plain.citation in shown and "catalog note" not in shown


def test_charges_certified_one_by_one_are_said_so_beside_the_seals(page, served_site):
    """Two 2025 Dane charges certified one at a time (``certify_charge`` journal lines, no
    list certification, so no seal): the page counts them certified, says they were
    certified one by one, and does not claim a seal; the certified list (PDF) holds them.
    Once the clerk certifies the rest of the list as a whole, its seal covers them."""
    refs = ("BV-ONE-1", "BV-ONE-2", "BV-ONE-3")
    journal = []
    for ref, number in zip(refs, ("0509-123-4567-2", "0509-123-4567-3", "0509-123-4567-5")):
        # billed 2025-06-08, eligible 07-08 (on or before 11-15: the 2025 roll)
        journal += _charge(ref, {"county": "Dane", "number": number}, "2025-06-01", "150.00",
                           "2025-06-08T09:00:00-05:00", ("2025-07-20T09:00:00-05:00", "10.00"))
    for ref in refs[:2]:
        journal.append(CaseLines(HOME, ref).cmd("certify_charge", "2025-08-01T09:00:00-05:00",
                                                tax_year=2025))
    import_journal(served_site.database_url, served_site.folder, *journal)
    _open_as(page, served_site, "clerk.belleville", f"/{HOME}/tax-roll?tax_year=2025&county=Dane")

    totals = page.locator("#totals + dl").inner_text()
    assert "2 of 3" in totals
    assert page.locator("#one-by-one").inner_text() == (
        "(2 charges were certified one by one, not as a list with a seal: BV-ONE-1, BV-ONE-2)")
    seals = page.locator("section", has=page.locator("#seals"))
    assert "Lists of 2025 certified as a whole, and their seals (0)" in seals.inner_text()
    assert "No list of 2025 was certified as a whole yet, so no seal was taken." in \
        seals.inner_text()
    assert page.locator("#one-by-one-seals").inner_text() == (
        "2 charges were certified one by one (BV-ONE-1, Dane County; BV-ONE-2, Dane County): "
        "they are on the 2025 roll and on the certified list for the county treasurer (PDF), "
        "but no list certification's seal was taken after them.")
    assert "No list of 2025 certified yet" not in page.content()
    assert serious_violations(page) == []

    # the certified list (PDF) holds the two charges certified one by one
    with page.expect_download() as download:
        page.get_by_role("link", name="Certified list for the county treasurer (PDF)").click()
    text = "".join(p.extract_text() for p in PdfReader(download.value.path()).pages)
    assert "BV-ONE-1" in text and "BV-ONE-2" in text and "BV-ONE-3" not in text

    # the rest certified as a list: its seal, taken after, covers all three
    page.get_by_role("link", name="Certify the Dane County list…").click()
    page.wait_for_load_state()
    page.get_by_role("button", name=re.compile("^Yes, certify")).click()
    page.wait_for_load_state()
    assert "was certified and sealed" in page.get_by_role("status").inner_text()
    assert "3 of 3" in page.locator("#totals + dl").inner_text()
    assert page.locator("#one-by-one, #one-by-one-seals").count() == 0
    assert page.locator("code.seal-line").count() == 1

"""Documents as PDF (docs/documents.md): the notice of violation, the bill, the referral
packet and the certified tax-roll list, read back with a PDF reader (citation, local
deadline, amounts), built twice to the same bytes, rebuilt from what the case recorded
(and refused when that no longer gives the recorded digest); issued from a journal, over
HTTP and with the installed ``abate``; who may issue and read them."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import re

import pytest
from pypdf import PdfReader

from abate.demo_store import demo_journal_path
from cases.application import CaseService
from cases.commands import parse_command
from cases.documents.issued import issued_documents, rebuild
from cases.domain import case_id
from cases.errors import JournalError
from cases.rules.catalog import Catalog, default_catalog
from cases.store import CaseStore
from tests.api_kit import HOME, OTHER, database_for, earlier, make_api
from tests.builders import CaseLines, as_lines, dumping_through_bill, grading_through_bill
from tests.test_reports import Abate

pytestmark = pytest.mark.slow  # run first: conftest.py

NOW = dt.datetime(2026, 12, 1, 12, tzinfo=dt.timezone.utc)
ZONE = "America/Chicago"


def now() -> dict[str, str]:
    """A command body issued at this moment (every command gives its business time)."""
    return {"at": earlier(0)}


def text_of(content: bytes) -> str:
    reader = PdfReader(io.BytesIO(content))
    return "\n".join(page.extract_text() for page in reader.pages)


def one_line(text: str) -> str:
    return " ".join(text.split())


def documented(lines: CaseLines) -> list[dict]:
    """A § 9.13 case through its bill, then each of its three documents."""
    return [*dumping_through_bill(lines, [{"item": "crew, 3 hours", "amount": "150.00"},
                                          {"item": "dump fee", "amount": "42.50"}]),
            lines.cmd("issue_notice_document", "2026-03-09T10:00:00-05:00"),
            lines.cmd("issue_bill_document", "2026-03-09T10:05:00-05:00"),
            lines.cmd("issue_referral_packet", "2026-03-09T10:10:00-05:00")]


def journal_store(*commands: dict, catalog: Catalog | None = None) -> tuple[CaseStore, CaseService]:
    store = CaseStore("memory://")
    service = CaseService(store, catalog)
    service.import_journal(as_lines(*commands), now=NOW)
    return store, service


def documents_of(store: CaseStore, ref: str, catalog: Catalog | None = None) -> dict[str, bytes]:
    events = list(store.events.get(case_id(HOME, ref)))
    found = {}
    for entry in issued_documents(events):
        built = rebuild(events, entry["position"], (catalog or default_catalog()).rule_version,
                        ZONE)
        assert built.matches and built.sha256 == entry["sha256"]
        assert entry["size"] == len(built.content)
        found[entry["document"]] = built.content
    return found


def test_the_notice_cites_the_rule_states_the_local_deadline_and_how_it_was_served():
    store, _ = journal_store(*documented(CaseLines(HOME, "BV-D1", actor="clerk")))
    notice = documents_of(store, "BV-D1")["notice_of_violation"]
    words = one_line(text_of(notice))
    assert "NOTICE OF VIOLATION" in words
    assert "Village of Belleville: Belleville Code § 9.13(1)-(7) — Unlawful dumping (as in force " \
           "from January 1, 2020)" in words
    assert "belleville:9.13" not in words  # the catalog's key is for programs
    # Served 10:00 CST on March 2 with a 72-hour cure: the deadline in the village's time.
    assert "Deadline: Thursday, March 5, 2026, 10:00 AM CST" in words
    assert "72 hours after this notice is delivered (Belleville Code § 9.13(2))" in words
    assert "Wis. Stat. § 66.0627(4)" in words  # what happens if not done: the tax roll
    assert "Your right to appeal" in words and "Belleville Code § 9.13(7)" in words
    assert "Served: personal delivery, " in words and "Served on: Ann" in words
    # Belleville has not set its letterhead address and phone: the letter leaves them out, and
    # § 9.13 names no section providing a forfeiture: no forfeiture line, never "not set".
    assert "Address:" not in words and "Phone:" not in words
    assert "Questions: Village of Belleville." in words
    assert "Forfeiture" not in words and "forfeiture under" not in words
    assert "not set" not in words
    reader = PdfReader(io.BytesIO(notice))
    box = reader.pages[0].mediabox
    assert (float(box.width), float(box.height)) == (612, 792)  # US letter


def test_the_bill_lists_its_cost_lines_due_date_and_tax_roll_warning():
    store, _ = journal_store(*documented(CaseLines(HOME, "BV-D2", actor="clerk")))
    words = one_line(text_of(documents_of(store, "BV-D2")["bill"]))
    assert "crew, 3 hours $150.00" in words and "dump fee $42.50" in words
    assert "Total billed $192.50" in words and "Balance due $192.50" in words
    # Billed 09:00 CDT on March 9; 30 calendar days from billing, in local time.
    assert "Due by: Wednesday, April 8, 2026, 11:59 PM CDT" in words
    assert "entered on the property tax roll from April 8, 2026 as a special charge against " \
           "parcel 0509-123-4567-0 under Wis. Stat. § 66.0627(4)" in words
    # the appeal's ten days, and the day they end (billed March 9)
    assert "You may appeal this charge to the Village Clerk within 10 calendar days after the " \
           "bill is issued, that is by Thursday, March 19, 2026, 11:59 PM CDT" in words


def test_a_bill_printed_after_the_appeal_window_says_the_time_to_appeal_has_ended():
    """A copy printed on March 25 must not offer the owner ten days that ended March 19."""
    lines = CaseLines(HOME, "BV-D7", actor="clerk")
    commands = [c for c in documented(lines) if c["command"] not in (
        "issue_bill_document", "issue_referral_packet")]
    store, _ = journal_store(*commands,
                             lines.cmd("issue_bill_document", "2026-03-25T10:00:00-05:00"))
    words = one_line(text_of(documents_of(store, "BV-D7")["bill"]))
    assert "The time to appeal this charge to the Village Clerk (10 calendar days after the " \
           "bill is issued) ended Thursday, March 19, 2026, 11:59 PM CDT" in words
    assert "You may appeal" not in words


def test_the_referral_packet_prints_the_chronology_and_deadlines():
    store, _ = journal_store(*documented(CaseLines(HOME, "BV-D3", actor="clerk")))
    words = one_line(text_of(documents_of(store, "BV-D3")["referral_packet"]))
    assert "ATTORNEY REFERRAL PACKET: case BV-D3" in words
    for fact in ("Case opened", "Notice served", "Abatement recorded", "Bill issued",
                 "Document issued"):
        assert fact in words
    assert "missed" in words  # the cure deadline ran before the abatement
    # A court reads labels and village time, never the store's names or ISO instants.
    for internal in ("NoticeServed", "DeadlinePassed", "mailing_address", "notice_due",
                     "hazard: False", "notice_of_violation", "parcel: county"):
        assert internal not in words, internal
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:", words)
    assert "Balance: $192.50" in words


def test_a_rule_without_an_appeal_prints_no_appeal_and_the_settings_fill_the_letterhead():
    catalog = default_catalog()
    place = catalog.municipality(HOME).model_copy(
        update={"address": "24 W Main St, Belleville WI 53508", "phone": "608-424-3341"})
    custom = Catalog({**catalog.municipalities, HOME: place})
    lines = CaseLines(HOME, "BV-D4", actor="inspector")
    store, _ = journal_store(
        lines.open("belleville:9.09", "2026-01-05T08:00:00-06:00"),
        lines.cmd("serve_notice", "2026-01-05T09:00:00-06:00", method="personal",
                  served_on="Ann Owner"),
        lines.cmd("issue_notice_document", "2026-01-05T09:30:00-06:00"), catalog=custom)
    words = one_line(text_of(documents_of(store, "BV-D4", custom)["notice_of_violation"]))
    assert "Address: 24 W Main St, Belleville WI 53508" in words
    assert "Phone: 608-424-3341" in words
    assert "Questions: Village of Belleville, 24 W Main St, Belleville WI 53508, phone " \
           "608-424-3341." in words
    assert "Deadline: Tuesday, January 6, 2026, 9:00 AM CST" in words  # 24 hours (§ 9.09(1))
    # No amount in the texts: the section providing the penalty, without an amount
    # (§ 9.09(2)(a)2: "as provided in the Public Works Snow Removal Fee Structure and
    # provided in Section 1.08 of this Code").
    assert "You may be subject to a forfeiture under § 1.08 of the Village Code and the " \
           "Public Works Snow Removal Fee Structure." in words
    assert "not set" not in words
    assert "appeal" not in words.lower()  # § 9.09 gives none
    # The owner served: the window shows the owner's mailing address.
    assert "Ann Owner 12 Vine St Belleville WI 53508" in words


def test_a_time_the_notice_states_and_a_statute_the_texts_do_not_give_are_said_so():
    lines = CaseLines(HOME, "BV-D8", actor="inspector")
    owner = {"name": "Gary Owner", "mailing_address": "W6815 Hwy 39, New Glarus, WI 53574"}
    store, _ = journal_store(
        lines.open("belleville:11.013", "2026-11-02T13:30:00-06:00", owner=owner),
        lines.cmd("serve_notice", "2026-11-04T09:00:00-06:00", method="certified_mail",
                  served_on="Gary Owner", delivered_at="2026-11-12T10:30:00-06:00",
                  cure_days=30),
        lines.cmd("issue_notice_document", "2026-11-12T11:00:00-06:00"))
    words = one_line(text_of(documents_of(store, "BV-D8")["notice_of_violation"]))
    assert "Deadline: Saturday, December 12, 2026, 11:59 PM CST" in words
    assert "30 calendar days after this notice was delivered, the time this notice gives" in words
    # § 11.013 names no statute for its tax-roll entry: the sentence names none (never "a
    # statute not set"); its forfeiture amounts are in the text, so they are printed.
    assert "on the tax roll against the property as a special assessment (" in words
    assert "Forfeiture: $50–$150 (Belleville Code § 11.013(1)" in words
    assert "not set" not in words
    assert "Served: certified mail, " in words
    assert "Delivered: Thursday, November 12, 2026, 10:30 AM CST" in words
    # "City, ST ZIP" stays one line of the window, as the post office reads it.
    lines_of_text = text_of(documents_of(store, "BV-D8")["notice_of_violation"]).splitlines()
    assert "New Glarus, WI 53574" in lines_of_text


def test_a_bill_whose_ordinance_gives_no_due_date_says_so_not_not_set():
    lines = CaseLines(HOME, "BV-D9", actor="clerk")
    store, _ = journal_store(
        *grading_through_bill(lines),
        lines.cmd("issue_bill_document", "2026-07-11T10:05:00-05:00"))
    words = one_line(text_of(documents_of(store, "BV-D9")["bill"]))
    assert "Builder Co" in words and "$900.00" in words
    assert "sets no due date for this bill." in words and "Due by" not in words
    assert "not set" not in words


def test_the_same_inputs_give_the_same_bytes_and_the_file_is_pdf_a():
    first, _ = journal_store(*documented(CaseLines(HOME, "BV-D5", actor="clerk")))
    second, _ = journal_store(*documented(CaseLines(HOME, "BV-D5", actor="clerk")))
    one, two = documents_of(first, "BV-D5"), documents_of(second, "BV-D5")
    assert one == two  # different stores, different runs: the same files
    for mailed in ("notice_of_violation", "bill"):  # nothing the village has not set
        assert "not set" not in one_line(text_of(one[mailed])), mailed
    raw = one["bill"]
    assert b"<pdfaid:part>2</pdfaid:part>" in raw and b"<pdfaid:conformance>B" in raw
    assert b"/OutputIntents" in raw and b"/FontFile2" in raw  # colour profile, embedded font
    assert b"<xmp:CreateDate>2026-03-09T10:05:00-05:00</xmp:CreateDate>" in raw


def test_a_notice_before_any_notice_is_served_is_refused_and_nothing_recorded():
    lines = CaseLines(HOME, "BV-D6", actor="inspector")
    store = CaseStore("memory://")
    with pytest.raises(JournalError) as refused:
        CaseService(store).import_journal(as_lines(
            lines.open("belleville:9.13", "2026-03-02T09:00:00-06:00"),
            lines.cmd("issue_notice_document", "2026-03-02T09:30:00-06:00")), now=NOW)
    assert refused.value.line == 2 and "no notice served" in str(refused.value)
    assert not list(store.case_ids())


def test_a_rule_edited_in_place_no_longer_rebuilds_the_recorded_document():
    store, _ = journal_store(*documented(CaseLines(HOME, "BV-D7", actor="clerk")))
    catalog = default_catalog()
    place = catalog.municipality(HOME)
    edited = [r.model_copy(update={"title": "Dumping"}) if r.id == "9.13" else r
              for r in place.rules]
    changed = Catalog({**catalog.municipalities,
                       HOME: place.model_copy(update={"rules": edited})})
    events = list(store.events.get(case_id(HOME, "BV-D7")))
    position = issued_documents(events)[0]["position"]
    assert not rebuild(events, position, changed.rule_version, ZONE).matches


# ------------------------------------------------------------------ the doors people use


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def stores(request, tmp_path):
    """(api, cli) on one store holding a billed Belleville case loaded by ``abate import``."""
    database = database_for(request, tmp_path)
    url, extra, _ = database
    api = make_api(url, extra)
    cli = Abate(database)
    cli.load(tmp_path, *dumping_through_bill(CaseLines(HOME, "BV-H1")))
    yield api, cli
    api.services.close()


def test_documents_over_http_and_with_the_abate_command_are_the_same_files(stores, tmp_path):
    api, cli = stores
    base = f"/api/v1/{HOME}/cases/BV-H1"
    refused = api.client.post(f"{base}/issue_bill_document", json=now(),
                              headers=api.as_("inspector"))
    assert refused.status_code == 403, refused.text
    done = api.client.post(f"{base}/issue_bill_document", json=now(), headers=api.as_("clerk"))
    assert done.status_code == 200, done.text
    issued = cli.json("document", "issue", "--municipality", HOME, "BV-H1", "--kind", "notice",
                      "--actor", "inspector.cli", "--output", str(tmp_path / "notice.pdf"))
    assert issued["document"] == "notice_of_violation" and issued["actor"] == "inspector.cli"

    listed = api.client.get(f"{base}/documents", headers=api.as_("auditor"))
    assert listed.status_code == 200, listed.text
    documents = listed.json()["documents"]
    assert [d["document"] for d in documents] == ["bill", "notice_of_violation"]
    assert documents[0]["actor"] == "clerk.belleville"
    assert documents[0]["issued_at"][-6:] in ("-06:00", "-05:00")  # the village's time
    assert cli.json("document", "list", "--municipality", HOME, "BV-H1")["documents"] == documents
    assert (listed.json()["total"], listed.json()["next_offset"]) == (2, None)
    first = api.client.get(f"{base}/documents", params={"limit": 1}, headers=api.as_("auditor"))
    assert first.json()["documents"] == documents[:1] and first.json()["next_offset"] == 1
    second = cli.json("document", "list", "--municipality", HOME, "BV-H1", "--limit", "1",
                      "--offset", "1")
    assert second["documents"] == documents[1:] and second["next_offset"] is None
    assert api.client.get(f"{base}/documents", params={"limit": 501},
                          headers=api.as_("auditor")).json()["field"] == "limit"

    for entry in documents:
        got = api.client.get(f"{base}/documents/{entry['position']}", headers=api.as_("auditor"))
        assert got.status_code == 200, got.text
        assert got.headers["content-type"] == "application/pdf"
        assert hashlib.sha256(got.content).hexdigest() == entry["sha256"] \
            == got.headers["x-abate-document-sha256"]
        out = tmp_path / f"doc-{entry['position']}.pdf"
        written = cli.json("document", "get", "--municipality", HOME, "BV-H1",
                           str(entry["position"]), "--output", str(out))
        assert written["matches_recorded"] and out.read_bytes() == got.content
    assert (tmp_path / "notice.pdf").read_bytes() == \
        (tmp_path / f"doc-{documents[1]['position']}.pdf").read_bytes()
    assert "$150.00" in text_of(api.client.get(f"{base}/documents/{documents[0]['position']}",
                                               headers=api.as_("clerk")).content)

    log = api.client.get("/api/v1/audit/access-log", params={"case_ref": "BV-H1"},
                         headers=api.as_("auditor")).json()["entries"]
    assert ("cases.documents.get", "export", 200) in [
        (e["route"], e["action"], e["status"]) for e in log]
    shown = cli.json("case", "show", "--municipality", HOME, "BV-H1")
    assert [(d["position"], d["sha256"]) for d in shown["documents"]] == \
        [(d["position"], d["sha256"]) for d in documents]
    assert cli.json("verify")["ok"]  # the documents' events are in the case's hash chain


def test_who_may_read_a_referral_packet_and_another_village_is_not_found(stores):
    api, _ = stores
    base = f"/api/v1/{HOME}/cases/BV-H1"
    for role in ("inspector", "auditor"):
        refused = api.client.post(f"{base}/issue_referral_packet", json=now(),
                                  headers=api.as_(role))
        assert refused.status_code == 403, refused.text
    done = api.client.post(f"{base}/issue_referral_packet", json=now(), headers=api.as_("attorney"))
    assert done.status_code == 200, done.text
    position = api.client.get(f"{base}/documents", headers=api.as_("attorney")).json()[
        "documents"][0]["position"]
    assert api.client.get(f"{base}/documents/{position}",
                          headers=api.as_("attorney")).status_code == 200
    inspector = api.client.get(f"{base}/documents/{position}", headers=api.as_("inspector"))
    assert inspector.status_code == 403 and "referral packet" in inspector.json()["detail"]
    other = api.client.get(f"{base}/documents/{position}", headers=api.as_("auditor", OTHER))
    assert other.status_code == 404
    missing = api.client.get(f"{base}/documents/1", headers=api.as_("clerk"))
    assert missing.status_code == 404 and "no document at position 1" in missing.json()["detail"]


def test_a_document_that_no_longer_rebuilds_to_its_digest_is_409(stores):
    api, _ = stores
    base = f"/api/v1/{HOME}/cases/BV-H1"
    assert api.client.post(f"{base}/issue_bill_document", json=now(),
                           headers=api.as_("clerk")).status_code == 200
    catalog = api.services.cases.catalog
    place = catalog.municipality(HOME)
    catalog.municipalities[HOME] = place.model_copy(update={"rules": [
        r.model_copy(update={"title": "Dumping"}) if r.id == "9.13" else r
        for r in place.rules]})
    try:
        position = api.client.get(f"{base}/documents", headers=api.as_("clerk")).json()[
            "documents"][0]["position"]
        differs = api.client.get(f"{base}/documents/{position}", headers=api.as_("clerk"))
    finally:
        catalog.municipalities[HOME] = place
    assert differs.status_code == 409, differs.text
    assert "not the recorded" in differs.json()["detail"]


def test_the_certified_list_for_the_county_treasurer(stores, tmp_path):
    api, cli = stores
    pdf = f"/api/v1/{HOME}/tax-roll/certified-list.pdf"
    params = {"tax_year": 2026, "county": "Dane"}
    none_yet = api.client.get(pdf, params=params, headers=api.as_("clerk"))
    assert none_yet.status_code == 404, none_yet.text
    assert "is printed once it is certified" in none_yet.json()["detail"]
    assert "abate " not in none_yet.json()["detail"]  # no program command in the words
    certified = api.client.post(f"/api/v1/{HOME}/tax-roll/certify",
                                json={"tax_year": 2026, "county": "Dane"},
                                headers=api.as_("clerk"))
    assert certified.status_code == 200, certified.text
    assert api.client.get(pdf, params=params, headers=api.as_("inspector")).status_code == 403
    first = api.client.get(pdf, params={**params, "county": "dane"}, headers=api.as_("auditor"))
    second = api.client.get(pdf, params=params, headers=api.as_("clerk"))
    assert first.status_code == second.status_code == 200, first.text
    assert first.content == second.content
    words = one_line(text_of(first.content))
    assert "CERTIFIED LIST OF CHARGES FOR THE 2026 TAX ROLL" in words
    assert "Dane County Treasurer" in words and "0509-123-4567-0" in words
    assert "$150.00" in words and "Wis. Stat. § 66.0627(4)" in words
    assert "clerk.belleville" in words
    out = tmp_path / "certified.pdf"
    printed = cli.json("tax-roll", "certified-pdf", "--municipality", HOME, "--tax-year",
                       "2026", "--county", "Dane", "--output", str(out))
    assert out.read_bytes() == first.content and printed["charges"] == 1
    assert printed["sha256"] == hashlib.sha256(first.content).hexdigest()
    log = api.client.get("/api/v1/audit/access-log", headers=api.as_("auditor")).json()
    assert ("tax_roll.certified_pdf", "export", 200) in [
        (e["route"], e["action"], e["status"]) for e in log["entries"]]


def test_the_abate_command_refuses_clearly(stores, tmp_path):
    _, cli = stores
    bad_kind = cli.run("document", "issue", "--municipality", HOME, "BV-H1", "--kind", "memo",
                       "--actor", "x", ok=False)
    assert bad_kind.returncode == 2 and b"invalid choice: 'memo'" in bad_kind.stderr
    no_case = cli.run("document", "list", "--municipality", HOME, "BV-NONE", ok=False)
    assert no_case.returncode == 1 and b"no case 'BV-NONE'" in no_case.stderr
    assert b"Traceback" not in no_case.stderr
    no_doc = cli.run("document", "get", "--municipality", HOME, "BV-H1", "2", "--output",
                     str(tmp_path / "x.pdf"), ok=False)
    assert no_doc.returncode == 1 and b"no document at position 2" in no_doc.stderr
    assert not (tmp_path / "x.pdf").exists()
    not_ready = cli.run("document", "issue", "--municipality", HOME, "BV-H1", "--kind",
                        "bill", "--actor", "clerk", "--at", "2026-03-02T09:30:00-06:00",
                        ok=False)
    assert not_ready.returncode == 1, not_ready.stderr
    assert cli.json("document", "list", "--municipality", HOME, "BV-H1")["documents"] == []


def test_a_document_command_parses_like_any_journal_command():
    command = parse_command({"command": "issue_referral_packet", "municipality": HOME,
                             "case_ref": "BV-1", "at": "2026-03-09T10:00:00-05:00",
                             "actor": "attorney"})
    assert command.command == "issue_referral_packet"
    with pytest.raises(Exception) as extra:
        parse_command({"command": "issue_bill_document", "municipality": HOME,
                       "case_ref": "BV-1", "at": "2026-03-09T10:00:00-05:00",
                       "actor": "clerk", "sha256": "0" * 64})
    assert "field sha256: not a field of this command" in str(extra.value)


# What a person must never read on a document: a Python record or list, a store's machine
# name (``notice_of_violation``), "not set", the catalog's program keys, the packet's JSON
# labels, an ISO instant, text cut short.
NEVER_ON_PAPER = ("{'", "['", "_", "not set", "municipality:", "belleville:", "mazomanie:",
                  "...")


@pytest.fixture(scope="module")
def demo_documents(tmp_path_factory) -> dict[str, str]:
    """The text of every document the demo's cases can be issued (a notice where one was
    served, a bill where one was issued, a referral packet each), issued through a journal
    imported with the installed ``abate``, and the certified tax-roll lists of the demo."""
    folder = tmp_path_factory.mktemp("demo-documents")
    cli = Abate((f"sqlite:///{folder / 'demo.sqlite3'}", {}, None))
    cli.run("demo")
    demo = [json.loads(line) for line in demo_journal_path().read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    cases = {(c["municipality"], c["case_ref"]) for c in demo if c["command"] == "open_case"}
    had = {(c["municipality"], c.get("case_ref"), c["command"]) for c in demo}
    issue = []
    for municipality, ref in sorted(cases):
        kinds = ["issue_referral_packet"]
        kinds += ["issue_notice_document"] if (municipality, ref, "serve_notice") in had else []
        kinds += ["issue_bill_document"] if (municipality, ref, "issue_bill") in had else []
        issue += [{"command": kind, "municipality": municipality, "case_ref": ref,
                   "at": "2026-11-30T12:00:00-06:00", "actor": f"demo.{municipality}.clerk"}
                  for kind in kinds]
    cli.load(folder, *issue)
    store = CaseStore(cli.env["ABATE_DATABASE_URL"])
    try:
        texts = {}
        for municipality, ref in sorted(cases):
            events = list(store.events.get(case_id(municipality, ref)))
            for entry in issued_documents(events):
                built = rebuild(events, entry["position"], default_catalog().rule_version, ZONE)
                assert built.matches
                texts[f"{ref} {entry['document']}"] = text_of(built.content)
    finally:
        store.close()
    for municipality, county in (("belleville", "Dane"), ("mazomanie", "Dane")):
        out = folder / f"{municipality}-certified.pdf"
        cli.run("tax-roll", "certified-pdf", "--municipality", municipality, "--tax-year",
                "2026", "--county", county, "--output", str(out))
        texts[f"{municipality} certified list"] = text_of(out.read_bytes())
    return texts


def test_no_demo_document_prints_a_record_a_machine_name_or_text_cut_short(demo_documents):
    assert len(demo_documents) > 80
    found = [(name, bad, one_line(text)[max(0, one_line(text).find(bad) - 60):][:140])
             for name, text in demo_documents.items() if "certified list" not in name
             for bad in NEVER_ON_PAPER if bad in one_line(text)]
    assert found == []
    instants = [name for name, text in demo_documents.items()
                if re.search(r"\d{4}-\d\d-\d\dT\d\d:", text)]
    assert instants == []


def test_the_referral_packet_says_each_fact_in_words(demo_documents):
    dogs = one_line(demo_documents["BV-2026-024 referral_packet"])
    assert "offense 1: September 24, 2026, 12:00 AM to 12:00 AM the next day (CDT)" in dogs
    assert "offense 5: September 28, 2026, 12:00 AM to 4:30 PM (CDT)" in dogs
    assert "description: Six dogs kept in a single-family residence; barking complaints" in dogs
    assert "when the deadline \"Cure period\" ran" in dogs
    assert dogs.count("Municipal Court Deposit Schedule (§ 10.11(3)") == 1
    assert ("Forfeiture: a forfeiture under the Municipal Court Deposit Schedule (§ 10.11(3) of "
            "the Village Code), per offense; the ordinance texts state no amount") in dogs
    assert ("Belleville Code § 10.11(2), (3) (More than three dogs kept in a residential unit) "
            "states no repeat-offense window") in dogs
    flood = one_line(demo_documents["BV-2026-019 referral_packet"])
    assert "Deadlines No deadlines. Money" in flood
    assert ("refers shoreland violations to the Village Board and Village Attorney "
            "(§ 13.056)") in flood  # the referral's path and reason in full
    assert "floodplain" in flood and "rule family" not in flood
    assert flood.count("§ 1.08 of the Village Code") == 1
    bond = one_line(demo_documents["BV-2026-014 referral_packet"])
    assert "amount: $2,850.00" in bond
    assert "due basis: no due date: the ordinance gives no payment period" in bond


def test_letters_name_the_rule_in_words_the_addressee_and_a_certified_charge(demo_documents):
    notice = demo_documents["BV-2026-027 notice_of_violation"]
    window = notice.splitlines()[2]
    assert window == "Gary Ruegsegger", notice[:200]
    assert "(owner)" in one_line(notice)  # the officer's note stays under "Served on"
    bill = one_line(demo_documents["MZ-2026-003 bill"])
    assert ("Snow and ice not removed from sidewalk (as in force from January 1, 2020)"
            in bill)
    assert ("The unpaid amount of $117.00 was certified on November 20, 2026 to the 2026 "
            "property tax roll of Dane County as a special tax against parcel") in bill
    assert "will be entered" not in bill and "rule mazomanie" not in bill
    assert "(10 calendar days from receipt on February 19, 2026;" in bill
    assert "Total billed $2,850.00" in one_line(demo_documents["BV-2026-014 bill"])


def test_the_demo_certified_lists_print_amounts_with_thousands_separated(demo_documents):
    listed = one_line(demo_documents["belleville certified list"])
    assert "$1,350.00" in listed and "$1350.00" not in listed
    total = re.search(r"all charges (\d+) (\$[\d,]+\.\d\d)", listed)
    assert total is not None and "," in total.group(2), listed[-400:]

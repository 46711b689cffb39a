"""The attorney referral packet, over HTTP and through the installed `abate`, checked
against a case recorded through the journal: every fact in order, deadlines met and
missed, the costs, the bill and the payment, a prior violation in the look-back window,
the citation, and a forfeiture the ordinance leaves "not set"."""

from __future__ import annotations

import json

import pytest

from tests.abate_command import run_abate
from tests.api_kit import HOME, OTHER, OTHER_CASE, make_api, open_body
from tests.builders import DANE_PARCEL, CaseLines, as_lines, clock, dumping_through_bill

REF, PRIOR, MAINTENANCE = "B-R-1", "B-P-1", "B-PM-1"
case, prior = CaseLines(HOME, REF), CaseLines(HOME, PRIOR)
maintenance = CaseLines(HOME, MAINTENANCE)  # § 11.013: $50-$150 per day of violation
complied = CaseLines(HOME, "B-C-1")  # a notice served again, then the owner complies
late_notice = CaseLines(HOME, "B-S-1")  # § 9.09 snow: the notice due 24 h after the snow, served late


def journal() -> list[str]:
    return as_lines(
        prior.open("belleville:9.13", "2026-01-10T09:00:00-06:00"),
        prior.cmd("serve_notice", "2026-01-10T10:00:00-06:00", method="personal",
                  served_on="Ann"),
        *dumping_through_bill(case)[:3],  # opened, notice, the clock past the cure
        case.cmd("record_inspection", "2026-03-06T08:00:00-06:00", findings="couch on curb",
                 documents=["photo-0306-1.jpg", "photo-0306-2.jpg"]),
        *dumping_through_bill(case)[3:],  # abated 2026-03-06 for 150.00, billed 2026-03-09
        case.cmd("record_payment", "2026-03-20T11:00:00-05:00", amount="150.00"),
        clock(HOME, "2026-03-25T00:00:00-05:00"),
        case.cmd("issue_citation", "2026-03-26T09:00:00-05:00", citation_number="C-77",
                 offense_dates=["2026-03-03"]),
        maintenance.open("belleville:11.013", "2026-06-01T10:00:00-05:00",
                         parcel={"county": "Dane", "number": "0509-222-3333-4"}),
        maintenance.cmd("serve_notice", "2026-06-01T11:00:00-05:00", method="certified_mail",
                        served_on="Owner", cure_days=14),
        maintenance.cmd("issue_citation", "2026-06-04T10:00:00-05:00", citation_number="C-100"),
        complied.open("belleville:9.13", "2026-04-01T09:00:00-05:00",
                      parcel={"county": "Dane", "number": "0509-444-5555-6"}),
        complied.cmd("serve_notice", "2026-04-01T10:00:00-05:00", method="personal",
                     served_on="Ann"),
        complied.cmd("serve_notice", "2026-04-02T10:00:00-05:00", method="certified_mail",
                     served_on="Ann", delivered_at="2026-04-03T12:00:00-05:00"),
        complied.cmd("record_compliance", "2026-04-04T09:00:00-05:00", notes="cleared"),
        complied.cmd("close_case", "2026-04-05T09:00:00-05:00", reason="complied"),
        late_notice.open("belleville:9.09", "2026-01-06T15:10:00-06:00",
                         parcel={"county": "Dane", "number": "0509-363-8125-2"},
                         snow_ended_at="2026-01-06T04:00:00-06:00"),
        late_notice.cmd("serve_notice", "2026-01-07T08:35:00-06:00", method="personal",
                        served_on="Owner"),
    )


@pytest.fixture(scope="module")
def store_url(tmp_path_factory):
    folder = tmp_path_factory.mktemp("referral")
    url = f"sqlite:///{folder / 'abate.sqlite3'}"
    (folder / "j.jsonl").write_text("\n".join(journal()) + "\n")
    done = run_abate("import", str(folder / "j.jsonl"), database_url=url)
    assert done.returncode == 0, done.stderr
    return url


@pytest.fixture(scope="module")
def api(store_url):
    api = make_api(store_url)
    answer = api.client.post(f"/api/v1/{OTHER}/cases", json=open_body(OTHER_CASE, OTHER),
                             headers=api.as_("clerk", OTHER))
    assert answer.status_code == 201, answer.text
    yield api
    api.services.close()


@pytest.fixture(scope="module")
def packet(api):
    answer = api.client.get(f"/api/v1/{HOME}/cases/{REF}/referral", headers=api.as_("attorney"))
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_parties_parcel_site_and_the_ordinance_cited(packet):
    assert (packet["municipality"], packet["case_ref"]) == (HOME, REF)
    assert packet["parties"]["owner"]["name"] == "Ann Owner"
    assert packet["parties"]["bill_to"]["name"] == "Ann Owner"
    assert packet["parcel"] == DANE_PARCEL and packet["site_address"] == "12 Vine St"
    ordinance = packet["ordinance"]
    assert (ordinance["municipality"], ordinance["section"], ordinance["rule_version"]) == (
        HOME, "9.13", 1)
    assert ordinance["citation"] == "Belleville Code § 9.13(1)-(7)"
    assert ordinance["text_reference"]["command"] == "abate rules show belleville:9.13"
    assert ordinance["title"] == "Unlawful dumping"


def test_the_chronology_is_every_fact_in_the_order_it_happened(packet):
    facts = [(e["fact"], e["occurred_at_utc"]) for e in packet["chronology"]]
    assert [f for f, _ in facts] == [
        "Opened", "NoticeServed", "DeadlinePassed", "InspectionRecorded", "AbatementRecorded",
        "BillIssued", "DeadlinePassed", "PaymentReceived", "CitationIssued"]
    assert [e["name"] for e in packet["chronology"] if e["fact"] == "DeadlinePassed"] == [
        "cure", "appeal_window"]
    assert [at for _, at in facts] == sorted(at for _, at in facts)
    notice = packet["chronology"][1]
    assert (notice["method"], notice["served_on"]) == ("personal", "Ann")
    assert notice["delivered_at"] == "2026-03-02T10:00:00-06:00"
    assert notice["delivered_at_utc"] == "2026-03-02T16:00:00+00:00"
    inspection = packet["chronology"][3]
    assert inspection["documents"] == ["photo-0306-1.jpg", "photo-0306-2.jpg"]
    assert inspection["occurred_at"] == "2026-03-06T08:00:00-06:00"  # before the abatement
    assert all(e["actor"] and e["recorded_at_utc"].endswith("+00:00")
               for e in packet["chronology"])


def test_each_deadline_says_whether_it_was_met_and_when(packet):
    by_name = {d["name"]: d for d in packet["deadlines"]}
    cure = by_name["cure"]
    assert cure["outcome"] == "missed" and cure["missed_at"] == "2026-03-05T10:00:00-06:00"
    assert cure["citation"] == "Belleville Code § 9.13(2)" and cure["rule_version"] == 1
    bill_due = by_name["bill_due"]
    assert bill_due["outcome"] == "met"
    assert bill_due["met_at"] == "2026-03-20T11:00:00-05:00"
    assert bill_due["ended_by"]["fact"] == "PaymentReceived"
    assert by_name["tax_roll_eligible"]["outcome"] == "met"
    window = by_name["appeal_window"]  # nobody appealed: the clock ran it
    assert window["outcome"] == "missed" and window["ended_by"]["fact"] == "DeadlinePassed"


def test_a_deadline_done_after_its_time_is_met_late_not_cancelled(api):
    answer = api.client.get(f"/api/v1/{HOME}/cases/B-S-1/referral", headers=api.as_("attorney"))
    assert answer.status_code == 200, answer.text
    notice_due = {d["name"]: d for d in answer.json()["deadlines"]}["notice_due"]
    assert notice_due["due_at"] == "2026-01-07T04:00:00-06:00"
    assert notice_due["outcome"] == "met_late" and notice_due["late_by_minutes"] == 275
    assert notice_due["met_at"] == "2026-01-07T08:35:00-06:00"
    assert notice_due["ended_by"]["fact"] == "NoticeServed"


def test_costs_bill_and_payment(packet):
    money = packet["money"]
    assert money["abatement_costs"][0]["costs"] == [{"item": "crew", "amount": "150.00"}]
    assert money["abatement_costs"][0]["total"] == "150.00"
    assert (money["principal"], money["paid"], money["balance"]) == ("150.00", "150.00", "0.00")
    assert [p["amount"] for p in money["payments"]] == ["150.00"]
    bill = next(e for e in packet["chronology"] if e["fact"] == "BillIssued")
    assert bill["amount"] == "150.00" and bill["citation"]


def test_prior_violations_in_the_window_with_their_case_references(packet):
    found = packet["prior_violations"]
    assert found["window_months"] == 12 and found["count"] == 1
    assert (found["window_start_on"], found["window_end_on"]) == ("2025-03-02", "2026-03-02")
    assert [c["case_ref"] for c in found["cases"]] == [PRIOR]
    assert found["cases"][0]["observed_at"] == "2026-01-10T09:00:00-06:00"
    assert found["citation"] == "Belleville Code § 9.13(5)"


def test_the_citation_and_a_forfeiture_the_ordinance_leaves_not_set(packet):
    assert [c["number"] for c in packet["citations"]] == ["C-77"]
    assert packet["citations"][0]["offense_dates"] == ["2026-03-03"]
    forfeiture = packet["forfeiture"]
    assert (forfeiture["min"], forfeiture["max"]) == ("not set", "not set")
    assert "not set" in forfeiture["range"] and "§ 9.13" in forfeiture["source"]
    assert forfeiture["provided_by"] is None  # § 9.13 names no section providing one


def test_the_roles_that_may_have_it_and_another_village_that_may_not(api):
    path = f"/api/v1/{HOME}/cases/{REF}/referral"
    assert api.client.get(path, headers=api.as_("clerk")).status_code == 200
    assert api.client.get(path, headers=api.as_("auditor")).status_code == 200
    assert api.client.get(path, headers=api.as_("inspector")).status_code == 403
    # (another village's case: 404 as for a missing one, tests/test_api_audit.py)
    theirs = api.client.get(f"/api/v1/{OTHER}/cases/{OTHER_CASE}/referral",
                            headers=api.as_("attorney"))
    assert theirs.status_code == 404


def test_the_command_line_gives_the_attorney_the_same_packet(store_url, packet):
    done = run_abate("case", "referral", "--municipality", HOME, REF, database_url=store_url)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    def steady(p): return {k: v for k, v in p.items() if not k.startswith("generated_at")}
    assert steady(printed) == steady(packet)
    missing = run_abate("case", "referral", "--municipality", HOME, "B-NONE",
                        database_url=store_url)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert "B-NONE" in missing.stderr


def test_a_citation_lists_its_separate_offenses_and_the_range_the_ordinance_gives(api):
    answer = api.client.get(f"/api/v1/{HOME}/cases/{MAINTENANCE}/referral",
                            headers=api.as_("attorney"))
    assert answer.status_code == 200, answer.text
    packet = answer.json()
    citation = packet["citations"][0]
    assert citation["number"] == "C-100" and citation["offense_count"] == 4
    assert [o["date"] for o in citation["offenses"]] == [
        "2026-06-01", "2026-06-02", "2026-06-03", "2026-06-04"]
    assert citation["offense_basis"]["citation"] == "Belleville Code § 11.013(1)"
    forfeiture = packet["forfeiture"]
    assert (forfeiture["min"], forfeiture["max"]) == ("50", "150")
    assert forfeiture["range"].startswith("$50–$150")
    assert forfeiture["separate_offense"] == "each day of continued violation (§ 11.013(1))"
    assert forfeiture["provided_by"] == "§ 11.013(1) of the Village Code"
    assert packet["ordinance"]["enforcement"].startswith("a citation is issued")
    found = packet["prior_violations"]
    assert (found["count"], found["cases"], found["window_months"]) == (0, [], 12)
    cure = next(d for d in packet["deadlines"] if d["name"] == "cure")
    assert cure["outcome"] == "open" and cure["due_at"] == "2026-06-15T23:59:59-05:00"
    assert cure["overdue"] is True  # its time is past; no clock has recorded it on this store


def test_a_notice_served_again_replaces_the_cure_and_compliance_meets_the_new_one(api):
    packet = api.client.get(f"/api/v1/{HOME}/cases/B-C-1/referral",
                            headers=api.as_("clerk")).json()
    cures = [d for d in packet["deadlines"] if d["name"] == "cure"]
    assert [(d["outcome"], d["ended_by"]["fact"]) for d in cures] == [
        ("replaced", "NoticeServed"), ("met", "ComplianceVerified")]
    assert cures[0]["due_at"] == "2026-04-04T10:00:00-05:00"
    assert cures[1]["due_at"] == "2026-04-06T12:00:00-05:00"  # 72 h from delivery
    assert cures[1]["met_at"] == "2026-04-04T09:00:00-05:00"
    notices = [e for e in packet["chronology"] if e["fact"] == "NoticeServed"]
    assert [(n["method"], n["delivered_at"]) for n in notices] == [
        ("personal", "2026-04-01T10:00:00-05:00"),
        ("certified_mail", "2026-04-03T12:00:00-05:00")]
    assert packet["status"] == "closed" and packet["chronology"][-1]["fact"] == "Closed"

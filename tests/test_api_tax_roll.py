"""The tax roll over HTTP, against the installed ``abate`` on the same store: the CSV
body is the CLI's file byte for byte, JSON carries the totals, a clerk certifies (each
charge once, then a seal the list carries) and the export then shows the charges
certified, reconcile lists payments after certification; the role matrix and another
village answered as a missing one."""

from __future__ import annotations

import csv
import io
import datetime as dt
import json
from zoneinfo import ZoneInfo

import pytest

from tests.api_kit import HOME, OTHER, database_for, earlier, make_api
from tests.builders import CaseLines, as_lines, dumping_through_bill, hedge_through_bill
from tests.test_reports import HOSTILE_OWNERS, Abate

ROLL = f"/api/v1/{HOME}/tax-roll"
CHICAGO = ZoneInfo("America/Chicago")


def billed(case_ref: str, owner: str | None = None) -> list[dict]:
    lines = CaseLines(HOME, case_ref)
    commands = dumping_through_bill(lines)
    if owner is not None:
        commands[0] = lines.open("belleville:9.13", "2026-03-02T09:00:00-06:00",
                                 owner={"name": owner, "mailing_address": "1 Main St"})
    return commands


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def stores(request, tmp_path):
    """(api, cli) on one store holding three billed, unpaid Belleville charges (one owner
    whose name looks like a formula), written by ``abate import``."""
    url, extra, schema = database_for(request, tmp_path)
    api = make_api(url, extra)
    cli = Abate((url, extra, schema))
    cli.load(tmp_path, *billed("B-T1"), *billed("B-T2", HOSTILE_OWNERS[0]), *billed("B-T3"))
    yield api, cli
    api.services.close()


def test_the_csv_is_the_file_the_cli_writes_for_the_same_store(stores, tmp_path):
    api, cli = stores
    for excel in (False, True):
        out = tmp_path / f"roll-{excel}.csv"
        cli.run("tax-roll", "export", "--municipality", HOME, "--tax-year", "2026", "--as-of",
                "2026-11-01", "--output", str(out), *(["--excel"] if excel else []))
        answer = api.client.get(ROLL, params={"tax_year": 2026, "as_of": "2026-11-01",
                                              "excel": excel}, headers=api.as_("clerk"))
        assert answer.status_code == 200, answer.text
        assert answer.content == out.read_bytes()
        assert answer.content.startswith(b"\xef\xbb\xbf") == excel
    assert answer.headers["content-type"].startswith("text/csv")
    assert answer.headers["content-disposition"] == \
        'attachment; filename="tax-roll-belleville-2026-as-of-2026-11-01.csv"'
    rows = list(csv.DictReader(io.StringIO(answer.content.decode("utf-8-sig"))))
    assert [r["case_ref"] for r in rows] == ["B-T1", "B-T2", "B-T3"]
    assert rows[1]["owner_name"] == "'" + HOSTILE_OWNERS[0]  # never a formula


def test_json_lists_the_charges_with_their_totals_in_local_time(stores):
    api, _ = stores
    answer = api.client.get(ROLL, params={"tax_year": 2026, "format": "json", "county": "Dane"},
                            headers=api.as_("auditor"))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [c["case_ref"] for c in body["charges"]] == ["B-T1", "B-T2", "B-T3"]
    summary = body["summary"]
    assert (summary["charges"], summary["total"], summary["county"]) == (3, "450.00", "Dane")
    assert summary["by_county"] == [{"county": "Dane", "charges": 3, "principal": "450.00",
                                     "interest": None, "total": "450.00"}]
    assert summary["produced_at"].endswith("-06:00") and "produced_at_utc" in summary
    assert all(c["certified_at"] is None and "certified_at_utc" in c for c in body["charges"])
    none = api.client.get(ROLL, params={"tax_year": 2026, "format": "json", "as_of": "2026-03-01"},
                          headers=api.as_("clerk")).json()
    assert none["charges"] == [] and none["summary"]["charges"] == 0


def test_a_clerk_certifies_once_each_and_the_export_then_shows_them_certified(stores, tmp_path):
    api, cli = stores
    done = api.client.post(f"{ROLL}/certify", json={"tax_year": 2026, "county": "Dane"},
                           headers=api.as_("clerk"))
    assert done.status_code == 200, done.text
    body = done.json()
    seal = body["summary"]["seal"]
    assert set(seal) == {"id", "position", "digest", "line"} and len(seal["digest"]) == 64
    assert seal["position"] == api.services.head()
    assert body["summary"]["certification"]["newly_certified"] == 3
    assert body["summary"]["certification"]["certified_by"] == ["clerk.belleville"]
    assert body["summary"]["list"] == "certified"
    assert [c["certified"] for c in body["charges"]] == [True, True, True]

    listed = api.client.get(ROLL, params={"tax_year": 2026, "format": "json"},
                            headers=api.as_("clerk")).json()
    assert [(c["case_ref"], c["certified"], c["certified_by"]) for c in listed["charges"]] == \
        [("B-T1", True, "clerk.belleville"), ("B-T2", True, "clerk.belleville"),
         ("B-T3", True, "clerk.belleville")]
    history = api.client.get(f"/api/v1/{HOME}/cases/B-T1/history",
                             headers=api.as_("auditor")).json()["events"]
    assert history[-1]["actor"] == "clerk.belleville"

    again = api.client.post(f"{ROLL}/certify", params={"format": "csv"},
                            json={"tax_year": 2026, "county": "Dane"}, headers=api.as_("clerk"))
    assert again.status_code == 200, again.text
    assert again.headers["x-abate-seal"].startswith("abate-seal ")
    assert again.headers["content-disposition"] == \
        'attachment; filename="certified-belleville-2026-dane.csv"'
    rows = list(csv.DictReader(io.StringIO(again.text)))
    assert len(rows) == 3 and {r["seal_id"] for r in rows} == {str(seal["id"] + 1)}
    # Certifying again recorded no certification twice; the CLI lists what HTTP certified.
    out = tmp_path / "after.csv"
    cli.run("tax-roll", "export", "--municipality", HOME, "--tax-year", "2026", "--output",
            str(out))
    assert api.client.get(ROLL, params={"tax_year": 2026}, headers=api.as_("clerk")).content \
        == out.read_bytes()
    printed = cli.json("tax-roll", "export", "--municipality", HOME, "--tax-year", "2026",
                       "--format", "json")
    assert printed["summary"]["certification"]["certified_charges"] == 3


@pytest.mark.parametrize("body, field", [
    ({"county": "Dane"}, "tax_year"),
    ({"tax_year": 2026}, "county"),
    ({"tax_year": 1066, "county": "Dane"}, "tax_year"),
    ({"tax_year": 2026, "county": "Dane\nGreen"}, "county"),
    ({"tax_year": 2026, "county": "Sauk"}, "county"),
    ({"tax_year": 2026, "county": "Dane", "actor": "the mayor"}, "actor"),
])
def test_a_bad_certification_names_the_field_and_certifies_nothing(stores, body, field):
    api, _ = stores
    head = api.services.head()
    answer = api.client.post(f"{ROLL}/certify", json=body, headers=api.as_("clerk"))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field
    assert api.services.head() == head


def test_reconcile_lists_payments_after_certification(stores):
    api, _ = stores
    api.client.post(f"{ROLL}/certify", json={"tax_year": 2026, "county": "Dane"},
                    headers=api.as_("clerk"))
    paid = api.client.post(f"/api/v1/{HOME}/cases/B-T1/record_payment",
                           json={"at": earlier(0), "amount": "150.00"},
                           headers=api.as_("clerk"))
    assert paid.status_code == 200, paid.text
    answer = api.client.get(f"{ROLL}/reconcile", params={"tax_year": 2026},
                            headers=api.as_("auditor"))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["to_credit_or_refund_by_county"] == {"Dane": "150.00"}
    [payment] = body["payments_after_certification"]
    assert (payment["case_ref"], payment["amount"]) == ("B-T1", "150.00")
    assert payment["paid_at"][-6:] in ("-06:00", "-05:00") and "paid_at_utc" in payment


def test_who_may_export_certify_and_reconcile(stores):
    api, _ = stores
    for role, export, certify in (("clerk", 200, 200), ("auditor", 200, 403),
                                  ("inspector", 403, 403), ("attorney", 403, 403),
                                  ("admin", 403, 403)):
        assert api.client.get(ROLL, params={"tax_year": 2026},
                              headers=api.as_(role)).status_code == export, role
        assert api.client.get(f"{ROLL}/reconcile", params={"tax_year": 2026},
                              headers=api.as_(role)).status_code == export, role
        assert api.client.post(f"{ROLL}/certify", json={"tax_year": 2026, "county": "Green"},
                               headers=api.as_(role)).status_code == certify, role


def test_another_villages_roll_is_answered_as_one_that_does_not_exist(stores):
    api, _ = stores
    other = api.client.get(f"/api/v1/{OTHER}/tax-roll", params={"tax_year": 2026},
                           headers=api.as_("clerk"))
    missing = api.client.get("/api/v1/nowhere/tax-roll", params={"tax_year": 2026},
                             headers=api.as_("clerk"))
    assert other.status_code == missing.status_code == 404
    certify = api.client.post(f"/api/v1/{OTHER}/tax-roll/certify",
                              json={"tax_year": 2026, "county": "Dane"}, headers=api.as_("clerk"))
    assert certify.status_code == 404


@pytest.mark.parametrize("params, field", [
    ({}, "tax_year"), ({"tax_year": "soon"}, "tax_year"), ({"tax_year": 20260}, "tax_year"),
    ({"tax_year": 2026, "as_of": "9999-12-31"}, "as_of"),
    ({"tax_year": 2026, "known_at": "2026-11-01T00:00:00"}, "known_at"),
    ({"tax_year": 2026, "format": "xlsx"}, "format"),
    ({"tax_year": 2026, "county": "Da\x00ne"}, "county"),
])
def test_bad_parameters_name_the_parameter(stores, params, field):
    api, _ = stores
    answer = api.client.get(ROLL, params=params, headers=api.as_("clerk"))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field, answer.json()


# ---------------------------------------------------------------- the list reviewed


def reviewed(api, **params):
    """(digest, produced_at) of the CSV a clerk downloads to review."""
    answer = api.client.get(ROLL, params={"tax_year": 2026, "county": "Dane", **params},
                            headers=api.as_("clerk"))
    assert answer.status_code == 200, answer.text
    return answer.headers["x-abate-list-sha256"], answer.headers["x-abate-list-produced-at"]


def certify(api, **body):
    return api.client.post(f"{ROLL}/certify", json={"tax_year": 2026, "county": "Dane", **body},
                           headers=api.as_("clerk"))


def pay(api, case_ref, amount):
    paid = api.client.post(f"/api/v1/{HOME}/cases/{case_ref}/record_payment",
                           json={"at": earlier(0), "amount": amount}, headers=api.as_("clerk"))
    assert paid.status_code == 200, paid.text


def test_the_digest_is_the_same_in_the_csv_header_the_json_summary_and_the_cli(stores):
    api, cli = stores
    digest, _ = reviewed(api)
    assert len(digest) == 64 and int(digest, 16) >= 0
    body = api.client.get(ROLL, params={"tax_year": 2026, "county": "Dane", "format": "json"},
                          headers=api.as_("auditor")).json()
    assert body["summary"]["list_sha256"] == digest
    printed = cli.run("tax-roll", "export", "--municipality", HOME, "--tax-year", "2026",
                      "--county", "Dane").stderr.decode()
    assert f"list SHA-256 {digest} (3 charges, total 450.00" in printed
    # Another list (one county fewer charges, another date) has another digest.
    assert reviewed(api, as_of="2026-03-01")[0] != digest


def test_the_list_reviewed_is_certified_and_the_certified_list_has_its_digest(stores):
    api, _ = stores
    digest, produced_at = reviewed(api, as_of="2026-11-15")
    done = certify(api, as_of="2026-11-15", known_at=produced_at, expected_sha256=digest.upper())
    assert done.status_code == 200, done.text
    summary = done.json()["summary"]
    assert summary["certification"]["newly_certified"] == 3
    assert summary["list_sha256"] == digest  # every charge reviewed is on the certified list
    again = api.client.post(f"{ROLL}/certify", params={"format": "csv"},
                            json={"tax_year": 2026, "county": "Dane", "expected_sha256": digest},
                            headers=api.as_("clerk"))
    assert again.status_code == 200 and again.headers["x-abate-list-sha256"] == digest


def test_a_payment_after_review_is_refused_naming_the_case_and_nothing_is_recorded(stores):
    api, _ = stores
    digest, produced_at = reviewed(api)
    pay(api, "B-T1", "50.00")
    head = api.services.head()
    refused = certify(api, expected_sha256=digest, known_at=produced_at)
    assert refused.status_code == 409, refused.text
    body = refused.json()
    assert body["error"] == "list_changed" and "B-T1 amount changed" in body["detail"]
    assert body["changes"] == [{"case_ref": "B-T1", "change": "amount_changed",
                                "principal": {"reviewed": "150.00", "now": "100.00"},
                                "total": {"reviewed": "150.00", "now": "100.00"}}]
    assert (body["changed_charges"], body["reviewed_sha256"]) == (1, digest)
    # Without known_at the digest still refuses; the changes cannot be named then.
    blind = certify(api, expected_sha256=digest)
    assert blind.status_code == 409 and blind.json()["changes"] is None
    assert "give known_at (printed with the reviewed export)" in blind.json()["detail"]
    assert api.services.head() == head
    listed = api.client.get(ROLL, params={"tax_year": 2026, "format": "json"},
                            headers=api.as_("clerk")).json()
    assert listed["summary"]["certification"]["certified_charges"] == 0
    # Reviewed again, the list as it is now is certified: the digest decides (a known_at
    # that rebuilds another list only serves to name changes).
    digest, _ = reviewed(api)
    done = certify(api, expected_sha256=digest, known_at="2020-01-01T00:00:00+00:00")
    assert done.status_code == 200, done.text


def test_a_past_date_is_certifiable_only_while_no_listed_charge_changed_since(stores):
    api, _ = stores
    yesterday = (dt.datetime.now(CHICAGO) - dt.timedelta(days=1)).date().isoformat()
    pay(api, "B-T1", "50.00")
    pay(api, "B-T2", "150.00")
    head = api.services.head()
    refused = certify(api, as_of=yesterday)
    assert refused.status_code == 409, refused.text
    body = refused.json()
    assert [(c["case_ref"], c["change"]) for c in body["changes"]] == \
        [("B-T1", "amount_changed"), ("B-T2", "removed")]
    assert body["changes"][1]["total"] == "150.00"
    assert "certifiable only while none of its charges changed since" in body["detail"]
    assert api.services.head() == head


def test_a_charge_recorded_after_review_is_named_as_added(stores, tmp_path):
    api, cli = stores
    digest, produced_at = reviewed(api)
    cli.load(tmp_path, *billed("B-T4"))  # facts of March, recorded after the review
    refused = certify(api, expected_sha256=digest, known_at=produced_at)
    assert refused.status_code == 409, refused.text
    assert refused.json()["changes"] == [{"case_ref": "B-T4", "change": "added",
                                          "total": "150.00"}]


@pytest.mark.parametrize("body, field", [
    ({"expected_sha256": "abc"}, "expected_sha256"),
    ({"expected_sha256": "g" * 64}, "expected_sha256"),
    ({"as_of": "9999-12-31"}, "as_of"),
    ({"as_of": "soon"}, "as_of"),
    ({"known_at": "2026-11-01T00:00:00"}, "known_at"),
])
def test_a_bad_reviewed_list_names_the_field(stores, body, field):
    api, _ = stores
    head = api.services.head()
    answer = certify(api, **body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field
    assert api.services.head() == head


def test_a_list_holding_a_charge_whose_statute_is_not_set_is_409_and_records_nothing(
        stores, tmp_path):
    api, cli = stores
    cli.load(tmp_path, *hedge_through_bill(CaseLines(HOME, "B-H1")))  # § 9.07: statute not set
    listed = api.client.get(ROLL, params={"tax_year": 2026, "county": "Dane", "format": "json"},
                            headers=api.as_("clerk")).json()
    assert listed["summary"]["not_certifiable"] == [
        {"case_ref": "B-H1", "rule": "belleville:9.07", "rule_version": 1,
         "charge_type": "special_tax", "problem": "statute not set — cannot be certified"}]
    head = api.services.head()
    refused = certify(api)
    assert refused.status_code == 409, refused.text
    body = refused.json()
    assert body["error"] == "not_certifiable" and body["not_certifiable_charges"] == 1
    assert "B-H1 (special tax under belleville:9.07 v1)" in body["detail"]
    assert "nothing was certified" in body["detail"]
    assert api.services.head() == head

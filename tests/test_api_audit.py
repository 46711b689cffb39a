"""Audit over HTTP: the access log records who read, exported or wrote what (a failed
attempt on another village's case too, answered as for a missing case); one JSON log
line per request with its request id and never a token; verify reports a tampered
store, against a seal too, naming only the auditor's own cases."""

from __future__ import annotations

import datetime as dt
import json
import httpx
import pytest
import sqlalchemy as sa
import structlog

from cases.logging import configure_logging
from cases.seals import seal_store
from tests.abate_command import run_abate
from tests.api_kit import (
    BACKENDS,
    HOME,
    HOME_CASE,
    OTHER,
    OTHER_CASE,
    api_on,
    earlier,
    served,
    with_cases,
)
from tests.tamper_kit import Db


@pytest.fixture(params=BACKENDS)
def api(request, tmp_path):
    api = with_cases(api_on(request, tmp_path))
    yield api
    api.services.close()


def access_log(api, role="auditor", village=HOME, **params):
    answer = api.client.get("/api/v1/audit/access-log", params=params,
                            headers=api.as_(role, village))
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_read_a_write_and_a_referral_are_in_the_access_log_with_user_and_case(api):
    read = api.client.get(f"/api/v1/{HOME}/cases/{HOME_CASE}", headers=api.as_("clerk"))
    wrote = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection",
                            json={"at": earlier(1), "findings": "still there"},
                            headers=api.as_("inspector"))
    packet = api.client.get(f"/api/v1/{HOME}/cases/{HOME_CASE}/referral",
                            headers=api.as_("attorney"))
    assert read.status_code == wrote.status_code == packet.status_code == 200
    entries = access_log(api, case_ref=HOME_CASE)["entries"]
    seen = [(e["user"], e["role"], e["route"], e["action"], e["status"], e["method"])
            for e in entries]
    assert seen[:3] == [  # newest first
        ("attorney.belleville", "attorney", "cases.referral", "export", 200, "GET"),
        ("inspector.belleville", "inspector", "command.record_inspection", "write", 200, "POST"),
        ("clerk.belleville", "clerk", "cases.show", "read", 200, "GET")]
    newest = entries[0]
    assert newest["request_id"] == packet.headers["X-Request-ID"]
    assert (newest["municipality"], newest["case_ref"]) == (HOME, HOME_CASE)
    assert newest["path"] == f"/api/v1/{HOME}/cases/{HOME_CASE}/referral"
    assert newest["client"] and newest["duration_ms"] >= 0
    assert newest["requested_at"][-6:] in ("-06:00", "-05:00")
    assert newest["requested_at_utc"].endswith("+00:00")
    only_attorney = access_log(api, user="attorney.belleville")["entries"]
    assert {e["user"] for e in only_attorney} == {"attorney.belleville"}


def test_a_refused_referral_of_another_village_is_logged_as_404_and_reveals_nothing(api):
    theirs = api.client.get(f"/api/v1/{OTHER}/cases/{OTHER_CASE}/referral",
                            headers=api.as_("attorney"))
    missing = api.client.get(f"/api/v1/{OTHER}/cases/MZ-NONE/referral",
                             headers=api.as_("attorney"))
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["detail"].replace(OTHER_CASE, "?") == missing.json()[
        "detail"].replace("MZ-NONE", "?")
    # The village asked about sees the attempt; the user's own village does not see theirs.
    attempts = access_log(api, village=OTHER, user="attorney.belleville")["entries"]
    assert [(e["case_ref"], e["status"], e["action"], e["route"]) for e in attempts] == [
        ("MZ-NONE", 404, "export", "cases.referral"),
        (OTHER_CASE, 404, "export", "cases.referral")]
    assert not access_log(api, case_ref=OTHER_CASE)["entries"]
    refused = api.client.get(f"/api/v1/{HOME}/cases/{HOME_CASE}/referral",
                             headers=api.as_("inspector"))
    assert refused.status_code == 403
    entry = access_log(api, user="inspector.belleville")["entries"][0]
    assert (entry["route"], entry["action"], entry["status"]) == ("cases.referral", "export", 403)


def test_a_made_up_path_is_refused_and_still_logged(api):
    village, ref = "x" * 300, "R" * 300
    for path in (f"/api/v1/{village}/cases", f"/api/v1/{HOME}/cases/{ref}/referral"):
        answer = api.client.get(path, headers=api.as_("attorney"))
        assert answer.status_code in (404, 422), answer.text
    entry = access_log(api, user="attorney.belleville")["entries"][0]
    assert (entry["route"], entry["status"], entry["case_ref"]) == (
        "cases.referral", 422, ref[:64])


def test_an_auditor_sees_its_own_villages_entries_only_and_pages_them(api):
    for _ in range(3):
        api.client.get(f"/api/v1/{OTHER}/cases", headers=api.as_("clerk", OTHER))
    api.client.get(f"/api/v1/{HOME}/cases", headers=api.as_("clerk"))
    mine = access_log(api)["entries"]
    assert mine and {e["municipality"] for e in mine} == {HOME}
    first = access_log(api, village=OTHER, limit=2)
    assert len(first["entries"]) == 2
    rest = access_log(api, village=OTHER, limit=2, before_id=first["next_before_id"])
    ids = [e["id"] for e in first["entries"] + rest["entries"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 4  # no entry twice
    refused = api.client.get("/api/v1/audit/access-log", params={"municipality": OTHER},
                             headers=api.as_("auditor"))
    assert refused.status_code == 404
    bad = api.client.get("/api/v1/audit/access-log", params={"from": "yesterday"},
                         headers=api.as_("auditor"))
    assert bad.status_code == 422 and bad.json()["field"] == "from"


def test_the_access_log_filters_by_time(api):
    now = dt.datetime.now(dt.timezone.utc)
    two_hours_ago, one_hour_ago = now - dt.timedelta(hours=2), now - dt.timedelta(hours=1)
    for at, ref in ((two_hours_ago, "BV-EARLY"), (one_hour_ago, "BV-LATER")):
        api.services.clock = lambda at=at: at
        api.client.get(f"/api/v1/{HOME}/cases/{ref}", headers=api.as_("clerk"))
    api.services.clock = lambda: dt.datetime.now(dt.timezone.utc)
    window = {"from": (two_hours_ago - dt.timedelta(minutes=1)).isoformat(),
              "to": (one_hour_ago - dt.timedelta(minutes=1)).isoformat()}
    assert [e["case_ref"] for e in access_log(api, **window)["entries"]] == ["BV-EARLY"]
    later = access_log(api, **{"from": one_hour_ago.isoformat(),
                               "to": (one_hour_ago + dt.timedelta(minutes=1)).isoformat()})
    assert [e["case_ref"] for e in later["entries"]] == ["BV-LATER"]
    assert later["entries"][0]["status"] == 404


def test_the_audit_routes_own_requests_are_logged_for_the_users_villages(api):
    access_log(api)  # this read is logged too
    entries = access_log(api)["entries"]
    assert entries[0]["route"] == "audit.access_log" and entries[0]["municipality"] is None
    assert entries[0]["user_municipalities"] == [HOME]
    assert not [e for e in access_log(api, village=OTHER)["entries"]
                if e["user"] == "auditor.belleville"]


@pytest.fixture
def json_logs(capsys):
    configure_logging("json")
    yield lambda: [json.loads(line) for line in capsys.readouterr().err.splitlines()
                   if line.startswith("{")]
    structlog.reset_defaults()


def test_one_json_line_per_request_with_its_request_id_and_never_the_token(api, json_logs):
    token = api.tokens["attorney", HOME]
    answer = api.client.get(f"/api/v1/{HOME}/cases/{HOME_CASE}/referral",
                            headers={**api.as_("attorney"), "X-Request-ID": "trace-42"})
    assert answer.status_code == 200 and answer.headers["X-Request-ID"] == "trace-42"
    lines = json_logs()
    request = [line for line in lines if line["event"] == "request"]
    assert len(request) == 1
    assert {k: request[0][k] for k in ("request_id", "user", "role", "municipality",
                                       "case_ref", "route", "status", "action")} == {
        "request_id": "trace-42", "user": "attorney.belleville", "role": "attorney",
        "municipality": HOME, "case_ref": HOME_CASE, "route": "cases.referral",
        "status": 200, "action": "export"}
    assert request[0]["duration_ms"] >= 0 and request[0]["level"] == "info"
    assert token not in json.dumps(lines) and "Bearer" not in json.dumps(lines)
    refused = api.client.get(f"/api/v1/{HOME}/cases", headers={
        "Authorization": "Bearer abate_not-a-real-token", "X-Request-ID": "x" * 65})
    assert refused.status_code == 401
    generated = refused.headers["X-Request-ID"]
    assert generated != "x" * 65 and len(generated) == 32
    line = next(line for line in json_logs() if line["event"] == "request")
    assert (line["request_id"], line["status"], line["user"]) == (generated, 401, None)
    assert "abate_not-a-real-token" not in json.dumps(line)


def _tamper(api) -> None:
    """Alter the stored inspection of the home case, as someone with database access."""
    db = Db("", api.services.store.schema, api.services.runner.engine)
    with db.engine.connect() as conn:
        row = next(r for r in conn.execute(sa.text(
            f"SELECT id, state FROM {db.table('abate_events')}")) if b"couch" in bytes(r.state))
    db.execute("UPDATE {events} SET state = :s WHERE id = :id",
               s=bytes(row.state).replace(b"couch", b"chair"), id=row.id)


def verify(api, village=HOME, **params):
    return api.client.get("/api/v1/audit/verify", params=params,
                          headers=api.as_("auditor", village))


def test_verify_over_http_reports_a_tampered_store_naming_only_the_auditors_cases(
        api, json_logs):
    api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection",
                    json={"at": earlier(1), "findings": "couch on the curb"},
                    headers=api.as_("inspector"))
    clean = verify(api)
    assert clean.status_code == 200 and clean.json()["ok"] is True, clean.text
    assert clean.json()["cases_checked"] == 2
    _tamper(api)
    home = verify(api).json()
    assert home["ok"] is False and home["problems_in_other_municipalities"] == 0
    assert (f"{HOME}:{HOME_CASE}", 2, "content altered: hash does not match") in [
        (p["case"], p["position"], p["problem"]) for p in home["problems"]]
    other = verify(api, OTHER).json()
    assert other["ok"] is False and other["problems"] == []
    assert other["problems_in_other_municipalities"] == len(home["problems"])
    # Reading the tampered case: one line naming the problem, logged with the request id.
    json_logs()
    answer = api.client.get(f"/api/v1/{HOME}/cases/{HOME_CASE}", headers={
        **api.as_("auditor"), "X-Request-ID": "replay-7"})
    assert answer.status_code == 500 and "integrity check" in answer.json()["detail"]
    failed = [line for line in json_logs() if line["event"] == "request_failed"]
    assert failed and failed[0]["request_id"] == "replay-7"


def test_verify_against_a_seal_by_digest_or_id(api):
    seal = seal_store(api.services.store, actor="auditor", reason="test")
    for params in ({"seal": seal.log_digest}, {"seal": seal.digest.upper()},
                   {"seal_id": seal.seal_id}):
        answer = verify(api, **params)
        assert answer.status_code == 200, answer.text
        assert answer.json()["ok"] is True and answer.json()["matches"] is True
    api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection",
                    json={"at": earlier(1), "findings": "couch on the curb"},
                    headers=api.as_("inspector"))
    after = verify(api, OTHER, seal=seal.log_digest).json()["after_seal"]
    assert after["events"] == 1 and after["cases"] == []  # the home case is not named
    assert after["cases_in_other_municipalities"] == 1
    db = Db("", api.services.store.schema, api.services.runner.engine)
    with db.engine.connect() as conn:
        first = conn.execute(sa.text(
            f"SELECT id, state FROM {db.table('abate_events')} ORDER BY id")).first()
    db.execute("UPDATE {events} SET state = :s WHERE id = :id",
               s=bytes(first.state).replace(b"furniture", b"furnishing"), id=first.id)
    broken = verify(api, seal=seal.log_digest).json()
    assert broken["ok"] is False and broken["matches"] is False
    assert any(d["case"] == f"{HOME}:{HOME_CASE}" for d in broken["differences"])


def test_verify_over_http_names_a_view_row_edited_in_the_database_until_it_is_rebuilt(api):
    """A case summary changed in the database: the events are intact (and match a seal),
    but the view is named, with the case and fields, to its village's auditor only."""
    svc = api.services
    seal = seal_store(svc.store, actor="auditor", reason="test")
    svc.catch_up()
    db = Db("", svc.store.schema, svc.runner.engine)
    table = db.table(svc.runner.active("case_summaries").rows.name)
    db.execute(f"UPDATE {table} SET owner_name = 'Tampered Owner', balance = '999.00' "
               "WHERE case_ref = :ref", ref=HOME_CASE)
    home = verify(api).json()
    assert home["ok"] is False and home["problems"] == [] and home["views"]["ok"] is False
    [found] = home["views"]["differences"]
    assert (found["view"], found["case"], found["kind"], found["fields"]) == (
        "case_summaries", f"{HOME}:{HOME_CASE}", "altered", ["owner_name", "balance"])
    assert home["views"]["differences_in_other_municipalities"] == 0
    other = verify(api, OTHER).json()
    assert other["ok"] is False and other["views"]["differences"] == []
    assert other["views"]["differences_in_other_municipalities"] == 1
    against_seal = verify(api, seal=seal.log_digest).json()
    assert against_seal["matches"] is True and against_seal["ok"] is False
    assert against_seal["views"]["differences"][0]["case"] == f"{HOME}:{HOME_CASE}"
    svc.runner.rebuild("case_summaries")
    repaired = verify(api).json()
    assert repaired["ok"] is True and repaired["views"]["ok"] is True


@pytest.mark.parametrize("params, status, field", [
    ({"seal": "not-a-digest"}, 422, "seal"),
    ({"seal": "ab" * 32, "seal_id": 1}, 422, "seal_id"),
    ({"seal_id": 999}, 404, "seal_id"),
    ({"seal_id": "one"}, 422, "seal_id"),
])
def test_verify_refuses_a_bad_seal_naming_it(api, params, status, field):
    answer = verify(api, **params)
    assert answer.status_code == status, answer.text
    assert answer.json()["field"] == field


def test_a_served_api_logs_json_lines_off_a_terminal_with_the_request_id(tmp_path):
    """`abate serve` as run by a service manager (stderr not a terminal, no log setting):
    one JSON line per request, the request id on it, the token nowhere."""
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    added = run_abate("users", "add", "--name", "kim", "--role", "auditor",
                      "--municipality", HOME, database_url=url)
    token = json.loads(added.stdout)["token"]
    with served(url, tmp_path / "serve.log") as server:
        base = server.base
        answer = httpx.get(f"{base}/api/v1/audit/access-log", headers={
            "Authorization": f"Bearer {token}", "X-Request-ID": "ops-1"})
        assert answer.status_code == 200 and answer.headers["x-request-id"] == "ops-1"
    err = server.output()
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    logged = [line for line in lines if line.get("request_id") == "ops-1"]
    assert [(line["event"], line["user"], line["status"]) for line in logged] == [
        ("request", "kim", 200)]
    assert token not in err

"""Case routes over HTTP: commands recorded as the signed-in user, validation errors that
name the field, another village's case answered exactly like a missing one, reads now,
as of and as known at, in local time with UTC beside."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from tests.api_kit import (
    BACKENDS,
    HOME,
    HOME_CASE,
    OTHER,
    OTHER_CASE,
    api_on,
    earlier,
    make_api,
    open_body,
    with_cases,
)


@pytest.fixture(params=BACKENDS)
def api(request, tmp_path):
    api = with_cases(api_on(request, tmp_path))
    yield api
    api.services.close()


def _case(api, ref=HOME_CASE, role="clerk", village=HOME, **params):
    return api.client.get(f"/api/v1/{village}/cases/{ref}", params=params,
                          headers=api.as_(role, village))


def test_a_command_is_recorded_with_the_signed_in_user_as_actor(api):
    done = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection",
                           json={"at": earlier(2), "findings": "couch still on the curb"},
                           headers=api.as_("inspector"))
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["outcome"]["events_recorded"] >= 1
    assert body["position"] == api.services.head()
    history = api.client.get(f"/api/v1/{HOME}/cases/{HOME_CASE}/history",
                             headers=api.as_("auditor")).json()["events"]
    assert [e["actor"] for e in history] == ["clerk.belleville", "inspector.belleville"]
    assert all(e["rule"] == "belleville:9.13" and e["rule_version"] == 1 for e in history)


def test_a_client_cannot_set_another_actor(api):
    answer = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection",
                             json={"at": earlier(2), "findings": "x", "actor": "the mayor"},
                             headers=api.as_("inspector"))
    assert answer.status_code == 422
    assert answer.json()["field"] == "actor"
    assert "signed-in user" in answer.json()["detail"]


@pytest.mark.parametrize("body, field", [
    ({"at": "yesterday", "method": "personal", "served_on": "Ann"}, "at"),
    ({"method": "personal", "served_on": "Ann"}, "at"),
    ({"method": "telepathy", "served_on": "Ann"}, "method"),
    ({"method": "personal"}, "served_on"),
    ({"method": "personal", "served_on": "Ann", "colour": "red"}, "colour"),
])
def test_a_commands_validation_error_is_422_naming_the_field(api, body, field):
    body = {"at": earlier(2), **body} if field != "at" or "at" in body else body
    answer = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/serve_notice", json=body,
                             headers=api.as_("inspector"))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field
    assert f"field {field}:" in answer.json()["detail"]


def test_money_as_a_binary_number_or_a_future_time_is_refused_by_name(api):
    path = f"/api/v1/{HOME}/cases/{HOME_CASE}/record_abatement"
    future = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=30)).isoformat()
    answer = api.client.post(path, json={"at": future, "costs": [
        {"item": "crew", "amount": "150.00"}]}, headers=api.as_("inspector"))
    assert answer.status_code == 422 and answer.json()["field"] == "at", answer.text
    answer = api.client.post(path, content=b'{"at": "%s", "costs": [{"item": "crew", '
                             b'"amount": 1e999}]}' % earlier(1).encode(),
                             headers={**api.as_("inspector"), "content-type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert "costs.0.amount" in answer.json()["detail"]


@pytest.mark.parametrize("at", ["0001-01-01T00:00:00+14:00", "1899-12-31T23:59:59Z"])
def test_a_time_outside_the_accepted_range_is_422_naming_the_field_not_a_500(api, at):
    """Found by the schema fuzz: year 1 with an offset overflowed converting to the
    village's zone (OverflowError, a 500)."""
    answer = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/close_case",
                             json={"at": at, "reason": "done"}, headers=api.as_("inspector"))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "at" and "1900-01-01 to 2200-12-31" in answer.json()["detail"]
    answer = _case(api, as_of=at)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "as_of"


@pytest.mark.parametrize("written", ["2026", "0.5", "1700000000"])
def test_a_number_is_not_read_as_seconds_since_1970(api, written):
    """Found by the schema fuzz: known_at=0.5 (and the access log's to=0.5) was read as
    1970-01-01T00:00:00.5Z (200)."""
    answer = _case(api, known_at=written)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "known_at" and "ISO 8601" in answer.json()["detail"]
    answer = api.client.get("/api/v1/audit/access-log", params={"to": written},
                            headers=api.as_("auditor"))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "to" and "ISO 8601" in answer.json()["detail"]


def test_a_command_the_cases_state_refuses_is_409_and_records_nothing(api):
    before = api.services.head()
    answer = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/issue_bill",
                             json={"at": earlier(1)}, headers=api.as_("clerk"))
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"] == "refused"
    again = api.client.post(f"/api/v1/{HOME}/cases", json=open_body(HOME_CASE),
                            headers=api.as_("clerk"))
    assert again.status_code == 409 and "already exists" in again.json()["detail"]
    assert api.services.head() == before


def test_another_villages_case_is_404_with_the_same_body_as_a_missing_one(api):
    # the belleville clerk asks for mazomanie's case, and for one nobody has
    theirs = api.client.get(f"/api/v1/{OTHER}/cases/{OTHER_CASE}", headers=api.as_("clerk"))
    missing = api.client.get(f"/api/v1/{OTHER}/cases/MZ-NONE", headers=api.as_("clerk"))
    own_missing = api.client.get(f"/api/v1/{HOME}/cases/BV-NONE", headers=api.as_("clerk"))
    assert theirs.status_code == missing.status_code == own_missing.status_code == 404
    assert theirs.json() == {**missing.json(),
                             "detail": missing.json()["detail"].replace("MZ-NONE", OTHER_CASE)}
    assert theirs.json()["detail"] == f"no case '{OTHER_CASE}' in {OTHER}"
    for suffix in ("/history", "/record_inspection"):
        method = "POST" if suffix == "/record_inspection" else "GET"
        a = api.client.request(method, f"/api/v1/{OTHER}/cases/{OTHER_CASE}{suffix}", json={},
                               headers=api.as_("inspector"))
        b = api.client.request(method, f"/api/v1/{OTHER}/cases/MZ-NONE{suffix}", json={},
                               headers=api.as_("inspector"))
        assert a.status_code == b.status_code == 404
        assert a.json()["detail"].replace(OTHER_CASE, "?") == b.json()["detail"].replace(
            "MZ-NONE", "?")


def test_a_case_reads_in_local_time_with_utc_beside(api):
    body = _case(api).json()
    assert body["case_ref"] == HOME_CASE and body["status"]
    assert body["observed_at"][-6:] in ("-06:00", "-05:00")
    assert body["observed_at_utc"].endswith("+00:00")
    assert all(e["recorded_at_utc"].endswith("+00:00") for e in body["events"])


def test_a_case_as_of_before_it_opened_and_as_known_before_a_fact(api):
    assert _case(api, as_of=earlier(10)).json()["exists"] is False
    recorded = dt.datetime.now(dt.timezone.utc)
    api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection",
                    json={"at": earlier(2), "findings": "still there"},
                    headers=api.as_("inspector"))
    now = _case(api).json()
    known = _case(api, known_at=recorded.isoformat()).json()
    assert len(now["events"]) == len(known["events"]) + 1
    bad = _case(api, as_of="last tuesday")
    assert bad.status_code == 422 and bad.json()["field"] == "as_of"


def test_cases_list_filters_and_pages_from_the_summaries_view(api):
    for n in (2, 3):
        done = api.client.post(f"/api/v1/{HOME}/cases", json=open_body(f"BV-API-00{n}"),
                               headers=api.as_("inspector"))
        assert done.status_code == 201, done.text
    first = api.client.get(f"/api/v1/{HOME}/cases", params={"limit": 2},
                           headers=api.as_("attorney")).json()
    assert [c["case_ref"] for c in first["cases"]] == ["BV-API-001", "BV-API-002"]
    assert first["next_offset"] == 2 and first["total"] == 3
    rest = api.client.get(f"/api/v1/{HOME}/cases", params={"limit": 2, "offset": 2},
                          headers=api.as_("attorney")).json()
    assert [c["case_ref"] for c in rest["cases"]] == ["BV-API-003"]
    assert rest["next_offset"] is None and rest["total"] == 3
    none = api.client.get(f"/api/v1/{HOME}/cases", params={"owner": "nobody such"},
                          headers=api.as_("attorney")).json()
    assert none["cases"] == [] and none["total"] == 0
    assert all(c["municipality"] == HOME for c in first["cases"] + rest["cases"])
    unknown = api.client.get(f"/api/v1/{HOME}/cases", params={"status": "bogus"},
                             headers=api.as_("attorney"))
    assert unknown.status_code == 422 and unknown.json()["field"] == "status", unknown.text
    assert "billed" in unknown.json()["detail"]  # names the statuses there are


def test_a_body_over_the_limit_is_413_and_records_nothing(tmp_path):
    api = with_cases(make_api(f"sqlite:///{tmp_path / 'a.sqlite3'}", max_body_bytes=2048))
    try:
        before = api.services.head()
        answer = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection",
                                 json={"at": earlier(1), "findings": "x" * 3000},
                                 headers=api.as_("inspector"))
        assert answer.status_code == 413, answer.text
        assert "2,048 bytes" in answer.json()["detail"]
        assert api.services.head() == before
    finally:
        api.services.close()


def test_a_body_that_is_not_a_json_object_is_422(api):
    for raw in (b"[1, 2]", b"not json", b"", b'{"at": NaN}', b"\xff\xfe"):
        answer = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection",
                                 content=raw, headers=api.as_("inspector"))
        assert answer.status_code == 422, (raw, answer.text)


def test_a_body_giving_a_field_twice_is_422_naming_it_and_records_nothing(api):
    before = api.services.head()
    answer = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection",
                             content=f'{{"at": "{earlier(1)}", "findings": "clear", '
                                     '"findings": "blocked"}',
                             headers={**api.as_("inspector"), "Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert "the field 'findings' is given twice" in answer.json()["detail"]
    assert api.services.head() == before


def test_a_mistyped_command_or_route_is_404_naming_it_and_what_exists(api):
    typo = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/serve_notic",
                           json={"at": earlier(1)}, headers=api.as_("inspector"))
    assert typo.status_code == 404
    detail = typo.json()["detail"]
    assert "no command 'serve_notic' on a case" in detail
    assert "serve_notice" in detail and "record_inspection" in detail
    elsewhere = api.client.get(f"/api/v1/{HOME}/worklists", headers=api.as_("clerk"))
    assert elsewhere.status_code == 404
    assert elsewhere.json()["detail"].startswith(f"no route GET /api/v1/{HOME}/worklists;")


def test_a_method_the_route_does_not_have_is_405_naming_the_one_it_has(api):
    wrong = api.client.get(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection",
                           headers=api.as_("inspector"))
    assert wrong.status_code == 405
    assert wrong.json() == {
        "error": "method_not_allowed", "field": None,
        "detail": f"GET is not allowed on /api/v1/{HOME}/cases/{HOME_CASE}/record_inspection; "
                  "use POST"}
    assert wrong.headers["allow"] == "POST"


@pytest.mark.parametrize("owner, position", [("\x00Owner", 1), ("Ann\x01", 4)])
def test_an_owner_filter_with_a_control_character_is_422_not_every_case(api, owner, position):
    listed = api.client.get(f"/api/v1/{HOME}/cases", params={"owner": owner},
                            headers=api.as_("clerk"))
    assert listed.status_code == 422, listed.text
    assert listed.json() == {
        "error": "invalid", "field": "owner",
        "detail": f"query parameter owner: character U+{ord(owner[position - 1]):04X} at "
                  f"position {position} is not allowed here (one line of printable text)"}


def test_a_refusal_names_its_times_in_the_villages_time_not_utc(api):
    """The cure period a too-early abatement is refused under runs until a time the clerk
    reads as Belleville's (``2026-03-07 10:00 CST``), never as ISO UTC."""
    served = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=2)
    notice = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/serve_notice",
                             json={"at": served.isoformat(), "method": "personal",
                                   "served_on": "Ann Owner"}, headers=api.as_("inspector"))
    assert notice.status_code == 200, notice.text
    refused = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_abatement",
                              json={"at": earlier(1), "costs": [{"item": "crew",
                                                                 "amount": "150.00"}]},
                              headers=api.as_("inspector"))
    assert refused.status_code == 409, refused.text
    cure_ends = (served + dt.timedelta(hours=72)).astimezone(ZoneInfo("America/Chicago"))
    detail = refused.json()["detail"]
    assert f"runs until {cure_ends:%Y-%m-%d %H:%M %Z} (" in detail, detail
    assert "+00:00" not in detail


def test_a_cases_events_come_a_page_at_a_time_in_its_history_and_its_show(api):
    for n in range(4):
        done = api.client.post(f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection",
                               json={"at": earlier(2 - n / 4), "findings": f"visit {n}"},
                               headers=api.as_("inspector"))
        assert done.status_code == 200, done.text
    path = f"/api/v1/{HOME}/cases/{HOME_CASE}"
    whole = api.client.get(f"{path}/history", headers=api.as_("auditor")).json()
    assert (whole["total"], whole["limit"], whole["offset"], whole["next_offset"]) == (
        5, 100, 0, None)
    walked, offset = [], 0
    while offset is not None:
        page = api.client.get(f"{path}/history", params={"limit": 2, "offset": offset},
                              headers=api.as_("auditor")).json()
        assert len(page["events"]) <= 2 and page["total"] == 5
        walked += page["events"]
        offset = page["next_offset"]
    assert walked == whole["events"]
    shown = _case(api, limit=2, offset=4).json()
    # the history adds each event's rule; the case names it once
    assert shown["events"] == [{k: v for k, v in e.items() if k not in ("rule", "rule_version")}
                               for e in whole["events"][4:]]
    assert shown["events_page"] == {"total": 5, "limit": 2, "offset": 4, "next_offset": None}
    assert shown["status"] == _case(api).json()["status"]  # the case itself, whole
    past = api.client.get(f"{path}/history", params={"offset": 9}, headers=api.as_("auditor"))
    assert past.json()["events"] == [] and past.json()["next_offset"] is None


@pytest.mark.parametrize(("params", "name"), [({"limit": 0}, "limit"), ({"limit": 501}, "limit"),
                                              ({"offset": -1}, "offset")])
def test_a_page_of_events_out_of_bounds_is_422_naming_the_parameter(api, params, name):
    for path in ("", "/history"):
        answer = api.client.get(f"/api/v1/{HOME}/cases/{HOME_CASE}{path}", params=params,
                                headers=api.as_("auditor"))
        assert answer.status_code == 422, answer.text
        assert name in answer.text

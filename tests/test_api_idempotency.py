"""Idempotency-Key over HTTP: a retry records nothing twice and gets the first answer; a key
reused for another request is 422; racing requests, two workers, a process that died
between recording and answering, and the 24 hours a key is kept."""

from __future__ import annotations

import datetime as dt
import json
import threading

import pytest
import sqlalchemy as sa

from api.idempotency import fingerprint
from tests.api_kit import (
    BACKENDS,
    HOME,
    HOME_CASE,
    OTHER,
    another_worker,
    api_on,
    earlier,
    open_body,
    with_cases,
)

INSPECT = f"/api/v1/{HOME}/cases/{HOME_CASE}/record_inspection"


@pytest.fixture(params=BACKENDS)
def api(request, tmp_path):
    api = api_on(request, tmp_path, {"ABATE_API_IDEMPOTENCY_WAIT_SECONDS": "1"})
    yield with_cases(api)
    api.services.close()


BUSINESS_TIME = earlier(2)


def _body(findings: str = "couch on the curb") -> bytes:
    return json.dumps({"at": BUSINESS_TIME, "findings": findings}).encode()


def _inspect(api, key, findings="couch on the curb", role="inspector", client=None,
             token=None):
    auth = {"Authorization": f"Bearer {token}"} if token else api.as_(role)
    headers = {**auth, "Content-Type": "application/json",
               **({"Idempotency-Key": key} if key else {})}
    return (client or api.client).post(INSPECT, headers=headers, content=_body(findings))


def _inspections(api) -> int:
    events = api.client.get(f"/api/v1/{HOME}/cases/{HOME_CASE}/history",
                            headers=api.as_("auditor")).json()["events"]
    return sum(e["type"] == "InspectionRecorded" for e in events)


def test_a_retry_with_the_same_key_records_once_and_gets_the_first_answer(api):
    first = _inspect(api, "key-1")
    assert first.status_code == 200, first.text
    head = api.services.head()
    again = _inspect(api, "key-1")
    assert again.status_code == first.status_code
    assert again.content == first.content
    assert again.headers["etag"] == first.headers["etag"]
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert api.services.head() == head and _inspections(api) == 1
    # without a key, the same body is a new inspection
    assert _inspect(api, None).status_code == 200 and _inspections(api) == 2


def test_the_same_key_with_another_body_or_route_is_422_and_records_nothing(api):
    assert _inspect(api, "key-2").status_code == 200
    head = api.services.head()
    other = _inspect(api, "key-2", findings="a different finding")
    assert other.status_code == 422, other.text
    assert other.json()["field"] == "Idempotency-Key"
    assert other.json()["error"] == "idempotency_key_reused"
    elsewhere = api.client.post(f"/api/v1/{HOME}/cases", json=open_body("BV-API-009"),
                                headers={**api.as_("inspector"), "Idempotency-Key": "key-2"})
    assert elsewhere.status_code == 422, elsewhere.text
    assert api.services.head() == head and _inspections(api) == 1


def test_keys_are_per_user(api):
    colleague = api.add_user("second.inspector", "inspector", HOME)
    assert _inspect(api, "shared").status_code == 200
    theirs = _inspect(api, "shared", token=colleague)
    assert theirs.status_code == 200 and "idempotent-replayed" not in theirs.headers
    assert _inspections(api) == 2
    events = api.client.get(f"/api/v1/{HOME}/cases/{HOME_CASE}/history",
                            headers=api.as_("auditor")).json()["events"]
    assert {e["actor"] for e in events if e["type"] == "InspectionRecorded"} == {
        "inspector.belleville", "second.inspector"}


def test_an_answer_that_recorded_nothing_frees_the_key_for_the_corrected_request(api):
    bad = api.client.post(INSPECT, json={"at": BUSINESS_TIME},  # findings missing
                          headers={**api.as_("inspector"), "Idempotency-Key": "fix-me"})
    assert bad.status_code == 422 and bad.json()["field"] == "findings"
    fixed = _inspect(api, "fix-me")
    assert fixed.status_code == 200, fixed.text
    assert _inspections(api) == 1


@pytest.mark.parametrize("key", ["", "with space", "x" * 256, 'quote"d'])
def test_a_malformed_key_is_422_naming_the_header(api, key):
    answer = api.client.post(INSPECT, json={"at": BUSINESS_TIME, "findings": "x"},
                             headers={**api.as_("inspector"), "Idempotency-Key": key})
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "Idempotency-Key"
    assert _inspections(api) == 0


def test_racing_requests_with_one_key_record_once(api):
    """Eight threads send the same request with the same key, against one app and against
    a second worker on the same database: one inspection, and every answer is the first."""
    second = another_worker(api)
    try:
        answers = []
        start = threading.Barrier(8)

        def send(client):
            start.wait()
            answers.append(_inspect(api, "raced", client=client))

        threads = [threading.Thread(target=send, args=(c,))
                   for c in [api.client, second.client] * 4]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(answers) == 8
        assert {a.status_code for a in answers} == {200}, [a.text for a in answers]
        assert len({a.content for a in answers}) == 1
        assert sum("idempotent-replayed" not in a.headers for a in answers) == 1
        assert answers[0].json()["outcome"]["events_recorded"] >= 1
        assert _inspections(api) == 1
    finally:
        second.services.close()


def _keys_table(api) -> sa.Table:
    return api.services.idempotency.table


def test_a_retry_after_the_first_process_died_before_answering_records_nothing_twice(api):
    """The first request recorded, then its process died before keeping the answer: the
    claim stays in flight. A retry waits for it, then takes over; the case knows the
    command (its id comes from the key), so nothing is recorded twice."""
    first = _inspect(api, "crash-after-recording")
    assert first.status_code == 200
    table = _keys_table(api)
    with api.services.records.begin() as conn:  # as the dead process left it
        conn.execute(table.update().values(status=None, headers=None, body=None))
    head = api.services.head()
    retry = _inspect(api, "crash-after-recording")
    assert retry.status_code == 200, retry.text
    assert retry.json()["outcome"]["skipped_duplicates"] == 1
    assert retry.json()["outcome"]["events_recorded"] == 0
    assert api.services.head() == head and _inspections(api) == 1
    again = _inspect(api, "crash-after-recording")  # and that answer is kept from now on
    assert again.content == retry.content and again.headers["idempotent-replayed"] == "true"


def test_a_retry_after_the_first_process_died_before_recording_records_once(api):
    now = api.services.clock()
    with api.services.records.begin() as conn:
        conn.execute(_keys_table(api).insert().values(
            user_name="inspector.belleville", key="crash-before-recording",
            fingerprint=fingerprint({"method": "POST", "path": INSPECT}, _body()),
            created_at=now.isoformat(), claimed_at=now.isoformat(), nonce="dead"))
    retry = _inspect(api, "crash-before-recording")
    assert retry.status_code == 200, retry.text
    assert retry.json()["outcome"]["events_recorded"] >= 1
    assert _inspections(api) == 1


def test_keys_are_kept_24_hours_then_purged(api):
    assert _inspect(api, "old-key").status_code == 200
    real = api.services.clock
    try:
        api.services.clock = lambda: real() + dt.timedelta(hours=23)
        assert _inspect(api, "old-key", findings="other").status_code == 422
        api.services.clock = lambda: real() + dt.timedelta(hours=25)
        reopened = api.client.post(f"/api/v1/{HOME}/cases", json=open_body("BV-API-024"),
                                   headers={**api.as_("clerk"), "Idempotency-Key": "old-key"})
        assert reopened.status_code == 201, reopened.text
    finally:
        api.services.clock = real
    table = _keys_table(api)
    with api.services.records.connect() as conn:
        owners = conn.execute(sa.select(table.c.user_name).where(table.c.key == "old-key")).all()
    assert owners == [("clerk.belleville",)]  # the inspector's 25-hour-old key is gone


def test_opening_a_case_twice_with_one_key_opens_it_once(api):
    headers = {**api.as_("clerk"), "Idempotency-Key": "open-once"}
    body = open_body("BV-API-010")
    first = api.client.post(f"/api/v1/{HOME}/cases", json=body, headers=headers)
    again = api.client.post(f"/api/v1/{HOME}/cases", json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.content == first.content


def test_without_a_valid_token_the_key_changes_nothing(api):
    answer = api.client.post(INSPECT, json={"at": BUSINESS_TIME, "findings": "x"},
                             headers={"Idempotency-Key": "k", "Authorization": "Bearer abate_no"})
    assert answer.status_code == 401
    assert api.client.post(f"/api/v1/{OTHER}/cases", json=open_body("MZ-9", OTHER),
                           headers={**api.as_("clerk"), "Idempotency-Key": "k"}
                           ).status_code == 404

"""ETag, If-Match and If-None-Match over HTTP: every answer about a case names its version;
a write for a version the case is no longer at is 412 with the current version; a writer
that loses a race is 409; neither records anything. And 413 on every kind of route."""

from __future__ import annotations

import pytest

from tests.api_kit import (
    BACKENDS,
    HOME,
    HOME_CASE,
    another_worker,
    api_on,
    earlier,
    make_api,
    with_cases,
)

CASE = f"/api/v1/{HOME}/cases/{HOME_CASE}"


@pytest.fixture(params=BACKENDS)
def api(request, tmp_path):
    api = api_on(request, tmp_path)
    yield with_cases(api)
    api.services.close()


def _inspect(api, client=None, **headers):
    return (client or api.client).post(f"{CASE}/record_inspection",
                                       json={"at": earlier(1), "findings": "still there"},
                                       headers={**api.as_("inspector"), **headers})


def test_every_answer_about_a_case_carries_its_version(api):
    read = api.client.get(CASE, headers=api.as_("clerk"))
    history = api.client.get(f"{CASE}/history", headers=api.as_("clerk"))
    events = history.json()["events"]
    assert read.headers["etag"] == history.headers["etag"] == f'"{len(events)}"'
    done = _inspect(api)
    assert done.headers["etag"] == f'"{len(events) + 1}"'
    assert done.json()["case"]["events"][-1]["position"] == len(events) + 1
    as_of = api.client.get(CASE, params={"as_of": earlier(10)}, headers=api.as_("clerk"))
    assert as_of.json()["exists"] is False and as_of.headers["etag"] == done.headers["etag"]


def test_if_none_match_with_the_current_version_is_304(api):
    read = api.client.get(CASE, headers=api.as_("clerk"))
    same = api.client.get(CASE, headers={**api.as_("clerk"), "If-None-Match": read.headers["etag"]})
    assert same.status_code == 304 and same.content == b""
    assert same.headers["etag"] == read.headers["etag"]
    _inspect(api)
    changed = api.client.get(CASE, headers={**api.as_("clerk"),
                                            "If-None-Match": read.headers["etag"]})
    assert changed.status_code == 200 and changed.headers["etag"] != read.headers["etag"]


def test_a_write_with_a_stale_if_match_is_412_with_the_current_version(api):
    etag = api.client.get(CASE, headers=api.as_("clerk")).headers["etag"]
    assert _inspect(api, **{"If-Match": etag}).status_code == 200  # still at that version
    head = api.services.head()
    stale = _inspect(api, **{"If-Match": etag})
    assert stale.status_code == 412, stale.text
    current = int(etag.strip('"')) + 1
    assert stale.json()["version"] == current and stale.json()["error"] == "precondition_failed"
    assert stale.headers["etag"] == f'"{current}"'
    assert api.services.head() == head
    assert _inspect(api, **{"If-Match": "*"}).status_code == 200


@pytest.mark.parametrize("value", ["7", 'W/"7"', '"1", "2"', '"x"'])
def test_an_if_match_that_is_not_one_strong_etag_is_422(api, value):
    answer = _inspect(api, **{"If-Match": value})
    assert answer.status_code == 422 and answer.json()["field"] == "If-Match", answer.text


def test_a_writer_that_loses_a_race_is_409_and_records_nothing(api):
    """Two workers write the same case: the first has loaded the case when the second
    records on it; the first's save then finds the version taken (409)."""
    second = another_worker(api)
    store = api.services.store
    real_save = store.save_atomically
    overtaken = []

    def save_after_the_other_writer(*cases):
        overtaken.append(_inspect(api, client=second.client))
        return real_save(*cases)

    store.save_atomically = save_after_the_other_writer
    try:
        before = len(api.client.get(f"{CASE}/history", headers=api.as_("clerk")).json()["events"])
        lost = _inspect(api)
    finally:
        store.save_atomically = real_save
        second.services.close()
    assert overtaken[0].status_code == 200
    assert lost.status_code == 409, lost.text
    assert lost.json()["error"] == "conflict" and "another writer" in lost.json()["detail"]
    events = api.client.get(f"{CASE}/history", headers=api.as_("clerk")).json()["events"]
    assert len(events) == before + 1  # the winner's inspection only


def test_a_body_over_the_limit_is_413_on_every_kind_of_route(tmp_path):
    api = with_cases(make_api(f"sqlite:///{tmp_path / 'a.sqlite3'}", max_body_bytes=2048))
    try:
        head = api.services.head()
        big = {"at": earlier(1), "findings": "x" * 3000}
        for path, role in ((f"{CASE}/record_inspection", "inspector"),
                           (f"/api/v1/{HOME}/cases", "clerk"),
                           ("/api/v1/admin/users", "admin")):
            for extra in ({}, {"Idempotency-Key": "big"}):
                answer = api.client.post(path, json=big, headers={**api.as_(role), **extra})
                assert answer.status_code == 413, (path, extra, answer.text)
                assert "2,048 bytes" in answer.json()["detail"]

        def chunks():  # no Content-Length: the limit holds as the body streams
            for _ in range(8):
                yield b"x" * 512

        for path, role in ((f"{CASE}/record_inspection", "inspector"),
                           ("/api/v1/admin/users", "admin")):
            streamed = api.client.post(path, content=chunks(), headers={
                **api.as_(role), "Content-Type": "application/json"})
            assert streamed.status_code == 413, (path, streamed.text)
        assert api.services.head() == head
    finally:
        api.services.close()

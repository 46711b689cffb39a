"""``POST journal`` over HTTP: JSON lines recorded all or nothing as the signed-in user;
the first line at fault named (line and field) with nothing recorded: bad input 422, a line
with another actor or a command the role may not run 403, another municipality 422; 413
over the limit; another village's journal 404 as a missing one."""

from __future__ import annotations

import json

import pytest

from tests.api_kit import HOME, OTHER, earlier, make_api, open_body

JOURNAL = f"/api/v1/{HOME}/journal"
JOURNAL_LIMIT = {"ABATE_API_MAX_JOURNAL_BYTES": "8192"}  # every other body: 4096


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(request, tmp_path):
    if request.param == "sqlite":
        api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}", JOURNAL_LIMIT,
                       max_body_bytes=4096)
    else:
        from tests.conftest import _fresh_postgres_schema

        url, extra = _fresh_postgres_schema(request.getfixturevalue("postgres_database"))
        api = make_api(url, {**extra, **JOURNAL_LIMIT}, max_body_bytes=4096)
    yield api
    api.services.close()


def journal(*lines: dict) -> bytes:
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode("utf-8")


def opened(case_ref: str, days_ago: float = 3) -> dict:
    return {"command": "open_case", **open_body(case_ref, days_ago=days_ago)}


def inspected(case_ref: str, days_ago: float = 2, **fields) -> dict:
    return {"command": "record_inspection", "case_ref": case_ref, "at": earlier(days_ago),
            "findings": "couch still on the curb", **fields}


def post(api, body: bytes, role: str = "inspector", village: str = HOME):
    return api.client.post(f"/api/v1/{village}/journal", content=body,
                           headers={**api.as_(role), "Content-Type": "application/x-ndjson"})


def exists(api, case_ref: str) -> bool:
    return api.client.get(f"/api/v1/{HOME}/cases/{case_ref}",
                          headers=api.as_("auditor")).status_code == 200


def test_a_journal_is_recorded_as_the_signed_in_user(api):
    body = journal(opened("BV-J1"), inspected("BV-J1"),
                   {**inspected("BV-J1", 1), "municipality": HOME, "actor": "inspector.belleville",
                    "id": "walk-2"})
    done = post(api, body + b"\n# a comment and a blank line are skipped\n")
    assert done.status_code == 200, done.text
    assert done.json()["outcome"]["applied"] == 3
    assert done.json()["position"] == api.services.head()
    history = api.client.get(f"/api/v1/{HOME}/cases/BV-J1/history",
                             headers=api.as_("auditor")).json()["events"]
    assert {e["actor"] for e in history} == {"inspector.belleville"}
    again = post(api, journal({**inspected("BV-J1", 1), "id": "walk-2"}))
    assert again.json()["outcome"]["skipped_duplicates"] == 1  # a line's id records it once


def _refused(api, body: bytes, status: int, line: int, field: str | None, role="inspector"):
    head = api.services.head()
    answer = post(api, body, role)
    assert answer.status_code == status, answer.text
    error = answer.json()
    assert error["line"] == line and error["field"] == field, error
    assert error["detail"].startswith(f"line {line}: ") and "nothing was recorded" in error["detail"]
    assert api.services.head() == head  # all or nothing
    return error


def test_a_bad_line_3_records_nothing_and_names_line_3(api):
    body = journal(opened("BV-J2"), inspected("BV-J2"),
                   {"command": "serve_notice", "case_ref": "BV-J2", "at": earlier(1),
                    "method": "personal"})
    error = _refused(api, body, 422, 3, "served_on")
    assert "Field required" in error["detail"]
    assert not exists(api, "BV-J2")


def test_unreadable_lines_are_named(api):
    _refused(api, journal(opened("BV-J3")) + b"{not json\n", 422, 2, None)
    _refused(api, journal(opened("BV-J3")) + "{\"caf\xe9\": 1}\n".encode("latin-1"), 422, 2, None)
    _refused(api, journal(opened("BV-J3"), {**inspected("BV-J3"), "colour": "red"}), 422, 2,
             "colour")


def test_the_case_refusing_a_line_records_nothing(api):
    body = journal(opened("BV-J4"), {"command": "record_abatement", "case_ref": "BV-J4",
                                     "at": earlier(1), "costs": [{"item": "crew",
                                                                  "amount": "10.00"}]})
    _refused(api, body, 422, 2, None)
    assert not exists(api, "BV-J4")


def test_a_line_naming_another_actor_is_refused(api):
    error = _refused(api, journal(opened("BV-J5"), {**inspected("BV-J5"), "actor": "the mayor"}),
                     403, 2, "actor")
    assert "signed-in user" in error["detail"]


def test_a_command_the_role_may_not_run_is_refused_naming_its_line(api):
    bill = {"command": "issue_bill", "case_ref": "BV-J6", "at": earlier(1)}
    error = _refused(api, journal(opened("BV-J6"), inspected("BV-J6"), bill), 403, 3, "command")
    assert "inspector may not run issue_bill" in error["detail"]
    _refused(api, journal({"command": "advance_clock", "at": earlier(1)}), 403, 1, "command",
             role="clerk")
    _refused(api, journal(opened("BV-J6")), 403, 1, "command", role="attorney")


def test_an_unknown_command_is_bad_input_not_a_matter_of_the_role(api):
    error = _refused(api, journal(opened("BV-J8"), {"command": "frob", "case_ref": "BV-J8",
                                                    "at": earlier(1)}), 422, 2, "command")
    assert "frob" in error["detail"] and "forbidden" != error["error"]
    assert not exists(api, "BV-J8")


def test_every_line_is_of_the_paths_municipality(api):
    other = {**opened("MZ-J7"), "municipality": OTHER}
    _refused(api, journal(opened("BV-J7"), other), 422, 2, "municipality")


def test_over_the_journal_limit_is_413_and_records_nothing(api):
    head = api.services.head()
    lines = [inspected("BV-J8", 1, findings="x" * 500, id=f"n{i}") for i in range(20)]
    body = journal(opened("BV-J8"), *lines)
    assert len(body) > 8192
    answer = post(api, body)
    assert answer.status_code == 413, answer.text
    assert "8,192 bytes (ABATE_API_MAX_JOURNAL_BYTES)" in answer.json()["detail"]
    # Sent without a Content-Length (chunked): refused as it passes the limit.
    streamed = api.client.post(JOURNAL, content=iter([body[:4000], body[4000:]]),
                               headers={**api.as_("inspector"),
                                        "Content-Type": "application/x-ndjson"})
    assert streamed.status_code == 413, streamed.text
    assert "ABATE_API_MAX_JOURNAL_BYTES" in streamed.json()["detail"]
    assert api.services.head() == head


def test_a_journal_may_be_larger_than_other_bodies(api):
    lines = [inspected("BV-J10", 1, findings="x" * 500, id=f"n{i}") for i in range(8)]
    body = journal(opened("BV-J10"), *lines)
    assert 4096 < len(body) < 8192
    done = post(api, body)
    assert done.status_code == 200, done.text
    assert done.json()["outcome"]["applied"] == 9
    too_big = api.client.post(f"/api/v1/{HOME}/cases", content=body,
                              headers={**api.as_("inspector"),
                                       "Content-Type": "application/json"})
    assert too_big.status_code == 413
    assert "4,096 bytes (ABATE_API_MAX_BODY_BYTES)" in too_big.json()["detail"]


def test_another_village_and_roles_without_journals(api):
    body = journal({**opened("MZ-J9"), "municipality": OTHER})
    assert post(api, body, village=OTHER).status_code == 404
    assert post(api, body, village="nowhere").status_code == 404
    assert post(api, journal(opened("BV-J9")), role="auditor").status_code == 403
    assert post(api, journal(opened("BV-J9")), role="admin").status_code == 403
    assert not exists(api, "BV-J9")


def test_a_journal_past_the_in_memory_spool_is_read_from_disk(tmp_path):
    from api.body import SPOOL_IN_MEMORY_BYTES

    api = make_api(f"sqlite:///{tmp_path / 'big.sqlite3'}",
                   {"ABATE_API_MAX_JOURNAL_BYTES": str(4 * SPOOL_IN_MEMORY_BYTES)})
    try:
        padding = b"# " + b"x" * 1000 + b"\n"
        body = padding * (SPOOL_IN_MEMORY_BYTES // len(padding) + 10) + journal(
            opened("BV-J11"), inspected("BV-J11"))
        assert len(body) > SPOOL_IN_MEMORY_BYTES
        done = post(api, body)
        assert done.status_code == 200, done.text
        assert done.json()["outcome"]["applied"] == 2 and exists(api, "BV-J11")
    finally:
        api.services.close()

"""Users over HTTP, as an admin: add (token once, then it signs in), list (no token, no
hash), revoke (the token is refused); the validation of `abate users add`; an admin's
reach ends at its municipalities; every other role is refused."""

from __future__ import annotations

import json
import sqlite3

import pytest

from api.accounts import ROLES
from tests.abate_command import run_abate
from tests.api_kit import HOME, OTHER, make_api

USERS = "/api/v1/admin/users"


@pytest.fixture
def api(tmp_path):
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    yield api
    api.services.close()


def _add(api, key=None, **body):
    body = {"name": "pat.clerk", "role": "clerk", "municipalities": [HOME], **body}
    headers = {**api.as_("admin"), **({"Idempotency-Key": key} if key else {})}
    return api.client.post(USERS, json=body, headers=headers)


def test_an_admin_adds_a_user_whose_token_then_works_and_is_kept_only_as_a_hash(api, tmp_path):
    added = _add(api, expires_days=30)
    assert added.status_code == 201, added.text
    shown = added.json()
    token = shown["token"]
    assert shown["name"] == "pat.clerk" and shown["municipalities"] == [HOME]
    assert shown["expires_at_utc"] and shown["revoked_at"] is None
    mine = {"Authorization": f"Bearer {token}"}
    assert api.client.get(f"/api/v1/{HOME}/cases", headers=mine).status_code == 200
    dump = "\n".join(sqlite3.connect(tmp_path / "abate.sqlite3").iterdump())
    assert token not in dump and token.removeprefix("abate_") not in dump
    listed = api.client.get(USERS, headers=api.as_("admin"))
    assert listed.status_code == 200
    assert token not in listed.text and "hash" not in listed.text
    assert "pat.clerk" in [u["name"] for u in listed.json()["users"]]


def test_a_replayed_add_answers_the_user_without_the_token(api, tmp_path):
    first = _add(api, key="add-pat")
    again = _add(api, key="add-pat")
    assert first.status_code == again.status_code == 201
    assert first.json()["token"] and again.json()["token"] is None
    assert {k: v for k, v in again.json().items() if k != "token"} == {
        k: v for k, v in first.json().items() if k != "token"}
    dump = "\n".join(sqlite3.connect(tmp_path / "abate.sqlite3").iterdump())
    assert first.json()["token"].removeprefix("abate_") not in dump


def test_revoking_over_http_refuses_the_token(api):
    token = _add(api).json()["token"]
    revoked = api.client.post(f"{USERS}/pat.clerk/revoke", headers=api.as_("admin"))
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    assert api.client.get(f"/api/v1/{HOME}/cases",
                          headers={"Authorization": f"Bearer {token}"}).status_code == 401


@pytest.mark.parametrize("body, field, words", [
    ({"role": "mayor"}, "role", "inspector"),
    ({"municipalities": ["gotham"]}, "municipalities", "unknown municipality 'gotham'"),
    ({"municipalities": []}, "municipalities", "at least 1"),
    ({"name": "pat\nclerk"}, "name", "U+000A"),
    ({"name": "p" * 101}, "name", "at most 100"),
    ({"name": "pat smith"}, "name", "a space at position 4 is not allowed in a user name"),
    ({"name": "pat!"}, "name", "'!' (U+0021) at position 4"),
    ({"name": ".."}, "name", "starts with a letter or digit"),
    ({"expires_days": 0}, "expires_days", "greater than or equal to 1"),
    ({"expires_days": 10**9}, "expires_days", "less than or equal to 3650"),
    ({"password": "x"}, "password", "Extra inputs"),
])
def test_the_same_validation_as_users_add_names_the_field(api, body, field, words):
    answer = _add(api, **body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field and words in answer.json()["detail"], answer.text


def test_users_add_on_the_command_line_refuses_the_same_values(tmp_path):
    url = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    refused = run_abate("users", "add", "--name", "pat", "--role", "clerk", "--municipality",
                        HOME, "--expires-days", "100000", database_url=url)
    assert refused.returncode == 2, refused.stderr
    assert "--expires-days: at most 3,650, got 100000" in refused.stderr
    assert "Traceback" not in refused.stderr
    too_long = run_abate("users", "add", "--name", "p" * 101, "--role", "clerk",
                         "--municipality", HOME, database_url=url)
    assert too_long.returncode == 2, too_long.stderr
    assert "--name: at most 100 characters (this has 101)" in too_long.stderr
    assert "String should" not in too_long.stderr and "Traceback" not in too_long.stderr
    listed = run_abate("users", "list", database_url=url)
    assert listed.returncode == 0 and json.loads(listed.stdout)["users"] == [], listed.stdout


def test_a_name_in_use_is_409(api):
    assert _add(api).status_code == 201
    again = _add(api, role="inspector")
    assert again.status_code == 409 and "exists already" in again.json()["detail"]


def test_an_admin_reaches_only_the_users_of_its_municipalities(api):
    outside = _add(api, municipalities=[HOME, OTHER])
    assert outside.status_code == 403 and OTHER in outside.json()["detail"]
    names = [u["name"] for u in api.client.get(USERS, headers=api.as_("admin")).json()["users"]]
    assert "clerk.belleville" in names and "clerk.mazomanie" not in names
    theirs = api.client.post(f"{USERS}/clerk.mazomanie/revoke", headers=api.as_("admin"))
    nobody = api.client.post(f"{USERS}/nobody/revoke", headers=api.as_("admin"))
    assert theirs.status_code == nobody.status_code == 404
    assert theirs.json()["detail"].replace("clerk.mazomanie", "?") == \
        nobody.json()["detail"].replace("nobody", "?")
    assert api.client.get(f"/api/v1/{OTHER}/cases",
                          headers=api.as_("clerk", OTHER)).status_code == 200  # not revoked


@pytest.mark.parametrize("role", [r for r in ROLES if r != "admin"])
def test_every_other_role_is_refused(api, role):
    for method, path in (("POST", USERS), ("GET", USERS),
                         ("POST", f"{USERS}/clerk.belleville/revoke")):
        answer = api.client.request(method, path, headers=api.as_(role),
                                    json={"name": "x", "role": "admin",
                                          "municipalities": [HOME]} if path == USERS else None)
        assert answer.status_code == 403, (method, path, answer.text)
    names = [u["name"] for u in api.client.get(USERS, headers=api.as_("admin")).json()["users"]]
    assert "x" not in names


def test_adding_a_name_in_use_is_409_and_says_to_rotate(api):
    assert _add(api).status_code == 201
    again = _add(api)
    assert again.status_code == 409 and again.json()["field"] == "name"
    assert "POST /api/v1/admin/users/pat.clerk/rotate" in again.json()["detail"]


def test_rotating_shows_a_new_token_once_and_refuses_the_old_one(api, tmp_path):
    old = _add(api).json()["token"]
    headers = {**api.as_("admin"), "Idempotency-Key": "rotate-pat"}
    rotated = api.client.post(f"{USERS}/pat.clerk/rotate", json={"expires_days": 7},
                              headers=headers)
    assert rotated.status_code == 200, rotated.text
    shown = rotated.json()
    new = shown["token"]
    assert new and new != old and (shown["name"], shown["role"]) == ("pat.clerk", "clerk")
    assert api.client.get(f"/api/v1/{HOME}/cases",
                          headers={"Authorization": f"Bearer {old}"}).status_code == 401
    assert api.client.get(f"/api/v1/{HOME}/cases",
                          headers={"Authorization": f"Bearer {new}"}).status_code == 200
    replayed = api.client.post(f"{USERS}/pat.clerk/rotate", json={"expires_days": 7},
                               headers=headers)
    assert replayed.status_code == 200 and replayed.json()["token"] is None
    dump = "\n".join(sqlite3.connect(tmp_path / "abate.sqlite3").iterdump())
    assert new.removeprefix("abate_") not in dump
    # Without a body: the default lifetime; a revoked user gets no new token.
    assert api.client.post(f"{USERS}/pat.clerk/rotate",
                           headers=api.as_("admin")).status_code == 200
    revoked = api.client.post(f"{USERS}/pat.clerk/revoke", headers=api.as_("admin")).json()
    refused = api.client.post(f"{USERS}/pat.clerk/rotate", headers=api.as_("admin"))
    # The time is the village's local time, as the user's own record shows it.
    assert refused.status_code == 409
    assert f"was revoked at {revoked['revoked_at']};" in refused.json()["detail"]
    assert not revoked["revoked_at"].endswith("+00:00")


def test_rotating_another_villages_user_or_a_bad_lifetime_is_refused(api):
    theirs = api.client.post(f"{USERS}/clerk.mazomanie/rotate", headers=api.as_("admin"))
    nobody = api.client.post(f"{USERS}/nobody/rotate", headers=api.as_("admin"))
    assert theirs.status_code == nobody.status_code == 404
    assert api.client.get(f"/api/v1/{OTHER}/cases",
                          headers=api.as_("clerk", OTHER)).status_code == 200  # still valid
    for body in ({"expires_days": 0}, {"expires_days": "soon"}, {"days": 3}):
        bad = api.client.post(f"{USERS}/clerk.belleville/rotate", json=body,
                              headers=api.as_("admin"))
        assert bad.status_code == 422, bad.text
    assert api.client.get(f"/api/v1/{HOME}/cases",
                          headers=api.as_("clerk")).status_code == 200  # not rotated
    for role in (r for r in ROLES if r != "admin"):
        assert api.client.post(f"{USERS}/clerk.belleville/rotate",
                               headers=api.as_(role)).status_code == 403


def test_a_name_differing_only_in_capitals_is_409_naming_the_user_as_added(api):
    assert _add(api, name="Sam.Insp").status_code == 201
    again = _add(api, name="sam.insp", role="inspector")
    assert again.status_code == 409 and again.json()["field"] == "name"
    detail = again.json()["detail"]
    assert "a user Sam.Insp exists already; names are the same whatever the capitals" in detail
    assert "POST /api/v1/admin/users/Sam.Insp/rotate" in detail
    names = [u["name"] for u in api.client.get(USERS, headers=api.as_("admin")).json()["users"]]
    assert "Sam.Insp" in names and "sam.insp" not in names
    assert names == sorted(names, key=str.lower)  # as people sort names, not capitals first


def test_an_admin_cannot_disable_themself_nor_the_last_admin_of_a_village(api):
    mine = api.client.post(f"{USERS}/admin.belleville/revoke", headers=api.as_("admin"))
    assert mine.status_code == 409, mine.text
    assert "you cannot disable your own account" in mine.json()["detail"]
    assert api.client.get(USERS, headers=api.as_("admin")).status_code == 200  # still in
    # a second admin of the village may disable the first; then the second is the last one
    second = api.add_user("bea.admin", "admin", HOME)
    theirs = {"Authorization": f"Bearer {second}"}
    assert api.client.post(f"{USERS}/admin.belleville/revoke",
                           headers=theirs).status_code == 200
    assert api.client.post(f"{USERS}/bea.admin/revoke", headers=theirs).status_code == 409
    assert api.services.accounts.get("bea.admin").revoked_at is None
    assert api.services.accounts.last_admin_refusal("bea.admin") == (
        "bea.admin is the only enabled admin of Belleville: disabling them would leave "
        "nobody to manage the users there; add another admin first")


def test_the_users_come_a_page_at_a_time_by_name(api):
    for name in ("c.page", "a.page", "b.page"):
        assert _add(api, name=name).status_code == 201
    every = api.client.get(USERS, headers=api.as_("admin")).json()
    names = [u["name"] for u in every["users"]]
    assert names == sorted(names, key=str.lower) and every["next_offset"] is None
    assert every["total"] == len(names) and every["limit"] == 100 and every["offset"] == 0
    first = api.client.get(USERS, params={"limit": 2}, headers=api.as_("admin")).json()
    assert [u["name"] for u in first["users"]] == names[:2] and first["next_offset"] == 2
    rest = api.client.get(USERS, params={"limit": 2, "offset": first["next_offset"]},
                          headers=api.as_("admin")).json()
    assert [u["name"] for u in rest["users"]] == names[2:4] and rest["total"] == len(names)
    for bad in ({"limit": 0}, {"limit": 501}, {"offset": -1}):
        refused = api.client.get(USERS, params=bad, headers=api.as_("admin"))
        assert refused.status_code == 422 and refused.json()["field"] in bad, refused.text

"""Accounts through the doors people use: `abate users ...` and bearer tokens over HTTP."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3

import pytest

from tests.abate_command import run_abate
from tests.api_kit import BACKENDS, HOME, database_for, make_api


@pytest.fixture
def api(tmp_path):
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    yield api
    api.services.close()


def test_users_add_prints_the_token_once_and_the_table_holds_only_its_hash(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    added = run_abate("users", "add", "--name", "pat.clerk", "--role", "clerk",
                      "--municipality", "belleville", "--municipality", "mazomanie",
                      database_url=url)
    assert added.returncode == 0, added.stderr
    shown = json.loads(added.stdout)
    token = shown["token"]
    assert shown["municipalities"] == ["belleville", "mazomanie"] and len(token) > 40
    assert shown["created_at"].endswith(("-06:00", "-05:00")) and shown["created_at_utc"]
    dump = "\n".join(sqlite3.connect(tmp_path / "abate.sqlite3").iterdump())
    assert token not in dump and token.removeprefix("abate_") not in dump
    listed = run_abate("users", "list", database_url=url)
    assert listed.returncode == 0 and token not in listed.stdout
    assert "hash" not in listed.stdout
    assert [u["name"] for u in json.loads(listed.stdout)["users"]] == ["pat.clerk"]


def test_users_add_refuses_a_name_in_use_an_unknown_place_and_a_bad_role(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    args = ("users", "add", "--name", "pat", "--role", "clerk", "--municipality")
    assert run_abate(*args, "belleville", database_url=url).returncode == 0
    again = run_abate(*args, "belleville", database_url=url)
    assert again.returncode == 1 and "exists already" in again.stderr
    assert "`abate users rotate pat` gives that user a new token" in again.stderr
    unknown = run_abate("users", "add", "--name", "sam", "--role", "clerk", "--municipality",
                        "gotham", database_url=url)
    assert unknown.returncode == 2 and "unknown municipality 'gotham'" in unknown.stderr
    role = run_abate("users", "add", "--name", "sam", "--role", "mayor", "--municipality",
                     "belleville", database_url=url)
    assert role.returncode == 2 and "Traceback" not in role.stderr


def test_a_revoked_token_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    api = make_api(url)
    try:
        token = api.add_user("kim", "inspector", HOME)
        headers = {"Authorization": f"Bearer {token}"}
        assert api.client.get(f"/api/v1/{HOME}/cases", headers=headers).status_code == 200
        done = run_abate("users", "revoke", "kim", database_url=url)
        assert done.returncode == 0 and json.loads(done.stdout)["revoked_at"]
        refused = api.client.get(f"/api/v1/{HOME}/cases", headers=headers)
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == "Bearer"
        assert refused.json()["error"] == "unauthorized"
    finally:
        api.services.close()


def test_users_rotate_gives_a_new_token_and_refuses_the_old_but_not_for_a_revoked_user(
        tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    api = make_api(url)
    try:
        old = api.add_user("kim", "clerk", HOME)
        rotated = run_abate("users", "rotate", "kim", "--expires-days", "7", database_url=url)
        assert rotated.returncode == 0, rotated.stderr
        shown = json.loads(rotated.stdout)
        new = shown["token"]
        assert new != old and shown["role"] == "clerk" and shown["municipalities"] == [HOME]
        assert "shown only now" in rotated.stderr
        def status(token):
            return api.client.get(f"/api/v1/{HOME}/cases",
                                  headers={"Authorization": f"Bearer {token}"}).status_code
        assert (status(old), status(new)) == (401, 200)
        assert run_abate("users", "revoke", "kim", database_url=url).returncode == 0
        refused = run_abate("users", "rotate", "kim", database_url=url)
        assert refused.returncode == 1 and "was revoked" in refused.stderr
        assert status(new) == 401
        unknown = run_abate("users", "rotate", "nobody", database_url=url)
        assert unknown.returncode == 1 and "no user named 'nobody'" in unknown.stderr
    finally:
        api.services.close()


def test_an_expired_token_is_refused(api):
    past = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)
    token = api.add_user("old", "clerk", HOME, expires_at=past)
    fresh = api.add_user("new", "clerk", HOME)
    path = f"/api/v1/{HOME}/cases"
    assert api.client.get(path, headers={"Authorization": f"Bearer {token}"}).status_code == 401
    assert api.client.get(path, headers={"Authorization": f"Bearer {fresh}"}).status_code == 200


@pytest.mark.parametrize("header", [None, "Bearer", "Bearer nonsense", "Basic dXNlcjpwdw==",
                                    "Bearer abate_" + "x" * 43])
def test_requests_without_a_known_token_are_401(api, header):
    headers = {"Authorization": header} if header else {}
    answer = api.client.get(f"/api/v1/{HOME}/cases", headers=headers)
    assert answer.status_code == 401, answer.text


def test_health_needs_no_token_and_gives_each_views_position_and_lag(api):
    answer = api.client.get("/health")
    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "ok" and body["store"]["reachable"] is True
    assert {v["view"] for v in body["views"]} == {"case_summaries", "worklist",
                                                  "repeat_offenses", "tax_roll", "case_months"}
    assert all(v["lag"] == 0 for v in body["views"])


def test_users_add_refuses_a_name_differing_only_in_capitals_and_lists_names_as_people_sort(
        tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    for name in ("Sam.Insp", "ann.clerk", "Bob.Clerk"):
        assert run_abate("users", "add", "--name", name, "--role", "clerk", "--municipality",
                         HOME, database_url=url).returncode == 0
    again = run_abate("users", "add", "--name", "sam.insp", "--role", "clerk",
                      "--municipality", HOME, database_url=url)
    assert again.returncode == 1 and "Traceback" not in again.stderr
    assert ("a user Sam.Insp exists already; names are the same whatever the capitals"
            in again.stderr)
    assert "`abate users rotate Sam.Insp` gives that user a new token" in again.stderr
    listed = json.loads(run_abate("users", "list", database_url=url).stdout)["users"]
    assert [u["name"] for u in listed] == ["ann.clerk", "Bob.Clerk", "Sam.Insp"]  # as typed


def test_users_revoke_keeps_the_last_enabled_admin_of_a_village(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    for name in ("ada.admin", "bea.admin"):
        assert run_abate("users", "add", "--name", name, "--role", "admin", "--municipality",
                         HOME, database_url=url).returncode == 0
    assert run_abate("users", "revoke", "ada.admin", database_url=url).returncode == 0
    last = run_abate("users", "revoke", "bea.admin", database_url=url)
    assert last.returncode == 1 and "Traceback" not in last.stderr
    assert "bea.admin is the only enabled admin of Belleville" in last.stderr
    listed = {u["name"]: u for u in json.loads(run_abate("users", "list",
                                                         database_url=url).stdout)["users"]}
    assert listed["bea.admin"]["revoked_at"] is None  # nothing changed


def test_a_store_holding_two_names_differing_only_in_capitals_still_starts(tmp_path):
    """Added before names were compared so: both kept and listed (no index can be made),
    each signs in by its own name; a third spelling is still refused."""
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    assert run_abate("users", "add", "--name", "kim", "--role", "clerk", "--municipality",
                     HOME, database_url=url).returncode == 0
    db = sqlite3.connect(tmp_path / "abate.sqlite3")
    with db:
        db.execute("DROP INDEX abate_users_name_folded")
        db.execute("INSERT INTO abate_users (name, role, municipalities, token_hash, "
                   "created_at, expires_at) SELECT 'Kim', role, municipalities, 'x', "
                   "created_at, expires_at FROM abate_users WHERE name = 'kim'")
    db.close()
    listed = run_abate("users", "list", database_url=url)
    assert listed.returncode == 0, listed.stderr
    assert [u["name"] for u in json.loads(listed.stdout)["users"]] == ["Kim", "kim"]
    third = run_abate("users", "add", "--name", "KIM", "--role", "clerk", "--municipality",
                      HOME, database_url=url)
    assert third.returncode == 1 and "exists already" in third.stderr


@pytest.fixture(params=BACKENDS)
def api_on_either(request, tmp_path):
    url, extra, _schema = database_for(request, tmp_path)
    api = make_api(url, extra)
    yield api
    api.services.close()


def _flush_setting(engine) -> str:
    query = ("SHOW synchronous_commit" if engine.dialect.name == "postgresql"
             else "PRAGMA synchronous")
    with engine.connect() as conn:
        return str(conn.exec_driver_sql(query).scalar())


def test_accounts_commit_with_full_durability_unlike_the_views(api_on_either):
    """A revoked token or a changed password is not derived from the events, so it must not
    be lost with the last commits after a crash, as a view's rows may be (and rebuilt)."""
    services = api_on_either.services
    full, relaxed = (("on", "off") if services.records.dialect.name == "postgresql"
                     else ("2", "1"))  # SQLite: 2 is FULL, 1 is NORMAL
    for records in (services.accounts.engine, services.access_log.engine,
                    services.idempotency.engine):
        assert _flush_setting(records) == full
    assert _flush_setting(services.runner.engine) == relaxed


def test_two_admins_disabling_each_other_at_once_leave_one(api_on_either, monkeypatch):
    """Ada's disabling is paused inside its transaction, after its check, while Bea's starts:
    Bea's must wait for it and then see Ada disabled (and be refused), not check against the
    state before Ada's commit (which would disable both)."""
    import threading
    import time

    import api.accounts as accounts_module

    accounts = api_on_either.services.accounts
    now = dt.datetime(2026, 12, 6, 12, tzinfo=dt.timezone.utc)
    for name in ("ada.admin", "bea.admin"):
        accounts.add(name, "admin", ["mazomanie"], now=now)
    accounts.revoke("admin.mazomanie", now=now)  # Ada and Bea are its only admins now
    checked, bea_started = threading.Event(), threading.Event()
    checks = accounts_module._last_admin_refusal

    def paused_check(users, name, **kwargs):
        answer = checks(users, name, **kwargs)
        if name == "ada.admin":
            checked.set()
            bea_started.wait(10)
            time.sleep(1.0)  # Bea's disabling runs meanwhile (or waits for Ada's commit)
        return answer

    monkeypatch.setattr(accounts_module, "_last_admin_refusal", paused_check)
    outcomes: dict[str, object] = {}

    def disable(name: str) -> None:
        try:
            outcomes[name] = accounts.revoke(name, now=now)
        except accounts_module.LastAdminError as exc:
            outcomes[name] = exc

    ada = threading.Thread(target=disable, args=("ada.admin",))
    ada.start()
    assert checked.wait(10)
    bea = threading.Thread(target=disable, args=("bea.admin",))
    bea.start()
    bea_started.set()
    ada.join(20)
    bea.join(20)
    assert not isinstance(outcomes["ada.admin"], Exception)
    assert isinstance(outcomes["bea.admin"], accounts_module.LastAdminError)
    assert accounts.get("bea.admin").revoked_at is None


def test_users_list_comes_a_page_at_a_time(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    for name in ("cy.clerk", "Al.clerk", "bo.clerk"):
        assert run_abate("users", "add", "--name", name, "--role", "clerk", "--municipality",
                         HOME, database_url=url).returncode == 0
    first = json.loads(run_abate("users", "list", "--limit", "2", database_url=url).stdout)
    assert [u["name"] for u in first["users"]] == ["Al.clerk", "bo.clerk"]
    assert (first["total"], first["limit"], first["offset"], first["next_offset"]) == (3, 2, 0, 2)
    rest = json.loads(run_abate("users", "list", "--limit", "2", "--offset", "2",
                                database_url=url).stdout)
    assert [u["name"] for u in rest["users"]] == ["cy.clerk"] and rest["next_offset"] is None
    refused = run_abate("users", "list", "--limit", "0", database_url=url)
    assert refused.returncode == 2 and "--limit" in refused.stderr
    assert "from 1 to 500" in refused.stderr and "Traceback" not in refused.stderr

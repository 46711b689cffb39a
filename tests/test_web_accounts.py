"""Passwords and sessions of the web pages: ``abate users set-password`` and
``POST /api/v1/admin/users/{name}/password``, the column added to an older store, the
session cookie's flags and key, the pages' settings and their place in the role matrix."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.app import create_app
from api.roles import PAGE_ROLES
from api.settings import ApiSettings
from api.web_settings import WebSettings
from cases.errors import ConfigurationError
from tests.abate_command import abate_env, assert_one_line_failure, run_abate
from tests.api_kit import BACKENDS, database_for, make_api

PASSWORD = "twelve chars or more"
HTML = {"Accept": "text/html"}


def set_password(url: str, name: str, password: str,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_abate("users", "set-password", "--name", name, input=password + "\n",
                     env=env or abate_env(url))


def signed_in(client: TestClient, name: str, password: str) -> int:
    """Post the sign-in page's password form as a browser does; the answer's status."""
    form = client.get("/sign-in", headers=HTML)
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
    return client.post("/sign-in", headers=HTML, follow_redirects=False, data={
        "csrf_token": token, "mode": "password", "name": name, "password": password,
        "next": "/"}).status_code


def test_set_password_reads_stdin_keeps_only_a_hash_and_refuses_a_short_one(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    assert run_abate("users", "add", "--name", "kim", "--role", "clerk", "--municipality",
                     "belleville", database_url=url).returncode == 0
    short = set_password(url, "kim", "too short")
    assert_one_line_failure(short, 2, "password: a password is 12 to 128 characters",
                            "nothing was changed")
    done = set_password(url, "kim", PASSWORD)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == "kim" and PASSWORD not in done.stdout
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        stored = conn.execute(sa.text("SELECT password_hash FROM abate_users")).scalar()
    engine.dispose()
    assert stored.startswith("$argon2") and PASSWORD not in stored
    unknown = set_password(url, "nobody", PASSWORD)
    assert unknown.returncode == 1 and "no user named 'nobody'" in unknown.stderr
    assert run_abate("users", "revoke", "kim", database_url=url).returncode == 0
    revoked = set_password(url, "kim", PASSWORD)
    assert revoked.returncode == 1 and "revoked" in revoked.stderr


def test_an_admin_sets_a_password_over_http_and_the_user_signs_in_with_it(tmp_path):
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    admin = api.as_("admin")
    done = api.client.post("/api/v1/admin/users/clerk.belleville/password",
                           json={"password": PASSWORD}, headers=admin)
    assert done.status_code == 200, done.text
    assert "password" not in done.text and done.json()["name"] == "clerk.belleville"
    assert signed_in(TestClient(api.app), "clerk.belleville", PASSWORD) == 303
    assert signed_in(TestClient(api.app), "clerk.belleville", PASSWORD + "x") == 401
    # the name is found whatever its capitals (names differing only so cannot both exist)
    assert signed_in(TestClient(api.app), "Clerk.BELLEVILLE", PASSWORD) == 303

    short = api.client.post("/api/v1/admin/users/clerk.belleville/password",
                            json={"password": "short"}, headers=admin)
    assert short.status_code == 422 and short.json()["field"] == "password"
    other = api.client.post("/api/v1/admin/users/clerk.mazomanie/password",
                            json={"password": PASSWORD}, headers=admin)
    assert other.status_code == 404  # a user of another village: as if missing
    clerk = api.client.post("/api/v1/admin/users/clerk.belleville/password",
                            json={"password": PASSWORD}, headers=api.as_("clerk"))
    assert clerk.status_code == 403


@pytest.fixture(params=BACKENDS)
def older_store(request, tmp_path):
    """(URL, environment of the installed command, schema) of a fresh database."""
    url, _extra, schema = database_for(request, tmp_path)
    env = abate_env(url, **({"ABATE_DATABASE_SCHEMA": schema} if schema else {}))
    return url, env, schema


def test_an_older_store_gets_the_password_column_at_start_up(older_store):
    url, env, schema = older_store
    table = f'"{schema}".abate_users' if schema else "abate_users"
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # the users table as it was before the web pages
        conn.execute(sa.text(
            f"CREATE TABLE {table} (name VARCHAR(100) PRIMARY KEY, role VARCHAR(16) NOT "
            "NULL, municipalities TEXT NOT NULL, token_hash VARCHAR(64) NOT NULL UNIQUE, "
            "created_at VARCHAR(40) NOT NULL, expires_at VARCHAR(40) NOT NULL, "
            "revoked_at VARCHAR(40))"))
        conn.execute(sa.text(
            f"INSERT INTO {table} VALUES ('old.clerk', 'clerk', '[\"belleville\"]', "
            "'0000', '2026-01-01T00:00:00+00:00', '2999-01-01T00:00:00+00:00', NULL)"))
    engine.dispose()
    done = set_password(url, "old.clerk", PASSWORD, env)
    assert done.returncode == 0, done.stderr
    listed = run_abate("users", "list", env=env)
    assert [u["name"] for u in json.loads(listed.stdout)["users"]] == ["old.clerk"]
    app = create_app(ApiSettings.from_env(env))
    with TestClient(app) as client:
        assert signed_in(client, "old.clerk", PASSWORD) == 303
        # the sign-in is kept in its column, added too (the admin's users page shows it)
        assert app.state.services.accounts.get("old.clerk").signed_in_at is not None


def test_the_session_cookie_is_httponly_lax_secure_behind_https_and_keyed_beside_the_store(
        tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    api = make_api(url, {"ABATE_WEB_HTTPS": "1"})
    api.services.accounts.set_password("clerk.belleville", PASSWORD)
    client = TestClient(api.app, base_url="https://testserver")
    form = client.get("/sign-in", headers=HTML)
    cookies = form.headers.get_list("set-cookie")
    session = next(c for c in cookies if c.startswith("abate_session="))
    csrf = next(c for c in cookies if c.startswith("abate_csrf="))
    for cookie in (session, csrf):
        flags = cookie.lower()
        assert "httponly" in flags and "samesite=lax" in flags and "secure" in flags
    assert signed_in(client, "clerk.belleville", PASSWORD) == 303
    # another worker on the same store signs with the same key (the file beside the
    # database: tests/test_web_session_secret.py): the session holds
    other = create_app(ApiSettings.from_env({"ABATE_DATABASE_URL": url}))
    second = TestClient(other, base_url="https://testserver", cookies=client.cookies)
    assert second.get("/belleville/", headers=HTML, follow_redirects=False).status_code == 200
    plain = make_api(f"sqlite:///{tmp_path / 'plain.sqlite3'}")
    cookie = TestClient(plain.app).get("/sign-in", headers=HTML).headers["set-cookie"]
    assert "secure" not in cookie.lower()


@pytest.mark.parametrize("name, value, says", [
    ("ABATE_WEB_SESSION_SECRET", "short", "at least 32 characters"),
    ("ABATE_WEB_SESSION_SECRET", "a" * 40 + " short", "secret 2 of 2 is shorter"),
    ("ABATE_WEB_HTTPS", "yes", "must be 0 or 1"),
    ("ABATE_WEB_SESSION_HOURS", "0", "from 1 to 720"),
    ("ABATE_WEB_SIGN_IN_LIMIT", "lots", "'10/minute'"),
])
def test_bad_web_settings_are_refused_naming_the_setting(name, value, says):
    with pytest.raises(ConfigurationError, match=name) as refused:
        WebSettings.from_env({name: value})
    assert says in str(refused.value)


def test_command_forms_are_in_the_role_matrix_and_never_for_auditors_or_admins():
    # every page route is checked against PAGE_ROLES in tests/test_web_page_roles.py;
    # a command form is checked by command: nobody but the API's roles for that command
    from api.roles import COMMAND_ROLES
    assert {n.removeprefix("page.command.") for n in PAGE_ROLES
            if n.startswith("page.command.")} == set(COMMAND_ROLES)
    assert not any("auditor" in roles or "admin" in roles
                   for name, roles in PAGE_ROLES.items() if name.startswith("page.command."))


@pytest.mark.parametrize("target, lands", [
    ("/belleville/cases", "/belleville/cases"), ("//evil.example/x", "/"),
    ("/\\evil.example", "/"), ("https://evil.example/", "/"), ("belleville", "/")])
def test_after_sign_in_only_a_path_of_this_site_is_followed(tmp_path, target, lands):
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    client = TestClient(api.app)
    form = client.get("/sign-in", headers=HTML)
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
    done = client.post("/sign-in", headers=HTML, follow_redirects=False, data={
        "csrf_token": token, "mode": "token", "token": api.tokens["clerk", "belleville"],
        "next": target})
    assert done.status_code == 303 and done.headers["location"] == lands


@pytest.mark.parametrize("query", ["owner=%00x", "owner=a%01b", "parcel=%00", "rule=%0A"])
def test_a_case_search_with_a_control_character_is_refused_naming_the_field(tmp_path, query):
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    client = TestClient(api.app)
    form = client.get("/sign-in", headers=HTML)
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
    client.post("/sign-in", headers=HTML, follow_redirects=False, data={
        "csrf_token": token, "mode": "token", "token": api.tokens["clerk", "belleville"],
        "next": "/belleville/cases"})
    answer = client.get(f"/belleville/cases?{query}", headers=HTML)
    assert answer.status_code == 422, answer.text
    assert query.split("=")[0] in answer.text and "Traceback" not in answer.text
    assert client.get("/belleville/cases?owner=Ann", headers=HTML).status_code == 200

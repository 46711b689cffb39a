"""The secret that signs the pages' sessions is kept outside the database: a session forged
with a secret a backup holds signs nobody in; the embedded store's secret is a file beside
it, the owner's alone (refused when others may read it); a secret given in the settings
signs alike in every app; a rotation keeps the sessions of the old secret."""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
import socket
import stat
from pathlib import Path

import itsdangerous
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.app import create_app
from api.settings import ApiSettings
from api.session_secret import session_secrets
from cases.errors import ConfigurationError
from tests.abate_command import abate_env, assert_one_line_failure, run_abate
from tests.api_kit import BACKENDS, api_on, make_api

HTML = {"Accept": "text/html"}
OLD = "the-secret-of-last-year-" + "o" * 24
NEW = "the-secret-of-this-year-" + "n" * 24


def forged(secret: str, user: str = "clerk.belleville") -> str:
    """A session cookie for ``user`` signed with ``secret``, as Starlette signs one."""
    session = {"user": user, "via": "password",
               "since": dt.datetime.now(dt.timezone.utc).isoformat()}
    data = base64.b64encode(json.dumps(session).encode())
    return itsdangerous.TimestampSigner(secret).sign(data).decode()


def signed_in(app) -> TestClient:
    """A client signed in to ``app`` as the Belleville clerk (with the clerk's token)."""
    client = TestClient(app, headers=HTML)
    form = client.get("/sign-in")
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
    done = client.post("/sign-in", follow_redirects=False, data={
        "csrf_token": token, "mode": "token",
        "token": app.state.tokens["clerk", "belleville"]})
    assert done.status_code == 303, done.text[:500]
    return client


def worklist(app, cookie: str) -> int:
    """The status of the clerk's worklist with session ``cookie`` (200 in, 303 to sign in)."""
    client = TestClient(app, headers=HTML, cookies={"abate_session": cookie})
    return client.get("/belleville/", follow_redirects=False).status_code


@pytest.fixture(params=BACKENDS)
def older_deployment(request, tmp_path):
    """An API on a store where an older release kept the session secret in the database."""
    api = api_on(request, tmp_path)
    api.app.state.tokens = api.tokens
    with api.services.records.begin() as conn:  # as the older release left it
        conn.execute(sa.text("CREATE TABLE abate_web_secrets (name VARCHAR(40) PRIMARY KEY, "
                             "value VARCHAR(200) NOT NULL)"))
        conn.execute(sa.text("INSERT INTO abate_web_secrets VALUES ('session', :v)"),
                     {"v": OLD})
    yield api, request.param
    api.services.close()


def test_a_session_forged_with_the_secret_a_backup_holds_signs_nobody_in(older_deployment):
    api, backend = older_deployment
    # the next start of that deployment: it starts, and the old table is gone
    again = create_app(api.services.settings)
    assert not sa.inspect(api.services.records).has_table("abate_web_secrets")
    assert worklist(again, forged(OLD)) == 303  # to the sign-in page
    # the secret it signs with now (the file beside SQLite, the setting on PostgreSQL)
    # signs the same forged session in: the forgery itself is sound
    url = api.services.settings.database_url
    real = session_secrets(api.services.settings.web.session_secret,
                           api.services.settings.web.session_secret_file, url)[0]
    assert real != OLD and worklist(again, forged(real)) == 200
    again.state.services.close()


def test_the_embedded_stores_secret_is_a_file_only_its_owner_may_read(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    api = make_api(url)
    secret = tmp_path / "abate.sqlite3.session-secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert len(secret.read_text().strip()) >= 32
    assert [p.name for p in tmp_path.iterdir() if "session-secret" in p.name] == [secret.name]
    api.services.close()
    secret.chmod(0o640)
    with pytest.raises(ConfigurationError, match="other users may read or change it") as refused:
        create_app(ApiSettings.from_env({"ABATE_DATABASE_URL": url}))
    assert f"chmod 600 {secret}" in str(refused.value)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("mode, says", [(0o644, "other users may read or change it"),
                                        (None, "cannot read it (Is a directory)")])
def test_abate_serve_refuses_a_secret_file_others_may_read_or_it_cannot_read(
        tmp_path, mode, says):
    secret = tmp_path / "session-secret"
    if mode is None:
        secret.mkdir()
    else:
        secret.write_text(NEW + "\n")
        secret.chmod(mode)
    done = run_abate("serve", "--port", str(_free_port()), "--without-scheduler", env=abate_env(
        f"sqlite:///{tmp_path / 'abate.sqlite3'}", ABATE_WEB_SESSION_SECRET_FILE=str(secret)))
    assert_one_line_failure(done, 2, "abate serve: ", f"ABATE_WEB_SESSION_SECRET_FILE={secret}",
                            says)


def test_postgresql_without_a_session_secret_is_refused_before_anything_starts(tmp_path):
    """Several hosts must sign alike: only the operator can give them one secret. Refused
    before the database is reached (this one does not exist) and before any worker."""
    env = abate_env("postgresql+psycopg://abate@127.0.0.1:9/nowhere")
    env.pop("ABATE_WEB_SESSION_SECRET")
    done = run_abate("serve", "--port", str(_free_port()), "--workers", "2",
                     "--without-scheduler", env=env)
    assert_one_line_failure(done, 2, "set ABATE_WEB_SESSION_SECRET or "
                                     "ABATE_WEB_SESSION_SECRET_FILE", "PostgreSQL")


@pytest.mark.parametrize("given", ["setting", "file"])
def test_a_secret_from_the_settings_signs_alike_in_two_apps(tmp_path, given):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    if given == "setting":
        settings = {"ABATE_WEB_SESSION_SECRET": NEW}
    else:
        (tmp_path / "keys").mkdir()
        path = tmp_path / "keys" / "secret"
        path.write_text(f"{NEW}\n")
        path.chmod(0o600)
        settings = {"ABATE_WEB_SESSION_SECRET_FILE": str(path)}
    first = make_api(url, settings)
    first.app.state.tokens = first.tokens
    second = create_app(ApiSettings.from_env({"ABATE_DATABASE_URL": url, **settings}))
    client = signed_in(first.app)
    cookie = client.cookies["abate_session"]
    assert worklist(second, cookie) == 200
    assert worklist(second, forged(NEW)) == 200  # what signs is the setting's secret
    assert not (tmp_path / "abate.sqlite3.session-secret").exists()  # no file of its own
    for app in (first.app, second):
        app.state.services.close()


def _app(url: str, secrets: str):
    return create_app(ApiSettings.from_env({"ABATE_DATABASE_URL": url,
                                            "ABATE_WEB_SESSION_SECRET": secrets}))


def test_a_rotation_keeps_the_old_secrets_sessions_and_signs_with_the_new(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    api = make_api(url, {"ABATE_WEB_SESSION_SECRET": OLD})
    api.app.state.tokens = api.tokens
    before = signed_in(api.app)  # a session signed with the old secret
    rotated = _app(url, f"{NEW} {OLD}")  # the new one first: it signs; both are accepted
    during = TestClient(rotated, headers=HTML, cookies=before.cookies)
    assert during.get("/belleville/", follow_redirects=False).status_code == 200
    # its forms too: the CSRF token the old secret signed is accepted (sign out)
    page = during.get("/belleville/")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    out = during.post("/sign-out", data={"csrf_token": token}, follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/sign-in"

    rotated.state.tokens = api.tokens
    fresh = signed_in(rotated).cookies["abate_session"]  # signed with the new secret
    assert worklist(_app(url, NEW), fresh) == 200
    assert worklist(_app(url, OLD), fresh) == 303
    # once the old secret is removed, what it signed signs nobody in
    assert worklist(_app(url, NEW), forged(OLD)) == 303
    assert worklist(_app(url, f"{NEW} {OLD}"), forged(OLD)) == 200


@pytest.mark.parametrize("environ, says", [
    ({"ABATE_WEB_SESSION_SECRET": NEW, "ABATE_WEB_SESSION_SECRET_FILE": "/x"}, "not both"),
    ({"ABATE_WEB_SESSION_SECRET": "   "}, "ABATE_WEB_SESSION_SECRET holds no secret"),
])
def test_the_secret_settings_are_one_or_the_other_and_hold_a_secret(environ, says):
    with pytest.raises(ConfigurationError, match=says):
        ApiSettings.from_env(environ)


def test_the_secret_file_path_names_the_database_it_sits_beside(tmp_path):
    db = tmp_path / "village.db"
    found = session_secrets(None, None, f"sqlite:///{db}?timeout=5")
    assert Path(f"{db}.session-secret").read_text().split() == found
    assert session_secrets(None, None, "memory://") != session_secrets(None, None, "memory://")

"""A store that cannot be reached is 503 with ``Retry-After``, never a 500 "bug" (issue 25).

Through the doors people use: ``abate serve`` on a PostgreSQL schema of its own, reached
through a TCP forwarder the test takes away (``tests/tcp_forwarder.py``: every connection
reset, the port closed, as a database server that went away). Then the API's routes answer
503 ``unavailable`` with ``Retry-After`` in the JSON body docs/api.md describes, a page
answers a plain-words page with the same header, and the log names the setting and where it
points with the password hidden. When the forwarder is back, the next request works without
a restart (the pooled connections were dropped when the store was found gone), and a
command retried with the same ``Idempotency-Key`` is recorded once. A SQLite file locked
past the busy timeout is 503 too (in process). Which failures mean "cannot reach the store"
and which stay bugs is checked on the errors themselves (``cases.store_reach.unreachable``)."""

from __future__ import annotations

import json
import re
import sqlite3

import httpx
import psycopg
import pytest
import sqlalchemy as sa

from cases.store_reach import RETRY_AFTER_SECONDS, engine_options, unreachable
from tests.api_kit import HOME, make_api, open_body, served
from tests.conftest import _fresh_postgres_schema
from tests.tcp_forwarder import Forwarder
from tests.test_web_errors import assert_page, signed_in_client
from tests.web_kit import PASSWORD, Site, add_user

PASSWORD_IN_URL = "not-to-be-logged-7431"


def _through(forwarder: Forwarder, database_url: str) -> str:
    """``database_url`` pointed at the forwarder, with a password (trust authentication
    ignores it; the log must not show it) and a short connect time limit."""
    url = sa.engine.make_url(database_url).set(
        host="127.0.0.1", port=forwarder.port, password=PASSWORD_IN_URL,
        query={"connect_timeout": "3"})
    return url.render_as_string(hide_password=False)


def _unavailable(answer: httpx.Response) -> dict:
    assert answer.status_code == 503, (answer.status_code, answer.text[:500])
    assert answer.headers["retry-after"] == str(RETRY_AFTER_SECONDS)
    assert answer.headers["content-type"].startswith("application/json")
    return answer.json()


@pytest.mark.postgres
def test_a_lost_database_is_503_on_routes_and_pages_and_served_again_once_back(
        postgres_database, tmp_path):
    direct, extra = _fresh_postgres_schema(postgres_database)
    schema = {"ABATE_DATABASE_SCHEMA": extra["SQLALCHEMY_SCHEMA"]}
    target = sa.engine.make_url(direct)
    with Forwarder(target.host or "127.0.0.1", target.port or 5432) as forwarder:
        url = _through(forwarder, direct)
        token = add_user(url, "clerk.belleville", "clerk", HOME, **schema)
        api = {"Authorization": f"Bearer {token}"}
        log = tmp_path / "serve.log"
        with served(url, log, "--without-scheduler", ABATE_LOG_FORMAT="json",
                    **schema) as server:
            base = f"{server.base}/api/v1/{HOME}"
            clerk = signed_in_client(Site(server.base, url))
            visitor = httpx.Client(base_url=server.base, headers={"Accept": "text/html"},
                                   timeout=30)
            sign_in_form = visitor.get("/sign-in")
            csrf = re.search(r'name="csrf_token" value="([^"]+)"', sign_in_form.text).group(1)
            assert httpx.post(f"{base}/cases", json=open_body("BV-GONE-1"), headers=api,
                              timeout=30).status_code == 201

            forwarder.stop()  # the database is gone
            listed = _unavailable(httpx.get(f"{base}/cases", headers=api, timeout=30))
            assert listed["error"] == "unavailable" and "nothing was changed" in listed["detail"]
            keyed, second = {**api, "Idempotency-Key": "open-BV-GONE-2"}, open_body("BV-GONE-2")
            opened = _unavailable(httpx.post(f"{base}/cases", json=second, headers=keyed,
                                             timeout=30))
            assert "same Idempotency-Key" in opened["detail"]
            inspected = _unavailable(httpx.post(
                f"{base}/cases/BV-GONE-1/record_inspection", headers=api, timeout=30,
                json={"at": open_body("x", days_ago=1)["at"], "findings": "still there"}))
            assert inspected["error"] == "unavailable"
            health = httpx.get(f"{server.base}/health", timeout=30)
            assert health.status_code == 503 and health.headers["retry-after"]

            page = clerk.get(f"/{HOME}/cases")
            assert_page(page, 503, "Not available just now", "nothing was changed")
            assert page.headers["retry-after"] == str(RETRY_AFTER_SECONDS)
            form = visitor.post("/sign-in", data={
                "csrf_token": csrf, "mode": "password", "name": "clerk.belleville",
                "password": PASSWORD, "next": "/"})
            assert_page(form, 503, "may or may not have been recorded")
            assert "Reference" not in page.text + form.text  # nothing for a person to report

            forwarder.start()  # back, on the same port: no restart of the server
            assert httpx.get(f"{base}/cases", headers=api, timeout=30).status_code == 200
            again = httpx.post(f"{base}/cases", json=second, headers=keyed, timeout=30)
            assert again.status_code == 201, again.text
            assert clerk.get(f"/{HOME}/cases").status_code == 200
            history = httpx.get(f"{base}/cases/BV-GONE-2/history", headers=api, timeout=30)
            assert [e["type"] for e in history.json()["events"]].count("Opened") == 1
            clerk.close()
            visitor.close()
    lines = [json.loads(line) for line in log.read_text().splitlines()
             if line.startswith("{")]
    unreachable_lines = [line for line in lines if line["event"] == "store_unreachable"]
    assert unreachable_lines, "no store_unreachable line in the log"
    for line in unreachable_lines:
        assert line["setting"] == "ABATE_DATABASE_URL" and line["level"] == "error"
        assert (line["host"], line["port"], line["database"]) == (
            "127.0.0.1", forwarder.port, target.database)
        assert line["schema"] == schema["ABATE_DATABASE_SCHEMA"]
        assert "***" in line["url"] and line["reason"]
    text = log.read_text()
    assert PASSWORD_IN_URL not in text
    assert "Traceback" not in text and "request_failed_unexpectedly" not in text


def test_a_sqlite_file_locked_past_the_busy_timeout_is_503_too(tmp_path, monkeypatch):
    """In process: another program holds the file's write lock longer than the busy timeout
    (shortened here from 30 s); a command waits for it, then answers 503, and once the lock
    is released the same command with the same key is recorded once."""
    import cases.store_config
    import projections.database

    for module in (cases.store_config, projections.database):
        monkeypatch.setattr(module, "SQLITE_BUSY_TIMEOUT_SECONDS", 0.3)
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    keyed = {**api.as_("clerk"), "Idempotency-Key": "open-BV-LOCKED"}
    body = open_body("BV-LOCKED")
    other = sqlite3.connect(tmp_path / "abate.sqlite3", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the write lock, as a long import holds it
    try:
        locked = api.client.post(f"/api/v1/{HOME}/cases", json=body, headers=keyed)
        assert _unavailable(locked)["error"] == "unavailable"
    finally:
        other.execute("ROLLBACK")
        other.close()
    opened = api.client.post(f"/api/v1/{HOME}/cases", json=body, headers=keyed)
    assert opened.status_code == 201, opened.text
    again = api.client.post(f"/api/v1/{HOME}/cases", json=body, headers=keyed)
    assert again.headers.get("idempotent-replayed") == "true"
    history = api.client.get(f"/api/v1/{HOME}/cases/BV-LOCKED/history",
                             headers=api.as_("clerk"))
    assert [e["type"] for e in history.json()["events"]] == ["Opened"]
    api.services.close()


# ------------------------------------------------------------- which failures are which


def _wrapped(orig: BaseException) -> sa.exc.DBAPIError:
    """``orig`` as SQLAlchemy raises it from a statement."""
    return sa.exc.OperationalError("select 1", {}, orig)


REACH = [  # (failure, whether it means the store cannot be reached)
    (psycopg.OperationalError("connection failed: connection to server at \"db\", port 5432 "
                              "failed: Connection refused"), True),
    (psycopg.errors.ConnectionTimeout("connection timeout expired"), True),
    (psycopg.errors.AdminShutdown("terminating connection due to administrator command"), True),
    (psycopg.errors.TooManyConnections("sorry, too many clients already"), True),
    (psycopg.errors.CannotConnectNow("the database system is starting up"), True),
    (sqlite3.OperationalError("database is locked"), True),
    (sqlite3.OperationalError("unable to open database file"), True),
    (psycopg.errors.UndefinedTable("relation \"abate_events\" does not exist"), False),
    (psycopg.errors.SyntaxError("syntax error at or near \"selec\""), False),
    (psycopg.errors.UniqueViolation("duplicate key value"), False),
    (psycopg.errors.DeadlockDetected("deadlock detected"), False),
    (sqlite3.OperationalError("no such table: abate_events"), False),
    (sqlite3.DatabaseError("file is not a database"), False),
]


@pytest.mark.parametrize(("failure", "cannot_reach"), REACH)
def test_which_failures_mean_the_store_cannot_be_reached(failure, cannot_reach):
    assert bool(unreachable(_wrapped(failure))) is cannot_reach
    try:  # as eventsourcing wraps SQLAlchemy's: raise ... from
        raise RuntimeError("the recorder failed") from _wrapped(failure)
    except RuntimeError as exc:
        assert bool(unreachable(exc)) is cannot_reach
    assert unreachable(ZeroDivisionError("division by zero")) is None


def test_a_bug_raised_while_handling_a_lost_connection_is_still_a_bug():
    try:
        try:
            raise _wrapped(psycopg.OperationalError("the connection is lost"))
        except sa.exc.OperationalError:
            raise KeyError("a bug in the except block")  # noqa: B904 - its context only
    except KeyError as exc:
        assert unreachable(exc) is None


def test_postgresql_engines_get_time_limits_the_url_may_override():
    options = engine_options("postgresql+psycopg://abate@db:5432/abate?connect_timeout=3")
    assert "connect_timeout" not in options["connect_args"]  # the URL's 3 stands
    assert options["connect_args"]["tcp_user_timeout"] and options["connect_args"]["keepalives"]
    assert engine_options("sqlite:///x.sqlite3") == {}

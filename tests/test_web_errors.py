"""What a person sees when a page fails (issue 12): never the API's JSON nor a traceback.

An unforeseen failure is made honestly from outside: the worklist view's table is renamed in
the served store's own SQLite file under a running ``abate serve``, so the page and the API
route that read it fail as they would on a damaged database. The page shows the error page
(500) with a reference, the API its JSON 500 with the same kind of reference, and the server's
log has the traceback under that reference. Every page's query parameters are fuzzed over HTTP:
a 4xx page naming the parameter, or the normal page, never a 500 or JSON."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from tests.api_kit import HOME
from tests.web_kit import PASSWORD, Site, add_user, sign_in, site

HTML = {"Accept": "text/html"}
CASE = "BV-ERR-001"
ADMIN = "admin.belleville"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Site, object]]:
    folder = tmp_path_factory.mktemp("errors")
    with site(folder) as running:
        running.open_case(CASE)
        add_user(running.database_url, ADMIN, "admin", HOME)
        yield running, folder / "serve.log"


@pytest.fixture(scope="module")
def clients(served) -> Iterator[dict[str, httpx.Client]]:
    """A signed-in HTTP client of the clerk and of the admin."""
    running, _ = served
    signed = {name: signed_in_client(running, name) for name in ("clerk.belleville", ADMIN)}
    yield signed
    for client in signed.values():
        client.close()


def signed_in_client(running: Site, name: str = "clerk.belleville") -> httpx.Client:
    """An HTTP client signed in through the sign-in page's password form."""
    client = httpx.Client(base_url=running.base, headers=HTML, timeout=30)
    form = client.get("/sign-in")
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
    done = client.post("/sign-in", data={"csrf_token": token, "mode": "password",
                                          "name": name, "password": PASSWORD, "next": "/"})
    assert done.status_code in (200, 303), done.text
    return client


def assert_page(answer: httpx.Response, status: int, *words: str) -> None:
    assert answer.status_code == status, (answer.status_code, answer.text[:500])
    assert answer.headers["content-type"].startswith("text/html"), answer.text[:300]
    assert "Traceback" not in answer.text and '"error":' not in answer.text
    for word in words:
        assert word in answer.text, (word, answer.text[:1500])


# (page, {parameter: bad values}) for every page that reads query parameters.
LONG = "x" * 10_000
FUZZ = (
    (f"/{HOME}/cases", {"offset": ["abc", "-1", "99999999999"], "per_page": ["abc", "7"],
                        "owner": [LONG, "a\x00b"], "parcel": [LONG], "rule": [LONG],
                        "status": ["garbage", LONG], "observed_from": ["garbage", "0001-01-01"],
                        "observed_to": ["2026-13-45"]}),
    (f"/{HOME}/repeat-offenders", {"as_of": ["garbage", LONG, "9999-01-01"],
                                   "at_least": ["abc", "0", "100", LONG, "1" * 5000]}),
    (f"/{HOME}/tax-roll", {"tax_year": ["abc", "99999", LONG], "county": ["Nowhere", LONG],
                           "certified": [LONG, "<script>"]}),
    (f"/{HOME}/tax-roll/certify", {"tax_year": ["abc"], "county": ["Nowhere"]}),
    (f"/{HOME}/tax-roll.csv", {"tax_year": ["abc", LONG], "county": ["Nowhere"]}),
    (f"/{HOME}/tax-roll/certified-list.pdf", {"tax_year": ["abc"], "county": ["Nowhere"]}),
    (f"/{HOME}/audit/cases/{CASE}", {"as_of": ["garbage", LONG], "known_at": ["garbage", LONG]}),
    (f"/{HOME}/cases/{CASE}", {"done": ["garbage", LONG]}),
    (f"/{HOME}/", {"unknown": [LONG]}),
    (f"/{HOME}/charts", {"unknown": ["abc"]}),
    (f"/{HOME}/cases/new", {"unknown": ["abc"]}),
    ("/admin/users", {"done": ["garbage", LONG], "user": [LONG]}),
    ("/admin/users/disable", {"name": ["", LONG, "nobody", "a\x00b"]}),
    ("/sign-in", {"next": ["garbage", LONG, "//evil.example"]}),
)


@pytest.mark.parametrize("path,parameters", FUZZ, ids=[p for p, _ in FUZZ])
def test_bad_query_values_give_a_page_naming_the_parameter(clients, path, parameters):
    who = clients[ADMIN if path.startswith("/admin") else "clerk.belleville"]
    for name, values in parameters.items():
        for value in values:
            answer = who.get(path, params={name: value})
            shown = f"{path}?{name}={value[:30]}"
            assert answer.status_code < 500, (shown, answer.text[:500])
            if answer.status_code in (200, 303, 307):
                continue  # ignored or read as nothing asked: the normal page
            assert_page(answer, answer.status_code)
            assert 400 <= answer.status_code < 500, shown
            assert name in answer.text or name.replace("_", " ") in answer.text, \
                (shown, answer.text[:1500])
            assert "unable to parse" not in answer.text, shown  # in words: "a whole number"


def test_the_tax_roll_page_asks_for_the_tax_years_the_command_line_and_the_api_take(clients):
    """2000 to 2200 (``cases.instant_bounds``), as ``--tax-year`` and the API's ``tax_year``."""
    clerk = clients["clerk.belleville"]
    for year in ("1999", "2201"):
        answer = clerk.get(f"/{HOME}/tax-roll", params={"tax_year": year})
        assert "give a year from 2000 to 2200" in answer.text, (year, answer.text[:1500])
    assert "give a year from" not in clerk.get(f"/{HOME}/tax-roll",
                                               params={"tax_year": "2000"}).text


@contextmanager
def renamed_tables(running: Site, like: str) -> Iterator[None]:
    """The tables whose names contain ``like`` renamed in the served store's SQLite file (a
    damaged database, made from outside the server), put back afterwards."""
    path = running.database_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        tables = [name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?",
            (f"%{like}%",))]
        assert tables
        for name in tables:
            db.execute(f'ALTER TABLE "{name}" RENAME TO "{name}_away"')
    try:
        yield
    finally:
        with sqlite3.connect(path) as db:
            for name in tables:
                db.execute(f'ALTER TABLE "{name}_away" RENAME TO "{name}"')


@pytest.fixture
def broken_worklist(served) -> Iterator[None]:
    with renamed_tables(served[0], "worklist"):
        yield


def logged_failure(log: object, reference: str) -> dict:
    """The server's log line of the failure under ``reference`` (it holds the traceback)."""
    lines = [json.loads(line) for line in open(log, encoding="utf-8")
             if line.startswith("{") and reference in line]
    failed = [line for line in lines if line.get("event") == "request_failed_unexpectedly"]
    assert failed, lines
    return failed[0]


def test_a_failing_page_shows_the_error_page_with_a_reference_found_in_the_log(
        page, served, broken_worklist):
    running, log = served
    sign_in(page, running, "clerk.belleville", then="/sign-in")
    answer = page.goto(f"{running.base}/{HOME}/")
    assert answer.status == 500
    assert answer.headers["content-type"].startswith("text/html")
    assert page.get_by_role("heading", level=1).inner_text() == "Something went wrong"
    shown = page.locator("main").inner_text()
    assert "nothing" not in shown or "none was changed by this request" in shown
    assert "Traceback" not in page.content() and "OperationalError" not in shown
    reference = page.locator(".error-reference code").inner_text()
    assert reference == answer.headers["x-request-id"]
    failed = logged_failure(log, reference)
    assert failed["reference"] == failed["request_id"] == reference
    assert "Traceback" in failed["exception"] and "worklist" in failed["exception"]


def test_a_form_failing_says_it_may_have_been_recorded(page, served):
    running, log = served
    sign_in(page, running, "clerk.belleville", then=f"/{HOME}/cases")
    with renamed_tables(running, "users"):  # who is signed in can no longer be looked up
        with page.expect_navigation() as sent:
            page.get_by_role("button", name="Sign out").click()
        assert sent.value.status == 500
        shown = page.locator("main").inner_text()
        assert "may or may not have been recorded" in shown and "Traceback" not in shown
        reference = page.locator(".error-reference code").inner_text()
        assert "Traceback" in logged_failure(log, reference)["exception"]


def test_a_failing_api_route_keeps_its_json_500_with_a_reference(served, broken_worklist):
    running, log = served
    answer = running.api("clerk.belleville", "GET", f"/{HOME}/worklist")
    assert answer.status_code == 500
    body = answer.json()
    assert body["error"] == "server" and body["reference"] in body["detail"]
    assert body["reference"] == answer.headers["x-request-id"]
    assert "Traceback" not in answer.text
    assert "Traceback" in logged_failure(log, body["reference"])["exception"]


@pytest.mark.parametrize("method,path,api_path,status", [
    ("GET", "/no/such/page/at/all", "/no/such/route", 404),
    ("DELETE", f"/{HOME}/", f"/{HOME}/worklist", 405),
    ("GET", "/admin/users", "/admin/users", 403)])
def test_missing_refused_and_wrong_method_are_pages_for_pages_and_json_for_the_api(
        clients, served, method, path, api_path, status):
    assert_page(clients["clerk.belleville"].request(method, path), status)
    running, _ = served
    api = running.api("clerk.belleville", method, api_path)
    assert api.status_code == status and api.json()["error"]


def test_a_page_without_a_session_sends_to_sign_in_and_the_api_answers_401(served):
    running, _ = served
    page_answer = httpx.get(f"{running.base}/{HOME}/", headers=HTML, follow_redirects=False)
    assert page_answer.status_code == 303 and "/sign-in" in page_answer.headers["location"]
    api = httpx.get(f"{running.base}/api/v1/{HOME}/worklist")
    assert api.status_code == 401 and api.json()["error"]

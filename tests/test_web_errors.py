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
    (f"/{HOME}/repeat-offenders", {"as_of": ["garbage", LONG, "9999-01-01"]}),
    (f"/{HOME}/tax-roll", {"tax_year": ["abc", "99999", LONG], "county": ["Nowhere", LONG]}),
    (f"/{HOME}/tax-roll/certify", {"tax_year": ["abc"], "county": ["Nowhere"]}),
    (f"/{HOME}/tax-roll.csv", {"tax_year": ["abc", LONG], "county": ["Nowhere"]}),
    (f"/{HOME}/tax-roll/certified-list.pdf", {"tax_year": ["abc"], "county": ["Nowhere"]}),
    (f"/{HOME}/audit/cases/{CASE}", {"as_of": ["garbage", LONG], "known_at": ["garbage", LONG]}),
    (f"/{HOME}/cases/{CASE}", {"done": ["garbage", LONG]}),
    (f"/{HOME}/", {"unknown": [LONG]}),
    (f"/{HOME}/charts", {"unknown": ["abc"]}),
    (f"/{HOME}/cases/new", {"unknown": ["abc"]}),
    ("/admin/users", {"done": ["garbage", LONG], "user": [LONG]}),
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

"""What a browser is told to trust, tried against ``abate serve``: every page carries a
Content-Security-Policy that Chromium enforces without refusing anything the pages
themselves use (their script, styles, the charts' SVG, the API docs' Swagger UI), refuses a
script injected into a page, and every answer says ``nosniff``; answers that are not pages
(JSON, a CSV, an error) carry no page policy (only HTML gets one: a browser's PDF viewer
can refuse a document sent with one)."""

from __future__ import annotations

import httpx
import pytest

from tests.api_kit import HOME
from tests.web_kit import add_user, sign_in, site

pytestmark = pytest.mark.slow

PAGES = ("/{h}/", "/{h}/cases", "/{h}/cases/BV-SEC-001", "/{h}/cases/new", "/{h}/charts",
         "/{h}/tax-roll", "/{h}/repeat-offenders", "/{h}/audit/cases/BV-SEC-001",
         "/admin/users", "/docs")


@pytest.fixture(scope="module")
def served_site(tmp_path_factory):
    with site(tmp_path_factory.mktemp("csp")) as running:
        running.open_case("BV-SEC-001")
        add_user(running.database_url, "admin.belleville", "admin", HOME)
        yield running


def _refusals(page) -> list[str]:
    """The browser's console messages about its Content-Security-Policy refusing something."""
    found: list[str] = []
    page.on("console", lambda message: found.append(message.text)
            if "Content Security Policy" in message.text else None)
    return found


def test_every_page_works_under_its_policy_and_the_browser_refuses_nothing(page, served_site):
    refused = _refusals(page)
    sign_in(page, served_site, "admin.belleville", then="/admin/users")
    for path in PAGES[-2:]:
        answer = page.goto(served_site.base + path)
        assert answer.status == 200, path
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    page.wait_for_selector("#swagger-ui .info", timeout=15_000)  # Swagger UI started
    page.context.clear_cookies()
    sign_in(page, served_site, "clerk.belleville", then=f"/{HOME}/")
    for path in PAGES[:-2]:
        answer = page.goto(served_site.base + path.format(h=HOME))
        assert answer.status == 200, path
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self';" in policy and "object-src 'none'" in policy, path
    page.goto(f"{served_site.base}/{HOME}/charts")
    assert page.locator("figure svg").count() >= 1
    assert refused == []


def test_a_script_injected_into_a_page_is_refused(page, served_site):
    """What the policy is for: text that reached a page as markup cannot run as a script."""
    refused = _refusals(page)
    sign_in(page, served_site, "clerk.belleville", then=f"/{HOME}/")
    page.evaluate("""() => {
        const injected = document.createElement('script');
        injected.textContent = 'window.injectedRan = true';
        document.body.appendChild(injected);
    }""")
    assert page.evaluate("() => window.injectedRan === true") is False
    assert any("script-src" in text for text in refused)


def test_documents_lists_and_api_answers_say_nosniff_and_carry_no_page_policy(served_site):
    token = served_site.tokens["clerk.belleville"]
    headers = {"Authorization": f"Bearer {token}"}
    answers = {
        "json": httpx.get(f"{served_site.base}/api/v1/{HOME}/cases", headers=headers),
        "csv": httpx.get(f"{served_site.base}/api/v1/{HOME}/tax-roll",
                         params={"tax_year": 2026}, headers=headers),
        "error": httpx.get(f"{served_site.base}/api/v1/{HOME}/cases/NO-SUCH", headers=headers),
    }
    for what, answer in answers.items():
        assert answer.headers["x-content-type-options"] == "nosniff", what
        assert answer.headers["referrer-policy"] == "same-origin", what
        assert "content-security-policy" not in answer.headers, what
    assert answers["csv"].headers["content-type"].startswith("text/csv")
    assert answers["error"].status_code == 404


def test_the_pages_ask_for_nothing_that_fails_and_their_icon_is_served(page, served_site):
    """Every page links its icon (browsers asked for /favicon.ico otherwise, which the village
    root route answered as a missing village: a console error on every page); a client that
    asks for /favicon.ico itself is sent to the same icon."""
    failed: list[str] = []
    errors: list[str] = []
    page.on("response", lambda answer: failed.append(f"{answer.status} {answer.url}")
            if answer.status >= 400 else None)
    page.on("console", lambda message: errors.append(message.text)
            if message.type == "error" else None)
    sign_in(page, served_site, "clerk.belleville", then=f"/{HOME}/")
    for path in PAGES[:3]:
        assert page.goto(served_site.base + path.format(h=HOME)).status == 200, path
        link = page.query_selector("link[rel=icon]")
        assert link is not None, path
        icon = link.get_attribute("href")
        answer = page.request.get(served_site.base + icon)
        assert answer.status == 200 and answer.headers["content-type"] == "image/svg+xml"
        assert answer.body().startswith(b"<svg")
    assert failed == [] and errors == []
    asked = httpx.get(f"{served_site.base}/favicon.ico")
    assert asked.status_code == 308 and asked.headers["location"] == icon
    assert httpx.get(f"{served_site.base}/favicon.ico", follow_redirects=True).content \
        == answer.body()

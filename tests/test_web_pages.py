"""The web pages in a real browser (headless Chromium through Playwright) against
``abate serve``: signing in and out, the worklist, the case pages and their forms, the
role and village checks, CSRF, accessibility (axe-core) and a 768 px wide screen."""

from __future__ import annotations

import pytest

from tests.api_kit import HOME
from tests.web_kit import sign_in, site

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served_site(tmp_path_factory):
    with site(tmp_path_factory.mktemp("web")) as running:
        running.open_case("BV-WEB-001")
        running.open_case("MZ-WEB-001", "mazomanie")
        yield running


def test_sign_in_shows_the_worklist_and_sign_out_ends_the_session(page, served_site):
    page.goto(f"{served_site.base}/{HOME}/")
    assert "/sign-in" in page.url  # nobody signed in: the sign-in form, then back here
    sign_in(page, served_site, "clerk.belleville", password="not the password at all",
            then=f"/{HOME}/")
    error = page.locator("#password-error")
    assert "do not sign anyone in" in error.inner_text()
    assert page.get_by_label("Password", exact=True).get_attribute("aria-describedby") == "password-error"

    sign_in(page, served_site, "clerk.belleville", then=f"/{HOME}/")
    assert page.url.endswith(f"/{HOME}/")
    heading = page.get_by_role("heading", level=1).inner_text()
    assert "Belleville" in heading and "worklist" in heading
    overdue_or_due = page.locator("table a", has_text="BV-WEB-001")
    assert overdue_or_due.count() >= 1  # the opened case is on the worklist (a notice due)
    assert page.locator("table a", has_text="MZ-WEB-001").count() == 0

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_load_state()
    assert "/sign-in" in page.url
    page.goto(f"{served_site.base}/{HOME}/")
    assert "/sign-in" in page.url  # the session is over

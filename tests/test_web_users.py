"""The admin's users page in a real browser (headless Chromium through Playwright) against
``abate serve``: adding a user (its token shown once and working on the API; a reload adds
no second user), setting a password the user then signs in with, a new token (the old one
refused), disabling a user after a confirmation step (Cancel changes nothing), errors
beside their fields (in an admin's words) and in a summary at the top with nothing
changed and the address the page's own (a form's address opened leads to the page), the
name policy every door shares (names differing only in capitals are one name), an admin
who cannot disable themself, the role and village checks, CSRF, the keyboard and
axe-core."""

from __future__ import annotations

import httpx
import pytest

from tests.abate_command import run_abate
from tests.api_kit import HOME, OTHER
from tests.web_kit import (
    add_user,
    csrf_of,
    in_window,
    post_without_form,
    scrolls_sideways,
    serious_violations,
    sign_in,
    site,
)

pytestmark = pytest.mark.slow
ADMIN = "admin.belleville"
KIMS = "kim's own pass phrase"  # a password only the page sets (never in the server's log)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The site's folder: its store and the server's log (``serve.log``)."""
    return tmp_path_factory.mktemp("web-users")


@pytest.fixture(scope="module")
def admin_site(folder):
    with site(folder) as running:
        running.tokens[ADMIN] = add_user(running.database_url, ADMIN, "admin", HOME)
        yield running


def _row(page, name):
    """The user's rows: their facts, then their "Manage" fold on a row below."""
    return page.locator(f"#users tbody[data-name='{name}']")


def _manage(page, name):
    """Open the user's "Manage" fold (Enter on its summary, as from the keyboard)."""
    row = _row(page, name)
    row.locator("summary[aria-label='Manage %s']" % name).press("Enter")
    return row


def _answer(site, token: str) -> int:
    """The API's answer to ``token`` (200: it signs its user in; 401: refused)."""
    return httpx.get(f"{site.base}/api/v1/{HOME}/cases", timeout=30,
                     headers={"Authorization": f"Bearer {token}"}).status_code


def _add(page, name: str, role: str = "clerk") -> None:
    """Fill the add form with the keyboard, as a person does, and send it with Enter."""
    page.locator("#name").focus()
    page.keyboard.type(name)
    page.get_by_label("Role").select_option(role)
    page.get_by_label("Belleville", exact=True).check()
    page.locator("#name").press("Enter")
    page.wait_for_load_state()


def test_the_admin_adds_a_user_whose_token_is_shown_once_and_works(page, admin_site, folder):
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    assert page.url.endswith("/admin/users")
    names = page.locator("#users tbody th").all_inner_texts()
    assert "clerk.belleville" in names and ADMIN in names
    assert "clerk.mazomanie" not in names  # another village's user is not this admin's
    assert "never" in _row(page, "clerk.belleville").inner_text()  # no page sign-in yet
    assert "set, expires" in _row(page, "clerk.belleville").locator("td").nth(2).inner_text()

    _add(page, "pat.clerk")
    token = page.locator("#token-value").inner_text()
    assert token.startswith("abate_") and "pat.clerk is added" in page.locator(
        "#new-token").inner_text()
    assert _answer(admin_site, token) == 200
    row = _row(page, "pat.clerk").inner_text()
    assert "clerk" in row and "Belleville" in row and "none (signs in with the token)" in row and "active" in row
    page.goto(f"{admin_site.base}/admin/users")
    assert page.locator("#token-value").count() == 0  # shown once, never again
    assert token not in page.content()
    assert token not in (folder / "serve.log").read_text()


def test_a_password_set_on_the_page_signs_the_user_in_and_a_weak_one_is_refused(
        browser, page, admin_site, folder):
    add_user(admin_site.database_url, "kim.inspector", "inspector", HOME, password=None)
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    _manage(page, "kim.inspector")
    field = page.get_by_label("New password for kim.inspector")
    field.fill("too short")
    field.press("Enter")
    page.wait_for_load_state()
    field = page.get_by_label("New password for kim.inspector")
    error_id = field.get_attribute("aria-describedby")
    assert field.get_attribute("aria-invalid") == "true" and error_id
    assert "12 to 128 characters" in page.locator(f"#{error_id}").inner_text()
    assert "none (signs in with the token)" in _row(page, "kim.inspector").inner_text()  # nothing changed
    # the summary at the top says what went wrong and links to the field
    summary = page.get_by_role("alert")
    assert "12 to 128 characters" in summary.inner_text()
    link = summary.get_by_role("link", name="New password for kim.inspector")
    assert link.get_attribute("href") == f"#{field.get_attribute('id')}"
    assert page.url == f"{admin_site.base}/admin/users"  # not the form's POST address
    page.reload()  # reads the page: nothing posted again, no error left
    assert page.get_by_role("alert").count() == 0 and page.url.endswith("/admin/users")
    _manage(page, "kim.inspector")
    field = page.get_by_label("New password for kim.inspector")
    field.fill("too short")
    field.press("Enter")
    page.wait_for_load_state()
    page.get_by_role("alert").get_by_role("link").click()
    assert page.evaluate("document.activeElement.id") == field.get_attribute("id")
    assert serious_violations(page) == []  # the page with an error beside its field

    field.fill(KIMS)
    _row(page, "kim.inspector").get_by_role("button", name="Set password").click()
    page.wait_for_load_state()
    assert "A new password is set for kim.inspector" in page.locator("#done").inner_text()
    assert _row(page, "kim.inspector").locator("td").nth(3).inner_text() == "set"

    context = browser.new_context()
    other = context.new_page()
    try:
        sign_in(other, admin_site, "kim.inspector", password=KIMS)
        assert "/sign-in" not in other.url
    finally:
        context.close()
    page.reload()
    assert "never" not in _row(page, "kim.inspector").locator("td").nth(4).inner_text()
    log = (folder / "serve.log").read_text()
    assert "kim.inspector" in log and KIMS not in log and "too short" not in log


def test_a_new_token_replaces_the_old_one(page, admin_site):
    old = add_user(admin_site.database_url, "lee.clerk", "clerk", HOME, password=None)
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    _manage(page, "lee.clerk").get_by_role("button", name="New token for lee.clerk").click()
    page.wait_for_load_state()
    new = page.locator("#token-value").inner_text()
    assert "the old one signs nobody in" in page.locator("#new-token").inner_text()
    assert page.url == f"{admin_site.base}/admin/users"  # not the form's POST address
    assert new != old and _answer(admin_site, new) == 200 and _answer(admin_site, old) == 401


def test_disabling_asks_first_and_cancel_leaves_the_user_as_they_were(page, admin_site):
    token = add_user(admin_site.database_url, "ray.clerk", "clerk", HOME)
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    _manage(page, "ray.clerk").get_by_role("button", name="Disable ray.clerk").click()
    page.wait_for_load_state()
    assert page.get_by_role("heading", level=1).inner_text() == "Disable ray.clerk?"
    assert ("ray.clerk's token and password will sign nobody in from now on"
            in page.locator("#what-disabling-does").inner_text())
    assert _answer(admin_site, token) == 200  # asking changed nothing
    assert serious_violations(page) == []
    page.get_by_role("link", name="Cancel").click()
    page.wait_for_load_state()
    assert page.url == f"{admin_site.base}/admin/users"
    assert "active" in _row(page, "ray.clerk").inner_text()
    assert _answer(admin_site, token) == 200
    # a post without the confirmation (a hand-made form with its CSRF token) only asks
    assert post_without_form(page, "/admin/users/disable", {
        "csrf_token": csrf_of(page), "name": "ray.clerk"}) == "redirect"
    assert _answer(admin_site, token) == 200
    # and the confirmation without the CSRF token is refused
    assert post_without_form(page, "/admin/users/disable", {
        "name": "ray.clerk", "confirm": "yes"}) == 403
    assert _answer(admin_site, token) == 200


def test_a_disabled_user_signs_in_no_more(browser, page, admin_site):
    token = add_user(admin_site.database_url, "max.auditor", "auditor", HOME)
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    _manage(page, "max.auditor").get_by_role("button", name="Disable max.auditor").click()
    page.wait_for_load_state()
    page.get_by_role("button", name="Confirm: disable max.auditor").click()
    page.wait_for_load_state()
    assert "max.auditor is disabled" in page.locator("#done").inner_text()
    assert "disabled" in _row(page, "max.auditor").inner_text()
    assert _row(page, "max.auditor").locator("form").count() == 0
    assert _answer(admin_site, token) == 401
    context = browser.new_context()
    other = context.new_page()
    try:
        sign_in(other, admin_site, "max.auditor")
        assert "/sign-in" in other.url  # the password signs nobody in
    finally:
        context.close()


def test_a_name_in_use_or_another_village_is_refused_beside_its_field(page, admin_site):
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    before = page.locator("#users tbody tr").count()
    _add(page, "clerk.belleville")
    error = page.locator("#name-error")
    assert "exists already" in error.inner_text()
    assert "/api/" not in error.inner_text() and "New token for" in error.inner_text()
    assert page.locator("#name").get_attribute("aria-invalid") == "true"
    # a village that is not the admin's, posted by hand: refused, nothing added
    status = post_without_form(page, "/admin/users/add", {
        "csrf_token": csrf_of(page), "name": "sam.elsewhere", "role": "clerk",
        "municipalities": OTHER})
    assert status == 403
    page.goto(f"{admin_site.base}/admin/users")
    assert page.locator("#users tbody tr").count() == before
    # another village's user: the same 404 as one that does not exist, nothing changed
    assert post_without_form(page, "/admin/users/disable", {
        "csrf_token": csrf_of(page), "name": "clerk.mazomanie", "confirm": "yes"}) == 404
    answer = page.goto(f"{admin_site.base}/admin/users/disable?name=clerk.mazomanie")
    assert answer.status == 404 and page.get_by_role("button").filter(
        has_text="Confirm").count() == 0
    assert _answer_as(admin_site, "clerk.mazomanie") == 200


def _answer_as(site, user: str) -> int:
    return httpx.get(f"{site.base}/api/v1/{OTHER}/cases", timeout=30,
                     headers={"Authorization": f"Bearer {site.tokens[user]}"}).status_code


def _nav_users(page):
    return page.get_by_role("navigation", name="Main").get_by_role("link", name="Users",
                                                                    exact=True)


def test_only_an_admin_has_the_page_and_every_form_needs_its_csrf_token(page, admin_site):
    sign_in(page, admin_site, "clerk.belleville")
    assert _nav_users(page).count() == 0
    answer = page.goto(f"{admin_site.base}/admin/users")
    assert answer.status == 403 and "Traceback" not in page.content()
    assert post_without_form(page, "/admin/users/rotate", {
        "csrf_token": csrf_of(page), "name": "clerk.belleville"}) == 403
    assert _answer(admin_site, admin_site.tokens["clerk.belleville"]) == 200

    page.context.clear_cookies()
    sign_in(page, admin_site, ADMIN)
    _nav_users(page).click()
    page.wait_for_load_state()
    assert page.url.endswith("/admin/users")
    for path in ("/admin/users/add", "/admin/users/password", "/admin/users/rotate",
                 "/admin/users/disable"):
        assert post_without_form(page, path, {"name": "clerk.belleville",
                                              "password": "x" * 20, "role": "clerk",
                                              "municipalities": HOME,
                                              "confirm": "yes"}) == 403, path
    assert _answer(admin_site, admin_site.tokens["clerk.belleville"]) == 200


@pytest.mark.parametrize("width", [1280, 768])
def test_the_users_page_passes_axe_and_fits_the_width(page, admin_site, width):
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    assert serious_violations(page) == []
    assert not scrolls_sideways(page)
    # each user's forms open below their row, in the window (the table may scroll, they do not)
    manage = _manage(page, ADMIN)
    for button in ("Set password", f"New token for {ADMIN}"):
        assert in_window(page, manage.get_by_role("button", name=button)), (button, width)
    # their own row says why it has no Disable button
    assert in_window(page, manage.get_by_text("You cannot disable your own account"))
    assert in_window(page, manage.get_by_label(f"New password for {ADMIN}"))
    assert serious_violations(page) == []
    assert not scrolls_sideways(page)
    page.reload()
    page.keyboard.press("Tab")  # the skip link first, then the rest in order
    assert page.evaluate("document.activeElement.textContent").strip() == "Skip to the content"


def _names(page) -> list[str]:
    return page.locator("#users tbody th").all_inner_texts()


def test_a_reload_after_add_adds_no_second_user_and_shows_no_error(page, admin_site, folder):
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    _add(page, "ada.clerk")
    token = page.locator("#token-value").inner_text()
    assert page.url == f"{admin_site.base}/admin/users"  # not the form's POST address
    answer = page.reload()
    assert answer.status == 200 and answer.request.method == "GET"
    assert page.get_by_role("alert").count() == 0 and page.locator("#token-value").count() == 0
    assert _names(page).count("ada.clerk") == 1 and token not in page.content()
    assert _answer(admin_site, token) == 200  # the token shown once still works
    assert token not in (folder / "serve.log").read_text()


def test_without_script_a_second_post_of_the_add_and_new_token_forms_does_nothing(
        browser, admin_site, folder):
    """A reload without script posts the form again (as a second click does): its one-time
    key says it was done already; no second user, no second token, no error."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        sign_in(page, admin_site, ADMIN, then="/admin/users")
        key = page.locator("form[action='/admin/users/add'] input[name=form_key]")
        fields = {"csrf_token": csrf_of(page), "form_key": key.get_attribute("value"),
                  "name": "bo.clerk", "role": "clerk", "municipalities": HOME}
        _add(page, "bo.clerk")
        token = page.locator("#token-value").inner_text()
        assert page.url.endswith("/admin/users/add")  # no script: the address stays
        answer = page.reload()  # posts the same form, its key with it
        assert answer.status == 200 and answer.request.method == "POST"
        assert "bo.clerk was added already by this same form" in page.locator(
            "#done").inner_text()
        assert page.get_by_role("alert").count() == 0 and page.locator(
            "#token-value").count() == 0 and token not in page.content()
        assert _names(page).count("bo.clerk") == 1 and _answer(admin_site, token) == 200
        # the same key posted once more by hand: still nothing added, nothing refused
        assert post_without_form(page, "/admin/users/add", fields) == 200

        _manage(page, "bo.clerk").get_by_role("button", name="New token for bo.clerk").click()
        page.wait_for_load_state()
        new = page.locator("#token-value").inner_text()
        page.reload()
        assert "bo.clerk got a new token already from this same form" in page.locator(
            "#done").inner_text()
        assert page.locator("#token-value").count() == 0
        assert _answer(admin_site, new) == 200 and _answer(admin_site, token) == 401
        assert new not in (folder / "serve.log").read_text()
    finally:
        context.close()


@pytest.mark.parametrize("name, shown", [("pat smith", "a space at position 4"),
                                         ("pat!", "'!' (U+0021) at position 4")])
def test_a_name_outside_the_policy_is_refused_by_the_page_the_api_and_the_command(
        page, admin_site, name, shown):
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    before = _names(page)
    _add(page, name)
    assert page.url == f"{admin_site.base}/admin/users"
    assert shown in page.locator("#name-error").inner_text()
    assert page.locator("#name").get_attribute("aria-invalid") == "true"
    summary = page.get_by_role("alert")
    assert shown in summary.inner_text()
    assert summary.get_by_role("link", name="Name").get_attribute("href") == "#name"
    assert page.locator("#name").input_value() == name  # as typed, to be fixed
    assert _names(page) == before  # nothing created

    # the API and the command line refuse the same name the same way
    answer = httpx.post(f"{admin_site.base}/api/v1/admin/users", timeout=30,
                        headers={"Authorization": f"Bearer {admin_site.tokens[ADMIN]}"},
                        json={"name": name, "role": "clerk", "municipalities": [HOME]})
    assert answer.status_code == 422 and answer.json()["field"] == "name"
    assert shown in answer.json()["detail"]
    refused = run_abate("users", "add", "--name", name, "--role", "clerk", "--municipality",
                        HOME, database_url=admin_site.database_url)
    assert refused.returncode == 2 and f"--name: {shown}" in refused.stderr
    assert "Traceback" not in refused.stderr
    page.reload()
    assert _names(page) == before


def test_the_add_forms_errors_are_in_an_admins_words(page, admin_site):
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    before = _names(page)
    page.get_by_label("Token lasts (days, 1 to 3650)").fill("0")
    page.get_by_role("button", name="Add the user").click()
    page.wait_for_load_state()
    assert page.url == f"{admin_site.base}/admin/users"
    said = {field: page.locator(f"#{field}-error").inner_text()
            for field in ("name", "role", "municipalities", "expires_days")}
    assert "enter a user name" in said["name"] and "choose a role" in said["role"]
    assert "choose at least one village" in said["municipalities"]
    assert "a whole number of days from 1 to 3,650" in said["expires_days"]
    summary = page.get_by_role("alert").inner_text()
    assert "there are 4 problems" in summary and "choose a role" in summary
    for pydantic_words in ("String should", "Input should", "List should", "greater than"):
        assert pydantic_words not in page.content(), pydantic_words
    assert _names(page) == before
    assert serious_violations(page) == []


def test_each_form_leaves_the_address_on_the_users_page_and_its_address_opened_leads_there(
        page, admin_site):
    """The address is set back by a script file (none inline: a Content-Security-Policy of
    script-src 'self' would block it); a form's address opened is the users page, not 405."""
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    assert page.locator("script:not([src])").count() == 0
    _add(page, "tam.clerk")
    assert page.url == f"{admin_site.base}/admin/users" and page.locator("#token-value").count()
    _manage(page, "tam.clerk").get_by_role("button", name="New token for tam.clerk").click()
    page.wait_for_load_state()
    assert page.url == f"{admin_site.base}/admin/users" and page.locator("#token-value").count()
    field = _manage(page, "tam.clerk").get_by_label("New password for tam.clerk")
    field.fill("too short")
    field.press("Enter")
    page.wait_for_load_state()
    assert page.get_by_role("alert").count() == 1
    assert page.url == f"{admin_site.base}/admin/users"
    for form in ("add", "rotate", "password"):
        answer = page.goto(f"{admin_site.base}/admin/users/{form}")
        assert answer.status == 200 and answer.request.method == "GET", form
        assert page.url == f"{admin_site.base}/admin/users", form
        assert page.get_by_role("heading", level=1).inner_text() == "Users of Belleville"
    assert _names(page).count("tam.clerk") == 1


def test_an_admin_cannot_disable_themself(page, admin_site):
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    mine = _manage(page, ADMIN)
    assert mine.get_by_role("button", name=f"Disable {ADMIN}").count() == 0
    assert "another admin of your villages can" in mine.inner_text()
    # the confirmation step, its address typed: why not, and no Confirm
    answer = page.goto(f"{admin_site.base}/admin/users/disable?name={ADMIN}")
    assert answer.status == 409
    assert "you cannot disable your own account" in page.get_by_role("alert").inner_text()
    assert page.get_by_role("button", name=f"Confirm: disable {ADMIN}").count() == 0
    assert serious_violations(page) == []
    # the confirmation posted by hand: refused, nothing changed, still signed in
    assert post_without_form(page, "/admin/users/disable", {
        "csrf_token": csrf_of(page), "name": ADMIN, "confirm": "yes"}) == 409
    answer = page.goto(f"{admin_site.base}/admin/users")
    assert answer.status == 200 and page.url.endswith("/admin/users")
    assert "active" in _row(page, ADMIN).inner_text()
    listed = httpx.get(f"{admin_site.base}/api/v1/admin/users", timeout=30,
                       headers={"Authorization": f"Bearer {admin_site.tokens[ADMIN]}"})
    assert listed.status_code == 200  # their token too still works


def test_names_differing_only_in_capitals_are_one_name_on_the_page_and_at_sign_in(
        browser, page, admin_site):
    add_user(admin_site.database_url, "Sam.Insp", "inspector", HOME)
    sign_in(page, admin_site, ADMIN, then="/admin/users")
    _add(page, "sam.insp", role="inspector")
    error = page.locator("#name-error").inner_text()
    assert "a user Sam.Insp exists already; names are the same whatever the capitals" in error
    assert 'New token for Sam.Insp' in error
    names = _names(page)
    assert "Sam.Insp" in names and "sam.insp" not in names
    assert names == sorted(names, key=str.lower)  # as people sort names, capitals or not
    # the command line refuses it the same way
    refused = run_abate("users", "add", "--name", "SAM.INSP", "--role", "clerk",
                        "--municipality", HOME, database_url=admin_site.database_url)
    assert refused.returncode == 1 and "a user Sam.Insp exists already" in refused.stderr
    # signing in finds the user whatever capitals the name is typed in
    context = browser.new_context()
    other = context.new_page()
    try:
        sign_in(other, admin_site, "sam.insp", then=f"/{HOME}/")
        assert other.url.endswith(f"/{HOME}/")
        assert "Sam.Insp (inspector)" in other.locator(".who").inner_text()
    finally:
        context.close()

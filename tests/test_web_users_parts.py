"""The users page shows the admin's users a page at a time (in-process, pages of 2): the
links walk every user once in name order, an offset past the end says so, an unknown part is
a 404, and the answer to a form about a user shows the page holding that user's row."""

from __future__ import annotations

import re

import pytest

from tests.api_kit import HOME, make_api

ROWS = re.compile(r'<tbody id="user-\d+" data-name="([^"]+)">')
NEXT = re.compile(r'href="\?section=users&amp;offset=(\d+)#users" rel="next"')


@pytest.fixture
def admin(tmp_path, monkeypatch):
    monkeypatch.setattr("api.web.users.USER_ROWS", 2)
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    for name in ("zed.clerk", "Amy.clerk", "max.insp"):
        api.add_user(name, "clerk", HOME)
    yield api, api.pages("admin")
    api.services.close()


def test_the_users_page_walks_every_user_once_in_name_order(admin):
    api, client = admin
    seen, offset, pages = [], 0, 0
    while offset is not None:
        shown = client.get("/admin/users", params={"section": "users", "offset": offset})
        assert shown.status_code == 200, shown.text[:2000]
        rows = ROWS.findall(shown.text)
        assert 1 <= len(rows) <= 2
        seen += rows
        found = NEXT.search(shown.text)
        offset, pages = (int(found.group(1)) if found else None), pages + 1
    every = [u.name for u in api.services.accounts.list()
             if set(u.municipalities) <= {HOME}]
    assert seen == every == sorted(every, key=str.lower) and pages == (len(every) + 1) // 2
    assert f"1–2 of {len(every)}" in client.get("/admin/users").text


def test_past_the_end_and_an_unknown_part(admin):
    _, client = admin
    past = client.get("/admin/users", params={"section": "users", "offset": 500})
    assert past.status_code == 200 and not ROWS.findall(past.text)
    assert "No more here" in past.text and "No users yet" not in past.text
    assert 'rel="prev"' not in past.text and "501–500" not in past.text  # no pager there
    assert client.get("/admin/users", params={"section": "parcels"}).status_code == 404
    assert client.get("/admin/users", params={"offset": -1}).status_code == 422


def test_a_form_about_a_user_answers_with_the_page_holding_their_row(admin):
    _, client = admin
    first = client.get("/admin/users")
    assert "zed.clerk" not in ROWS.findall(first.text)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', first.text).group(1)
    refused = client.post("/admin/users/password", data={
        "csrf_token": csrf, "name": "zed.clerk", "password": "short"})
    assert refused.status_code == 422, refused.text[:2000]
    assert "zed.clerk" in ROWS.findall(refused.text)
    assert 'id="password-' in refused.text and "field-error" in refused.text

"""The village settings file (``ABATE_VILLAGE_SETTINGS``, docs/operations.md "The village's
letterhead"): its address and phone printed on a notice downloaded from ``abate serve``, a
notice issued before a change still downloaded to its recorded digest, and a bad file
refused at start-up with one line naming the file, the village and the key."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import pytest

from tests.abate_command import abate_env, assert_one_line_failure, run_abate, run_abate_process
from tests.api_kit import HOME, earlier, open_body, served
from tests.test_documents import one_line, text_of
from tests.web_kit import add_user

FIRST = ('[belleville]\naddress = "24 W Main St, Belleville, WI 53508"\n'
         'phone = "608-424-3341"\n')
MOVED = '[belleville]\naddress = "100 Park St, Belleville, WI 53508"\nphone = "608-424-9999"\n'


def _api(base: str, token: str, method: str, path: str, **kw) -> httpx.Response:
    return httpx.request(method, f"{base}/api/v1/{HOME}{path}", timeout=30,
                         headers={"Authorization": f"Bearer {token}"}, **kw)


def _notices(base: str, token: str, ref: str) -> list[dict]:
    listed = _api(base, token, "GET", f"/cases/{ref}/documents")
    assert listed.status_code == 200, listed.text
    return [d for d in listed.json()["documents"] if d["document"] == "notice_of_violation"]


def _download(base: str, token: str, ref: str, entry: dict) -> str:
    """The notice's words, after checking the file is the one recorded (its SHA-256)."""
    got = _api(base, token, "GET", f"/cases/{ref}/documents/{entry['position']}")
    assert got.status_code == 200, got.text
    assert hashlib.sha256(got.content).hexdigest() == entry["sha256"]
    return one_line(text_of(got.content))


def _issue_notice(base: str, token: str, ref: str) -> None:
    done = _api(base, token, "POST", f"/cases/{ref}/issue_notice_document",
                json={"at": earlier(0)})
    assert done.status_code == 200, done.text


def test_the_settings_file_fills_the_letterhead_and_an_earlier_notice_keeps_its_own(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    clerk = add_user(url, "clerk.belleville", "clerk", HOME, password=None)
    settings = tmp_path / "villages.toml"
    settings.write_text(FIRST, encoding="utf-8")
    with served(url, tmp_path / "first.log", "--without-scheduler",
                ABATE_VILLAGE_SETTINGS=str(settings)) as server:
        assert _api(server.base, clerk, "POST", "/cases",
                    json=open_body("BV-LH1")).status_code == 201
        served_notice = _api(server.base, clerk, "POST", "/cases/BV-LH1/serve_notice",
                             json={"at": earlier(2), "method": "personal",
                                   "served_on": "Ann Owner"})
        assert served_notice.status_code == 200, served_notice.text
        _issue_notice(server.base, clerk, "BV-LH1")
        [first] = _notices(server.base, clerk, "BV-LH1")
        words = _download(server.base, clerk, "BV-LH1", first)
        assert "Address: 24 W Main St, Belleville, WI 53508" in words
        assert "Phone: 608-424-3341" in words
        assert "Questions: Village of Belleville, 24 W Main St, Belleville, WI 53508, phone " \
               "608-424-3341." in words

    # The village moves its office: the file changes, the service starts again.
    settings.write_text(MOVED, encoding="utf-8")
    with served(url, tmp_path / "second.log", "--without-scheduler",
                ABATE_VILLAGE_SETTINGS=str(settings)) as server:
        # The notice mailed before still downloads, byte for byte the one on record.
        earlier_words = _download(server.base, clerk, "BV-LH1", first)
        assert "24 W Main St" in earlier_words and "100 Park St" not in earlier_words
        _issue_notice(server.base, clerk, "BV-LH1")
        newer = [d for d in _notices(server.base, clerk, "BV-LH1")
                 if d["position"] != first["position"]]
        assert len(newer) == 1
        words = _download(server.base, clerk, "BV-LH1", newer[0])
        assert "Address: 100 Park St, Belleville, WI 53508" in words
        assert "Phone: 608-424-9999" in words
        assert "24 W Main St" not in words and "608-424-3341" not in words


@pytest.mark.parametrize("content, fragments", [
    ('[springfield]\nphone = "608-555-0100"\n',
     ("[springfield] is not a village of the rules catalog", "known: belleville, mazomanie")),
    ('[belleville]\nfax = "608-555-0100"\n',
     ("[belleville] fax: not a setting here (allowed: address, phone)",)),
    ('[belleville]\nphone = 6084243341\n', ("[belleville] phone: must be a quoted string",)),
    ('[belleville]\naddress = "   "\n', ("[belleville] address: must not be empty",)),
    (f'[belleville]\naddress = "{"x" * 301}"\n',
     ("[belleville] address: must be at most 300 characters",)),
    (f'[belleville]\nphone = "{"6" * 41}"\n',
     ("[belleville] phone: must be at most 40 characters",)),
    ('[belleville]\naddress = "24 W Main St\\u0007"\n',
     ("[belleville] address: character U+0007 at position 13 is not allowed",)),
    ('phone = "608-424-3341"\n', ("phone is outside a village's section",)),
    ('[belleville\n', ("not valid TOML", "line 1")),
])
def test_abate_serve_refuses_a_bad_settings_file_naming_file_village_and_key(
        tmp_path, content, fragments):
    settings = tmp_path / "villages.toml"
    settings.write_text(content, encoding="utf-8")
    done = run_abate_process("serve", "--port", "1", env=abate_env(
        f"sqlite:///{tmp_path / 'abate.sqlite3'}", ABATE_VILLAGE_SETTINGS=str(settings)))
    assert_one_line_failure(done, 2, "abate serve: ", f"ABATE_VILLAGE_SETTINGS={settings}: ",
                            *fragments)
    assert not (tmp_path / "abate.sqlite3").exists()  # refused before anything was opened


def test_any_abate_command_refuses_a_settings_file_that_is_not_there(tmp_path):
    missing = tmp_path / "nowhere.toml"
    done = run_abate("rules", env=abate_env(ABATE_VILLAGE_SETTINGS=str(missing)))
    assert_one_line_failure(done, 2, f"abate rules: ABATE_VILLAGE_SETTINGS={missing}: "
                            "no such file")


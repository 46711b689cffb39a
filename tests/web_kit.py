"""A served Abate (``abate serve``) for the browser tests: users of each role with
passwords set by ``abate users set-password``, cases opened over the HTTP API, and
signing in through the sign-in page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.abate_command import abate_env, run_abate
from tests.api_kit import HOME, OTHER, open_body, served

PASSWORD = "long enough pass phrase"
# The users every site has: (name, role, municipality).
USERS = (("clerk.belleville", "clerk", HOME), ("inspector.belleville", "inspector", HOME),
         ("auditor.belleville", "auditor", HOME), ("clerk.mazomanie", "clerk", OTHER))


@dataclass
class Site:
    base: str
    database_url: str
    tokens: dict[str, str] = field(default_factory=dict)

    def api(self, user: str, method: str, path: str, **kw: Any) -> httpx.Response:
        return httpx.request(method, f"{self.base}/api/v1{path}", timeout=30,
                             headers={"Authorization": f"Bearer {self.tokens[user]}"}, **kw)

    def open_case(self, ref: str, municipality: str = HOME, days_ago: float = 3) -> None:
        clerk = f"clerk.{municipality}"
        done = self.api(clerk, "POST", f"/{municipality}/cases",
                        json=open_body(ref, municipality, days_ago))
        assert done.status_code == 201, done.text

    def events(self, ref: str, municipality: str = HOME) -> list[dict[str, Any]]:
        done = self.api(f"clerk.{municipality}", "GET", f"/{municipality}/cases/{ref}/history")
        assert done.status_code == 200, done.text
        return done.json()["events"]


def add_user(database_url: str, name: str, role: str, municipality: str,
             password: str | None = PASSWORD, **env: str) -> str:
    """A user added with ``abate users add`` (its token) and, when given, a password set
    with ``abate users set-password`` reading it from standard input; ``env``: more
    settings (``ABATE_DATABASE_SCHEMA``)."""
    added = run_abate("users", "add", "--name", name, "--role", role,
                      "--municipality", municipality, env=abate_env(database_url, **env))
    assert added.returncode == 0, added.stderr
    if password is not None:
        done = run_abate("users", "set-password", "--name", name, input=password + "\n",
                         env=abate_env(database_url, **env))
        assert done.returncode == 0, done.stderr
    return json.loads(added.stdout)["token"]


@contextmanager
def site(tmp: Path, *options: str, **env: str) -> Iterator[Site]:
    """A served Abate on a fresh SQLite file with the USERS (their passwords: PASSWORD);
    ``options`` go to ``abate serve`` (``--without-scheduler``: nothing passes a deadline
    behind the test's back)."""
    url = f"sqlite:///{tmp / 'abate.sqlite3'}"
    tokens = {name: add_user(url, name, role, municipality)
              for name, role, municipality in USERS}
    with served(url, tmp / "serve.log", *options,
                **{"ABATE_WEB_SIGN_IN_LIMIT": "1000/minute", **env}) as server:
        yield Site(server.base, url, tokens)


def sign_in(page: Any, site: Site, name: str, password: str = PASSWORD,
            then: str = "/") -> None:
    """Sign in through the page's password form as a person does (keyboard and click)."""
    page.goto(f"{site.base}/sign-in?next={then}")
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_load_state()


AXE = Path(__file__).parent / "vendor" / "axe.min.js"


def serious_violations(page: Any) -> list[str]:
    """axe-core's serious and critical accessibility violations on the page as it stands."""
    # Evaluated through the browser's debugging protocol, not added as a <script>: the
    # pages' Content-Security-Policy refuses inline scripts, as it should.
    page.evaluate(AXE.read_text(encoding="utf-8"))
    found = page.evaluate("""async () => {
        const result = await axe.run(document, {resultTypes: ['violations']});
        return result.violations.filter(v => ['serious', 'critical'].includes(v.impact))
            .map(v => v.id + ': ' + v.help + ' at ' + v.nodes.map(n => n.target.join(' ')).join(', '));
    }""")
    return list(found)


def scrolls_sideways(page: Any) -> bool:
    """Whether the page is wider than the window (a horizontal scroll bar)."""
    return bool(page.evaluate(
        "() => document.documentElement.scrollWidth > document.documentElement.clientWidth"))


def lines_of(locator: Any) -> int:
    """How many lines the element's text is laid out on (its text's boxes at distinct heights)."""
    return int(locator.evaluate("""e => {
        const range = document.createRange();
        range.selectNodeContents(e);
        const tops = [...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top));
        return new Set(tops).size;
    }"""))


def in_window(page: Any, locator: Any) -> bool:
    """Whether the element lies across the window's width, reachable without scrolling sideways."""
    box = locator.bounding_box()
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"]


def post_without_form(page: Any, path: str, fields: dict[str, str]) -> int | str:
    """A form post the page's own forms do not make (forged, or without a CSRF token),
    sent from the signed-in tab with its cookies; the answer's status, or "redirect"
    (what a recorded command answers: the browser hides a redirect's status)."""
    return page.evaluate("""async ([path, fields]) => {
        const body = new URLSearchParams(fields);
        const answer = await fetch(path, {method: 'POST', body, redirect: 'manual',
                                          headers: {'Accept': 'text/html'}});
        return answer.type === 'opaqueredirect' ? 'redirect' : answer.status;
    }""", [path, fields])


def csrf_of(page: Any) -> str:
    return page.locator("input[name=csrf_token]").first.get_attribute("value")

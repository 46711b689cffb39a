"""A served Abate (``abate serve``) for the browser tests: users of each role with
passwords set by ``abate users set-password``, cases opened over the HTTP API, and
signing in through the sign-in page."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.abate_command import ABATE, abate_env, run_abate
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
             password: str | None = PASSWORD) -> str:
    """A user added with ``abate users add`` (its token) and, when given, a password set
    with ``abate users set-password`` reading it from standard input."""
    added = run_abate("users", "add", "--name", name, "--role", role,
                      "--municipality", municipality, database_url=database_url)
    assert added.returncode == 0, added.stderr
    if password is not None:
        done = subprocess.run([ABATE, "users", "set-password", "--name", name],
                              input=password + "\n", env=abate_env(database_url),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    return json.loads(added.stdout)["token"]


@contextmanager
def site(tmp: Path, **env: str) -> Iterator[Site]:
    """A served Abate on a fresh SQLite file with the USERS (their passwords: PASSWORD)."""
    url = f"sqlite:///{tmp / 'abate.sqlite3'}"
    tokens = {name: add_user(url, name, role, municipality)
              for name, role, municipality in USERS}
    with served(url, **{"ABATE_WEB_SIGN_IN_LIMIT": "1000/minute", **env}) as (base, _):
        yield Site(base, url, tokens)


def sign_in(page: Any, site: Site, name: str, password: str = PASSWORD,
            then: str = "/") -> None:
    """Sign in through the page's password form as a person does (keyboard and click)."""
    page.goto(f"{site.base}/sign-in?next={then}")
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_load_state()

"""An API on a fresh store, users of every role, and two cases (one per village)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.accounts import ROLES
from api.app import create_app
from api.services import Services
from api.settings import ApiSettings
from cases.settings import Settings
from tests.abate_command import ABATE, POSTGRES_SESSION_SECRET, abate_env

HOME, OTHER = "belleville", "mazomanie"
HOME_CASE, OTHER_CASE = "BV-API-001", "MZ-API-001"


def earlier(days: float) -> str:
    """A business time ``days`` before now (the API refuses times in the future)."""
    return (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=days)).isoformat()


def open_body(case_ref: str, municipality: str = HOME, days_ago: float = 3) -> dict[str, Any]:
    rule = "belleville:9.13" if municipality == HOME else "mazomanie:360-8"
    number = "0509-123-4567-0" if municipality == HOME else "0806-083-1145-2"
    return {"case_ref": case_ref, "at": earlier(days_ago), "rule": rule,
            "parcel": {"county": "Dane", "number": number}, "site_address": "12 Vine St",
            "owner": {"name": "Ann Owner"}, "description": "dumped furniture"}


@dataclass
class Api:
    app: FastAPI
    client: TestClient
    services: Services
    tokens: dict[tuple[str, str], str] = field(default_factory=dict)  # (role, municipality)

    def as_(self, role: str, municipality: str = HOME) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role, municipality]}"}

    def add_user(self, name: str, role: str, *municipalities: str, **kw: Any) -> str:
        _, token = self.services.accounts.add(name, role, list(municipalities),
                                              now=dt.datetime.now(dt.timezone.utc), **kw)
        return token

    def pages(self, role: str, municipality: str = HOME) -> TestClient:
        """A client of the pages signed in as ``role`` through the sign-in form, with the
        role's token (in-process)."""
        client = TestClient(self.app, headers={"Accept": "text/html"})
        form = client.get("/sign-in")
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
        client.post("/sign-in", follow_redirects=False, data={
            "csrf_token": csrf, "mode": "token", "token": self.tokens[role, municipality]})
        return client


def page_section(html: str, key: str) -> str:
    """The ``<section aria-labelledby="KEY">`` of a page, to its end."""
    start = html.index(f'<section aria-labelledby="{key}">')
    return html[start:html.index("</section>", start)]


def make_api(database_url: str, extra: dict[str, str] | None = None,
             max_body_bytes: int | None = None) -> Api:
    env = {"ABATE_DATABASE_URL": database_url,
           **(POSTGRES_SESSION_SECRET if database_url.startswith("postgresql") else {}),
           **(extra or {})}
    if max_body_bytes:
        env["ABATE_API_MAX_BODY_BYTES"] = str(max_body_bytes)
    settings = ApiSettings.from_env(env)
    if extra and extra.get("SQLALCHEMY_SCHEMA"):
        settings = dataclasses.replace(settings, base=Settings.from_env(
            {**env, "ABATE_DATABASE_SCHEMA": extra["SQLALCHEMY_SCHEMA"]}))
    app = create_app(settings)
    api = Api(app, TestClient(app, raise_server_exceptions=False), app.state.services)
    for role in ROLES:
        for municipality in (HOME, OTHER):
            api.tokens[role, municipality] = api.add_user(f"{role}.{municipality}", role,
                                                          municipality)
    return api


def database_for(request: Any, tmp_path: Any) -> tuple[str, dict[str, str], str | None]:
    """(url, extra env, schema) of a SQLite file, or of a fresh PostgreSQL schema when the
    fixture's param is "postgres": an API and the installed ``abate`` can share it."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'abate.sqlite3'}", {}, None
    from tests.conftest import _fresh_postgres_schema

    url, extra = _fresh_postgres_schema(request.getfixturevalue("postgres_database"))
    return url, extra, extra["SQLALCHEMY_SCHEMA"]


def with_cases(api: Api) -> Api:
    """One open case in each village (opened by each village's clerk)."""
    for municipality, ref in ((HOME, HOME_CASE), (OTHER, OTHER_CASE)):
        done = api.client.post(f"/api/v1/{municipality}/cases", json=open_body(ref, municipality),
                               headers=api.as_("clerk", municipality))
        assert done.status_code == 201, done.text
    return api


def another_worker(api: Api, **settings: Any) -> Api:
    """A second app on the same database, with its own store, views and locks (as another
    uvicorn worker would be), and the same users; ``settings`` replace the first's."""
    app = create_app(dataclasses.replace(api.services.settings, **settings))
    return Api(app, TestClient(app, raise_server_exceptions=False), app.state.services,
               dict(api.tokens))


# The params of a fixture that gives each test an API on SQLite and on PostgreSQL (api_on).
BACKENDS = ("sqlite", pytest.param("postgres", marks=pytest.mark.postgres))


def api_on(request: Any, tmp_path: Any, extra: dict[str, str] | None = None) -> Api:
    """For a fixture parametrized "sqlite" / "postgres": an API on a SQLite file in
    ``tmp_path`` or on a fresh PostgreSQL schema, with the ``extra`` settings."""
    if request.param == "sqlite":
        return make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}", extra)
    from tests.conftest import _fresh_postgres_schema

    url, env = _fresh_postgres_schema(request.getfixturevalue("postgres_database"))
    return make_api(url, {**env, **(extra or {})})


@dataclass
class Running:
    """A started ``abate serve``: its base URL, its process, and the file its output goes to."""

    base: str
    process: subprocess.Popen
    log: Path

    def output(self) -> str:
        """What the server wrote so far (stdout and stderr, in order)."""
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextmanager
def served(database_url: str, log: Path, *options: str, **env: str) -> Iterator[Running]:
    """`abate serve` on a free port (with ``options``, e.g. ``--without-scheduler``),
    answering; stopped after the block. Its output goes to
    ``log`` (a chatty server writing into a pipe nobody reads would fill it and stop);
    when it does not answer, the failure shows the log's tail."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(log, "w") as written:
        process = subprocess.Popen([ABATE, "serve", "--port", str(port), *options],
                                   env=abate_env(database_url, **env),
                                   stdout=written, stderr=subprocess.STDOUT)
    server = Running(f"http://127.0.0.1:{port}", process, log)
    try:
        if not _answering(server):
            raise AssertionError(f"abate serve did not answer (exit code {process.poll()}); "
                                 f"the end of its log:\n{server.output()[-3000:]}")
        yield server
    finally:
        process.terminate()
        process.wait(timeout=30)


def _answering(server: Running, tries: int = 200) -> bool:
    """Whether the server answers /health within ``tries`` tenths of a second (False at
    once when it has exited)."""
    for _ in range(tries):
        if server.process.poll() is not None:
            return False
        try:
            httpx.get(f"{server.base}/health", timeout=1)
            return True
        except httpx.TransportError:
            time.sleep(0.1)
    return False

"""Shared fixtures: stores on every backend, a service, and a journal helper.

PostgreSQL tests run when ABATE_TEST_DATABASE_URL is set (CI sets it). Each
test run creates a fresh database and drops it afterwards, because the server
keeps its data between runs.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from collections.abc import Iterator

import pytest

from cases.application import CaseService
from cases.store import CaseStore

POSTGRES_URL = os.environ.get("ABATE_TEST_DATABASE_URL")
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """A fresh PostgreSQL database for this test run, dropped afterwards."""
    if not POSTGRES_URL:
        pytest.skip("ABATE_TEST_DATABASE_URL is not set")
    import sqlalchemy as sa

    name = f"abate_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(POSTGRES_URL).set(database=name)
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = :name AND pid <> pg_backend_pid()"), {"name": name})
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()


def _fresh_postgres_schema(base_url: str) -> tuple[str, dict[str, str]]:
    import sqlalchemy as sa

    schema = f"s_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(base_url)
    with engine.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    engine.dispose()
    return base_url, {"SQLALCHEMY_SCHEMA": schema}


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request, tmp_path) -> Iterator[tuple[str, dict[str, str]]]:
    """(database URL, extra env) for a fresh, empty store on each backend."""
    if request.param == "memory":
        yield "memory://", {}
    elif request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'abate.sqlite3'}", {}
    else:
        base = request.getfixturevalue("postgres_database")
        yield _fresh_postgres_schema(base)


@pytest.fixture
def any_store(store_url) -> Iterator[CaseStore]:
    url, extra = store_url
    store = CaseStore(url, extra_env=extra)
    yield store
    store.close()


@pytest.fixture
def store() -> Iterator[CaseStore]:
    store = CaseStore("memory://")
    yield store
    store.close()


@pytest.fixture
def service(store) -> CaseService:
    return CaseService(store)


def journal(*commands: dict) -> list[str]:
    return [json.dumps(c) for c in commands]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request, tmp_path) -> tuple[str, dict[str, str], str | None]:
    """(URL, extra env, schema) of a fresh database on each real backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'abate.sqlite3'}", {}, None
    url, extra = _fresh_postgres_schema(request.getfixturevalue("postgres_database"))
    return url, extra, extra["SQLALCHEMY_SCHEMA"]


@pytest.fixture
def views(database):
    """(store, view runner, service using the views) on each real backend."""
    from projections import ALL_VIEWS
    from projections.lookups import ProjectedDueDeadlines, ProjectedRepeatOffenses
    from projections.runner import ViewRunner

    url, extra, schema = database
    store = CaseStore(url, extra_env=extra)
    runner = ViewRunner(store, ALL_VIEWS, schema=schema)
    service = CaseService(store, repeat_offenses=ProjectedRepeatOffenses(runner),
                          due_deadlines=ProjectedDueDeadlines(runner))
    yield store, runner, service
    runner.close()
    store.close()


# ---------------------------------------------------------------- a real browser

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/lib/chromium/chromium")
INSTALL_CHROMIUM = ("the browser tests need Debian's Chromium: apt-get install chromium "
                    "(.ci/run installs it; ABATE_REQUIRE_BROWSER=1 makes its absence a failure)")


def chromium_path() -> str | None:
    return next((p for p in CHROMIUM_PATHS if os.access(p, os.X_OK)), None)


def required_chromium() -> str:
    """The Chromium a browser test drives; without it the test skips, or fails when
    ABATE_REQUIRE_BROWSER=1 (CI): one policy for every test that opens a browser."""
    path = chromium_path()
    if path is None:
        if os.environ.get("ABATE_REQUIRE_BROWSER") == "1":
            pytest.fail(INSTALL_CHROMIUM)
        pytest.skip(INSTALL_CHROMIUM)
    return path


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium (Debian's, driven by Playwright)."""
    path = required_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, headless=True,
                                              args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    """A fresh browser tab with its own cookies (a desk screen's size)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    yield tab
    context.close()


def pytest_collection_modifyitems(config, items):
    """Modules with a test marked ``slow`` go first, each kept whole: two workers take whole
    modules (``--dist loadfile``), and a long one taken last leaves the other worker idle
    until it ends."""
    slow_modules = {item.module.__name__ for item in items
                    if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.module.__name__ not in slow_modules)

"""The sign-in limit as an attacker meets it, through ``abate serve``: an X-Forwarded-For
header is believed only from ABATE_TRUSTED_PROXIES (a client rotating it from anywhere else
is counted at its real address), a password is also counted per account name (many
addresses on one account are limited), and the counts are in the database, so two worker
processes together accept no more than the limit."""

from __future__ import annotations

import re
import socket
import threading
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from api.settings import ApiSettings
from cases.errors import ConfigurationError
from tests.abate_command import abate_env, assert_one_line_failure, run_abate
from tests.api_kit import another_worker, make_api, served
from tests.test_api_serve import _worker_pids

pytestmark = pytest.mark.slow  # run first: conftest.py

HTML = {"Accept": "text/html"}


class Attempts:
    """Sign-in attempts at one served site through one page's CSRF token (a session cookie
    and its form token are all an attacker needs, and both are free to get)."""

    def __init__(self, base: str):
        self.base = base
        with httpx.Client(base_url=base, headers=HTML, timeout=30) as client:
            form = client.get("/sign-in")
            self.token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
            self.cookies = dict(client.cookies)

    def post(self, name: str, forwarded: str | None = None) -> httpx.Response:
        """One wrong password for ``name`` on a new connection, claiming ``forwarded``."""
        headers = {**HTML, **({"X-Forwarded-For": forwarded} if forwarded else {})}
        with httpx.Client(base_url=self.base, timeout=30, cookies=self.cookies) as client:
            return client.post("/sign-in", headers=headers, follow_redirects=False, data={
                "csrf_token": self.token, "mode": "password", "name": name,
                "password": "not the password, a guess", "next": "/"})


def assert_limited(answer: httpx.Response, limit_words: str) -> None:
    """429 in words a person reads, with how long to wait."""
    assert answer.status_code == 429, answer.text[:500]
    wait = int(answer.headers["Retry-After"])
    assert 1 <= wait <= 60
    assert "Too many attempts" in answer.text and f"at most {limit_words}" in answer.text
    assert f"Wait {wait} second" in answer.text and "Traceback" not in answer.text


@pytest.fixture
def site_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'abate.sqlite3'}"


def test_rotating_x_forwarded_for_from_an_untrusted_address_is_limited(site_url, tmp_path):
    """The probe's attack: a new forwarded address (and name) on every try from one host.
    Nothing trusts the header, so every try is the one address 127.0.0.1's."""
    with served(site_url, tmp_path / "serve.log", ABATE_WEB_SIGN_IN_LIMIT="3/minute") as server:
        attempts = Attempts(server.base)
        answers = [attempts.post(f"guess{n}", forwarded=f"203.0.113.{n}") for n in range(1, 6)]
    assert [a.status_code for a in answers] == [401, 401, 401, 429, 429]
    assert_limited(answers[3], "3 a minute")


def _written(pid: int) -> int:
    """Bytes a process has written so far (sockets and files): it grows when it answers."""
    return int(re.search(r"wchar: (\d+)", Path(f"/proc/{pid}/io").read_text()).group(1))


def test_two_worker_processes_together_accept_no_more_than_the_limit(site_url, tmp_path):
    """Attempts spread over both workers of ``abate serve --workers 2``: the count is the
    database's, so the total checked is the limit (each worker counting its own would
    accept up to twice as many)."""
    with served(site_url, tmp_path / "serve.log", "--workers", "2",
                ABATE_WEB_SIGN_IN_LIMIT="5/minute") as server:
        workers = _worker_pids(server.process.pid)
        assert len(workers) == 2
        attempts = Attempts(server.base)
        before = {pid: _written(pid) for pid in workers}
        answers: list[httpx.Response] = []

        def attempt(n: int) -> None:
            answers.append(attempts.post(f"guess{n}", forwarded=f"198.51.100.{n}"))

        for batch in range(6):  # until both workers have answered some (usually the first)
            threads = [threading.Thread(target=attempt, args=(batch * 8 + i,)) for i in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            if all(_written(pid) > before[pid] for pid in workers):
                break
        assert all(_written(pid) > before[pid] for pid in workers), "one worker took them all"
    statuses = [a.status_code for a in answers]
    assert statuses.count(401) == 5 and set(statuses) == {401, 429}, statuses
    assert_limited(next(a for a in answers if a.status_code == 429), "5 a minute")


def test_a_trusted_proxy_names_the_client_and_one_account_is_limited_from_any_address(
        site_url, tmp_path):
    """Behind a proxy listed in ABATE_TRUSTED_PROXIES the forwarded address is the client's:
    one client is limited at its own address, another is not; and one account tried from
    ever new addresses is limited by its name."""
    with served(site_url, tmp_path / "serve.log", ABATE_WEB_SIGN_IN_LIMIT="3/minute",
                ABATE_TRUSTED_PROXIES="127.0.0.1") as server:
        attempts = Attempts(server.base)
        one = [attempts.post(f"guess{n}", forwarded="192.0.2.7") for n in range(4)]
        other = attempts.post("guess9", forwarded="192.0.2.8")
        account = [attempts.post("Clerk.Belleville", forwarded=f"192.0.2.{n}")
                   for n in range(20, 24)]  # any capitals: one account
    assert [a.status_code for a in one] == [401, 401, 401, 429]
    assert other.status_code == 401, other.text[:300]  # its own address, not limited
    assert [a.status_code for a in account] == [401, 401, 401, 429]
    assert_limited(account[3], "3 a minute")


def test_the_counts_are_shared_by_app_instances_on_one_database(site_url):
    """The same through the ASGI app, one attempt at a time on each of two instances (what
    two workers or two hosts are), with the client address the connection's."""
    first = make_api(site_url, {"ABATE_WEB_SIGN_IN_LIMIT": "4/minute"})
    second = another_worker(first)
    statuses = []
    for n in range(6):
        client = (first if n % 2 else second).client
        form = client.get("/sign-in", headers=HTML)
        token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
        statuses.append(client.post("/sign-in", headers=HTML, follow_redirects=False, data={
            "csrf_token": token, "mode": "token", "token": f"abate_wrong{n}"}).status_code)
    assert statuses == [401, 401, 401, 401, 429, 429]
    with first.services.records.connect() as conn:  # kept as digests, never as typed
        keys = conn.execute(sa.text("SELECT key FROM abate_sign_in_attempts")).scalars().all()
    assert keys and all(re.fullmatch(r"[0-9a-f]{64}", k) for k in keys)
    first.services.close()
    second.services.close()


@pytest.mark.parametrize("value", ["10.0.0.300", "proxy.example.org", "*"])
def test_a_trusted_proxy_that_is_not_an_address_is_refused(value, site_url):
    with pytest.raises(ConfigurationError, match="ABATE_TRUSTED_PROXIES"):
        ApiSettings.from_env({"ABATE_TRUSTED_PROXIES": value})
    assert ApiSettings.from_env({"ABATE_TRUSTED_PROXIES": "10.0.0.5, 10.1.0.0/16 ::1"}
                                ).trusted_proxies == ("10.0.0.5/32", "10.1.0.0/16", "::1/128")


def test_abate_serve_refuses_a_bad_trusted_proxy_in_one_line(site_url):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = run_abate("serve", "--port", str(port), "--without-scheduler",
                     env=abate_env(site_url, ABATE_TRUSTED_PROXIES="10.0.0.0/33"))
    assert_one_line_failure(done, 2, "ABATE_TRUSTED_PROXIES", "'10.0.0.0/33'")

"""`abate serve` through the installed command: it serves the API on the configured
database, and a token from `abate users add` on that database works against it."""

from __future__ import annotations

import json

import httpx

from tests.abate_command import run_abate
from tests.api_kit import served


def test_abate_serve_answers_health_and_a_users_token(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    added = run_abate("users", "add", "--name", "kim", "--role", "auditor",
                      "--municipality", "belleville", database_url=url)
    token = json.loads(added.stdout)["token"]
    with served(url) as (base, _):
        health = httpx.get(f"{base}/health", timeout=5)
        assert health.status_code == 200 and health.json()["store"]["reachable"]
        listed = httpx.get(f"{base}/api/v1/belleville/cases",
                           headers={"Authorization": f"Bearer {token}"})
        assert listed.status_code == 200 and listed.json()["cases"] == []
        assert httpx.get(f"{base}/api/v1/belleville/cases").status_code == 401


def test_abate_serve_refuses_a_bad_port_in_one_line():
    done = run_abate("serve", "--port", "99999")
    assert done.returncode == 2 and "a port is 1 to 65535" in done.stderr

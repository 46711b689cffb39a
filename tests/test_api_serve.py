"""`abate serve` through the installed command: it serves the API on the configured
database, and a token from `abate users add` on that database works against it."""

from __future__ import annotations

import json
import socket
import subprocess
import time

import httpx

from tests.abate_command import ABATE, abate_env, run_abate


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_abate_serve_answers_health_and_a_users_token(tmp_path):
    url = f"sqlite:///{tmp_path / 'abate.sqlite3'}"
    added = run_abate("users", "add", "--name", "kim", "--role", "auditor",
                      "--municipality", "belleville", database_url=url)
    token = json.loads(added.stdout)["token"]
    port = _free_port()
    server = subprocess.Popen([ABATE, "serve", "--port", str(port)], env=abate_env(url),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                health = httpx.get(f"{base}/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise AssertionError(f"abate serve did not answer: {server.stderr.read()}")
        assert health.status_code == 200 and health.json()["store"]["reachable"]
        listed = httpx.get(f"{base}/api/v1/belleville/cases",
                           headers={"Authorization": f"Bearer {token}"})
        assert listed.status_code == 200 and listed.json()["cases"] == []
        assert httpx.get(f"{base}/api/v1/belleville/cases").status_code == 401
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_abate_serve_refuses_a_bad_port_in_one_line():
    done = run_abate("serve", "--port", "99999")
    assert done.returncode == 2 and "a port is 1 to 65535" in done.stderr

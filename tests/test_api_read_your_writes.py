"""Read-your-writes over HTTP: a read given the position a command answered sees that
command, when another worker recorded it and when the views are moved by another process
(`abate projections run`), or answers 503 "not yet" once the bounded wait runs out."""

from __future__ import annotations

import subprocess

import pytest

from tests.abate_command import ABATE, abate_env
from tests.api_kit import BACKENDS, HOME, another_worker, api_on, make_api, open_body, with_cases


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request


def _open_on(api, ref):
    done = api.client.post(f"/api/v1/{HOME}/cases", json=open_body(ref),
                           headers=api.as_("clerk"))
    assert done.status_code == 201, done.text
    return done.json()["position"]


def _listed(api, **params):
    return api.client.get(f"/api/v1/{HOME}/cases", params=params, headers=api.as_("attorney"))


def test_a_read_with_the_position_of_another_workers_write_sees_it(backend, tmp_path):
    api = with_cases(api_on(backend, tmp_path))
    writer = another_worker(api)
    try:
        position = _open_on(writer, "BV-RYW-001")
        assert position > api.services.views_position(("case_summaries",))  # views behind
        seen = _listed(api, position=position)
        assert seen.status_code == 200, seen.text
        assert "BV-RYW-001" in [c["case_ref"] for c in seen.json()["cases"]]
        case = api.client.get(f"/api/v1/{HOME}/cases/BV-RYW-001", params={"position": position},
                              headers=api.as_("attorney"))
        assert case.status_code == 200
    finally:
        writer.services.close()
        api.services.close()


def test_with_the_runner_in_its_own_process_a_read_waits_for_it_or_answers_503(backend,
                                                                                tmp_path):
    """ABATE_API_CATCH_UP=runner: the worker never moves the views itself. A read given a
    position the views have not reached waits for `abate projections run` (a process of its
    own, started after the write); with the runner stopped, it is 503 once the wait is out."""
    api = with_cases(api_on(backend, tmp_path, {"ABATE_API_CATCH_UP": "runner",
                                                "ABATE_API_READ_WAIT_SECONDS": "60"}))
    base = api.services.settings.base
    schema = {"ABATE_DATABASE_SCHEMA": base.database_schema} if base.database_schema else {}
    runner = None
    try:
        position = _open_on(api, "BV-RYW-002")
        unsettled = _listed(api)  # no position: the views as they stand
        assert "BV-RYW-002" not in [c["case_ref"] for c in unsettled.json()["cases"]]
        runner = subprocess.Popen(
            [ABATE, "projections", "run", "--poll-seconds", "0.2"],
            env=abate_env(api.services.settings.database_url, **schema),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        waited = _listed(api, position=position)
        assert waited.status_code == 200, waited.text
        assert "BV-RYW-002" in [c["case_ref"] for c in waited.json()["cases"]]
        runner.terminate()
        assert runner.wait(30) == 0, runner.stderr.read()

        position = _open_on(api, "BV-RYW-003")
        quick = another_worker(api, read_wait_seconds=0.5)
        try:
            not_yet = _listed(quick, position=position)
        finally:
            quick.services.close()
        assert not_yet.status_code == 503, not_yet.text
        assert not_yet.json()["error"] == "not_yet" and not_yet.headers["retry-after"]
        assert not_yet.json()["position"] < position
    finally:
        if runner is not None and runner.poll() is None:
            runner.kill()
            runner.wait()
        api.services.close()


def test_a_position_past_the_end_of_the_log_is_422(tmp_path):
    api = with_cases(make_api(f"sqlite:///{tmp_path / 'a.sqlite3'}"))
    try:
        beyond = api.services.head() + 100
        for path in (f"/api/v1/{HOME}/cases", f"/api/v1/{HOME}/cases/BV-API-001"):
            answer = api.client.get(path, params={"position": beyond},
                                    headers=api.as_("clerk"))
            assert answer.status_code == 422 and answer.json()["field"] == "position", answer.text
    finally:
        api.services.close()

"""Past capacity the service answers 503 with Retry-After at once and keeps no backlog.

Through the door a client uses: a burst of concurrent requests at ten times what a served
Abate (``abate serve``, one worker, ``ABATE_API_MAX_IN_FLIGHT=3``) may work on at once;
every request is answered (200, or 503 ``overloaded`` with ``Retry-After``), nothing
fails, and right after the burst the service answers normally. The time limit and the
cap's count are checked in-process on the guard itself (tests of its variations)."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from api.overload import OverloadGuard
from tests.api_kit import HOME
from tests.web_kit import site

CAPACITY = 3


@pytest.fixture(scope="module")
def busy_site(tmp_path_factory):
    with site(tmp_path_factory.mktemp("overload"), "--without-scheduler",
              ABATE_API_MAX_IN_FLIGHT=str(CAPACITY)) as running:
        for n in range(1, 6):
            running.open_case(f"B-O{n}")
        yield running


def _run_apart(coroutine):
    """Run the client's coroutine on a loop of its own thread: a browser test's session
    in the same worker keeps an event loop running on this one."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as error:  # handed back to the test below
            outcome["error"] = error

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


async def _burst(running, requests: int) -> list[httpx.Response]:
    headers = {"Authorization": f"Bearer {running.tokens['clerk.belleville']}"}
    limits = httpx.Limits(max_connections=requests)
    async with httpx.AsyncClient(base_url=f"{running.base}/api/v1", headers=headers,
                                 timeout=60, limits=limits) as client:
        asked = [client.get(f"/{HOME}/cases/B-O{n % 5 + 1}") if n % 2 else
                 client.get(f"/{HOME}/worklist") for n in range(requests)]
        return list(await asyncio.gather(*asked))


def test_a_burst_at_ten_times_capacity_is_answered_and_leaves_no_backlog(busy_site):
    answers = _run_apart(_burst(busy_site, 10 * CAPACITY * 4))
    statuses = {a.status_code for a in answers}
    assert statuses <= {200, 503}, statuses
    refused = [a for a in answers if a.status_code == 503]
    assert refused, "a burst past capacity refused nothing"
    assert all(a.headers["Retry-After"] == "1" and a.json()["error"] == "overloaded"
               for a in refused)
    assert any(a.status_code == 200 for a in answers)
    # Right after it, the service answers as before: nothing was left queued.
    after = [busy_site.api("clerk.belleville", "GET", f"/{HOME}/cases/B-O1")
             for _ in range(2 * CAPACITY)]
    assert [a.status_code for a in after] == [200] * len(after)
    health = httpx.get(f"{busy_site.base}/health", timeout=10)
    assert health.status_code == 200


def test_a_page_past_capacity_is_a_page_in_words(busy_site):
    async def pages() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=busy_site.base, timeout=60,
                                     limits=httpx.Limits(max_connections=60)) as client:
            return list(await asyncio.gather(*(client.get("/sign-in") for _ in range(60))))

    refused = [a for a in _run_apart(pages()) if a.status_code == 503]
    for answer in refused:
        assert "text/html" in answer.headers["content-type"]
        assert "Abate is busy" in answer.text and "nothing was changed" in answer.text


# ------------------------------------------------------------------ the guard, in-process

def _guarded(seconds: float, **kw) -> tuple[OverloadGuard, list[float]]:
    finished: list[float] = []

    def slow(request):  # a sync route, as Abate's are: it runs in a thread
        time.sleep(float(request.query_params.get("s", "0")))
        finished.append(time.monotonic())
        return PlainTextResponse("done")

    app = Starlette(routes=[Route("/api/v1/slow", slow), Route("/health", slow)])
    return OverloadGuard(app, request_seconds=seconds, **kw), finished


async def _ask(guard: OverloadGuard, *paths: str) -> list[httpx.Response]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=guard),
                                 base_url="http://guard") as client:
        return list(await asyncio.gather(*(client.get(path) for path in paths)))


def test_an_answer_later_than_the_limit_is_503_and_its_work_keeps_its_place():
    guard, finished = _guarded(0.2, max_in_flight=1)

    async def scenario() -> tuple[list[httpx.Response], int, list[httpx.Response]]:
        late = await _ask(guard, "/api/v1/slow?s=0.6")
        held = guard.in_flight  # the slow work still runs after its 503
        meanwhile = await _ask(guard, "/api/v1/slow")
        await asyncio.sleep(0.8)
        return late, held, meanwhile

    (late,), held, (meanwhile,) = _run_apart(scenario())
    assert late.status_code == 503 and late.json()["error"] == "timed_out"
    assert "Idempotency-Key" in late.json()["detail"] and late.headers["Retry-After"] == "1"
    assert held == 1 and meanwhile.status_code == 503
    assert meanwhile.json()["error"] == "overloaded"
    assert len(finished) == 1 and guard.in_flight == 0


def test_health_is_never_refused_and_the_count_returns_to_zero():
    guard, _ = _guarded(5.0, max_in_flight=1)
    answers = _run_apart(_ask(guard, "/api/v1/slow?s=0.3", "/health", "/api/v1/slow"))
    assert [a.status_code for a in answers[:2]] == [200, 200]
    assert answers[2].status_code in (200, 503)
    assert guard.in_flight == 0

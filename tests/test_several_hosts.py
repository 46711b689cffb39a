"""Production's shape across hosts (issue 25, part 6; docs/operations.md, "Several hosts"):
two API hosts, a scheduler host, a view-runner host and a database host, each a network
namespace of its own joined by veth pairs (tests/hosts_kit.py), each running the command
production runs (``abate serve --without-scheduler``, ``abate scheduler``, ``abate
projections run``).

The database host runs a PostgreSQL server of the test's own (``initdb``, listening on that
host's address only) rather than a forwarder to the machine's server, which listens on
127.0.0.1 in the root namespace: so every connection of a host to the database crosses a
network link, as in production, with no process between them that could hide or change a
failure (a forwarder keeps the server's side of a connection open while the host's side is
cut, and resets what a cut network silently drops); and it does not depend on how the
machine's server is set up. The test reads the results over the server's Unix socket, which
no network cut reaches.

A minute and a half: clients drive commands at both API hosts (open a case, serve its notice),
each with an ``Idempotency-Key`` and retried with the same key until answered, as a client
should; each notice's cure deadline falls due during the run. Meanwhile API host 1 is killed
(SIGKILL) with a request in flight and started again, the scheduler is killed and started
again, and API host 2 is cut off from the database network for a while and mended, its
clients still reaching it. Then: every command recorded exactly once, each deadline passed
exactly once, the views as a rebuild makes them, ``abate verify`` clean, and the cut-off
host's clients answered 503 with ``Retry-After`` meanwhile, no request anywhere a 500.

Skipped, with the reason, where the machine cannot make namespaces (not root, no ``ip``);
``.ci/run`` sets ``ABATE_REQUIRE_NETNS=1``, which makes that a failure instead."""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

import httpx
import pytest

from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.runner import ViewRunner
from tests.abate_command import ABATE, abate_env
from tests.api_kit import HOME, open_body
from tests.hosts_kit import Hosts, missing, several_hosts
from tests.test_projections import dump

pytestmark = pytest.mark.slow

REQUIRED = os.environ.get("ABATE_REQUIRE_NETNS") == "1"
PORT = 8000  # each host has its own network stack: the same port on both API hosts
CASES = 48  # four clients, two at each API host
FIRST_DUE, DUE_EVERY = 8.0, 0.5  # seconds after the start: the cure deadlines fall due
# The URL's own time limits (docs/operations.md, "PostgreSQL over a network"): shorter than
# the defaults, so a request on the cut-off host answers within seconds.
LIMITS = "connect_timeout=2&tcp_user_timeout=3000"
HOSTS_ENV = {"ABATE_LOG_FORMAT": "json", "ABATE_SWEEP_SECONDS": "1",
             "ABATE_API_CATCH_UP": "runner",  # the view-runner host moves the views
             "ABATE_API_IDEMPOTENCY_WAIT_SECONDS": "3"}  # a killed request's key: taken over


@pytest.fixture
def hosts(tmp_path):
    why = missing()
    if why is not None:
        if REQUIRED:
            pytest.fail(f"ABATE_REQUIRE_NETNS=1 but {why}")
        pytest.skip(why)
    with several_hosts(tmp_path) as made:
        made.add("db", 10)
        made.add("api1", 21, front=True)
        made.add("api2", 22, front=True)
        made.add("scheduler", 31)
        made.add("views", 41)
        yield made


@dataclass
class Command:
    """One command a client sends until it is answered, with every answer it got:
    (seconds since the start, status or the transport error's name, Retry-After)."""

    host: str
    path: str
    body: dict
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    answers: list[tuple[float, int | str, str | None]] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return bool(self.answers) and self.answers[-1][1] in (200, 201)


class Clients:
    """Clients at the API hosts: each sends its commands in turn, each retried with the same
    ``Idempotency-Key`` after a transport error or a 503 (waiting ``Retry-After``), until
    answered or ``give_up`` seconds after the start."""

    def __init__(self, net: Hosts, token: str, started: float, give_up: float):
        self.net, self.token, self.started, self.give_up = net, token, started, give_up
        self.in_flight = Counter()
        self.lock = threading.Lock()

    def now(self) -> float:
        return time.monotonic() - self.started

    def run(self, host: str, plan: list[tuple[float, Command]]) -> threading.Thread:
        thread = threading.Thread(target=self._send_all, args=(host, plan), daemon=True)
        thread.start()
        return thread

    def _send_all(self, host: str, plan: list[tuple[float, Command]]) -> None:
        base = f"http://{self.net.hosts[host].front}:{PORT}/api/v1/{HOME}"
        with httpx.Client(base_url=base, timeout=30, trust_env=False) as client:
            for not_before, command in plan:
                time.sleep(max(0.0, not_before - self.now()))
                self._send(client, command)

    def _send(self, client: httpx.Client, command: Command) -> None:
        headers = {"Authorization": f"Bearer {self.token}", "Idempotency-Key": command.key}
        while self.now() < self.give_up:
            with self.lock:
                self.in_flight[command.host] += 1
            try:
                answer = client.post(command.path, json=command.body, headers=headers)
            except httpx.TransportError as exc:  # the host is down: try it again shortly
                command.answers.append((self.now(), type(exc).__name__, None))
                time.sleep(0.5)
                continue
            finally:
                with self.lock:
                    self.in_flight[command.host] -= 1
            retry_after = answer.headers.get("retry-after")
            command.answers.append((self.now(), answer.status_code, retry_after))
            if answer.status_code != 503:
                return  # answered (or refused: the checks say so)
            time.sleep(float(retry_after or 1))


def _plans(started_at: dt.datetime) -> list[tuple[str, list[tuple[float, Command]]]]:
    """Four clients' (host, commands): each case's two commands, sent by one client a few
    seconds before its cure deadline falls due (72 hours after the notice, which is dated
    accordingly); the clients take the cases in turn, two at each API host."""
    plans: list[tuple[str, list[tuple[float, Command]]]] = [
        (host, []) for host in ("api1", "api2", "api1", "api2")]
    for i in range(CASES):
        host, plan = plans[i % len(plans)]
        due = FIRST_DUE + i * DUE_EVERY
        served = started_at + dt.timedelta(seconds=due) - dt.timedelta(hours=72)
        ref = f"BV-HOSTS-{i:03d}"
        opened = {**open_body(ref), "at": (served - dt.timedelta(hours=1)).isoformat()}
        notice = {"at": served.isoformat(), "method": "personal", "served_on": "Ann Owner"}
        plan += [(due - 5, Command(host, "/cases", opened)),
                 (due - 4.5, Command(host, f"/cases/{ref}/serve_notice", notice))]
    return plans


def _serve(net: Hosts, host: str, url: str) -> None:
    net.start(host, host, ABATE, "serve", "--host", "0.0.0.0", "--port", str(PORT),
              "--without-scheduler", env=abate_env(url, **HOSTS_ENV))


def _answering(net: Hosts, host: str, within: float = 60) -> None:
    until = time.monotonic() + within
    while time.monotonic() < until:
        if net.processes[host].poll() is not None:
            break
        try:
            httpx.get(f"http://{net.hosts[host].front}:{PORT}/health", timeout=2,
                      trust_env=False)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError(f"{host} did not answer:\n{net.log(host)[-3000:]}")


def _wait_for(what: str, check, within: float, every: float = 0.5) -> None:
    until = time.monotonic() + within
    while not check():
        if time.monotonic() > until:
            raise AssertionError(f"not within {within:g} s: {what}")
        time.sleep(every)


def test_two_api_hosts_a_scheduler_and_a_view_runner_lose_nothing_and_record_once(hosts):
    net = hosts
    url, local = net.start_database("db")
    url = f"{url}?{LIMITS}"
    added = net.run("api1", ABATE, "users", "add", "--name", "inspector.belleville",
                    "--role", "inspector", "--municipality", HOME, env=abate_env(url))
    assert added.returncode == 0, added.stderr
    token = json.loads(added.stdout)["token"]
    net.start("views", "views", ABATE, "projections", "run", env=abate_env(url, **HOSTS_ENV))
    net.start("scheduler", "scheduler", ABATE, "scheduler", env=abate_env(url, **HOSTS_ENV))
    for host in ("api1", "api2"):
        _serve(net, host, url)
    for host in ("api1", "api2"):
        _answering(net, host)

    started_at, started = dt.datetime.now(dt.timezone.utc), time.monotonic()
    plans = _plans(started_at)
    last_due = FIRST_DUE + (CASES - 1) * DUE_EVERY
    clients = Clients(net, token, started, give_up=last_due + 40)
    threads = [clients.run(host, plan) for host, plan in plans]

    # API host 1 dies with a request in flight, and systemd starts it again.
    _wait_for("a request in flight at api1", lambda: clients.now() > 9 and
              clients.in_flight["api1"] > 0, within=20, every=0.005)
    net.kill("api1")
    _serve(net, "api1", url)
    # The scheduler dies between sweeps or in one; deadlines fall due meanwhile.
    time.sleep(max(0.0, 12 - clients.now()))
    net.kill("scheduler")
    time.sleep(3)
    net.start("scheduler", "scheduler", ABATE, "scheduler", env=abate_env(url, **HOSTS_ENV))
    # API host 2 loses the database network for 8 s; its clients still reach it.
    time.sleep(max(0.0, 17 - clients.now()))
    net.cut("api2")
    cut_at = clients.now()
    time.sleep(8)
    net.mend("api2")
    mended_at = clients.now()

    for thread in threads:
        thread.join(timeout=clients.give_up + 30)
    commands = [command for _, plan in plans for _, command in plan]
    undone = [(c.path, c.answers[-3:]) for c in commands if not c.done]
    assert not undone, f"commands never answered 2xx: {undone[:5]}"

    store = CaseStore(local)
    try:
        passed = lambda: sum(1 for _ in store.notifications(  # noqa: E731
            topics=("abate.case:Case.DeadlinePassed",)))
        _wait_for(f"{CASES} deadlines passed", lambda: passed() >= CASES, within=60)
        for host in ("api1", "api2", "scheduler"):
            assert net.stop(host) == 0, net.log(host)[-3000:]
        runner = ViewRunner(store, ALL_VIEWS)
        try:
            _wait_for("the view-runner host at the end of the log",
                      lambda: {s.lag for s in runner.status()} == {0}, within=60)
            assert net.stop("views") == 0, net.log("views")[-3000:]
            _check_once(store, commands)
            _check_views_equal_a_rebuild(net, url, runner)
        finally:
            runner.close()
    finally:
        store.close()
    _check_answers(net, commands, cut_at, mended_at)


def _check_once(store: CaseStore, commands: list[Command]) -> None:
    """Each command's event is stored once (its id derives from user and key), and each
    case's cure deadline passed once."""
    by_command: Counter = Counter()
    deadlines: Counter = Counter()
    for notification in store.notifications():
        event = store.mapper.to_domain_event(notification)
        kind = type(event).__name__
        if kind == "DeadlinePassed":
            deadlines[(event.originator_id, event.name)] += 1
        elif getattr(event, "command_id", None):
            by_command[event.command_id] += 1
    assert len(by_command) == len(commands) and set(by_command.values()) == {1}, \
        Counter(by_command.values())
    assert len(deadlines) == CASES and set(deadlines.values()) == {1}, deadlines
    assert {name for _, name in deadlines} == {"cure"}


def _check_views_equal_a_rebuild(net: Hosts, url: str, runner: ViewRunner) -> None:
    """The views the hosts kept (the API hosts' look-ups and the view-runner host) are
    what ``abate projections rebuild`` makes from the events; ``abate verify`` is clean."""
    kept = dump(runner)
    for command in (("projections", "rebuild"), ("verify",)):
        done = net.run("views", ABATE, *command, env=abate_env(url))
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    assert {s.generation for s in runner.status()} == {2}  # rebuilt, and read from there
    assert dump(runner) == kept


def _check_answers(net: Hosts, commands: list[Command], cut_at: float,
                   mended_at: float) -> None:
    """No 500 anywhere; the cut-off host's clients got 503 with Retry-After while it was
    cut, and a 2xx after; API host 1's clients met it down and had it answer again."""
    answers = [(c.host, *answer) for c in commands for answer in c.answers]
    assert not [a for a in answers if a[2] == 500], "a 500"
    for host in ("api1", "api2"):
        log = net.log(host)
        assert "request_failed_unexpectedly" not in log and "Traceback" not in log, log[-3000:]
    during_cut = [a for a in answers if a[0] == "api2" and cut_at <= a[1] <= mended_at + 5]
    assert any(status == 503 and retry for _, _, status, retry in during_cut), during_cut
    assert "store_unreachable" in net.log("api2")
    assert any(isinstance(a[2], str) for a in answers if a[0] == "api1")  # it was down

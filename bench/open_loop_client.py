"""The open-loop load generator of ``python -m bench --only load``, run in a process of its
own (``python -m bench.open_loop_client`` < plan.json) so that its CPU is not the server's
nor the benchmark's.

Open loop: request i of the plan is sent at t0 + i / rate whether or not the earlier ones
were answered, each on the keep-alive connection idle longest (OPENED_FIRST are opened
before the first request, a new one whenever none is free), and its latency runs from that
*scheduled* time to the last byte of its answer: if this process falls behind (a busy
core), the lag counts in the latency rather than hiding in fewer requests sent (no
coordinated omission). A request not answered within
``timeout`` seconds is counted as a time-out at that latency, and its connection closed.

The HTTP/1.1 client is a few lines over asyncio streams (no client library): the least a
client can add, the same for Abate and for the floor it is set beside.

Input (stdin, JSON): port, token, rate, warmup (requests not recorded, sent first at the
same rate), timeout, plan ([operation, method, path, body or null] per request; a body's
"at" is set to the time it is sent). Output (stdout): a line ``timed`` when the first
recorded request is due, a line ``done`` when the last recorded one has its answer, then
one JSON line: per operation the latencies (s) and the answers counted by kind, the timed
window, how late this process sent (max, s) and its own CPU seconds.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import resource
import signal
import sys
from collections import deque
from typing import Any

MAX_CONNECTIONS = 2000
OPENED_FIRST = 16  # connections opened before the first request, so that the server's
# workers (which accept connections, not requests) all have some: as many clients would


class Connections:
    """Free keep-alive connections to one port, opened as needed, at most MAX_CONNECTIONS."""

    def __init__(self, port: int):
        self.port = port
        self.free: deque[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = deque()
        self.slots = asyncio.Semaphore(MAX_CONNECTIONS)

    async def take(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        await self.slots.acquire()
        while self.free:
            conn = self.free.popleft()  # the one idle longest: the load goes round them all
            if not conn[0].at_eof():
                return conn
            conn[1].close()  # the server closed it (idle past its keep-alive time)
        try:
            return await asyncio.open_connection("127.0.0.1", self.port)
        except BaseException:
            self.slots.release()
            raise

    async def open_first(self, count: int) -> None:
        for _ in range(count):
            self.free.append(await asyncio.open_connection("127.0.0.1", self.port))

    def give_back(self, conn: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                  reusable: bool) -> None:
        if reusable:
            self.free.append(conn)
        else:
            conn[1].close()
        self.slots.release()


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """(status, whether the connection may be used again), the whole answer read."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip().lower()
    keep = headers.get("connection") != "close"
    if "content-length" in headers:
        await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding") == "chunked":
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b""):
                    pass  # trailers
                break
            await reader.readexactly(size + 2)
    else:
        await reader.read()
        keep = False
    return status, keep


async def send(pool: Connections, head: str, body: dict[str, Any] | None) -> int:
    payload = b""
    if body is not None:
        if "at" in body:
            body = {**body, "at": dt.datetime.now(dt.timezone.utc).isoformat()}
        payload = json.dumps(body).encode()
        head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
    conn = await pool.take()
    reusable = False
    try:
        conn[1].write((head + "\r\n").encode("latin-1") + payload)
        status, reusable = await read_answer(conn[0])
        return status
    finally:
        pool.give_back(conn, reusable)


def kind(status: int) -> str:
    return "2xx" if 200 <= status < 300 else "503" if status == 503 else "other"


async def run(config: dict[str, Any]) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    pool = Connections(config["port"])
    rate, warmup, timeout = config["rate"], config["warmup"], config["timeout"]
    common = (f"Host: 127.0.0.1:{config['port']}\r\nAuthorization: Bearer {config['token']}"
              "\r\nAccept: application/json\r\n")
    results: dict[str, dict[str, Any]] = {}
    late = 0.0
    last_answer = 0.0

    async def one(i: int, due: float, op: str, method: str, path: str, body: Any) -> None:
        nonlocal last_answer
        head = f"{method} {path} HTTP/1.1\r\n{common}"
        try:
            outcome = kind(await asyncio.wait_for(send(pool, head, body), timeout))
        except asyncio.TimeoutError:
            outcome = "timeout"
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            outcome = "connection"
        done = loop.time()
        if i >= warmup:
            mine = results.setdefault(op, {"latencies": [], "answers": {}})
            mine["latencies"].append(done - due)
            mine["answers"][outcome] = mine["answers"].get(outcome, 0) + 1
            last_answer = max(last_answer, done)

    await pool.open_first(OPENED_FIRST)
    tasks = []
    t0 = loop.time() + 0.05
    for i, (op, method, path, body) in enumerate(config["plan"]):
        due = t0 + i / rate
        if i == warmup:
            print("timed", flush=True)
        wait = due - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        if i >= warmup:
            late = max(late, loop.time() - due)
        tasks.append(asyncio.ensure_future(one(i, due, op, method, path, body)))
    await asyncio.gather(*tasks)
    print("done", flush=True)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"operations": results, "started": t0 + warmup / rate,
            "window": last_answer - (t0 + warmup / rate), "late": late,
            "client_cpu": usage.ru_utime + usage.ru_stime}


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the benchmark's: it stops us
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * MAX_CONNECTIONS)), hard))
    config = json.load(sys.stdin)
    print(json.dumps(asyncio.run(run(config))), flush=True)


if __name__ == "__main__":
    main()

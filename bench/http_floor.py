"""The floor of ``python -m bench --only load``: what serving the same requests over HTTP
costs with no application behind them, in the same server Abate runs in.

``python -m bench.http_floor --port P --workers N --answers FILE`` runs uvicorn as
``abate serve`` runs it (api/serve.py: the same uvicorn, its default loop and HTTP parser,
``log_level="warning"``, no proxy headers; ``--workers`` processes sharing the port) around
a bare ASGI callable that reads the request's body and answers 200 with the bytes FILE
holds for the request's operation: one answer Abate gave to that operation in the same run,
so the bodies are of the same size. It looks nothing up, checks no token, writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

ANSWERS = "BENCH_HTTP_FLOOR_ANSWERS"  # the workers (new processes) find the file here
_answers: dict[str, bytes] = {}


def operation(method: str, path: str) -> str:
    """Which of the load's operations a request is (bench.open_loop.MIX)."""
    if method == "POST":
        return "record_inspection"
    if "/worklist" in path:
        return "worklist"
    return "case show" if "/cases/" in path else "case list"


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    if not _answers:
        with open(os.environ[ANSWERS]) as f:
            _answers.update({k: v.encode() for k, v in json.load(f).items()})
    more = True
    while more:  # the body, as an application must read it
        more = (await receive()).get("more_body", False)
    body = b'{"status":"ok"}' if scope["path"] == "/health" else \
        _answers[operation(scope["method"], scope["path"])]
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m bench.http_floor")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--answers", required=True)
    args = parser.parse_args()
    os.environ[ANSWERS] = args.answers
    uvicorn.run("bench.http_floor:app", host="127.0.0.1", port=args.port,
                workers=args.workers, log_level="warning", proxy_headers=False)


if __name__ == "__main__":
    main()

"""A TCP forwarder between a server under test and its database, that a test can take away.

``stop()`` closes the listening port and resets every connection through it, as a database
server that went away does (its clients' next read fails, a new connection is refused);
``start()`` opens the same port again. It runs an asyncio loop on a thread of the test's
own process, so nothing outlives the test."""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType


class Forwarder:
    def __init__(self, target_host: str, target_port: int):
        self.target = (target_host, target_port)
        self.port = 0  # chosen by the first start, kept by the next ones
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    def _call(self, coroutine) -> None:
        asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=10)

    def start(self) -> "Forwarder":
        self._call(self._start())
        return self

    def stop(self) -> None:
        self._call(self._stop())

    def close(self) -> None:
        self.stop()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> "Forwarder":
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._pipe, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._open):
            writer.transport.abort()  # a reset, not a polite close
        self._open.clear()

    async def _pipe(self, client_reader: asyncio.StreamReader,
                    client_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.transport.abort()
            return
        self._open |= {client_writer, server_writer}
        await asyncio.gather(_copy(client_reader, server_writer),
                             _copy(server_reader, client_writer))
        self._open -= {client_writer, server_writer}


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()  # one side ended: end the other

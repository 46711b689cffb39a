"""``Idempotency-Key`` on every POST: a retry records nothing twice and gets the first answer.

One ASGI middleware (``IdempotencyMiddleware``, added once in ``create_app``) covers every
POST route, present and future. For a POST carrying the header it:

1. authenticates the bearer token (keys are per user; without a valid token the request
   passes through and the route answers 401);
2. reads the body (bounded by ``api.body``'s limit) and fingerprints the request: SHA-256
   of method, path, query and body bytes;
3. claims ``(user, key)`` in the ``abate_idempotency_keys`` table (primary key: one claim
   wins, also across processes). A key already claimed with another fingerprint is 422; one
   with a stored answer gets that answer again (status, body, ``ETag``; header
   ``Idempotent-Replayed: true``); one still in flight is waited for, and taken over once
   the claim is ``wait`` seconds old (the first process died between recording and
   answering);
4. runs the route, then keeps a 2xx answer for the retries (at least 24 h, then purged);
   any other answer recorded nothing, so the claim is released and the key can be used
   again (fix the body, retry).

Once-only under races and crashes comes from the event store itself, not from this table:
``command_id(request)`` derives a command id from user and key, and a route that records
passes it as the command's ``id`` (when the body gives none). A case holds the ids of the
commands it applied and saves with optimistic concurrency, so a second run of the same
command, however it comes about (a takeover after a crash, a race) records nothing.

A new POST route takes part by doing nothing for the replay and the 422, and by giving
``command_id(request)`` (or ``command_id(request, part)`` for each of several commands) to
the commands it runs. A route whose answer holds a secret (a new user's token) calls
``keep_for_replay(request, body)`` with what a replay may show instead.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

import anyio
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import ApiError, error_response, store_unavailable
from cases.schema_lock import schema_lock

HEADER = "idempotency-key"
KEY_MAX = 255
# Visible ASCII, no spaces or quotes: UUIDs, ULIDs and the like.
_KEY = re.compile(r"^[\x21\x23-\x7e]{1,%d}$" % KEY_MAX)
REPLAYED = "Idempotent-Replayed"
# Answer headers kept with the body for a replay.
_KEPT_HEADERS = ("content-type", "etag", "location")
_STATE = "idempotency"  # request.state key: (user name, key)
_REPLAY_BODY = "idempotency_replay_body"
POLL_SECONDS, POLL_MAX_SECONDS = 0.05, 0.5


def _iso(value: dt.datetime) -> str:
    return value.astimezone(dt.timezone.utc).isoformat(timespec="microseconds")


def command_id(request: Request, part: str = "") -> str | None:
    """The command id for a request with an ``Idempotency-Key`` (None without one): the
    same for every retry of the same user and key, so the case records the command once.
    ``part`` tells apart several commands one request runs (e.g. a line number)."""
    claim = getattr(request.state, _STATE, None)
    if claim is None:
        return None
    user, key = claim
    digest = hashlib.sha256(f"{user}\x00{key}\x00{part}".encode("utf-8", "surrogatepass"))
    return "idem-" + digest.hexdigest()


def openapi_header() -> dict[str, Any]:
    """The header as an OpenAPI parameter (added to every POST operation)."""
    return {"name": "Idempotency-Key", "in": "header", "required": False,
            "description": "any unique text (e.g. a UUID) of yours for this request: a retry "
                           "with the same key and body records nothing twice and gets the "
                           "first answer again; kept at least 24 h",
            "schema": {"type": "string", "minLength": 1, "maxLength": KEY_MAX,
                       "pattern": _KEY.pattern}}


def keep_for_replay(request: Request, body: Any) -> None:
    """What a replay answers instead of this response's body (for answers with a secret)."""
    setattr(request.state, _REPLAY_BODY, body)


@dataclass(frozen=True)
class Stored:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Claim:
    """The outcome of claiming a key: ours to run (``nonce``), or an answer to replay,
    or a key claimed for another request, or one still in flight since ``claimed_at``."""

    nonce: str | None = None
    replay: Stored | None = None
    mismatch: bool = False
    in_flight_since: dt.datetime | None = None


class IdempotencyKeys:
    """The claimed keys and the first answers (one table beside the event store)."""

    def __init__(self, engine: sa.Engine, database_url: str, schema: str | None = None,
                 keep: dt.timedelta = dt.timedelta(hours=24)):
        self.engine = engine
        self.keep = keep
        metadata = sa.MetaData()
        self.table = sa.Table(
            "abate_idempotency_keys", metadata,
            sa.Column("user_name", sa.String(100), primary_key=True),
            sa.Column("key", sa.String(KEY_MAX), primary_key=True),
            sa.Column("fingerprint", sa.String(64), nullable=False),
            sa.Column("created_at", sa.String(40), nullable=False, index=True),
            sa.Column("claimed_at", sa.String(40), nullable=False),
            sa.Column("nonce", sa.String(32), nullable=False),
            sa.Column("status", sa.Integer),
            sa.Column("headers", sa.Text),  # JSON object
            sa.Column("body", sa.LargeBinary),
        )
        with schema_lock(database_url, schema):
            metadata.create_all(engine, checkfirst=True)

    def claim(self, user: str, key: str, fingerprint: str, now: dt.datetime, *,
              take_over_after: dt.timedelta) -> Claim:
        t = self.table.c
        nonce = secrets.token_hex(16)
        with self.engine.begin() as conn:
            inserted = conn.execute(self._insert_if_new().values(
                user_name=user, key=key, fingerprint=fingerprint, created_at=_iso(now),
                claimed_at=_iso(now), nonce=nonce).returning(t.nonce)).first()
            if inserted is not None:
                # and the keys kept long enough go (an indexed delete, usually of nothing)
                conn.execute(self.table.delete().where(t.created_at < _iso(now - self.keep)))
                return Claim(nonce=nonce)
        with self.engine.begin() as conn:
            row = conn.execute(sa.select(self.table).where(
                t.user_name == user, t.key == key)).mappings().first()
            if row is None:  # released meanwhile: claim again
                return self.claim(user, key, fingerprint, now, take_over_after=take_over_after)
            if row["created_at"] < _iso(now - self.keep):  # expired, not purged yet
                conn.execute(self.table.delete().where(t.user_name == user, t.key == key))
                return self.claim(user, key, fingerprint, now, take_over_after=take_over_after)
            if row["fingerprint"] != fingerprint:
                return Claim(mismatch=True)
            if row["status"] is not None:
                return Claim(replay=Stored(row["status"], json.loads(row["headers"]),
                                           row["body"]))
            claimed_at = dt.datetime.fromisoformat(row["claimed_at"])
            if now - claimed_at < take_over_after:
                return Claim(in_flight_since=claimed_at)
            # The first request has been in flight too long: its process died after
            # claiming (maybe after recording). Take over; the command id makes it safe.
            taken = conn.execute(self.table.update().where(
                t.user_name == user, t.key == key, t.nonce == row["nonce"],
                t.status.is_(None)).values(nonce=nonce, claimed_at=_iso(now))
                .returning(t.nonce)).first()
        if taken is None:  # someone else took over or answered meanwhile
            return self.claim(user, key, fingerprint, now, take_over_after=take_over_after)
        return Claim(nonce=nonce)

    def _insert_if_new(self) -> Any:
        """INSERT ... ON CONFLICT DO NOTHING (no error in the server's log for a retry)."""
        dialect = self.engine.dialect.name
        insert = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}[dialect]
        return insert(self.table).on_conflict_do_nothing()

    def keep_answer(self, user: str, key: str, answer: Stored) -> Stored:
        """Store the first answer; if another run of the key stored one first, that one."""
        t = self.table.c
        with self.engine.begin() as conn:
            conn.execute(self.table.update().where(
                t.user_name == user, t.key == key, t.status.is_(None)).values(
                status=answer.status, headers=json.dumps(answer.headers), body=answer.body))
            row = conn.execute(sa.select(t.status, t.headers, t.body).where(
                t.user_name == user, t.key == key)).first()
        if row is None or row.status is None:  # pragma: no cover - released by another run
            return answer
        return Stored(row.status, json.loads(row.headers), row.body)

    def release(self, user: str, key: str, nonce: str) -> None:
        """Forget a claim whose request recorded nothing (the key may be used again)."""
        t = self.table.c
        with self.engine.begin() as conn:
            conn.execute(self.table.delete().where(
                t.user_name == user, t.key == key, t.nonce == nonce, t.status.is_(None)))


def fingerprint(scope: Scope, body: bytes) -> str:
    digest = hashlib.sha256()
    for part in (scope["method"], scope["path"], scope.get("query_string", b"").decode("latin-1")):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\x00")
    digest.update(body)
    return digest.hexdigest()


def _header(scope: Scope, name: str) -> str | None:
    wanted = name.encode("latin-1")
    for key, value in scope.get("headers", ()):
        if key.lower() == wanted:
            return value.decode("latin-1")
    return None


def _bearer(scope: Scope) -> str | None:
    value = _header(scope, "authorization") or ""
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


class IdempotencyMiddleware:
    """Gives every POST with an ``Idempotency-Key`` the behaviour the module describes."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        key = _header(scope, HEADER)
        if key is None:
            await self.app(scope, receive, send)
            return
        if not _KEY.match(key):
            await self._refuse(scope, receive, send, ApiError(
                422, "invalid", f"header Idempotency-Key: 1 to {KEY_MAX} visible ASCII "
                                "characters (no spaces or quotes), e.g. a UUID",
                "Idempotency-Key"))
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._with_key(scope, receive, watched, key)
        except Exception as exc:  # the keys' table is in the store: it may be unreachable
            answer = None if started else store_unavailable(Request(scope, receive), exc)
            if answer is None:
                raise
            await error_response(answer)(scope, receive, send)

    async def _with_key(self, scope: Scope, receive: Receive, send: Send, key: str) -> None:
        """Claim the key, then replay, refuse or run the route (steps 1 to 4 above)."""
        svc = scope["app"].state.services
        token = _bearer(scope)
        user = await run_in_threadpool(svc.accounts.authenticate, token, svc.clock()) \
            if token else None
        if user is None:  # the route answers 401
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        printed = fingerprint(scope, body)
        wait = dt.timedelta(seconds=svc.settings.idempotency_wait_seconds)
        keys: IdempotencyKeys = svc.idempotency
        pause = POLL_SECONDS
        while True:
            claim = await run_in_threadpool(keys.claim, user.name, key, printed, svc.clock(),
                                            take_over_after=wait)
            if claim.in_flight_since is None:
                break
            await anyio.sleep(pause)  # the first request is still running
            pause = min(pause * 2, POLL_MAX_SECONDS)
        if claim.mismatch:
            await self._refuse(scope, receive, send, ApiError(
                422, "idempotency_key_reused", "header Idempotency-Key: this key was used "
                "for another request (another body, route or query); use a new key for a "
                "new request", "Idempotency-Key"))
            return
        if claim.replay is not None:
            await _send(send, claim.replay, replayed=True)
            return
        scope.setdefault("state", {})[_STATE] = (user.name, key)
        try:
            answer = await self._run(scope, body, receive)
        except BaseException:
            await run_in_threadpool(keys.release, user.name, key, claim.nonce)
            raise
        if not 200 <= answer.status < 300:  # nothing recorded: the key may be used again
            await run_in_threadpool(keys.release, user.name, key, claim.nonce)
            await _send(send, Stored(answer.status, answer.all_headers, answer.body))
            return
        kept = Stored(answer.status, answer.kept_headers,
                      answer.body if answer.replay_body is None else answer.replay_body)
        first = await run_in_threadpool(keys.keep_answer, user.name, key, kept)
        if first != kept:  # another run of this key answered first: its answer
            await _send(send, first, replayed=True)
            return
        await _send(send, Stored(answer.status, answer.all_headers, answer.body))

    async def _run(self, scope: Scope, body: bytes, receive: Receive) -> "_Answer":
        """Run the route on the body read already; keep its answer instead of sending it."""
        collector = _Collector()
        given = False

        async def body_then_the_client() -> Message:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # the body is read: only a disconnect can come

        await self.app(scope, body_then_the_client, collector)
        return collector.answer(scope)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, exc: ApiError) -> None:
        await error_response(exc)(scope, receive, send)


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


@dataclass
class _Answer:
    status: int
    all_headers: dict[str, str]
    kept_headers: dict[str, str]
    body: bytes
    replay_body: bytes | None = None


class _Collector:
    """An ASGI ``send`` that keeps the route's answer (to store it before sending it)."""

    def __init__(self) -> None:
        self.status = 500
        self.raw_headers: list[tuple[bytes, bytes]] = []
        self.chunks: list[bytes] = []

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.raw_headers = list(message.get("headers", ()))
        elif message["type"] == "http.response.body":
            self.chunks.append(message.get("body", b""))

    def answer(self, scope: Scope) -> _Answer:
        every = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in self.raw_headers}
        kept = {k: v for k, v in every.items() if k in _KEPT_HEADERS}
        replacement = scope.get("state", {}).get(_REPLAY_BODY)
        return _Answer(self.status, every, kept, b"".join(self.chunks),
                       None if replacement is None else json.dumps(replacement).encode())


async def _send(send: Send, answer: Stored, *, replayed: bool = False) -> None:
    headers = {k: v for k, v in answer.headers.items() if k != "content-length"}
    if replayed:
        headers[REPLAYED.lower()] = "true"
    headers["content-length"] = str(len(answer.body))
    await send({"type": "http.response.start", "status": answer.status,
                "headers": [(k.encode("latin-1"), v.encode("latin-1"))
                            for k, v in headers.items()]})
    await send({"type": "http.response.body", "body": answer.body})

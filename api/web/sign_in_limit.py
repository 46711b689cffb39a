"""How many sign-in attempts the pages accept: ``ABATE_WEB_SIGN_IN_LIMIT`` per client
address and, for a password, per account name, counted in the service's own database so
every worker process and every host counts the same attempts (docs/web.md "Signing in").

The window logic is the ``limits`` library's (a fixed window from the first attempt); the
library keeps its counts in memory, Redis and the like, not in SQL, so ``DatabaseCounts``
is its storage in one table beside the accounts, each count one atomic upsert. Keys are
kept as SHA-256 digests: the names people type (a password typed into the name field
among them) are not kept."""

from __future__ import annotations

import hashlib
import math
import time

import sqlalchemy as sa
from limits import RateLimitItem, parse
from limits.storage import Storage
from limits.strategies import FixedWindowRateLimiter
from sqlalchemy.dialects import postgresql, sqlite

from cases.schema_lock import schema_lock

TABLE = "abate_sign_in_attempts"


class DatabaseCounts(Storage):
    """``limits`` storage in a table of (key digest, count, window end in epoch seconds)."""

    STORAGE_SCHEME = None  # made by hand, never from a URI

    def __init__(self, engine: sa.Engine, database_url: str, schema: str | None):
        super().__init__()
        self.engine = engine
        metadata = sa.MetaData()
        self.table = sa.Table(
            TABLE, metadata,
            sa.Column("key", sa.String(64), primary_key=True),
            sa.Column("count", sa.Integer, nullable=False),
            sa.Column("expires_at", sa.Float, nullable=False, index=True))
        with schema_lock(database_url, schema):
            metadata.create_all(engine, checkfirst=True)

    @property
    def base_exceptions(self) -> type[Exception]:
        return sa.exc.SQLAlchemyError

    @staticmethod
    def _digest(key: str) -> str:
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        """The key's count after adding ``amount``: one statement, so two workers adding
        at once both count (a window that has ended starts again at ``amount``)."""
        now, t = time.time(), self.table.c
        insert = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}[
            self.engine.dialect.name]
        ended = t.expires_at <= now
        upsert = insert(self.table).values(
            key=self._digest(key), count=amount, expires_at=now + expiry
        ).on_conflict_do_update(index_elements=[t.key], set_={
            "count": sa.case((ended, amount), else_=t.count + amount),
            "expires_at": sa.case((ended, now + expiry), else_=t.expires_at),
        }).returning(t.count)
        with self.engine.begin() as conn:
            count = conn.execute(upsert).scalar_one()
            # and the windows long over go (an indexed delete, usually of nothing)
            conn.execute(self.table.delete().where(t.expires_at < now - 86_400))
        return int(count)

    def get(self, key: str) -> int:
        t = self.table.c
        with self.engine.connect() as conn:
            count = conn.execute(sa.select(t.count).where(
                t.key == self._digest(key), t.expires_at > time.time())).scalar()
        return int(count or 0)

    def get_expiry(self, key: str) -> float:
        t = self.table.c
        with self.engine.connect() as conn:
            ends = conn.execute(sa.select(t.expires_at).where(
                t.key == self._digest(key))).scalar()
        return float(ends) if ends is not None else time.time()

    def check(self) -> bool:
        with self.engine.connect() as conn:
            conn.execute(sa.select(1))
        return True

    def reset(self) -> int | None:
        with self.engine.begin() as conn:
            return conn.execute(self.table.delete()).rowcount

    def clear(self, key: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(self.table.delete().where(self.table.c.key == self._digest(key)))


class SignInLimit:
    """``limit`` attempts per window from one client address, and (a password's) for one
    account name from any address."""

    def __init__(self, counts: Storage, limit: str):
        self.item: RateLimitItem = parse(limit)
        self.window = FixedWindowRateLimiter(counts)

    def attempt(self, address: str, account: str | None) -> int:
        """Count one attempt; 0 when it may be checked, else the seconds until it may.
        The address is counted first: an attempt it refuses is not counted against the
        account named (an address already refused cannot lock others' accounts)."""
        keys = [("address", address)]
        if account:
            keys.append(("account", account.strip().lower()))
        for key in keys:
            if not self.window.hit(self.item, *key):
                ends = self.window.get_window_stats(self.item, *key).reset_time
                return max(1, math.ceil(ends - time.time()))
        return 0

    def words(self) -> str:
        """The limit as people say it: "10 a minute", "30 in 2 hours"."""
        unit = self.item.GRANULARITY.name
        if self.item.multiples == 1:
            return f"{self.item.amount} a{'n' if unit == 'hour' else ''} {unit}"
        return f"{self.item.amount} in {self.item.multiples} {unit}s"

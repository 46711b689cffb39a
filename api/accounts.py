"""Accounts: who may call the API, in which role and for which municipalities.

One table beside the event store (``abate_users``), created under the start-up lock like
every other table. A user's token is random (``secrets.token_urlsafe``, 256 bits), shown
once when the user is added, and stored only as its SHA-256: a hash of a secret that
nobody can guess needs no slow hash (argon2 slows down guessing a *password* a person
chose; nobody can guess 256 random bits), and a fast hash lets every request look the
user up by one indexed equality (docs/api.md).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from dataclasses import dataclass
from typing import Annotated, Any

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from api.account_terms import (
    DEFAULT_EXPIRES_DAYS,
    MAX_EXPIRES_DAYS,
    MAX_MUNICIPALITIES,
    ROLES,
    Role,
)
from cases.errors import AbateError, UnknownRuleError, UsageError
from cases.localtime import local_iso
from cases.rules.catalog import default_catalog
from cases.schema_lock import schema_lock
from cases.text_policy import UserName

TOKEN_PREFIX = "abate_"


class NewUser(BaseModel):
    """A user to add: the one validation ``abate users add`` and ``POST admin/users`` share."""

    model_config = ConfigDict(extra="forbid")

    name: UserName = Field(description="the user's name, recorded as the actor on events: "
                                       "letters, digits, '.', '-', '_', '@' (e.g. pat.clerk)")
    role: Role
    municipalities: list[Annotated[str, Field(max_length=32)]] = Field(
        min_length=1, max_length=MAX_MUNICIPALITIES, description="e.g. [\"belleville\"]")
    expires_days: int = Field(DEFAULT_EXPIRES_DAYS, ge=1, le=MAX_EXPIRES_DAYS,
                              description="days until the token expires")

    @field_validator("municipalities")
    @classmethod
    def _known(cls, municipalities: list[str]) -> list[str]:
        catalog = default_catalog()
        for municipality in municipalities:
            try:
                catalog.municipality(municipality)
            except UnknownRuleError as exc:  # names the known ones
                raise ValueError(str(exc)) from None
        return list(dict.fromkeys(municipalities))


class UserExistsError(AbateError):
    """A user of that name exists (revoked or not): names are the actors on events. Names
    are compared whatever the capitals (``Sam.Insp`` and ``sam.insp`` would read as one
    actor); ``existing`` is the name as it was added."""

    def __init__(self, message: str, existing: str = ""):
        super().__init__(message)
        self.existing = existing


class LastAdminError(AbateError):
    """Disabling this admin would leave a village with no enabled admin to manage its users."""


class NoSuchUserError(AbateError):
    """No user of that name."""


class UserRevokedError(AbateError):
    """The user was revoked: a revoked name stays revoked (add a new user instead)."""


@dataclass(frozen=True)
class User:
    name: str
    role: str
    municipalities: tuple[str, ...]
    created_at: str
    expires_at: str
    revoked_at: str | None
    password_set: bool = False  # an admin set a password for the pages (never its hash)
    signed_in_at: str | None = None  # the last sign-in to the pages, if any

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role,
                "municipalities": list(self.municipalities), "created_at": self.created_at,
                "expires_at": self.expires_at, "revoked_at": self.revoked_at}


def _local(user: User) -> str | None:
    """When the user was revoked, in its (first) village's local time, as people read it."""
    place = default_catalog().municipality(user.municipalities[0])
    return local_iso(user.revoked_at, place.time_zone)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", errors="surrogatepass")).hexdigest()


def _iso(value: dt.datetime) -> str:
    return value.astimezone(dt.timezone.utc).isoformat(timespec="seconds")


class Accounts:
    """The users table on one database (the event store's)."""

    def __init__(self, engine: sa.Engine, database_url: str, schema: str | None = None):
        self.engine = engine
        metadata = sa.MetaData()
        self.users = sa.Table(
            "abate_users", metadata,
            sa.Column("name", sa.String(100), primary_key=True),
            sa.Column("role", sa.String(16), nullable=False),
            sa.Column("municipalities", sa.Text, nullable=False),  # JSON list
            sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
            sa.Column("created_at", sa.String(40), nullable=False),
            sa.Column("expires_at", sa.String(40), nullable=False),
            sa.Column("revoked_at", sa.String(40)),
            # Argon2 hash of the password an admin set for the web pages (api/passwords.py)
            sa.Column("password_hash", sa.String(200)),
            # when the user last signed out of the pages: sessions begun before it are over
            # (the session lives in a signed cookie; a copy of it must not outlive sign-out)
            sa.Column("signed_out_at", sa.String(40)),
            # when the user last signed in to the pages (shown to the admin; API calls are
            # in the access log instead)
            sa.Column("signed_in_at", sa.String(40)),
        )
        self._by_token = sa.select(self.users).where(
            self.users.c.token_hash == sa.bindparam("hash"))
        with schema_lock(database_url, schema):
            metadata.create_all(engine, checkfirst=True)
            _add_page_columns(engine)
            _index_folded_names(engine)

    # ------------------------------------------------------------ managing

    def add(self, name: str, role: str, municipalities: list[str], *, now: dt.datetime,
            expires_days: int = DEFAULT_EXPIRES_DAYS,
            expires_at: dt.datetime | None = None) -> tuple[User, str]:
        """A new user and their token (the only time the token exists in clear)."""
        try:
            new = NewUser(name=name, role=role, municipalities=municipalities,
                          expires_days=expires_days)
        except ValidationError as exc:
            raise UsageError(option_errors(exc)) from None
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        user = User(name=new.name, role=new.role, municipalities=tuple(new.municipalities),
                    created_at=_iso(now),
                    expires_at=_iso(expires_at or now + dt.timedelta(days=new.expires_days)),
                    revoked_at=None)
        try:
            with self.engine.begin() as conn:
                _refuse_taken(conn, self.users, user.name)
                conn.execute(self.users.insert().values(
                    name=user.name, role=user.role,
                    municipalities=json.dumps(list(user.municipalities)),
                    token_hash=token_hash(token), created_at=user.created_at,
                    expires_at=user.expires_at))
        except sa.exc.IntegrityError:  # added meanwhile (the folded-name index refuses it)
            with self.engine.connect() as conn:
                _refuse_taken(conn, self.users, user.name)
            raise  # pragma: no cover - some other constraint
        return user, token

    def revoke(self, name: str, *, now: dt.datetime) -> User:
        """Refuse the user's token and password from now on; an admin who is the last
        enabled admin of one of their villages is kept (``LastAdminError``).

        The check and the change are one transaction with the admins locked (rows on
        PostgreSQL; SQLite's write lock, taken by the update before the check reads), so two
        admins disabling each other at once cannot leave a village without one."""
        with self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(sa.select(self.users.c.name).where(
                    self.users.c.role == "admin", self.users.c.revoked_at.is_(None))
                    .order_by(self.users.c.name).with_for_update())
            done = conn.execute(self.users.update().where(
                self.users.c.name == name, self.users.c.revoked_at.is_(None)).values(
                revoked_at=_iso(now)))
            if done.rowcount:
                rows = conn.execute(sa.select(self.users)).mappings()
                refusal = _last_admin_refusal([_user(row) for row in rows], name,
                                              revoked_now=True)
                if refusal:
                    raise LastAdminError(refusal)  # the transaction is rolled back
        user = self.get(name)
        if user is None:
            raise NoSuchUserError(f"no user named {name!r}")
        if not done.rowcount and user.revoked_at is None:  # pragma: no cover - race only
            raise NoSuchUserError(f"could not revoke {name!r}")
        return user

    def last_admin_refusal(self, name: str) -> str | None:
        """Why ``name`` may not be disabled, if it is the only enabled admin of one of its
        villages (nobody would be left to manage that village's users), else None."""
        return _last_admin_refusal(self.list(), name)

    def rotate(self, name: str, *, now: dt.datetime,
               expires_days: int = DEFAULT_EXPIRES_DAYS) -> tuple[User, str]:
        """A new token for the same user, from ``now`` for ``expires_days``; the old token
        is refused from then on. The name, role and municipalities stay as they are."""
        if expires_days < 1:
            raise UsageError(f"--expires-days {expires_days}: at least 1")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self.engine.begin() as conn:
            done = conn.execute(self.users.update().where(
                self.users.c.name == name, self.users.c.revoked_at.is_(None)).values(
                token_hash=token_hash(token),
                expires_at=_iso(now + dt.timedelta(days=expires_days))))
        user = self.get(name)
        if user is None:
            raise NoSuchUserError(f"no user named {name!r}")
        if not done.rowcount:
            raise UserRevokedError(f"{name!r} was revoked at {_local(user)}; a revoked "
                                   "user gets no new token (add a user with a new name)")
        return user, token

    def list(self) -> list[User]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(self.users).order_by(  # as people sort names
                sa.func.lower(self.users.c.name), self.users.c.name)).mappings()
            return [_user(row) for row in rows]

    def get(self, name: str) -> User | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(self.users).where(
                self.users.c.name == name)).mappings().first()
        return _user(row) if row else None

    def set_password(self, name: str, password: str) -> User:
        """Keep ``password`` (checked by the policy, api/passwords.py) as its Argon2 hash;
        the user signs in to the pages with it from now on. A revoked user gets none."""
        from api.passwords import password_hash

        hashed = password_hash(password)
        with self.engine.begin() as conn:
            done = conn.execute(self.users.update().where(
                self.users.c.name == name, self.users.c.revoked_at.is_(None)).values(
                password_hash=hashed))
        user = self.get(name)
        if user is None:
            raise NoSuchUserError(f"no user named {name!r}")
        if not done.rowcount:
            raise UserRevokedError(f"{name!r} was revoked at {_local(user)}; a revoked "
                                   "user gets no password")
        return user

    # ------------------------------------------------------------ authenticating

    def sign_in(self, name: str, password: str) -> User | None:
        """The user if ``password`` is theirs and they are not revoked; the name is found
        whatever its capitals (the name as typed first, for a store from before names were
        compared so). The hash is checked even for an unknown name, so the answer takes as
        long either way."""
        from api.passwords import password_matches

        typed = name[:100]
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(self.users).where(
                sa.func.lower(self.users.c.name) == typed.lower()).order_by(
                (self.users.c.name == typed).desc(), self.users.c.name)).mappings().first()
        stored = row["password_hash"] if row is not None else None
        if not password_matches(password, stored) or row["revoked_at"] is not None:
            return None
        return _user(row)

    def active(self, name: str, now: dt.datetime, *, token_expiry: bool,
               since: dt.datetime | None = None) -> User | None:
        """The signed-in user of a page session begun at ``since``, if still allowed in: not
        revoked, not signed out since, and for a session begun with a token, the token not
        expired."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(self.users).where(
                self.users.c.name == name)).mappings().first()
        if row is None or row["revoked_at"] is not None:
            return None
        if token_expiry and dt.datetime.fromisoformat(row["expires_at"]) <= now:
            return None
        signed_out = row["signed_out_at"]
        if since is not None and signed_out and since <= dt.datetime.fromisoformat(signed_out):
            return None
        return _user(row)

    def note_sign_in(self, name: str, now: dt.datetime) -> None:
        """Remember when ``name`` last signed in to the pages (the admin's users page)."""
        with self.engine.begin() as conn:
            conn.execute(self.users.update().where(self.users.c.name == name).values(
                signed_in_at=_iso(now)))

    def sign_out(self, name: str, now: dt.datetime) -> None:
        """End every page session of ``name`` begun until ``now``."""
        with self.engine.begin() as conn:
            conn.execute(self.users.update().where(self.users.c.name == name).values(
                signed_out_at=now.isoformat()))

    def authenticate(self, token: str, now: dt.datetime) -> User | None:
        """The user holding ``token`` if it is known, not revoked and not expired."""
        if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            return None
        with self.engine.connect() as conn:  # every request: one statement, built once
            row = conn.execute(self._by_token, {"hash": token_hash(token)}).mappings().first()
        if row is None or row["revoked_at"] is not None:
            return None
        if dt.datetime.fromisoformat(row["expires_at"]) <= now:
            return None
        return _user(row)


def _add_page_columns(engine: sa.Engine) -> None:
    """A store made before the web pages has no ``password_hash``, ``signed_out_at`` or
    ``signed_in_at`` column: add them (nullable, so every existing user simply has no
    password until an admin sets one, and has never signed in or out)."""
    columns = {c["name"] for c in sa.inspect(engine).get_columns("abate_users")}
    for name, kind in (("password_hash", "VARCHAR(200)"), ("signed_out_at", "VARCHAR(40)"),
                       ("signed_in_at", "VARCHAR(40)")):
        if name not in columns:
            with engine.begin() as conn:
                conn.execute(sa.text(f"ALTER TABLE abate_users ADD COLUMN {name} {kind}"))


def _refuse_taken(conn: sa.Connection, users: sa.Table, name: str) -> None:
    """Raise ``UserExistsError`` if ``name`` is taken, whatever its capitals: names are the
    actors on events, and ``Sam.Insp`` beside ``sam.insp`` would read as one person."""
    taken = conn.execute(sa.select(users.c.name).where(
        sa.func.lower(users.c.name) == name.lower())).scalars().first()
    if taken is None:
        return
    if taken == name:
        raise UserExistsError(f"a user named {name!r} exists already (names are the actors "
                              "recorded on events, so one is never reused)", taken)
    raise UserExistsError(f"a user {taken} exists already; names are the same whatever the "
                          "capitals", taken)


def _index_folded_names(engine: sa.Engine) -> None:
    """A unique index on the lower-case name, so two adds at once cannot both take a name
    that differs only in capitals. A store from before that rule may hold such a pair: it
    keeps them (no index; each add still checks first)."""
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE UNIQUE INDEX IF NOT EXISTS abate_users_name_folded "
                                 "ON abate_users (lower(name))"))
    except sa.exc.IntegrityError:
        pass


def option_errors(exc: ValidationError) -> str:
    """A ``NewUser`` validation error as ``abate users add`` names its options."""
    options = {"name": "--name", "role": "--role", "municipalities": "--municipality",
               "expires_days": "--expires-days"}
    parts = []
    for error in exc.errors():
        where = str(error["loc"][0]) if error["loc"] else ""
        parts.append(f"{options.get(where, where)}: {_option_problem(error)}")
    return "; ".join(parts)


def _option_problem(error: Any) -> str:
    """One refused option in an operator's words (a length says how long the value was)."""
    kind, limits = error["type"], error.get("ctx") or {}
    if kind == "string_too_long":
        return (f"at most {limits['max_length']:,} characters "
                f"(this has {len(str(error.get('input', ''))):,})")
    if kind in ("string_too_short", "missing"):
        return "required: give a value"
    if kind == "less_than_equal":
        return f"at most {limits['le']:,}, got {error.get('input')}"
    if kind == "greater_than_equal":
        return f"at least {limits['ge']:,}, got {error.get('input')}"
    return str(error["msg"]).removeprefix("Value error, ")


def _last_admin_refusal(users: list[User], name: str, *, revoked_now: bool = False) -> str | None:
    """Why disabling ``name`` leaves one of its villages without an enabled admin, or None;
    ``revoked_now``: ``users`` already show ``name`` disabled (inside the disabling)."""
    this = next((u for u in users if u.name == name), None)
    if this is None or this.role != "admin" or (this.revoked_at is not None and not revoked_now):
        return None
    others = {village for u in users if u.role == "admin" and u.revoked_at is None
              and u.name != name for village in u.municipalities}
    alone = [village.capitalize() for village in this.municipalities if village not in others]
    if not alone:
        return None
    return (f"{name} is the only enabled admin of {', '.join(alone)}: disabling them "
            "would leave nobody to manage the users there; add another admin first")


def _user(row: Any) -> User:
    return User(name=row["name"], role=row["role"],
                municipalities=tuple(json.loads(row["municipalities"])),
                created_at=row["created_at"], expires_at=row["expires_at"],
                revoked_at=row["revoked_at"], password_set=row["password_hash"] is not None,
                signed_in_at=row["signed_in_at"])

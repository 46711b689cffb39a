"""The secrets that sign the pages' session cookies and CSRF tokens, kept outside the
database, so that whoever reads a backup cannot sign a session for anyone.

They come from ``ABATE_WEB_SESSION_SECRET``, or the file ``ABATE_WEB_SESSION_SECRET_FILE``
names, or (SQLite, neither set) a file beside the database that the first start makes, 0600.
PostgreSQL is served by several processes and hosts that must all sign alike, which only the
operator can arrange: there one of the settings is required. Several secrets, separated by
spaces or lines, rotate: the first signs, every one is accepted (docs/web.md "Settings").
The table that once kept the secret in the database is dropped at start (``forget_stored``)."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

import sqlalchemy as sa
import structlog

from cases.errors import ConfigurationError
from cases.schema_lock import schema_lock

MIN_SECRET_LENGTH = 32
SECRET_FILE_SUFFIX = ".session-secret"  # beside the SQLite file: abate.sqlite3.session-secret
OLD_TABLE = "abate_web_secrets"  # where releases before this one kept the secret

log = structlog.get_logger("abate.api")


def split_secrets(text: str, origin: str) -> list[str]:
    """The secrets in ``text`` (the signing one first), each at least 32 characters."""
    found = text.split()
    if not found:
        raise ConfigurationError(f"{origin} holds no secret (a random string of at least "
                                 f"{MIN_SECRET_LENGTH} characters)")
    short = next((n for n, s in enumerate(found, 1) if len(s) < MIN_SECRET_LENGTH), None)
    if short is not None:
        raise ConfigurationError(f"{origin}: each secret must be at least "
                                 f"{MIN_SECRET_LENGTH} characters (a random string); secret "
                                 f"{short} of {len(found)} is shorter")
    return found


def session_secrets(secret: str | None, secret_file: str | None, database_url: str) -> list[str]:
    """The secrets to sign with (first) and to accept: from the settings, else from the
    file beside a SQLite database (made the first time); refused on PostgreSQL."""
    if secret is not None:
        return split_secrets(secret, "ABATE_WEB_SESSION_SECRET")
    if secret_file is not None:
        return _read(Path(secret_file), f"ABATE_WEB_SESSION_SECRET_FILE={secret_file}")
    if database_url.startswith("sqlite"):
        database = database_url.split("///", 1)[-1].split("?", 1)[0] \
            if "///" in database_url else ""
        if database and database != ":memory:":
            path = Path(database).with_name(Path(database).name + SECRET_FILE_SUFFIX)
            _make(path)
            return _read(path, f"the session secret file {path}")
    elif not database_url.startswith("memory"):
        raise ConfigurationError(
            "set ABATE_WEB_SESSION_SECRET or ABATE_WEB_SESSION_SECRET_FILE: on PostgreSQL "
            "every API process and host must sign the pages' sessions with the same secret, "
            "which Abate cannot keep in the database (docs/web.md, Settings)")
    return [secrets.token_urlsafe(48)]  # a private in-memory store: this process alone


def _make(path: Path) -> None:
    """A new secret in ``path``, readable by this user only, unless it exists: written to a
    file of its own first and linked into place, so two processes starting at once both
    read the whole secret of the one that linked first."""
    if path.exists():
        return
    draft = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise ConfigurationError(f"cannot make the session secret file {path}: "
                                 f"{exc.strerror or exc}") from None
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as out:
            out.write(secrets.token_urlsafe(48) + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(draft, path)
            log.info("session_secret_made", path=str(path))
        except FileExistsError:
            pass
    finally:
        draft.unlink(missing_ok=True)


def _read(path: Path, origin: str) -> list[str]:
    """The secrets of a file only its owner may read (or change)."""
    try:
        with open(path, encoding="utf-8") as file:
            mode = os.fstat(file.fileno()).st_mode
            text = file.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigurationError(f"{origin}: cannot read it ({reason})") from None
    if mode & 0o077:
        raise ConfigurationError(
            f"{origin}: other users may read or change it (mode {stat.filemode(mode)}); "
            f"make it the owner's alone: chmod 600 {path}")
    return split_secrets(text, origin)


def forget_stored(engine: sa.Engine, database_url: str, schema: str | None) -> None:
    """Drop the table where releases before this one kept a secret: it signs nothing now,
    and kept it would go on into every backup."""
    with schema_lock(database_url, schema):
        if sa.inspect(engine).has_table(OLD_TABLE):
            with engine.begin() as conn:
                conn.execute(sa.text(f"DROP TABLE IF EXISTS {OLD_TABLE}"))
            log.info("session_secret_table_dropped", table=OLD_TABLE)

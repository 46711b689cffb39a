"""The key that signs the pages' session cookies when no ABATE_WEB_SESSION_SECRET is set:
generated once, kept in the database (``abate_web_secrets``), so every worker process and
every restart signs with the same key and sessions survive a restart."""

from __future__ import annotations

import secrets

import sqlalchemy as sa

from cases.schema_lock import schema_lock

_metadata = sa.MetaData()
_secrets = sa.Table("abate_web_secrets", _metadata,
                    sa.Column("name", sa.String(40), primary_key=True),
                    sa.Column("value", sa.String(200), nullable=False))
SESSION_KEY = "session"


def stored_secret(engine: sa.Engine, database_url: str, schema: str | None) -> str:
    """The kept key, made under the start-up lock the first time (one writer wins)."""
    with schema_lock(database_url, schema):
        _metadata.create_all(engine, checkfirst=True)
        with engine.begin() as conn:
            found = conn.execute(sa.select(_secrets.c.value).where(
                _secrets.c.name == SESSION_KEY)).scalar()
            if found is None:
                found = secrets.token_urlsafe(48)
                conn.execute(_secrets.insert().values(name=SESSION_KEY, value=found))
    return found

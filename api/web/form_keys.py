"""One-time keys for the forms whose answer shows a secret once (a new user's token).

A reload of that answer (without script; with it, the page sets its address back to a GET)
or a second click posts the same form again. The form carries a fresh random key; once its
action is done, the key is kept in the signed session cookie with what was done to whom
(never the token), so a second post of the same key is told "done already" instead of
adding a second user or giving a second token. The session keeps the last few keys only."""

from __future__ import annotations

import re
import secrets
from typing import Any

from fastapi import Request

FIELD = "form_key"
_SESSION = "done_forms"
_KEPT = 8
_KEY = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


def new_key() -> str:
    """A key for one form as it is shown (each form of each page its own)."""
    return secrets.token_urlsafe(18)


def posted_key(posted: Any) -> str | None:
    """The form's key, or None for a post without one (nothing to recognise it by)."""
    key = str(posted.get(FIELD, ""))
    return key if _KEY.match(key) else None


def done_before(request: Request, key: str | None) -> tuple[str, str] | None:
    """``(action, name)`` if a post of ``key`` was done already in this session."""
    if key is None:
        return None
    found = (request.session.get(_SESSION) or {}).get(key)
    return (str(found[0]), str(found[1])) if found else None


def remember(request: Request, key: str | None, action: str, name: str) -> None:
    """Note that the post of ``key`` did ``action`` to ``name`` (the last few kept)."""
    if key is None:
        return
    done = dict(request.session.get(_SESSION) or {})
    done[key] = [action, name]
    request.session[_SESSION] = dict(list(done.items())[-_KEPT:])

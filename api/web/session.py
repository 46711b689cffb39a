"""Who is signed in to the pages, and the CSRF token of their forms.

The session is Starlette's signed cookie (``SessionCookies``: its ``SessionMiddleware``
taking several secrets, set up in ``api.web.install``); it holds the user's name, how they
signed in and when, never a password or token. Every request looks the user up again, so a revoked user (or an
expired token) is signed out at once. Every form carries a CSRF token checked by
fastapi-csrf-protect (double submit: the form's token against the signed cookie)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import itsdangerous
from fastapi import Request
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp

from api.accounts import User
from api.request_log import note_user
from api.roles import may_page

USER, VIA, SINCE, CSRF = "user", "via", "since", "csrf"
_UNKNOWN = object()  # not looked up yet in this request


class SignInRequired(Exception):
    """No one is signed in: the page answers with the sign-in form."""


class PageError(Exception):
    """A page's answer other than success (shown as a friendly page)."""

    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status, self.detail = status, detail


def not_found(what: str) -> PageError:
    return PageError(404, what)


class SessionCookies(SessionMiddleware):
    """Starlette's signed session cookie, signed with the first of ``secrets`` and accepted
    when any of them signed it: a rotation keeps the sessions of the old secret
    (api/session_secret.py)."""

    def __init__(self, app: ASGIApp, secrets: list[str], **options: Any):
        super().__init__(app, secret_key=secrets[0], **options)
        self.signer = itsdangerous.TimestampSigner(oldest_first(secrets))


def oldest_first(secrets: list[str]) -> list[str]:
    """``secrets`` as itsdangerous takes a rotation: it signs with the last."""
    return list(reversed(secrets))


def signed_in_user(request: Request) -> User | None:
    """The signed-in user, looked up again (revoked or expired: nobody), once a request."""
    known = getattr(request.state, "web_user", _UNKNOWN)
    if known is not _UNKNOWN:
        return known
    user = None
    session = request.scope.get("session") or {}
    name = session.get(USER)
    if name:
        svc = request.app.state.services
        settings = svc.settings.web
        since = dt.datetime.fromisoformat(session.get(SINCE, "1970-01-01T00:00:00+00:00"))
        now = svc.clock()
        if now - since <= dt.timedelta(hours=settings.session_hours):
            user = svc.accounts.active(name, now, token_expiry=session.get(VIA) == "token",
                                       since=since)
        if user is None:
            session.clear()
        else:
            note_user(request, user)  # the request's log line names the user
    request.state.web_user = user
    return user


def require(request: Request, page_name: str) -> User:
    """The signed-in user if their role may open ``page_name`` (else 403; nobody: sign in)."""
    user = signed_in_user(request)
    if user is None:
        raise SignInRequired()
    if not may_page(user.role, page_name):
        raise PageError(403, f"the role {user.role} may not do this")
    return user


def in_grant(user: User, municipality: str) -> str:
    """The municipality, if the user works there (else the same 404 as an unknown one)."""
    if municipality not in user.municipalities:
        raise not_found(f"no municipality {municipality!r} among yours")
    return municipality


def sign_in(request: Request, user: User, via: str, now: dt.datetime) -> None:
    request.session.clear()  # a new session: nothing carried over from before sign-in
    request.session.update({USER: user.name, VIA: via, SINCE: now.isoformat()})
    request.state.web_user = user


def sign_out(request: Request) -> None:
    """Clear the cookie, and end the user's sessions on the server too: a copy of the
    signed cookie (another tab, a shared computer's cache) no longer signs anyone in."""
    user = signed_in_user(request)
    if user is not None:
        svc = request.app.state.services
        svc.accounts.sign_out(user.name, svc.clock())
    request.session.clear()
    request.state.web_user = None


def _csrf(request: Request) -> Any:
    return request.app.state.web_csrf


def csrf_token(request: Request) -> str:
    """The token this session's forms carry (one a session, so several tabs agree)."""
    session = request.scope.get("session")
    if session is None:
        return ""
    pair = session.get(CSRF)
    if not pair:
        pair = list(_csrf(request).generate_csrf_tokens(request.app.state.web_secrets))
        session[CSRF] = pair
    return pair[0]


def set_csrf_cookie(request: Request, response: Any) -> None:
    """Give the browser the signed half of the session's token (double submit)."""
    session = request.scope.get("session") or {}
    pair = session.get(CSRF)
    if pair:
        _csrf(request).set_csrf_cookie(pair[1], response)


async def check_csrf(request: Request) -> Any:
    """The posted form, if its CSRF token matches the cookie's (else 403, nothing done)."""
    from fastapi_csrf_protect.exceptions import CsrfProtectError

    form = await request.form()
    try:
        await _csrf(request).validate_csrf(request, secret_key=request.app.state.web_secrets)
    except CsrfProtectError:
        raise PageError(403, "the form's security token is missing or stale: reload the "
                             "page and send the form again (nothing was recorded)") from None
    session = request.scope.get("session") or {}
    if session.get(CSRF) and form.get("csrf_token") != session[CSRF][0]:
        raise PageError(403, "the form's security token is not this session's: reload the "
                             "page and send the form again (nothing was recorded)")
    return form

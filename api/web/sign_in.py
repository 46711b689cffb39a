"""Signing in and out of the pages: with the password an admin set (``abate users
set-password``) or with the user's API token; attempts are limited per client address and
per account name (api/web/sign_in_limit.py) and every form carries a CSRF token."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse
from starlette.concurrency import run_in_threadpool

from api.web.render import error_page, page
from api.web.session import check_csrf, require, sign_in, sign_out, signed_in_user
from api.web.sign_in_limit import SignInLimit

FAILED = "that name and password, or that token, do not sign anyone in"


def _next(target: Any) -> str:
    """Where to go after signing in: a path of this site only (no open redirect)."""
    text = str(target or "/")
    parts = urlsplit(text)
    if parts.scheme or parts.netloc or not text.startswith("/") or text.startswith("//") \
            or "\\" in text or any(ord(c) < 32 for c in text):
        return "/"
    return text[:500]


def _too_many(request: Request, limit: SignInLimit, wait: int) -> Any:
    """429 in words, with ``Retry-After``: nothing was checked."""
    answer = error_page(request, 429, (
        f"too many sign-in attempts: at most {limit.words()} for one name or from one "
        f"address; nothing was checked. Wait {wait} second{'s' if wait != 1 else ''} and "
        "try again"))
    answer.headers["Retry-After"] = str(wait)
    return answer


def router(limit: SignInLimit) -> APIRouter:
    """The sign-in routes, the form's post counted by ``limit`` before anything is checked."""
    routes = APIRouter(include_in_schema=False)

    @routes.get("/sign-in", name="page.sign_in")
    def sign_in_form(request: Request, next: str = "/") -> Any:
        if signed_in_user(request) is not None:
            return RedirectResponse(_next(next), status_code=303)
        return page(request, "sign_in.html", {"next": _next(next), "errors": {}, "mode": "password"})

    @routes.post("/sign-in", name="page.sign_in.post")
    async def sign_in_post(request: Request) -> Any:
        form = await check_csrf(request)
        svc = request.app.state.services
        mode = "token" if form.get("mode") == "token" else "password"
        target = _next(form.get("next"))
        name = str(form.get("name") or "").strip()
        # the address as the server saw it: a forwarded one only from ABATE_TRUSTED_PROXIES
        address = request.client.host if request.client else "unknown"
        wait = await run_in_threadpool(limit.attempt, address,  # the name as sign_in reads it
                                       name[:100] if mode == "password" else None)
        if wait:
            return _too_many(request, limit, wait)
        if mode == "token":
            user = await run_in_threadpool(svc.accounts.authenticate,
                                           str(form.get("token") or "").strip(), svc.clock())
        else:  # Argon2 takes a while on purpose: off the event loop
            user = await run_in_threadpool(svc.accounts.sign_in, name,
                                           str(form.get("password") or ""))
        if user is None:
            return page(request, "sign_in.html", {"next": target, "mode": mode, "name": name[:100],
                                                  "errors": {mode: FAILED}}, 401)
        now = svc.clock()
        sign_in(request, user, mode, now)
        await run_in_threadpool(svc.accounts.note_sign_in, user.name, now)
        return RedirectResponse(target, status_code=303)

    @routes.post("/sign-out", name="page.sign_out")
    async def sign_out_post(request: Request) -> Any:
        await check_csrf(request)
        sign_out(request)
        return RedirectResponse("/sign-in", status_code=303)

    @routes.get("/", name="page.home")
    def home(request: Request) -> Any:
        user = require(request, "page.home")
        if user.role != "admin" and len(user.municipalities) == 1:
            return RedirectResponse(f"/{user.municipalities[0]}/", status_code=303)
        return page(request, "home.html", {})

    return routes

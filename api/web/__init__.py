"""The web pages: server-rendered (Jinja2) pages for village staff, served by the API's own
app (``install`` is called once by ``api.app.create_app``), behind the same accounts and
role matrix (``api.roles.PAGE_ROLES``). One module per group of pages: sign_in, worklist,
cases, users (the admin's) and the rest. docs/web.md says how to sign in and what each page shows."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.sessions import SessionMiddleware

from api.web.render import HERE, error_page
from api.web.session import PageError, SignInRequired
from api.web.session_secret import stored_secret

SESSION_COOKIE = "abate_session"
# Paths that are the API's, answered in JSON whatever the browser asks for.
API_PATHS = ("/api/", "/docs", "/redoc", "/openapi.json", "/health")


def _wants_page(request: Request) -> bool:
    path = request.url.path
    return not path.startswith(API_PATHS) and "text/html" in request.headers.get("accept", "")


def install(app: FastAPI) -> None:
    from fastapi_csrf_protect import CsrfProtect
    from slowapi import Limiter
    from slowapi.errors import RateLimitExceeded
    from slowapi.util import get_remote_address

    from api.web import cases, sign_in, worklist

    svc = app.state.services
    settings = svc.settings.web
    secret = settings.session_secret or stored_secret(
        svc.runner.engine, svc.settings.database_url, svc.store.schema)
    app.state.web_secret = secret
    lifetime = settings.session_hours * 3600

    class Csrf(CsrfProtect):  # this app's own configuration (the library keeps it per class)
        pass

    Csrf.load_config(lambda: [("secret_key", secret), ("token_location", "body"),
                              ("token_key", "csrf_token"), ("cookie_key", "abate_csrf"),
                              ("cookie_samesite", "lax"), ("cookie_secure", settings.https),
                              ("max_age", lifetime)])
    app.state.web_csrf = Csrf()
    limiter = Limiter(key_func=get_remote_address, storage_uri="memory://")
    app.state.limiter = limiter

    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    # Before the case pages, whose /{municipality}/cases/{case_ref} would take .../cases/new.
    from api.web import (audit, charts, nav, new_case, repeat_offenders, tax_roll,  # noqa: F401
                         users)
    for pages in (users, new_case, tax_roll, repeat_offenders, audit, charts):
        app.include_router(pages.router)
    app.include_router(sign_in.router(limiter, settings.sign_in_limit))
    app.include_router(worklist.router)
    app.include_router(cases.router)
    app.include_router(worklist.last_router)  # last: it takes any one-segment path
    app.add_middleware(SessionMiddleware, secret_key=secret, session_cookie=SESSION_COOKIE,
                       max_age=lifetime, same_site="lax", https_only=settings.https)

    @app.exception_handler(SignInRequired)
    async def _sign_in(request: Request, exc: SignInRequired) -> Any:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        from urllib.parse import quote

        return RedirectResponse(f"/sign-in?next={quote(target)}", status_code=303)

    @app.exception_handler(PageError)
    async def _page_error(request: Request, exc: PageError) -> Any:
        return error_page(request, exc.status, exc.detail)

    @app.exception_handler(RateLimitExceeded)
    async def _too_many(request: Request, exc: RateLimitExceeded) -> Any:
        return error_page(request, 429, f"too many sign-in attempts from this address "
                                        f"(at most {settings.sign_in_limit}); wait and try again")

    api_invalid = app.exception_handlers[RequestValidationError]

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Any:
        if _wants_page(request):  # a page address that cannot exist: as good as missing
            return error_page(request, 404, "no such page")
        return await api_invalid(request, exc)

    api_http = app.exception_handlers[StarletteHTTPException]
    api_unexpected = app.exception_handlers[Exception]

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Any:
        if _wants_page(request):
            detail = "no such page" if exc.status_code == 404 else str(exc.detail)
            return error_page(request, exc.status_code, detail)
        return await api_http(request, exc)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Any:
        answer = await api_unexpected(request, exc)  # logs it, with its traceback
        if _wants_page(request):
            return error_page(request, 500, "an unexpected failure (a bug: the details are "
                                            "in the server's log); nothing more was recorded")
        return answer

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

from api.errors import ApiError, domain_answer, logged_reference, store_unavailable
from api.session_secret import forget_stored, session_secrets
from api.web.plain_errors import plain_query
from api.web.render import HERE, error_page
from api.web.session import PageError, SessionCookies, SignInRequired, oldest_first
from cases import errors

SESSION_COOKIE = "abate_session"
# Paths that are the API's, answered in JSON whatever the browser asks for.
API_PATHS = ("/api/", "/docs", "/redoc", "/openapi.json", "/health")
PAGE_ROUTES = ("page.", "village_root")  # the names of the pages' routes


def _wants_page(request: Request) -> bool:
    """A page's request: one a page route took (whatever it accepts), or, when no route
    took it, one outside the API's paths from a browser (that accepts HTML)."""
    path = request.url.path
    if path.startswith(API_PATHS):
        return False
    route = request.scope.get("route")
    if route is not None and str(getattr(route, "name", "")).startswith(PAGE_ROUTES):
        return True
    return "text/html" in request.headers.get("accept", "")


def _query_at_fault(exc: RequestValidationError) -> bool:
    """Whether only query parameters are at fault (a path that cannot exist is "no such page")."""
    return all(tuple(item.get("loc", ()))[:1] == ("query",) for item in exc.errors())


def _unexpected_detail(request: Request) -> str:
    """What is true about an unforeseen failure: a page read changed nothing; a form sent
    may have been recorded before the failure (each command is recorded on its own)."""
    if request.method in ("GET", "HEAD"):
        return ("Something went wrong on our side; this page only reads the records, so none "
                "was changed by this request.")
    return ("Something went wrong on our side while handling the form; what it asked for "
            "may or may not have been recorded: look at the case or list again before "
            "sending the form a second time.")


def _unreachable_detail(request: Request) -> str:
    """What is true when the records cannot be reached: a page read changed nothing; a form
    sent may have been recorded just before the connection was lost."""
    if request.method in ("GET", "HEAD"):
        return ("The records cannot be reached just now (the database does not answer), so "
                "nothing was changed. Try again in a minute; if it lasts, tell whoever runs "
                "Abate for you.")
    return ("The records cannot be reached just now (the database does not answer), so what "
            "the form asked for may or may not have been recorded. Once the pages work again, "
            "look at the case or list before sending the form a second time.")


def install(app: FastAPI) -> None:
    from fastapi_csrf_protect import CsrfProtect

    from api.web import cases, sign_in, worklist
    from api.web.sign_in_limit import DatabaseCounts, SignInLimit

    svc = app.state.services
    settings = svc.settings.web
    secrets = session_secrets(settings.session_secret, settings.session_secret_file,
                              svc.settings.database_url)  # the first signs, all are accepted
    forget_stored(svc.records, svc.settings.database_url, svc.store.schema)
    app.state.web_secrets = oldest_first(secrets)  # CSRF tokens: signed and checked alike
    lifetime = settings.session_hours * 3600

    class Csrf(CsrfProtect):  # this app's own configuration (the library keeps it per class)
        pass

    Csrf.load_config(lambda: [("secret_key", secrets[0]), ("token_location", "body"),
                              ("token_key", "csrf_token"), ("cookie_key", "abate_csrf"),
                              ("cookie_samesite", "lax"), ("cookie_secure", settings.https),
                              ("max_age", lifetime)])
    app.state.web_csrf = Csrf()
    counts = DatabaseCounts(svc.records, svc.settings.database_url, svc.store.schema)

    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.get("/favicon.ico", include_in_schema=False)
    def _favicon() -> RedirectResponse:
        """Browsers ask for it on their own (for a PDF or JSON answer too): the pages' icon,
        not a "no such village" page logged under a municipality called favicon.ico."""
        return RedirectResponse("/static/favicon.svg", status_code=308)

    # Before the case pages, whose /{municipality}/cases/{case_ref} would take .../cases/new.
    from api.web import (audit, charts, nav, new_case, repeat_offenders, tax_roll,  # noqa: F401
                         users)
    for pages in (users, new_case, tax_roll, repeat_offenders, audit, charts):
        app.include_router(pages.router)
    app.include_router(sign_in.router(SignInLimit(counts, settings.sign_in_limit)))
    app.include_router(worklist.router)
    app.include_router(cases.router)
    app.include_router(worklist.last_router)  # last: it takes any one-segment path
    app.add_middleware(SessionCookies, secrets=secrets, session_cookie=SESSION_COOKIE,
                       max_age=lifetime, same_site="lax", https_only=settings.https)

    @app.exception_handler(SignInRequired)
    async def _sign_in(request: Request, exc: SignInRequired) -> Any:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        from urllib.parse import quote

        return RedirectResponse(f"/sign-in?next={quote(target)}", status_code=303)

    @app.exception_handler(PageError)
    async def _page_error(request: Request, exc: PageError) -> Any:
        return error_page(request, exc.status, exc.detail)

    api_invalid = app.exception_handlers[RequestValidationError]

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Any:
        if _wants_page(request):
            if _query_at_fault(exc):  # a 422 page naming the parameter
                return error_page(request, 422, plain_query(list(exc.errors())))
            return error_page(request, 404, "no such page")  # an address that cannot exist
        return await api_invalid(request, exc)

    api_error = app.exception_handlers[ApiError]
    api_domain = app.exception_handlers[errors.AbateError]

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Any:
        if _wants_page(request):
            return error_page(request, exc.status, exc.detail)
        return await api_error(request, exc)

    @app.exception_handler(errors.AbateError)
    async def _domain(request: Request, exc: errors.AbateError) -> Any:
        if not _wants_page(request):
            return await api_domain(request, exc)
        answer = domain_answer(exc)
        if answer.status < 500:
            return error_page(request, answer.status, answer.detail)
        return error_page(request, answer.status, answer.detail,  # foreseen: its own words
                          reference=logged_reference(request, exc))

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
        if not _wants_page(request):
            return await api_unexpected(request, exc)  # logs it, with its traceback
        unavailable = store_unavailable(request, exc)  # logs where the setting points
        if unavailable is not None:
            return error_page(request, 503, _unreachable_detail(request),
                              headers=unavailable.headers, look_up_user=False)
        reference = logged_reference(request, exc)
        return error_page(request, 500, _unexpected_detail(request), reference=reference)

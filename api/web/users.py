"""The users page of an admin (``/admin/users``): the users of its municipalities (role,
villages, token expiry, whether a password is set, last sign-in, disabled), and forms to
add a user (its token shown once), set a password, give a new token (shown once) and
disable a user. Each form runs the same function as the API's admin routes
(``api.routes.admin``: ``add_managed``, ``set_managed_password``, ``rotate_managed``,
``revoke_managed``), so the checks are the API's; an error comes back beside its field and
nothing is changed. A password or token is never logged (the request log names the path
only) and the page is not cached (``no-store``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse
from pydantic import ValidationError

from api.accounts import ROLES, NewUser, User
from api.account_terms import DEFAULT_EXPIRES_DAYS, MAX_EXPIRES_DAYS
from api.errors import ApiError
from api.passwords import MAX_LENGTH, MIN_LENGTH
from api.routes.admin import (add_managed, managed_users, revoke_managed, rotate_managed,
                              set_managed_password)
from api.web.render import page
from api.web.session import check_csrf, not_found, require

router = APIRouter(include_in_schema=False)

# What a redirect after a form says was done (``?done=...&user=...``).
DONE = {"password": "A new password is set for {user}.",
        "disabled": "{user} is disabled: their token and password sign nobody in from now on."}


def _zone(svc: Any, user: User) -> str:
    """A user's times are read in its (first) village's time, as the CLI says them."""
    return svc.cases.catalog.municipality(user.municipalities[0]).time_zone


def _users_page(request: Request, admin: User, *, values: dict[str, Any] | None = None,
                errors: dict[Any, str] | None = None, token: dict[str, str] | None = None,
                status: int = 200) -> Any:
    svc = request.app.state.services
    now = svc.clock().isoformat()
    users = [{"user": u, "tz": _zone(svc, u), "expired": u.expires_at <= now}
             for u in managed_users(svc, admin)]
    done = request.query_params.get("done", "")
    told = DONE[done].format(user=request.query_params.get("user", "")[:100]) \
        if done in DONE and token is None and not errors else ""
    return page(request, "users.html", {
        "users": users, "roles": ROLES, "villages": admin.municipalities,
        "values": values or {"role": "", "municipalities": [],
                             "expires_days": DEFAULT_EXPIRES_DAYS},
        "errors": errors or {}, "token": token, "told": told,
        "min_length": MIN_LENGTH, "max_length": MAX_LENGTH,
        "max_days": MAX_EXPIRES_DAYS}, status)


@router.get("/admin/users", name="page.admin.users")
def users_page(request: Request) -> Any:
    admin = require(request, "page.admin.users")
    return _users_page(request, admin)


def _new_user_errors(exc: ValidationError) -> dict[Any, str]:
    """A ``NewUser`` refusal beside the add form's fields (``municipalities.0`` beside the
    villages)."""
    found: dict[Any, str] = {}
    for error in exc.errors():
        where = str(error["loc"][0]) if error["loc"] else ""
        message = str(error["msg"]).removeprefix("Value error, ")
        found[where] = (found.get(where, "") + " " + message).strip()
    return found


@router.post("/admin/users/add", name="page.admin.users.add")
async def add_user(request: Request) -> Any:
    admin = require(request, "page.admin.users.add")
    posted = await check_csrf(request)
    values = {"name": str(posted.get("name", "")).strip(), "role": str(posted.get("role", "")),
              "municipalities": [str(m) for m in posted.getlist("municipalities")],
              "expires_days": str(posted.get("expires_days", "")).strip()
              or DEFAULT_EXPIRES_DAYS}
    return await run_in_threadpool(_add, request, admin, values)


def _add(request: Request, admin: User, values: dict[str, Any]) -> Any:
    svc = request.app.state.services
    try:
        user, token = add_managed(svc, admin, NewUser(**values))
    except ValidationError as exc:
        return _users_page(request, admin, values=values, errors=_new_user_errors(exc),
                           status=422)
    except ApiError as exc:
        detail = exc.detail.removeprefix(f"field {exc.field}: ")
        if exc.status == 409:  # the API's advice names its route; on the page, the row's button
            detail = (detail.split("; to give that user")[0] + f"; to give {values['name']} a "
                      f"new token, use \"New token for {values['name']}\" in their row below")
        errors = {exc.field or "": detail}
        return _users_page(request, admin, values=values, errors=errors, status=exc.status)
    return _users_page(request, admin, token={"name": user.name, "token": token,
                                              "why": "added"}, status=201)


def _row_error(request: Request, admin: User, name: str, action: str, exc: ApiError) -> Any:
    """The page again, the refusal beside the row's form of ``action`` (nothing changed)."""
    if exc.status == 404:  # another village's user, or none: the same 404 as the API's
        raise not_found(exc.detail)
    message = exc.detail.removeprefix(f"field {exc.field}: ") if exc.field else exc.detail
    # a disabled user's row has no forms left: its refusal goes above the table
    where = "" if exc.status == 409 else (name, action)
    return _users_page(request, admin, errors={where: message}, status=exc.status)


@router.post("/admin/users/password", name="page.admin.users.password")
async def set_password(request: Request) -> Any:
    admin = require(request, "page.admin.users.password")
    posted = await check_csrf(request)
    name, password = str(posted.get("name", "")), str(posted.get("password", ""))
    try:  # Argon2 takes a while on purpose: off the event loop
        await run_in_threadpool(set_managed_password, request.app.state.services, admin,
                                name, password)
    except ApiError as exc:
        return await run_in_threadpool(_row_error, request, admin, name, "password", exc)
    return RedirectResponse("/admin/users?" + urlencode({"done": "password", "user": name}),
                            status_code=303)


@router.post("/admin/users/rotate", name="page.admin.users.rotate")
async def rotate(request: Request) -> Any:
    admin = require(request, "page.admin.users.rotate")
    posted = await check_csrf(request)
    return await run_in_threadpool(_rotate, request, admin, str(posted.get("name", "")))


def _rotate(request: Request, admin: User, name: str) -> Any:
    try:
        user, token = rotate_managed(request.app.state.services, admin, name)
    except ApiError as exc:
        return _row_error(request, admin, name, "rotate", exc)
    return _users_page(request, admin, token={"name": user.name, "token": token,
                                              "why": "rotated"})


@router.post("/admin/users/disable", name="page.admin.users.disable")
async def disable(request: Request) -> Any:
    admin = require(request, "page.admin.users.disable")
    posted = await check_csrf(request)
    name = str(posted.get("name", ""))
    try:
        await run_in_threadpool(revoke_managed, request.app.state.services, admin, name)
    except ApiError as exc:
        return await run_in_threadpool(_row_error, request, admin, name, "disable", exc)
    return RedirectResponse("/admin/users?" + urlencode({"done": "disabled", "user": name}),
                            status_code=303)

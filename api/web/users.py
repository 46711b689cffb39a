"""The users page of an admin (``/admin/users``): the users of its municipalities (role,
villages, token expiry, whether a password is set, last sign-in, disabled), and forms to
add a user (its token shown once), set a password, give a new token (shown once) and
disable a user (after a confirmation step that says what disabling does). Each form runs
the same function as the API's admin routes (``api.user_admin``: ``add_managed``,
``set_managed_password``, ``rotate_managed``, ``revoke_managed``), so the checks are the
API's; an error comes back beside its field and in a summary at the top, and nothing is
changed. A page answering a post sets its address back to ``/admin/users`` (a reload
reads the page, it does not post again: static/own-address.js, a file, not an inline
script a Content-Security-Policy would block), and a form's address opened on its own
(a GET) leads to the page; without script, the add and new-token forms' one-time keys
(``api.web.form_keys``) make a second post of the same form do nothing. A
password or token is never logged (the request log names the path only), never put in a
URL or cookie, and the page is not cached (``no-store``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse
from pydantic import ValidationError

from api.account_terms import DEFAULT_EXPIRES_DAYS, MAX_EXPIRES_DAYS
from api.accounts import ROLES, NewUser, User
from api.errors import ApiError
from api.passwords import MAX_LENGTH, MIN_LENGTH
from api.user_admin import (
    add_managed,
    disable_refusal,
    managed_users,
    revoke_managed,
    rotate_managed,
    set_managed_password,
)
from api.web import form_keys
from api.web.page_parts import PartName, PartOffset, Section, asked_part
from api.web.plain_errors import plain_problem
from api.web.render import page
from api.web.session import PageError, check_csrf, not_found, require

router = APIRouter(include_in_schema=False)

USER_ROWS = 50  # users a page shows at once (``?section=users&offset=N``)

# What a redirect after a form says was done (``?done=...&user=...``).
DONE = {"password": "A new password is set for {user}.",
        "disabled": "{user} is disabled: their token and password sign nobody in from now on."}
# What a second post of the same add or new-token form says (its key was used already).
REPEATED = {
    "added": "{user} was added already by this same form (a reload or a second click): no "
             "second user was added. Their token was shown once, on the page that answered "
             "the form; if it was not copied, use \"New token for {user}\" in their row.",
    "rotated": "{user} got a new token already from this same form (a reload or a second "
               "click): no other token was made. It was shown once, on the page that "
               "answered the form; if it was not copied, use \"New token for {user}\" again."}
# How the error summary at the top names each field of the add form and each row's form.
FIELD_LABELS = {"name": "Name", "role": "Role", "municipalities": "Villages",
                "expires_days": "Token lasts (days)"}
ROW_LABELS = {"password": "New password for {user}", "rotate": "New token for {user}",
              "disable": "Disable {user}"}


def _zone(svc: Any, user: User) -> str:
    """A user's times are read in its (first) village's time, as the CLI says them."""
    return svc.cases.catalog.municipality(user.municipalities[0]).time_zone


def _summary(errors: dict[Any, str], users: list[dict[str, Any]],
             villages: tuple[str, ...]) -> list[dict[str, str | None]]:
    """The errors as the summary at the top lists them: what, and a link to the field (a
    refusal of no field, e.g. a disabled user's, has no link)."""
    rows = {row["user"].name: index for index, row in enumerate(users, 1)}
    items: list[dict[str, str | None]] = []
    for where, message in errors.items():
        if isinstance(where, tuple):
            name, action = where
            label = ROW_LABELS.get(action, action).format(user=name)
            href = f"#{action}-{rows[name]}" if name in rows else None
        elif where:
            label = FIELD_LABELS.get(where, where)
            href = f"#municipality-{villages[0]}" if where == "municipalities" else f"#{where}"
        else:
            label, href = "", None
        items.append({"label": label, "text": message, "href": href})
    return items


def _users_page(request: Request, admin: User, *, values: dict[str, Any] | None = None,
                errors: dict[Any, str] | None = None, token: dict[str, str] | None = None,
                told: str = "", status: int = 200, offset: int = 0,
                near: str | None = None) -> Any:
    """The page of users from ``offset``; or, ``near`` a user (the one a form was about),
    the page holding that user's row."""
    svc = request.app.state.services
    now = svc.clock().isoformat()
    every = managed_users(svc, admin)
    if near is not None:
        at = next((i for i, u in enumerate(every) if u.name.lower() == near.lower()), 0)
        offset = at - at % USER_ROWS
    users = [{"user": u, "tz": _zone(svc, u), "expired": u.expires_at <= now}
             for u in every[offset:offset + USER_ROWS]]
    done = request.query_params.get("done", "")
    if not told and done in DONE and token is None and not errors:
        told = DONE[done].format(user=request.query_params.get("user", "")[:100])
    errors = errors or {}
    return page(request, "users.html", {
        "users": users, "part": Section("users", "Users", users, len(every), offset, USER_ROWS),
        "roles": ROLES, "villages": admin.municipalities,
        "values": values or {"role": "", "municipalities": [],
                             "expires_days": DEFAULT_EXPIRES_DAYS},
        "errors": errors, "summary": _summary(errors, users, admin.municipalities),
        "token": token, "told": told, "new_form_key": form_keys.new_key,
        "own_address": "/admin/users", "own_user": admin.name,
        "form_key_field": form_keys.FIELD, "min_length": MIN_LENGTH,
        "max_length": MAX_LENGTH, "max_days": MAX_EXPIRES_DAYS}, status)


def _repeated(request: Request, admin: User, key: str | None) -> Any:
    """The page saying the form was done already, if ``key`` was used (else None)."""
    done = form_keys.done_before(request, key)
    if done is None:
        return None
    action, name = done
    return _users_page(request, admin, told=REPEATED[action].format(user=name), near=name)


@router.get("/admin/users", name="page.admin.users")
def users_page(request: Request, section: PartName = None,
               offset: PartOffset = 0) -> Any:
    admin = require(request, "page.admin.users")
    asked_part(section, ("users",), "the users page")
    return _users_page(request, admin, offset=offset)


# What each field of the add form asks for, said when it is left empty or out of range.
ASKS = {"name": "enter a user name", "role": "choose a role",
        "municipalities": "choose at least one village",
        "expires_days": f"a whole number of days from 1 to {MAX_EXPIRES_DAYS:,}"}


def _to_the_page(request: Request) -> RedirectResponse:
    """A form's address opened on its own (a reload without script, a bookmark, a copied
    address bar): the users page, not "405 Method Not Allowed"."""
    require(request, "page.admin.users.form_address")
    return RedirectResponse("/admin/users", status_code=303)


for _form in ("add", "password", "rotate"):
    router.add_api_route(f"/admin/users/{_form}", _to_the_page, methods=["GET"],
                         name="page.admin.users.form_address")


def _new_user_errors(exc: ValidationError) -> dict[Any, str]:
    """A ``NewUser`` refusal in an admin's words (api.web.plain_errors) beside the add
    form's fields (``municipalities.0`` beside the villages)."""
    found: dict[Any, str] = {}
    for error in exc.errors():
        where = str(error["loc"][0]) if error["loc"] else ""
        message = plain_problem(dict(error), FIELD_LABELS, ASKS)
        if message not in found.get(where, ""):
            found[where] = (found.get(where, "") + "; " + message).strip("; ")
    return found


@router.post("/admin/users/add", name="page.admin.users.add")
async def add_user(request: Request) -> Any:
    admin = require(request, "page.admin.users.add")
    posted = await check_csrf(request)
    values = {"name": str(posted.get("name", "")).strip(), "role": str(posted.get("role", "")),
              "municipalities": [str(m) for m in posted.getlist("municipalities")],
              "expires_days": str(posted.get("expires_days", "")).strip()
              or DEFAULT_EXPIRES_DAYS}
    return await run_in_threadpool(_add, request, admin, values,
                                   form_keys.posted_key(posted))


def _add(request: Request, admin: User, values: dict[str, Any], key: str | None) -> Any:
    svc = request.app.state.services
    repeated = _repeated(request, admin, key)
    if repeated is not None:
        return repeated
    try:
        user, token = add_managed(svc, admin, NewUser(**values))
    except ValidationError as exc:
        return _users_page(request, admin, values=values, errors=_new_user_errors(exc),
                           status=422)
    except ApiError as exc:
        detail = exc.detail.removeprefix(f"field {exc.field}: ")
        if exc.status == 409:  # the API's advice names its route; on the page, the row's button
            detail = detail.split("; to give that user")[0]
            row = _row_named(svc, admin, values["name"])
            if row is not None:
                detail += (f"; to give {row} a new token, use \"New token for {row}\" in "
                           "their row below")
        errors = {exc.field or "": detail}
        return _users_page(request, admin, values=values, errors=errors, status=exc.status,
                           near=row if exc.status == 409 else None)
    form_keys.remember(request, key, "added", user.name)
    return _users_page(request, admin, token={"name": user.name, "token": token,
                                              "why": "added"}, status=201, near=user.name)


def _row_named(svc: Any, admin: User, name: str) -> str | None:
    """The name, as added, of the admin's user called ``name`` whatever the capitals (None
    for another village's user: this page has no row of theirs)."""
    return next((u.name for u in managed_users(svc, admin) if u.name.lower() == name.lower()),
                None)


def _row_error(request: Request, admin: User, name: str, action: str, exc: ApiError) -> Any:
    """The page again, the refusal beside the row's form of ``action`` (nothing changed)."""
    if exc.status == 404:  # another village's user, or none: the same 404 as the API's
        raise not_found(exc.detail)
    message = exc.detail.removeprefix(f"field {exc.field}: ") if exc.field else exc.detail
    # a disabled user's row has no forms left: its refusal goes above the table
    where = "" if exc.status == 409 else (name, action)
    return _users_page(request, admin, errors={where: message}, status=exc.status, near=name)


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
    return await run_in_threadpool(_rotate, request, admin, str(posted.get("name", "")),
                                   form_keys.posted_key(posted))


def _rotate(request: Request, admin: User, name: str, key: str | None) -> Any:
    repeated = _repeated(request, admin, key)
    if repeated is not None:
        return repeated
    try:
        user, token = rotate_managed(request.app.state.services, admin, name)
    except ApiError as exc:
        return _row_error(request, admin, name, "rotate", exc)
    form_keys.remember(request, key, "rotated", user.name)
    return _users_page(request, admin, token={"name": user.name, "token": token,
                                              "why": "rotated"}, near=user.name)


@router.get("/admin/users/disable", name="page.admin.users.disable.confirm")
def confirm_disable(request: Request, name: str = "") -> Any:
    """The confirmation step: what disabling ``name`` does, Confirm (a post) or Cancel; or,
    for the admin themself (or a village's last admin), why not, and no Confirm. Nothing
    is changed here; another village's user is the same 404 as none."""
    admin = require(request, "page.admin.users.disable.confirm")
    name = name.strip()
    if not name or len(name) > 100:
        raise PageError(422, "name: give the name of the user to disable (at most 100 "
                             "characters), as the \"Disable\" button of their row does")
    svc = request.app.state.services
    user = next((u for u in managed_users(svc, admin) if u.name == name), None)
    if user is None:
        raise not_found(f"no user named {name!r} among the users of your municipalities")
    refusal = None if user.revoked_at else disable_refusal(svc, admin, user.name)
    return page(request, "users_disable.html", {
        "name": user.name, "disabled_at": user.revoked_at, "tz": _zone(svc, user),
        "refusal": refusal}, 409 if refusal else 200)


@router.post("/admin/users/disable", name="page.admin.users.disable")
async def disable(request: Request) -> Any:
    """Disable the user the admin confirmed; a post without the confirmation (an old page,
    a hand-made form) only leads to the confirmation step."""
    admin = require(request, "page.admin.users.disable")
    posted = await check_csrf(request)
    name = str(posted.get("name", ""))
    if posted.get("confirm") != "yes":
        return RedirectResponse("/admin/users/disable?" + urlencode({"name": name[:100]}),
                                status_code=303)
    try:
        await run_in_threadpool(revoke_managed, request.app.state.services, admin, name)
    except ApiError as exc:
        return await run_in_threadpool(_row_error, request, admin, name, "disable", exc)
    return RedirectResponse("/admin/users?" + urlencode({"done": "disabled", "user": name}),
                            status_code=303)

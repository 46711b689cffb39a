"""Users over HTTP, for the admin role: add (the token shown once), list, revoke, rotate
(a new token, shown once).

The same validation and table as ``abate users`` (``api.accounts.NewUser``,
``Accounts.add``), and the same checks as the users page (``api.user_admin``). An admin manages the users of its own municipalities: it adds users
only there, and sees and revokes only users whose every municipality is its own; any
other user is answered exactly like one that does not exist (404). Hashes never leave
the table; a replay of an add or a rotate (same Idempotency-Key) answers the user without
the token.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from api import idempotency
from api.accounts import DEFAULT_EXPIRES_DAYS, MAX_EXPIRES_DAYS, NewUser, User
from api.deps import AllowedUser, ServicesDep
from api.errors import ERROR_RESPONSES, WRITE_RESPONSES, ErrorBody
from api.params import PageLimit, PageOffset
from api.passwords import MAX_LENGTH, MIN_LENGTH
from api.user_admin import (
    add_managed,
    managed_users,
    revoke_managed,
    rotate_managed,
    set_managed_password,
)
from cases.localtime import localized
from cases.page_sizes import DEFAULT_LIMIT, page_of, paged

router = APIRouter(tags=["admin"])

# A user is not a case: no If-Match here (412).
ANSWERS = {status: answer for status, answer in WRITE_RESPONSES.items() if status != 412}


class UserShown(BaseModel):
    """A user as an admin reads it (times in the operator's zone, UTC beside)."""

    name: str
    role: str
    municipalities: list[str]
    created_at: str
    created_at_utc: str
    expires_at: str
    expires_at_utc: str
    revoked_at: str | None
    revoked_at_utc: str | None


class UserAdded(UserShown):
    token: str | None = Field(description="the bearer token, shown only in this answer (null "
                                          "when the answer is replayed for an Idempotency-Key)")


def _shown(svc: Any, user: User) -> dict[str, Any]:
    return localized(user.as_dict(), svc.settings.base.time_zone)


@router.post("/admin/users", name="admin.users.add", status_code=201, response_model=UserAdded,
             responses={**ANSWERS, 409: {"model": ErrorBody,
                                                 "description": "a user of that name exists"}},
             summary="Add a user; the answer shows the token, once")
def add_user(svc: ServicesDep, admin: AllowedUser, new: NewUser, request: Request) -> UserAdded:
    user, token = add_managed(svc, admin, new)
    shown = _shown(svc, user)
    idempotency.keep_for_replay(request, {**shown, "token": None})
    return UserAdded(**shown, token=token)


class UserPage(BaseModel):
    """A page of users, by name, and where the next page starts."""

    users: list[UserShown]
    total: int
    limit: int
    offset: int
    next_offset: int | None


@router.get("/admin/users", name="admin.users.list", response_model=UserPage,
            responses=ERROR_RESPONSES, summary="The users of your municipalities, a page at a "
                                               "time by name (no tokens, no hashes)")
def list_users(svc: ServicesDep, admin: AllowedUser,
               limit: PageLimit = DEFAULT_LIMIT,
               offset: PageOffset = 0) -> dict[str, Any]:
    users = managed_users(svc, admin)
    return {"users": [_shown(svc, user) for user in paged(users, limit, offset)],
            **page_of(len(users), limit, offset)}


UserName = Annotated[str, Path(min_length=1, max_length=100, description="e.g. pat.clerk")]


@router.post("/admin/users/{name}/revoke", name="admin.users.revoke",
             response_model=UserShown, responses=ANSWERS,
             summary="Refuse the user's token from now on")
def revoke_user(svc: ServicesDep, admin: AllowedUser, name: UserName) -> dict[str, Any]:
    return _shown(svc, revoke_managed(svc, admin, name))


class Rotation(BaseModel):
    """How long the new token lasts (the body may be left out: the default)."""

    model_config = ConfigDict(extra="forbid")
    expires_days: int = Field(DEFAULT_EXPIRES_DAYS, ge=1, le=MAX_EXPIRES_DAYS)


@router.post("/admin/users/{name}/rotate", name="admin.users.rotate", response_model=UserAdded,
             responses={**ANSWERS, 409: {"model": ErrorBody,
                                         "description": "the user was revoked"}},
             summary="A new token for a user (shown once); the old one is refused from now on")
def rotate_user(svc: ServicesDep, admin: AllowedUser, name: UserName, request: Request,
                rotation: Rotation | None = None) -> UserAdded:
    user, token = rotate_managed(svc, admin, name, (rotation or Rotation()).expires_days)
    shown = _shown(svc, user)
    idempotency.keep_for_replay(request, {**shown, "token": None})
    return UserAdded(**shown, token=token)


class NewPassword(BaseModel):
    """The password the user signs in to the web pages with (only its Argon2 hash is kept)."""

    password: str = Field(min_length=MIN_LENGTH, max_length=MAX_LENGTH,
                          description=f"{MIN_LENGTH} to {MAX_LENGTH} characters")


@router.post("/admin/users/{name}/password", name="admin.users.set_password",
             response_model=UserShown, responses=ANSWERS,
             summary="Set the password the user signs in to the web pages with")
def set_password(svc: ServicesDep, admin: AllowedUser, name: UserName,
                 new: NewPassword) -> dict[str, Any]:
    return _shown(svc, set_managed_password(svc, admin, name, new.password))

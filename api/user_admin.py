"""What an admin may do to the users of their villages, checked in one place for the API's
admin routes and the users page: an admin adds users only in its own municipalities, and
sees, revokes, rotates and sets passwords only for users whose every municipality is its
own; any other user is answered exactly like one that does not exist (404)."""

from __future__ import annotations

from typing import Any

from api.accounts import (DEFAULT_EXPIRES_DAYS, LastAdminError, NewUser, NoSuchUserError, User,
                          UserExistsError, UserRevokedError)
from api.errors import ApiError, not_found
from api.passwords import password_problem


def _managed(admin: User, user: User | None) -> bool:
    return user is not None and set(user.municipalities) <= set(admin.municipalities)


def _no_user(name: str) -> ApiError:
    return not_found(f"no user named {name!r} among the users of your municipalities")


def add_managed(svc: Any, admin: User, new: NewUser) -> tuple[User, str]:
    """Add ``new`` (only in the admin's own municipalities): the user and its token, shown
    once. The one check the API and the users page share."""
    outside = sorted(set(new.municipalities) - set(admin.municipalities))
    if outside:
        raise ApiError(403, "forbidden", f"field municipalities: {', '.join(outside)} is not "
                                         "among your municipalities", "municipalities")
    try:
        return svc.accounts.add(new.name, new.role, new.municipalities, now=svc.clock(),
                                expires_days=new.expires_days)
    except UserExistsError as exc:
        raise ApiError(409, "conflict", f"{exc}; to give that user a new token: POST "
                       f"/api/v1/admin/users/{exc.existing or new.name}/rotate",
                       "name") from None


def managed_users(svc: Any, admin: User) -> list[User]:
    """The users whose every municipality is the admin's own."""
    return [user for user in svc.accounts.list() if _managed(admin, user)]


def revoke_managed(svc: Any, admin: User, name: str) -> User:
    """Refuse the user's token and password from now on (a revoked name stays revoked).
    An admin does not disable themself, nor the last enabled admin of a village (409)."""
    if not _managed(admin, svc.accounts.get(name)):
        raise _no_user(name)
    refusal = disable_refusal(svc, admin, name)
    if refusal:
        raise ApiError(409, "refused", refusal)
    try:
        return svc.accounts.revoke(name, now=svc.clock())
    except NoSuchUserError:  # pragma: no cover - removed between the two look-ups
        raise _no_user(name) from None
    except LastAdminError as exc:  # pragma: no cover - an admin disabled meanwhile
        raise ApiError(409, "refused", str(exc)) from None


def disable_refusal(svc: Any, admin: User, name: str) -> str | None:
    """Why ``admin`` may not disable ``name``, or None: not themself (they would be signed
    out with nobody, perhaps, left to manage their villages), not a village's last admin.
    The users page asks this before its confirmation step, and the post again."""
    if name == admin.name:
        return ("you cannot disable your own account (you are signed in with it); another "
                "admin of your villages can")
    return svc.accounts.last_admin_refusal(name)


def rotate_managed(svc: Any, admin: User, name: str,
                   expires_days: int = DEFAULT_EXPIRES_DAYS) -> tuple[User, str]:
    """A new token for the user (shown once); the old one is refused from now on."""
    if not _managed(admin, svc.accounts.get(name)):
        raise _no_user(name)
    try:
        return svc.accounts.rotate(name, now=svc.clock(), expires_days=expires_days)
    except NoSuchUserError:  # pragma: no cover - removed between the two look-ups
        raise _no_user(name) from None
    except UserRevokedError as exc:
        raise ApiError(409, "conflict", str(exc)) from None


def set_managed_password(svc: Any, admin: User, name: str, password: str) -> User:
    """Keep the password's hash (the policy of api/passwords.py checked first)."""
    if not _managed(admin, svc.accounts.get(name)):
        raise _no_user(name)
    problem = password_problem(password)
    if problem:
        raise ApiError(422, "invalid", f"field password: {problem}", "password")
    try:
        return svc.accounts.set_password(name, password)
    except UserRevokedError as exc:
        raise ApiError(409, "refused", str(exc), "name") from None
    except NoSuchUserError:  # pragma: no cover - removed between the two look-ups
        raise _no_user(name) from None

"""The typed dependencies every route uses: the services, the signed-in user, the role
check (one, for every /api/v1 route, from the role matrix) and the case in the user's
grant (404 for another village's case exactly as for a missing one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.accounts import User
from api.errors import ApiError, case_not_found, not_found
from api.request_log import note_user
from api.roles import ROUTE_ROLES, may
from api.services import Services
from cases.commands import CaseRef
from cases.domain import case_id


# The dependencies below that do no I/O are ``async def``: FastAPI runs a plain ``def``
# dependency on a worker thread, a hand-off per dependency per request for no work.


async def services(request: Request) -> Services:
    return request.app.state.services


ServicesDep = Annotated[Services, Depends(services)]

_bearer = HTTPBearer(auto_error=False, description="a token from `abate users add`")
_UNAUTHORIZED = {"WWW-Authenticate": "Bearer"}


def current_user(request: Request, svc: ServicesDep,
                 credentials: Annotated[HTTPAuthorizationCredentials | None,
                                        Depends(_bearer)]) -> User:
    if credentials is None:
        raise ApiError(401, "unauthorized", "give a token: Authorization: Bearer <token>",
                       headers=_UNAUTHORIZED)
    user = svc.accounts.authenticate(credentials.credentials, svc.clock())
    if user is None:
        raise ApiError(401, "unauthorized", "the token is unknown, revoked or expired",
                       headers=_UNAUTHORIZED)
    note_user(request, user)
    return user


UserDep = Annotated[User, Depends(current_user)]


async def allowed(request: Request, user: UserDep) -> User:
    """The role check of every /api/v1 route: the matched route's name in the matrix."""
    route = request.scope.get("route")
    name = getattr(route, "name", "")
    if not may(user.role, name):
        summary = (getattr(route, "summary", None) or "").split(" (")[0].lower()
        what = f"{request.method} {request.url.path}" + (f" ({summary})" if summary else "")
        allowed_roles = ", ".join(sorted(ROUTE_ROLES.get(name, ()))) or "no role"
        raise ApiError(403, "forbidden", f"the role {user.role} may not do this: {what}; "
                                         f"who may: {allowed_roles}")
    return user


AllowedUser = Annotated[User, Depends(allowed)]

Municipality = Annotated[str, Path(pattern=r"^[a-z]+$", max_length=32,
                                   description="e.g. belleville")]


async def granted_municipality(municipality: Municipality, user: AllowedUser) -> str:
    """The path's municipality, if the user holds a grant there."""
    if municipality not in user.municipalities:
        raise not_found(f"no municipality {municipality!r} among this user's")
    return municipality


GrantedMunicipality = Annotated[str, Depends(granted_municipality)]


@dataclass(frozen=True)
class CaseAddress:
    municipality: str
    case_ref: str


def case_in_grant(svc: ServicesDep, user: AllowedUser, municipality: Municipality,
                  case_ref: Annotated[CaseRef, Path(description="e.g. BV-2026-001")]
                  ) -> CaseAddress:
    """A case that exists in a municipality the user holds. The store is asked in every
    case, so a case of another village takes the same path, and gets the same answer, as
    one that does not exist."""
    exists = svc.store.has_case(case_id(municipality, case_ref))
    if not exists or municipality not in user.municipalities:
        raise case_not_found(municipality, case_ref)
    return CaseAddress(municipality, case_ref)


CaseDep = Annotated[CaseAddress, Depends(case_in_grant)]

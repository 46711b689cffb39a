"""``GET /health``: is the store reachable, and how far behind is each view (no token)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from api.deps import ServicesDep
from cases.store_reach import RETRY_AFTER_SECONDS

router = APIRouter(tags=["health"])


class ViewHealth(BaseModel):
    view: str
    position: int
    lag: int


class StoreHealth(BaseModel):
    reachable: bool
    position: int | None = None


class Health(BaseModel):
    status: str  # "ok" or "unavailable"
    store: StoreHealth
    views: list[ViewHealth]


@router.get("/health", name="health", response_model=Health,
            responses={503: {"model": Health, "description": "the store cannot be reached"}})
def health(svc: ServicesDep):
    try:
        head = svc.head()
        views = [ViewHealth(view=s.view, position=s.position, lag=s.lag)
                 for s in svc.runner.status()]
    except Exception:  # noqa: BLE001 - any database failure means "not reachable"
        down = Health(status="unavailable", store=StoreHealth(reachable=False), views=[])
        return JSONResponse(down.model_dump(), status_code=503,
                            headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
    return Health(status="ok", store=StoreHealth(reachable=True, position=head), views=views)

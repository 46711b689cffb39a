"""``create_app(settings)``: the HTTP API, built once from the settings.

The store, the view runner, the case service and the accounts are made here, once, and
reach the routes through typed dependencies (``api.deps``). Every ``/api/v1`` route goes
through one role check (``api.deps.allowed`` with the matrix in ``api.roles``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI

from api import errors
from api.deps import allowed
from api.routes import cases, commands, health
from api.services import Services
from api.settings import ApiSettings

API_PREFIX = "/api/v1"


def create_app(settings: ApiSettings | None = None, *,
               services: Services | None = None) -> FastAPI:
    settings = settings or ApiSettings.from_env()
    svc = services or Services.build(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        svc.close()

    app = FastAPI(title="Abate", version="0.1.0", lifespan=lifespan,
                  description="Municipal code-enforcement cases: every fact recorded once, "
                              "every deadline and amount citing its ordinance rule.")
    app.state.services = svc
    errors.install(app)
    app.include_router(health.router)
    for router in (cases.router, commands.router):
        app.include_router(router, prefix=API_PREFIX, dependencies=[Depends(allowed)])
    _add_body_schemas(app)
    return app


def _add_body_schemas(app: FastAPI) -> None:
    """Add the command bodies' schemas (declared through ``openapi_extra``) to the
    OpenAPI components."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            schema.setdefault("components", {}).setdefault("schemas", {}).update(
                commands.body_schemas())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

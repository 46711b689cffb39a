"""``create_app(settings)``: the HTTP API, built once from the settings.

The store, the view runner, the case service and the accounts are made here, once, and
reach the routes through typed dependencies (``api.deps``). Every ``/api/v1`` route goes
through one role check (``api.deps.allowed`` with the matrix in ``api.roles``), and every
request through one log (``api.request_log``: request id, log line, access-log row).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI
from fastapi.routing import APIRoute

from api import errors, web
from api.body import BodyLimitMiddleware
from api.command_bodies import body_schemas
from api.deps import allowed
from api.docs_ui import install_docs
from api.idempotency import IdempotencyMiddleware, openapi_header
from api.overload import OverloadGuard
from api.request_log import RequestLog
from api.routes import (
    admin,
    audit,
    cases,
    commands,
    documents,
    health,
    journal,
    referral,
    repeat_offenses,
    tax_roll,
    worklist,
)
from api.security_headers import SecurityHeadersMiddleware
from api.services import Services
from api.settings import ApiSettings

API_PREFIX = "/api/v1"

# FastAPI's OpenTelemetry hooks looked for a configured provider on every request (a few
# per cent of a small request's CPU); Abate exports none: its request log says what it did.
NO_TELEMETRY = {"tracing": False, "metrics": False, "logs": False, "operation_spans": False}


# The route table: every router and its prefix. Every route under API_PREFIX passes the
# role check; tests/test_api_roles.py walks this table against the role matrix.
ROUTERS: tuple[tuple[APIRouter, str], ...] = (
    (health.router, ""), (cases.router, API_PREFIX), (commands.router, API_PREFIX),
    (referral.router, API_PREFIX), (audit.router, API_PREFIX), (admin.router, API_PREFIX),
    (worklist.router, API_PREFIX), (repeat_offenses.router, API_PREFIX),
    (tax_roll.router, API_PREFIX), (journal.router, API_PREFIX),
    (documents.router, API_PREFIX))


def route_table() -> list[tuple[str, str, str]]:
    """(method, path, name) of every route the app serves (besides its docs)."""
    return [(method, prefix + route.path, route.name) for router, prefix in ROUTERS
            for route in router.routes if isinstance(route, APIRoute)
            for method in sorted(route.methods)]


def create_app(settings: ApiSettings | None = None, *,
               services: Services | None = None) -> FastAPI:
    settings = settings or ApiSettings.from_env()
    svc = services or Services.build(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        svc.close()

    app = FastAPI(title="Abate", version="0.1.0", lifespan=lifespan,
                  docs_url=None, redoc_url=None,  # /docs from vendored files: api/docs_ui.py
                  telemetry=NO_TELEMETRY,
                  description="Municipal code-enforcement cases: every fact recorded once, "
                              "every deadline and amount citing its ordinance rule.")
    app.state.services = svc
    errors.install(app)
    install_docs(app)
    app.add_middleware(RequestLog)  # request id, log line and access-log row of each request
    for router, prefix in ROUTERS:
        checked = [Depends(allowed)] if prefix == API_PREFIX else []
        app.include_router(router, prefix=prefix, dependencies=checked)
    web.install(app)  # the pages: their routes, session cookie and error pages (api/web)
    # Every POST: Idempotency-Key (api/idempotency.py); every request: the body limit
    # (api/body.py), outermost, so it holds whatever reads the body.
    app.add_middleware(IdempotencyMiddleware)
    app.add_middleware(BodyLimitMiddleware)
    # Past capacity, 503 at once (api/overload.py): before any body is read.
    app.add_middleware(OverloadGuard, max_in_flight=svc.settings.max_in_flight,
                       request_seconds=svc.settings.request_seconds)
    app.add_middleware(SecurityHeadersMiddleware)  # on every answer, errors included
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
                body_schemas())
            for item in schema.get("paths", {}).values():
                if "post" in item:
                    item["post"].setdefault("parameters", []).append(openapi_header())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

"""Every page route the app serves is in the role matrix (api.roles.PAGE_ROLES), found by
walking the app's routes into the routers it includes (FastAPI 0.165 keeps an included
router whole, so ``app.routes`` alone lists no page), and the village pages' writes are
allowed to exactly the roles of the API route that does the same."""

from __future__ import annotations

from typing import Any

from fastapi.routing import APIRoute

from api.roles import PAGE_ROLES, ROUTE_ROLES
from tests.api_kit import make_api

PUBLIC = {"page.sign_in", "page.sign_in.post", "page.sign_out", "page.command"}


def _routes(routes: list[Any]) -> list[APIRoute]:
    found = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
        elif getattr(route, "original_router", None) is not None:
            found += _routes(route.original_router.routes)
    return found


def test_every_page_route_is_in_the_role_matrix(tmp_path):
    api = make_api(f"sqlite:///{tmp_path / 'abate.sqlite3'}")
    try:
        pages = {r.name for r in _routes(api.app.routes) if r.name.startswith("page.")}
    finally:
        api.services.close()
    assert {"page.tax_roll", "page.tax_roll.certify.confirmed", "page.cases.new.open",
            "page.repeat_offenders", "page.audit", "page.charts"} <= pages
    assert pages - PUBLIC <= set(PAGE_ROLES), pages - PUBLIC - set(PAGE_ROLES)
    assert PAGE_ROLES["page.cases.new.open"] == ROUTE_ROLES["cases.open"]
    assert PAGE_ROLES["page.tax_roll.certify.confirmed"] == ROUTE_ROLES["tax_roll.certify"]
    assert "auditor" not in PAGE_ROLES["page.tax_roll.certify.confirmed"]

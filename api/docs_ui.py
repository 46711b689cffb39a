"""``/docs``: the interactive API docs, served from files kept in this package.

FastAPI's own ``/docs`` page loads Swagger UI from a CDN, so on a village hall's machine
without the internet (or behind a proxy that blocks it) it stays blank. Here the page is
FastAPI's ``get_swagger_ui_html`` pointed at Swagger UI's files vendored under
``api/static/swagger-ui/`` (from the swagger-ui-dist package, Apache-2.0: its LICENSE and
NOTICE beside them), and the online validator badge is off (it would call out to check
the schema). ReDoc is not offered (``/redoc`` is 404): FastAPI's page loads it and its
fonts from CDNs, and the current ReDoc (3.x) neither starts from that page nor stays quiet
(it reports usage unless told not to); one offline docs page is enough.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, swagger_ui_default_parameters
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

SWAGGER_UI_DIR = Path(__file__).parent / "static" / "swagger-ui"
DOCS_URL = "/docs"
ASSETS_URL = "/docs/swagger-ui"  # under /docs, so it meets no other static mount
SWAGGER_UI_VERSION = "5.35.0"  # the swagger-ui-dist release the files come from


def install_docs(app: FastAPI) -> None:
    """Serve ``/docs`` and its assets from the vendored files (the app is made with
    ``docs_url=None, redoc_url=None``)."""
    app.mount(ASSETS_URL, StaticFiles(directory=SWAGGER_UI_DIR), name="swagger-ui")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get(DOCS_URL, include_in_schema=False, response_class=HTMLResponse)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url, title=f"{app.title} - API docs",
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon-32x32.png",
            swagger_ui_parameters={**swagger_ui_default_parameters, "validatorUrl": None})

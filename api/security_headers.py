"""Headers that tell a browser how far to trust what Abate sends it.

Every answer: ``X-Content-Type-Options: nosniff`` (a CSV or JSON answer is never run as a
page or a script) and ``Referrer-Policy: same-origin`` (a case page's address, which names a
case, is not sent to another site). Every HTML page also gets a Content-Security-Policy: its
scripts, styles, fonts and images only from Abate itself, no plugins, forms posted only to
Abate, and no framing by another site (clickjacking). Two allowances, each for a reason:
styles may be inline (the charts are SVG drawn by pygal with their own ``<style>``, and
that is text Abate writes, not a user's), and the interactive API docs (``/docs``) may run
the inline script with which Swagger UI's page starts. Other answers (PDF, CSV, JSON) carry
no policy: a browser's own PDF viewer can refuse to show a document sent with one.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.docs_ui import DOCS_URL

_POLICY = ("default-src 'self'; script-src 'self'{scripts}; style-src 'self' 'unsafe-inline'; "
           "img-src 'self' data:; font-src 'self'; object-src 'none'; base-uri 'none'; "
           "form-action 'self'; frame-ancestors 'none'")
PAGE_POLICY = _POLICY.format(scripts="")
DOCS_POLICY = _POLICY.format(scripts=" 'unsafe-inline'")


class SecurityHeadersMiddleware:
    """Adds the headers above to every HTTP answer (a header a route set itself is kept)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = DOCS_POLICY if scope["path"] == DOCS_URL else PAGE_POLICY

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("Referrer-Policy", "same-origin")
                if headers.get("content-type", "").startswith("text/html"):
                    headers.setdefault("Content-Security-Policy", policy)
            await send(message)

        await self.app(scope, receive, send_with_headers)

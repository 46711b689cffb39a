"""The words for a request that no route matches (404) or that uses a method the path does
not have (405): Starlette's bare "Not Found" leaves a user who typed ``serve_notic`` or
sent a GET to a command guessing. The answer names the method and path, and for a case's
command the commands there are; it says nothing about any case (no token is checked yet),
only what the OpenAPI schema shows anyone.
"""

from __future__ import annotations

import re

from api.roles import HTTP_COMMANDS

_COMMAND_PATH = re.compile(r"^/api/v1/[^/]+/cases/[^/]+/(?P<command>[^/]+)/?$")


def not_found(method: str, path: str) -> str:
    """Why nothing answers ``method path``, and what does."""
    command = _COMMAND_PATH.match(path)
    if method == "POST" and command:
        return (f"no command {command['command'][:64]!r} on a case; the commands are: "
                + ", ".join(sorted(HTTP_COMMANDS)) + " (docs/commands.md; /docs lists the routes)")
    return f"no route {method} {path[:200]}; /docs and /openapi.json list the routes"


def method_not_allowed(method: str, path: str, allow: str | None) -> str:
    """Which methods the path does have (the ``Allow`` header Starlette sets)."""
    allowed = f"; use {allow}" if allow else ""
    return f"{method} is not allowed on {path[:200]}{allowed}"

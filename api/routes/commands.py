"""``POST /{municipality}/cases/{case_ref}/{command}``: every journal command (but the
scheduler's ``advance_clock``) as a route of its own, named ``command.<journal name>``.

The body is the command's journal fields, parsed by the same model in cases/commands.py
(so the same validation and the same error texts as a journal line); the path gives the
municipality and case, the token the actor. Each route declares its body's schema (the
model without the fields the server sets) so clients and the schema tests see it.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from api.body import JsonBody
from api.case_versions import ExpectedVersion
from api.command_bodies import BODIES
from api.deps import AllowedUser, CaseDep, ServicesDep
from api.errors import WRITE_RESPONSES
from api.roles import HTTP_COMMANDS
from api.routes.cases import CommandResult, run_command

router = APIRouter(tags=["commands"])


def _body_schema(model: type[BaseModel]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}}


def _route(name: str):
    def run(svc: ServicesDep, user: AllowedUser, case: CaseDep, body: JsonBody,
            request: Request, response: Response,
            expected: ExpectedVersion = None) -> CommandResult:
        return run_command(svc, user, case.municipality, name, body, case_ref=case.case_ref,
                           request=request, response=response, expected_version=expected)

    run.__name__ = f"command_{name}"
    return run


for _name in HTTP_COMMANDS:
    router.add_api_route(
        f"/{{municipality}}/cases/{{case_ref}}/{_name}", _route(_name), methods=["POST"],
        name=f"command.{_name}", response_model=CommandResult, responses=WRITE_RESPONSES,
        summary=f"Record {_name} on the case (its journal fields)",
        openapi_extra=_body_schema(BODIES[_name]))

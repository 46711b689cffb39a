"""The body of each command as the API and the pages take it: the journal command's model
without the fields the server sets (the path names the municipality and the command, the
signed-in user is the actor). The routes declare these in the schema; the pages build their
forms from them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

from api.roles import HTTP_COMMANDS
from cases.commands import Command, OpenCase

SERVER_FIELDS = ("municipality", "actor", "command")

MODELS: dict[str, type[BaseModel]] = {
    m.model_fields["command"].annotation.__args__[0]: m  # type: ignore[union-attr]
    for m in Command.__origin__.__args__  # type: ignore[attr-defined]
}


def body_model(name: str, *, keep_case_ref: bool = False) -> type[BaseModel]:
    """The command's model without the fields the server sets (for the schema only)."""
    model = MODELS[name]
    dropped = set(SERVER_FIELDS) | (set() if keep_case_ref else {"case_ref"})
    fields = {field: (info.annotation, info) for field, info in model.model_fields.items()
              if field not in dropped}
    return create_model(f"{model.__name__}Body", __config__=ConfigDict(extra="forbid"),
                        __doc__=model.__doc__, **fields)


BODIES: dict[str, type[BaseModel]] = {name: body_model(name) for name in HTTP_COMMANDS}
BODIES["open_case"] = body_model(OpenCase.model_fields["command"].annotation.__args__[0],
                                 keep_case_ref=True)


def body_schemas() -> dict[str, Any]:
    """The body models' JSON schemas, for the OpenAPI components."""
    found: dict[str, Any] = {}
    for model in BODIES.values():
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        found.update(schema.pop("$defs", {}))
        found[model.__name__] = schema
    return found

"""The OpenAPI schema, fuzzed by Schemathesis over ASGI: every operation the app documents,
as every role that may call it, with a bounded number of generated requests. No answer is a
500, and every answer matches the schema: its status is declared for the route, its
content type is the declared one, and its body has the declared shape (and a method the
route does not have is 405).

How it runs
    The schema is loaded once from ``create_app`` on a temporary SQLite store (the app is
    built when this module is imported, because ``schema.parametrize()`` makes one pytest
    item per operation at collection). For each role, ``test_as_<role>`` covers exactly the
    operations the role matrix (``api.roles``) lets it call, with that role's bearer token
    (a Schemathesis auth provider, so every phase sends it, while the cases Schemathesis
    builds to test a missing token still go without one). Routes without a token
    (``PUBLIC_ROUTES``) are fuzzed by ``test_without_a_token``. Path parameters are aimed
    at cases that exist (one just opened, one billed, one in the other village; or as
    generated), so bodies reach the command models and the domain rather than stopping at
    404. Schemathesis phases: the schema's examples, coverage (boundary and invalid values,
    undeclared methods) and fuzzing (``MAX_EXAMPLES`` per operation, derandomized, no
    shrinking so that a failing run stays short; the failure report carries the request).

A new route is fuzzed without touching this file, because the operations come from the
schema. For it to pass, the route must:
    - be in the role matrix (``api.roles.ROUTE_ROLES``) or in ``PUBLIC_ROUTES``;
    - declare every status it can answer with ``responses=`` on the route decorator:
      ``api.errors.ERROR_RESPONSES`` for a read (401, 403, 404, 422),
      ``api.errors.WRITE_RESPONSES`` for a write (those plus 409 and 413), plus any of its
      own (412 for ``If-Match``, 503 ...), each with ``model=ErrorBody`` (or the body it
      really returns) so the schema names the body's shape;
    - declare its success body with ``response_model=`` (or ``responses={200: {"content":
      {"text/csv": ...}}}`` for a body that is not JSON), and headers it sets that a client
      relies on;
    - answer bad input with 422 naming the field, never 500.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import schemathesis
import structlog
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from api.accounts import ROLES
from api.app import route_table
from api.roles import PUBLIC_ROUTES, may
from cases.domain import case_id
from cases.logging import configure_logging
from tests.api_kit import HOME, OTHER, OTHER_CASE, make_api, with_cases
from tests.builders import CaseLines, as_lines, dumping_through_bill

# Not negative_data_rejection: the API ignores query parameters it does not know, as HTTP
# services do, and that check counts an unknown one answered 200 as a failure (a run with it
# found numbers read as times, since fixed: cases/instants.py).
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance, unsupported_method]
MAX_EXAMPLES = 25  # generated requests per operation and role, besides the coverage phase
# Schemathesis gives an answer 10 s by default: a referral packet's PDF on a loaded 2-core
# machine, beside the other test worker, once took longer. A hang still fails, later.
ANSWER_SECONDS = 60
FUZZ_SETTINGS = settings(max_examples=MAX_EXAMPLES, derandomize=True, database=None,
                         deadline=None, phases=[Phase.explicit, Phase.generate],
                         suppress_health_check=list(HealthCheck))

_STORE_DIR = tempfile.TemporaryDirectory(prefix="abate-schema-fuzz-")
API = make_api(f"sqlite:///{Path(_STORE_DIR.name) / 'fuzz.sqlite3'}")
schema = schemathesis.openapi.from_asgi("/openapi.json", API.app)
ROUTE_NAMES = {(method.lower(), path): name for method, path, name in route_table()}


def route_name(ctx: Any) -> str:
    """The app's name for an operation ("" for one the route table lacks: no test then
    covers it, and test_every_documented_operation_is_fuzzed says so)."""
    return ROUTE_NAMES.get((ctx.operation.method.lower(), ctx.operation.path), "")


@pytest.fixture(scope="module", autouse=True)
def seeded_store():
    """The two villages' cases, and the service's own console logging (plain tracebacks:
    structlog's default renders every local of every frame, slowly, for each 500)."""
    saved_logging = structlog.get_config()
    configure_logging("console")
    with_cases(API)
    yield
    API.services.close()
    _STORE_DIR.cleanup()
    structlog.configure(**saved_logging)


def seeded_refs(operation: str) -> tuple[str, str]:
    """(just opened, billed): two cases of the home village kept for one operation, so
    what another route did to a case (closing it, say) does not starve this one."""
    return f"FZ.{operation}.open", f"FZ.{operation}.billed"


_SEEDED: set[str] = set()  # operations whose two cases are in the store


def ensure_seeded(operation: str) -> None:
    if operation in _SEEDED:
        return
    opened, billed = seeded_refs(operation)
    if not any(True for _ in API.services.store.events.get(case_id(HOME, opened), limit=1)):
        _seed(opened, billed)
    _SEEDED.add(operation)


def _seed(opened: str, billed: str) -> None:
    lines = [CaseLines(HOME, opened, actor="seed").open("belleville:9.13",
                                                        "2026-03-02T09:00:00-06:00"),
             *dumping_through_bill(CaseLines(HOME, billed, actor="seed"))]
    API.services.cases.import_journal(as_lines(*lines), API.services.clock())


def _at(path_parameters: dict[str, Any], municipality: str, case_ref: str) -> dict[str, Any]:
    aimed = {**path_parameters, "municipality": municipality}
    if "case_ref" in aimed:
        aimed["case_ref"] = case_ref
    return aimed


@schema.hook("flatmap_path_parameters")
def aimed_at_cases_that_exist(context, path_parameters):
    """Fuzzing phase: the path names a seeded case, the other village's case, or what
    Schemathesis generated (mostly a municipality the user has no grant for)."""
    if not path_parameters or "municipality" not in path_parameters:
        return st.just(path_parameters)
    opened, billed = seeded_refs(route_name(context))
    targets = [(HOME, opened), (HOME, billed), (HOME, billed), (OTHER, OTHER_CASE)]
    return st.one_of(st.sampled_from(targets).map(lambda t: _at(path_parameters, *t)),
                     st.just(path_parameters))


def aim_coverage_case(case: Any) -> None:
    """Coverage phase (hooks do not apply there): a case whose subject is not the path
    (a boundary value in the body or the query, say) goes to the billed case, so it is
    answered by the command model or the domain, not by a 404."""
    meta = case.meta
    if meta is None or meta.phase.name != "coverage" or not case.path_parameters:
        return
    path = meta.components.get(ParameterLocation.PATH)
    if meta.phase.data.parameter_location == ParameterLocation.PATH or (
            path is not None and path.mode != GenerationMode.POSITIVE):
        return
    case.path_parameters = _at(case.path_parameters, HOME, seeded_refs(route_name(case))[1])


def fuzz(case: Any) -> None:
    if case.path_parameters:
        ensure_seeded(route_name(case))
    aim_coverage_case(case)
    case.call_and_validate(checks=CHECKS, timeout=ANSWER_SECONDS)


def bearer_of(role: str) -> type:
    """A Schemathesis auth provider that signs every request in as ``role`` (of the home
    village)."""

    class Bearer:
        def get(self, case: Any, ctx: Any) -> str:
            return API.tokens[role, HOME]

        def set(self, case: Any, token: str, ctx: Any) -> None:
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}

    Bearer.__name__ = f"Bearer_{role}"
    return Bearer


def fuzz_as(role: str):
    """``test_as_<role>``: the operations ``role`` may call, each one pytest item."""
    operations = schema.include(lambda ctx: route_name(ctx) not in PUBLIC_ROUTES
                                and may(role, route_name(ctx)))

    @operations.parametrize()
    @operations.auth.apply(bearer_of(role), refresh_interval=None)
    @FUZZ_SETTINGS
    def test(case):
        fuzz(case)

    test.__name__ = test.__qualname__ = f"test_as_{role}"
    return test


for _role in ROLES:  # a role that may call no route yet gets its test with its first route
    if any(may(_role, name) for name in ROUTE_NAMES.values()):
        globals()[f"test_as_{_role}"] = fuzz_as(_role)


@schema.include(lambda ctx: route_name(ctx) in PUBLIC_ROUTES).parametrize()
@FUZZ_SETTINGS
def test_without_a_token(case):
    fuzz(case)


def test_every_documented_operation_is_fuzzed():
    """Each operation of the schema is in a test above: public, or callable by a role."""
    documented = {(method, path) for path, item in API.app.openapi()["paths"].items()
                  for method in item}
    unfuzzed = [operation for operation in documented
                if ROUTE_NAMES.get(operation) not in PUBLIC_ROUTES
                and not any(may(role, ROUTE_NAMES.get(operation, "")) for role in ROLES)]
    assert not unfuzzed, "in no role's test (missing from api.roles?)"


def test_the_schema_and_the_docs_are_served():
    schema_answer = API.client.get("/openapi.json")
    assert schema_answer.status_code == 200
    assert schema_answer.headers["content-type"] == "application/json"
    document = schema_answer.json()
    assert document["info"]["title"] == "Abate" and document["openapi"].startswith("3.")
    assert document["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    docs = API.client.get("/docs")
    assert docs.status_code == 200
    assert docs.headers["content-type"].startswith("text/html")
    assert "/openapi.json" in docs.text and "swagger" in docs.text.lower()

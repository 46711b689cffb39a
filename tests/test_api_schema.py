"""The OpenAPI schema, fuzzed (Schemathesis over ASGI): a bounded number of generated
requests per route, each with a token of a role the route allows and aimed at a case
that exists, so bodies reach the command models and the domain. No answer is a 500, and
every answer matches the schema (status declared, body shaped as declared)."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from api.app import route_table
from api.roles import PUBLIC_ROUTES, ROUTE_ROLES
from tests.api_kit import HOME, HOME_CASE, make_api, with_cases

CHECKS = (not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance)


@pytest.fixture(scope="module")
def fuzzed_api(tmp_path_factory):
    api = with_cases(make_api(f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'a.sqlite3'}"))
    yield api
    api.services.close()


@pytest.fixture(scope="module")
def api_schema(fuzzed_api):
    return schemathesis.openapi.from_asgi("/openapi.json", fuzzed_api.app)


@pytest.mark.parametrize("method, path, name", route_table(),
                         ids=[f"{m} {p}" for m, p, _ in route_table()])
def test_no_server_errors_and_answers_match_the_schema(fuzzed_api, api_schema, method, path,
                                                       name):
    operation = api_schema[path][method]
    headers = {}
    if name not in PUBLIC_ROUTES:
        headers = fuzzed_api.as_(sorted(ROUTE_ROLES[name])[0], HOME)

    @given(case=operation.as_strategy())
    @settings(max_examples=12, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def check(case):
        if case.path_parameters:  # aim at a case that exists, so bodies reach the domain
            case.path_parameters["municipality"] = HOME
            if "case_ref" in case.path_parameters:
                case.path_parameters["case_ref"] = HOME_CASE
        case.call_and_validate(headers=headers, checks=CHECKS)

    check()

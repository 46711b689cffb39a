"""The role matrix, route by route: generated from the app's own route table, so a new
route that the matrix forgets fails here (and is refused to everyone meanwhile)."""

from __future__ import annotations

import pytest

from api.app import route_table
from api.accounts import ROLES
from api.roles import COMMAND_ROLES, HTTP_COMMANDS, PUBLIC_ROUTES, ROUTE_ROLES, may
from tests.api_kit import (HOME, HOME_CASE, OTHER, OTHER_CASE, earlier, make_api, open_body,
                           with_cases)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    api = with_cases(make_api(f"sqlite:///{tmp_path_factory.mktemp('roles') / 'a.sqlite3'}"))
    for village in (HOME, OTHER):  # the user the {name} routes (admin.users.*) act on
        api.add_user(f"target.{village}", "inspector", village)
    yield api
    api.services.close()


def test_the_route_table_is_every_route_the_app_documents(api):
    documented = {(method.upper(), path) for path, item in api.app.openapi()["paths"].items()
                  for method in item}
    assert documented == {(method, path) for method, path, _ in route_table()}


def test_every_route_is_in_the_matrix_or_public():
    names = {name for _, _, name in route_table()}
    assert names - set(ROUTE_ROLES) <= PUBLIC_ROUTES, names - set(ROUTE_ROLES)
    assert set(ROUTE_ROLES) <= names, "the matrix names a route that does not exist"
    assert set(COMMAND_ROLES) == set(HTTP_COMMANDS), "every HTTP command has its roles"


def test_nobody_writes_as_auditor_or_admin_and_nobody_financial_as_attorney():
    writes = [n for n in ROUTE_ROLES if n.startswith("command.") or n == "cases.open"]
    assert not [n for n in writes if may("auditor", n) or may("admin", n)]
    money = ("issue_bill", "record_payment", "record_bond_draw", "certify_charge")
    assert not [n for n in money if may("attorney", f"command.{n}") or
                may("inspector", f"command.{n}")]


def test_every_route_role_and_village_answers_as_the_matrix_says(api):
    """Each route as each role, in the user's own village and in the other one (its cases,
    or its users for the admin routes): 403 for a role the matrix leaves out, 404 in the
    other village, else an answer of the route. A route naming neither (a list of the
    user's own, an add) is the same request both times."""
    checked = 0
    for method, template, name in route_table():
        if name in PUBLIC_ROUTES:
            continue
        for role in ROLES:
            # A route without a municipality in its path is scoped by the user's grants.
            for own in (True, False) if "{municipality}" in template else (True,):
                village, ref = (HOME, HOME_CASE) if own else (OTHER, OTHER_CASE)
                path = template.replace("{municipality}", village).replace(
                    "{case_ref}", ref).replace("{name}", f"target.{village}")
                scoped = path != template
                answer = api.client.request(method, path,
                                            json={} if method == "POST" else None,
                                            headers=api.as_(role, HOME))
                where = f"{method} {path} as {role} of {HOME}: {answer.status_code} {answer.text}"
                if not may(role, name):
                    assert answer.status_code == 403, where
                    # says what was refused in the user's terms, and who may do it
                    detail = answer.json()["detail"]
                    assert f"{method} {path}" in detail and "who may: " in detail, where
                elif not own and scoped:
                    assert answer.status_code == 404, where
                else:
                    assert answer.status_code not in (401, 403, 404), where
                    assert answer.status_code < 500, where
                checked += 1
    unscoped = sum(1 for _, path, _ in route_table() if "{municipality}" not in path) - len(
        PUBLIC_ROUTES)
    assert checked >= len(ROLES) * (2 * len(ROUTE_ROLES) - unscoped)


def test_public_routes_answer_without_a_token(api):
    for method, path, name in route_table():
        if name in PUBLIC_ROUTES:
            assert api.client.request(method, path).status_code == 200


def test_a_clerk_records_what_an_inspector_records_and_not_the_attorneys_part():
    """Trial finding 3: in a small village the clerk-treasurer records the whole case. The
    clerk may record every command an inspector may; what only the attorney records
    (citations, dispositions) stays the attorney's, and nothing financial reaches them."""
    inspectors = {name for name, roles in COMMAND_ROLES.items() if "inspector" in roles}
    assert inspectors >= {"record_inspection", "serve_notice", "record_service_attempt",
                          "declare_hazard", "record_compliance", "record_abatement",
                          "issue_notice_document"}
    assert not [name for name in inspectors if not may("clerk", f"command.{name}")]
    for name in ("issue_citation", "record_disposition"):
        assert COMMAND_ROLES[name] == {"attorney"}, name


def test_a_clerk_alone_takes_a_case_through_inspection_notice_abatement_and_bill(api):
    """The same, through the HTTP routes a clerk calls: every step answers 200 as the
    clerk, and the attorney's steps are refused naming who may."""
    case = f"/api/v1/{HOME}/cases/BV-CLERK-1"
    opened = api.client.post(f"/api/v1/{HOME}/cases", headers=api.as_("clerk"),
                             json=open_body("BV-CLERK-1", days_ago=10))
    assert opened.status_code == 201, opened.text
    steps = [("record_inspection", {"at": earlier(9.9), "findings": "mattresses on the lot"}),
             ("serve_notice", {"at": earlier(9.8), "method": "personal",
                               "served_on": "Ann Owner"}),
             ("issue_notice_document", {"at": earlier(9.7)}),
             ("record_abatement", {"at": earlier(2), "costs": [
                 {"item": "Hauling", "amount": "1200.50"}, {"item": "Dump fee", "amount": "85"}]}),
             ("issue_bill", {"at": earlier(1)})]
    for command, body in steps:
        done = api.client.post(f"{case}/{command}", json=body, headers=api.as_("clerk"))
        assert done.status_code == 200, (command, done.text)
    shown = api.client.get(case, headers=api.as_("clerk")).json()
    assert [e["actor"] for e in shown["events"] if e["type"] in (
        "InspectionRecorded", "NoticeServed", "AbatementRecorded", "BillIssued")] == \
        ["clerk.belleville"] * 4
    assert shown["balance"] == "1285.50"
    cite = api.client.post(f"{case}/issue_citation", headers=api.as_("clerk"),
                           json={"at": earlier(0.5), "citation_number": "C-1"})
    assert cite.status_code == 403 and "who may: attorney" in cite.json()["detail"]
    inspect = api.client.post(f"{case}/record_inspection", headers=api.as_("attorney"),
                              json={"at": earlier(0.5), "findings": "still there"})
    assert inspect.status_code == 403
    assert "who may: clerk, inspector" in inspect.json()["detail"]


def test_a_second_referral_is_refused_while_the_first_is_open(api):
    """Trial finding 16: one referral at a time; a disposition ends it."""
    case = f"/api/v1/{HOME}/cases/BV-REFER-1"
    opened = api.client.post(f"/api/v1/{HOME}/cases", headers=api.as_("clerk"),
                             json=open_body("BV-REFER-1", days_ago=5))
    assert opened.status_code == 201, opened.text
    first = api.client.post(f"{case}/refer_to_attorney", headers=api.as_("clerk"),
                            json={"at": earlier(4), "reason": "no cleanup"})
    assert first.status_code == 200, first.text
    second = api.client.post(f"{case}/refer_to_attorney", headers=api.as_("attorney"),
                             json={"at": earlier(3), "reason": "again"})
    assert second.status_code == 409, second.text
    assert "already referred" in second.json()["detail"]
    decided = api.client.post(f"{case}/record_disposition", headers=api.as_("attorney"),
                              json={"at": earlier(2), "outcome": "dismissed"})
    assert decided.status_code == 200, decided.text
    again = api.client.post(f"{case}/refer_to_attorney", headers=api.as_("attorney"),
                            json={"at": earlier(1), "reason": "dumped again"})
    assert again.status_code == 200, again.text

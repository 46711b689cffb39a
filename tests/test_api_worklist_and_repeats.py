"""``GET worklist`` and ``GET repeat-offenses`` over HTTP, against the installed ``abate``
on the same store: the same answers (who acts, rule citations, local times with UTC
beside), the API's filters, bad parameters named, the role matrix and another village."""

from __future__ import annotations

import pytest

from tests.api_kit import HOME, OTHER, database_for, make_api
from tests.builders import CaseLines, DANE_PARCEL
from tests.test_reports import Abate

PRIOR_AT = "2026-03-02T09:00:00-06:00"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def stores(request, tmp_path):
    """(api, cli) on one store: two § 9.13 cases with notices served (cure deadlines
    open), one without (a notice to serve) and a § 9.25 case whose person was notified."""
    url, extra, schema = database_for(request, tmp_path)
    api = make_api(url, extra)
    cli = Abate((url, extra, schema))
    commands = []
    for ref, day in (("B-W1", "02"), ("B-W2", "09")):
        case = CaseLines(HOME, ref)
        commands += [case.open("belleville:9.13", f"2026-03-{day}T09:00:00-06:00"),
                     case.cmd("serve_notice", f"2026-03-{day}T10:00:00-06:00",
                              method="personal", served_on="Ann")]
    commands.append(CaseLines(HOME, "B-W3").open("belleville:9.13", "2026-03-03T09:00:00-06:00"))
    refuse = CaseLines(HOME, "B-R1")
    commands += [refuse.open("belleville:9.25", PRIOR_AT, parcel=DANE_PARCEL,
                             responsible={"name": "Pat Prior"}),
                 refuse.cmd("serve_notice", PRIOR_AT.replace("T09", "T10"), method="personal",
                            served_on="Pat Prior")]
    cli.load(tmp_path, *commands)
    yield api, cli
    api.services.close()


def _get(api, path: str, role: str = "inspector", **params):
    return api.client.get(f"/api/v1/{HOME}/{path}", params=params, headers=api.as_(role))


def test_the_worklist_is_the_clis_with_who_acts_and_the_rule(stores):
    api, cli = stores
    answer = _get(api, "worklist", as_of="2026-03-04")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body == cli.json("worklist", "--municipality", HOME, "--as-of", "2026-03-04")
    assert body["as_of"] == "2026-03-04T23:59:59-06:00"
    cure = next(d for d in body["deadlines"] if d["case_ref"] == "B-W1" and d["deadline"] == "cure")
    assert cure["due_at"] == "2026-03-05T10:00:00-06:00" and cure["due_at_utc"].endswith("+00:00")
    assert cure["rule"] == "belleville:9.13" and cure["citation"]
    assert body["actions"] and all(a["by"] and a["by_citation"] and a["citation"]
                                   for a in body["actions"])
    overdue = _get(api, "worklist", role="attorney", as_of="2026-03-06", overdue=True).json()
    assert overdue == cli.json("worklist", "--municipality", HOME, "--as-of", "2026-03-06",
                               "--overdue")
    assert {d["case_ref"] for d in overdue["deadlines"]} == {"B-W1"}


def test_the_worklist_filters_by_due_date_action_and_deadline(stores):
    api, _ = stores
    everything = _get(api, "worklist", as_of="2026-03-04").json()
    early = _get(api, "worklist", as_of="2026-03-04", due_by="2026-03-06").json()
    assert {d["case_ref"] for d in early["deadlines"]} == {"B-W1"}
    assert all(a["due_at_utc"] <= "2026-03-07T06:00:00+00:00" for a in early["actions"])
    kinds = {a["action"] for a in everything["actions"]}
    kind = sorted(kinds)[0]
    only = _get(api, "worklist", as_of="2026-03-04", action=kind).json()
    assert only["actions"] and {a["action"] for a in only["actions"]} == {kind}
    assert only["deadlines"] == everything["deadlines"]
    cures = _get(api, "worklist", as_of="2026-03-04", deadline="cure").json()
    assert cures["deadlines"] and {d["deadline"] for d in cures["deadlines"]} == {"cure"}


def test_repeat_offenses_are_the_clis_under_the_rule_in_force(stores):
    api, cli = stores
    for params, argv in (({"party": "Pat Prior"}, ("--party", "Pat Prior")),
                         ({"parcel": "Dane/0509-123-4567-0"}, ("--parcel", "Dane/0509-123-4567-0"))):
        family = "refuse" if "party" in params else "dumping"
        answer = _get(api, "repeat-offenses", role="auditor", rule_family=family,
                      as_of="2026-09-01", **params)
        assert answer.status_code == 200, answer.text
        assert answer.json() == cli.json("repeat-offenses", "--municipality", HOME,
                                         "--rule-family", family, *argv, "--as-of", "2026-09-01")
    person = _get(api, "repeat-offenses", rule_family="refuse", party="Pat Prior",
                  as_of="2026-09-01").json()
    assert (person["count"], person["case_refs"]) == (1, ["B-R1"])
    assert person["counts"] == "person_notified_or_convicted" and "9.25" in person["rule_citation"]
    assert person["window_basis"] == f"the repeat clause of {person['rule_citation']}"
    snow = _get(api, "repeat-offenses", rule_family="snow", parcel="Dane/0509-123-4567-0",
                as_of="2026-09-01").json()
    assert snow["rule_citation"] is None and "not an ordinance window" in snow["window_basis"]


@pytest.mark.parametrize("params, field", [
    ({"party": "Pat"}, "rule_family"),
    ({"rule_family": "weather", "party": "Pat"}, "rule_family"),
    ({"rule_family": "refuse"}, None),
    ({"rule_family": "refuse", "party": "Pat", "parcel": "Dane/1"}, None),
    ({"rule_family": "refuse", "parcel": "Dane/0509-123-4567-0"}, "parcel"),
    ({"rule_family": "dumping", "parcel": "0509-123-4567-0"}, "parcel"),
    ({"rule_family": "dumping", "party": "Pat\x1bPrior"}, "party"),
    ({"rule_family": "dumping", "party": "Pat", "as_of": "0001-01-01"}, "as_of"),
])
def test_a_question_that_does_not_fit_names_the_parameter(stores, params, field):
    api, _ = stores
    answer = _get(api, "repeat-offenses", **params)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field, answer.json()


def test_roles_and_another_village(stores):
    api, _ = stores
    for role in ("inspector", "clerk", "attorney", "auditor"):
        assert _get(api, "worklist", role=role).status_code == 200
        assert _get(api, "repeat-offenses", role=role, rule_family="dumping",
                    party="Ann").status_code == 200
    assert _get(api, "worklist", role="admin").status_code == 403
    other = api.client.get(f"/api/v1/{OTHER}/worklist", headers=api.as_("clerk"))
    missing = api.client.get("/api/v1/nowhere/worklist", headers=api.as_("clerk"))
    assert other.status_code == missing.status_code == 404


def test_the_worklist_comes_in_pages_that_visit_every_row_once(stores):
    """A page of each list at a time: walking ``next_offset`` from 0 gives every action
    and deadline of the one-page answer once, in order, at the API and the CLI alike."""
    api, cli = stores
    whole = _get(api, "worklist", as_of="2026-03-04").json()
    assert (whole["limit"], whole["offset"], whole["next_offset"]) == (100, 0, None)
    assert (whole["actions_total"], whole["deadlines_total"]) == (
        len(whole["actions"]), len(whole["deadlines"]))
    longest = max(len(whole["actions"]), len(whole["deadlines"]))
    assert longest >= 2
    actions, deadlines, offset, pages = [], [], 0, 0
    while offset is not None:
        page = _get(api, "worklist", as_of="2026-03-04", limit=1, offset=offset).json()
        assert page == cli.json("worklist", "--municipality", HOME, "--as-of", "2026-03-04",
                                "--limit", "1", "--offset", str(offset))
        assert len(page["actions"]) <= 1 and len(page["deadlines"]) <= 1
        assert (page["actions_total"], page["deadlines_total"]) == (
            whole["actions_total"], whole["deadlines_total"])
        actions += page["actions"]
        deadlines += page["deadlines"]
        offset, pages = page["next_offset"], pages + 1
    assert (actions, deadlines) == (whole["actions"], whole["deadlines"])
    assert pages == longest
    beyond = _get(api, "worklist", as_of="2026-03-04", offset=1000).json()
    assert (beyond["actions"], beyond["deadlines"], beyond["next_offset"]) == ([], [], None)


@pytest.mark.parametrize("params, field", [
    ({"limit": 0}, "limit"), ({"limit": 501}, "limit"), ({"offset": -1}, "offset"),
    ({"offset": 10_000_001}, "offset")])
def test_a_page_out_of_bounds_names_its_parameter(stores, params, field):
    api, _ = stores
    answer = _get(api, "worklist", **params)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field

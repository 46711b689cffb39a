"""Filters that could match nothing are refused, never answered with an empty list: over
HTTP a 422 naming the query parameter and the accepted values, and through the installed
``abate`` the same check (cases/filters.py) as exit status 2 with one line naming the
option. Times people read are local with a ``*_utc`` twin; errors name list items by
position; a ``+`` that arrived as a space gets a hint."""

from __future__ import annotations

import json

import pytest

from cases.failures import ExitCode
from tests.abate_command import assert_one_line_failure
from tests.api_kit import BACKENDS, HOME, database_for, make_api
from tests.builders import CaseLines
from tests.test_reports import Abate

CASE = "B-Q1"
OPENED_UTC = "2026-03-02T15:00:00+00:00"  # 9 am in Belleville (CST)
INSPECTED_UTC = "2026-03-03T16:30:00+00:00"  # 10:30 am in Belleville
REFERRED_UTC = "2026-03-03T17:00:00+00:00"  # 11 am


@pytest.fixture(params=BACKENDS)
def stores(request, tmp_path):
    """(api, cli) on one store holding one Belleville case whose times were typed in UTC."""
    url, extra, schema = database_for(request, tmp_path)
    api = make_api(url, extra)
    cli = Abate((url, extra, schema))
    case = CaseLines(HOME, CASE)
    cli.load(tmp_path, case.open("belleville:9.13", OPENED_UTC),
             case.cmd("record_inspection", INSPECTED_UTC, findings="couch on the lawn"),
             case.cmd("refer_to_attorney", REFERRED_UTC, reason="repeat dumping"))
    yield api, cli
    api.services.close()


def _get(api, path: str, role: str = "auditor", **params):
    return api.client.get(path, params=params, headers=api.as_(role))


# (HTTP path, query, the field named, words the answer must hold, the CLI's arguments and the
# option it names: the same refusal through both doors; None where the CLI has no such filter)
REFUSED = [
    ("cases", {"rule": "belleville:99"}, "rule", ("'belleville:99' is not a rule of belleville",
                                                  "belleville:9.13"),
     ("cases", "list", "--municipality", HOME, "--rule", "belleville:99"), "--rule"),
    ("cases", {"rule": "mazomanie:360-8"}, "rule", ("not a rule of belleville", "belleville:9.13"),
     ("cases", "list", "--municipality", HOME, "--rule", "mazomanie:360-8"), "--rule"),
    ("cases", {"parcel": "12-34"}, "parcel", ("'12-34' is not a parcel number", "Dane County",
                                              "Green County"),
     ("cases", "list", "--municipality", HOME, "--parcel", "12-34"), "--parcel"),
    ("cases", {"parcel_part": "45\x01"}, "parcel_part", ("U+0001", "one line"),
     ("cases", "list", "--municipality", HOME, "--parcel-part", "45\x01"), "--parcel-part"),
    ("cases", {"status": "bogus"}, "status", ("billed",),
     ("cases", "list", "--municipality", HOME, "--status", "bogus"), "--status"),
    ("worklist", {"action": "mow"}, "action", ("'mow' is not an action", "serve_notice",
                                               "enter_tax_roll"),
     ("worklist", "--municipality", HOME, "--action", "mow"), "--action"),
    ("worklist", {"deadline": "Cure"}, "deadline", ("'Cure' is not a deadline", "cure",
                                                    "bill_due", "notice_due"),
     ("worklist", "--municipality", HOME, "--deadline", "Cure"), "--deadline"),
    ("worklist", {"due_by": "2300-01-01"}, "due_by", ("2200-12-31",),
     ("worklist", "--municipality", HOME, "--due-by", "2300-01-01"), "--due-by"),
    ("repeat-offenses", {"rule_family": "junkk", "party": "Ann"}, "rule_family",
     ("'junkk' is not a rule family of belleville", "dumping"),
     ("repeat-offenses", "--municipality", HOME, "--rule-family", "junkk", "--party", "Ann"),
     "--rule-family"),
    ("repeat-offenses", {"rule_family": "dumping", "parcel": "Sauk/0509-123-4567-0"}, "parcel",
     ("county 'Sauk' is not one of the Village of Belleville's counties: Dane, Green",),
     ("repeat-offenses", "--municipality", HOME, "--rule-family", "dumping", "--parcel",
      "Sauk/0509-123-4567-0"), "--parcel"),
    ("repeat-offenses", {"rule_family": "dumping", "parcel": "Dane/1"}, "parcel",
     ("'1' does not match the Dane County format",),
     ("repeat-offenses", "--municipality", HOME, "--rule-family", "dumping", "--parcel",
      "Dane/1"), "--parcel"),
    ("tax-roll", {"tax_year": 2026, "county": "Sauk"}, "county",
     ("county 'Sauk' is not one of the Village of Belleville's counties: Dane, Green",),
     ("tax-roll", "export", "--municipality", HOME, "--tax-year", "2026", "--county", "Sauk"),
     "--county"),
    ("tax-roll", {"tax_year": 1999}, "tax_year", ("2000",),  # cases.instant_bounds, every door
     ("tax-roll", "export", "--municipality", HOME, "--tax-year", "1999"), "--tax-year"),
    ("tax-roll", {"tax_year": 2026, "known_at": "2300-01-01T00:00:00-06:00"}, "known_at",
     ("2200-12-31",),
     ("tax-roll", "export", "--municipality", HOME, "--tax-year", "2026", "--known-at",
      "2300-01-01T00:00:00-06:00"), "--known-at"),
    (f"cases/{CASE}", {"as_of": "9999-01-01T00:00:00+00:00"}, "as_of", ("2200-12-31",),
     ("case", "show", "--municipality", HOME, CASE, "--as-of", "9999-01-01T00:00:00+00:00"),
     "--as-of"),
]


@pytest.mark.parametrize("path, query, field, words, argv, option", REFUSED,
                         ids=[f"{r[0]}-{r[2]}-{i}" for i, r in enumerate(REFUSED)])
def test_an_impossible_filter_is_refused_through_both_doors(stores, path, query, field, words,
                                                            argv, option):
    api, cli = stores
    answer = _get(api, f"/api/v1/{HOME}/{path}", **query)
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["field"] == field, body
    assert body["detail"].startswith(f"query parameter {field}"), body
    for word in words:
        assert word in body["detail"], (word, body)
    done = cli.run(*argv, ok=False)
    done.stderr, done.stdout = done.stderr.decode(), done.stdout.decode()
    line = assert_one_line_failure(done, ExitCode.USAGE, option)
    for word in words:
        assert word in line, (word, line)
    assert done.stdout == ""


def test_possible_filters_still_answer(stores):
    api, cli = stores
    listed = _get(api, f"/api/v1/{HOME}/cases", rule="belleville:9.13",
                  parcel="0509-123-4567-0").json()
    assert [c["case_ref"] for c in listed["cases"]] == [CASE]
    assert cli.json("cases", "list", "--municipality", HOME, "--rule", "belleville:9.13",
                    "--parcel", "0509-123-4567-0")["cases"] == listed["cases"]
    # any part of a parcel number, through both doors; a wildcard matches only itself
    part = _get(api, f"/api/v1/{HOME}/cases", parcel_part="4567").json()
    assert [c["case_ref"] for c in part["cases"]] == [CASE] and part["total"] == 1
    assert cli.json("cases", "list", "--municipality", HOME, "--parcel-part", "4567") \
        == {**part, "cases": part["cases"]}
    for wildcard in ("%", "0509_123"):
        assert _get(api, f"/api/v1/{HOME}/cases", parcel_part=wildcard).json()["total"] == 0
        assert cli.json("cases", "list", "--municipality", HOME, "--parcel-part",
                        wildcard)["cases"] == []
    # A county typed in any case is the county (the list is answered, with its spelling).
    roll = _get(api, f"/api/v1/{HOME}/tax-roll", tax_year=2026, county="dane", format="json")
    assert roll.status_code == 200, roll.text
    assert roll.json()["summary"]["county"] == "Dane"
    listed = _get(api, f"/api/v1/{HOME}/worklist", deadline="cure", action="serve_notice",
                  as_of="2026-03-04").json()
    assert [a["action"] for a in listed["actions"]] == ["serve_notice"]
    assert listed == cli.json("worklist", "--municipality", HOME, "--deadline", "cure",
                              "--action", "serve_notice", "--as-of", "2026-03-04")
    due_by = cli.json("worklist", "--municipality", HOME, "--as-of", "2026-03-04",
                      "--due-by", "2026-03-01")
    assert due_by["actions"] == [] and due_by == _get(
        api, f"/api/v1/{HOME}/worklist", as_of="2026-03-04", due_by="2026-03-01").json()


def test_the_access_log_refuses_an_empty_period_and_an_unknown_user(stores):
    api, _ = stores
    period = _get(api, "/api/v1/audit/access-log", **{"from": "2026-03-02T00:00:00-06:00",
                                                       "to": "2026-03-01T00:00:00-06:00"})
    assert period.status_code == 422 and period.json()["field"] == "to", period.text
    assert "is not after query parameter from" in period.json()["detail"]
    nobody = _get(api, "/api/v1/audit/access-log", user="nobody")
    assert nobody.status_code == 422 and nobody.json()["field"] == "user", nobody.text
    detail = nobody.json()["detail"]
    assert "'nobody' is not an account" in detail and "clerk.belleville" in detail
    assert "clerk.mazomanie" not in detail  # another village's accounts are not listed
    # Another village's user is an account: the auditor may look for its attempts.
    other = _get(api, "/api/v1/audit/access-log", user="clerk.mazomanie")
    assert other.status_code == 200, other.text


def test_a_seal_that_is_no_digest_is_named_in_words(stores):
    api, _ = stores
    answer = _get(api, "/api/v1/audit/verify", seal="not-a-digest")
    assert answer.status_code == 422 and answer.json()["field"] == "seal", answer.text
    assert "64 hexadecimal characters" in answer.json()["detail"]
    assert "^[0-9a-fA-F]" not in answer.json()["detail"]


def test_a_plus_that_arrived_as_a_space_gets_a_hint(stores):
    api, _ = stores
    # What a client sends when it pastes an offset with + into a URL unencoded.
    answer = api.client.get(f"/api/v1/{HOME}/cases/{CASE}?as_of=2026-03-04T08:00:00+05:30",
                            headers=api.as_("auditor"))
    assert answer.status_code == 422 and answer.json()["field"] == "as_of", answer.text
    assert "%2B" in answer.json()["detail"]
    encoded = api.client.get(f"/api/v1/{HOME}/cases/{CASE}?as_of=2026-03-04T08:00:00%2B05:30",
                             headers=api.as_("auditor"))
    assert encoded.status_code == 200, encoded.text


def test_a_list_items_error_names_its_position(stores):
    api, _ = stores
    answer = api.client.post(
        f"/api/v1/{HOME}/cases/{CASE}/record_abatement", headers=api.as_("inspector"),
        json={"at": "2026-03-04T09:00:00-06:00",
              "costs": [{"item": "crew", "amount": "10.00"}, {"item": "truck", "amount": "ten"}]})
    assert answer.status_code == 422 and answer.json()["field"] == "costs.1.amount", answer.text
    assert "field costs.1.amount:" in answer.json()["detail"]


# An item the command's model takes but the domain refuses (its sign, its cents, the
# municipality's max_amount; an offense date outside the violation): named from 0 as the
# model's own errors are, over HTTP with the field member and in an imported journal.
DOMAIN_REFUSED = [
    ("record_abatement", {"costs": [{"item": "crew", "amount": "10.00"},
                                    {"item": "truck", "amount": "-5.00"}]},
     "costs.1.amount", "field costs.1.amount: -5.00 must be positive"),
    ("record_abatement", {"costs": [{"item": "crew", "amount": "10.505"}]},
     "costs.0.amount", "field costs.0.amount: 10.505 has more than two decimals"),
    ("record_abatement", {"costs": [{"item": "crew", "amount": "1.00"},
                                    {"item": "truck", "amount": "100000.01"}]},
     "costs.1.amount", "field costs.1.amount: 100000.01 is more than the largest amount"),
    ("issue_citation", {"citation_number": "C-1", "offense_dates": ["2026-03-03", "2026-03-01"]},
     "offense_dates.1", "field offense_dates.1: 2026-03-01 is before the violation began"),
]


@pytest.mark.parametrize("command, fields, field, says", DOMAIN_REFUSED,
                         ids=[c[2] for c in DOMAIN_REFUSED])
def test_a_list_item_the_domain_refuses_is_named_from_0_with_its_field(
        stores, tmp_path, command, fields, field, says):
    api, cli = stores
    at = "2026-03-04T09:00:00-06:00"
    answer = api.client.post(f"/api/v1/{HOME}/cases/{CASE}/{command}",
                             headers=api.as_("attorney" if command == "issue_citation"
                                             else "inspector"), json={"at": at, **fields})
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field and says in answer.json()["detail"], answer.text
    journal = tmp_path / "refused.jsonl"
    journal.write_text(json.dumps(CaseLines(HOME, CASE).cmd(command, at, **fields)) + "\n")
    done = cli.run("import", str(journal), ok=False)
    done.stderr = done.stderr.decode()
    assert_one_line_failure(done, ExitCode.REFUSED, f"line 1: {says}")


def test_times_typed_in_utc_read_in_local_time_with_their_utc_twin(stores):
    api, cli = stores
    case = _get(api, f"/api/v1/{HOME}/cases/{CASE}").json()
    assert case == cli.json("case", "show", "--municipality", HOME, CASE)
    referral = case["referrals"][0]
    assert referral["at"] == "2026-03-03T11:00:00-06:00"
    assert referral["at_utc"] == "2026-03-03T17:00:00+00:00"
    assert case["observed_at"] == "2026-03-02T09:00:00-06:00"
    history = _get(api, f"/api/v1/{HOME}/cases/{CASE}/history").json()
    assert [e["occurred_at"] for e in history["events"]][:2] == [
        "2026-03-02T09:00:00-06:00", "2026-03-03T10:30:00-06:00"]
    assert all(e["recorded_at_utc"].endswith("+00:00") for e in history["events"])


def test_verify_shows_when_the_store_was_sealed_in_local_time(stores):
    api, cli = stores
    seal = cli.json("seal")["sealed_at"]  # as the seal is kept: UTC
    for report in (_get(api, "/api/v1/audit/verify").json(), cli.json("verify")):
        sealed = report["last_seal"]
        assert sealed["sealed_at_utc"] == seal
        assert sealed["sealed_at"].endswith(("-06:00", "-05:00")), sealed


def test_every_deadline_the_rules_set_can_be_asked_for():
    """The worklist's ``deadline`` filter accepts every name cases/deadlines.py sets, and
    every escalation step of the rule files (else a real deadline would be refused)."""
    import re
    from pathlib import Path

    from cases.deadlines import DEADLINE_NAMES, deadline_names
    from cases.rules.catalog import default_catalog

    source = (Path(__file__).parent.parent / "cases" / "deadlines.py").read_text("utf-8")
    assert set(re.findall(r'deadline\("([a-z_]+)"', source)) == set(DEADLINE_NAMES)
    for place in default_catalog().municipalities.values():
        steps = {s.name for rule in place.rules for s in rule.escalations}
        assert steps <= set(deadline_names(place.rules)), place.municipality

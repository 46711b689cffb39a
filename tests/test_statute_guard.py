"""No charge is certified without the statute that authorises it, by any door: a
``certify_charge`` line in ``abate import`` (exit 1, the whole journal refused, naming the
line) and the API's command route (409, nothing recorded) give the list refusal's text
for a charge whose rule leaves the statute ``not set`` (Belleville § 9.07); a charge whose
rule names it (§ 9.13, Wis. Stat. § 66.0627(4)) is certified through the same doors."""

from __future__ import annotations

import json

import pytest

from tests.api_kit import HOME, database_for, make_api
from tests.builders import CaseLines, clock, dumping_through_bill, hedge_through_bill
from tests.test_reports import Abate

CERTIFY_AT = "2026-11-20T10:00:00-06:00"  # both charges eligible, before today
REFUSAL = ("the charge cannot be certified: the statute that authorises the charge is not set "
           "in its rule: B-H1 (special tax under belleville:9.07 v1); nothing was certified: "
           "the village attorney names the statute in the rules catalog (a new version of the "
           "rule, docs/rules.md)")


def _certify(case: CaseLines) -> dict:
    return case.cmd("certify_charge", CERTIFY_AT, tax_year=2026)


def _cases(abate: Abate) -> list[str]:
    listed = abate.json("cases", "list", "--municipality", HOME)
    return sorted(c["case_ref"] for c in listed["cases"])


def test_a_journal_certifying_a_charge_whose_statute_is_not_set_is_refused_whole(database,
                                                                               tmp_path):
    abate = Abate(database)
    dumped, hedge = CaseLines(HOME, "B-D1"), CaseLines(HOME, "B-H1")
    lines = [*dumping_through_bill(dumped), *hedge_through_bill(hedge),
             clock(HOME, "2026-11-16T00:00:00-06:00"), _certify(dumped), _certify(hedge)]
    journal = tmp_path / "certify.jsonl"
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    refused = abate.run("import", str(journal), ok=False)
    said = refused.stderr.decode()
    assert refused.returncode == 1, said
    assert f"line {len(lines)}: " in said and REFUSAL in said
    assert "Traceback" not in said
    assert _cases(abate) == []  # all or nothing: not even B-D1's certification or its case

    journal.write_text("".join(json.dumps(line) + "\n" for line in lines[:-1]), encoding="utf-8")
    abate.run("import", str(journal))  # the same journal without that line: recorded
    assert _cases(abate) == ["B-D1", "B-H1"]
    certified = abate.json("case", "show", "--municipality", HOME, "B-D1")["events"][-1]
    assert certified["type"] == "ChargeCertified"
    assert certified["facts"]["statute"] == "Wis. Stat. § 66.0627(4)"
    assert not abate.json("case", "show", "--municipality", HOME, "B-H1")["charge"].get("certified")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def stores(request, tmp_path):
    """(api, cli) on one store holding a § 9.13 and a § 9.07 charge, billed and eligible."""
    url, extra, schema = database_for(request, tmp_path)
    api = make_api(url, extra)
    cli = Abate((url, extra, schema))
    cli.load(tmp_path, *dumping_through_bill(CaseLines(HOME, "B-D1")),
             *hedge_through_bill(CaseLines(HOME, "B-H1")))
    yield api, cli
    api.services.close()


def test_the_command_route_refuses_certifying_a_charge_whose_statute_is_not_set_409(stores):
    api, cli = stores
    head = api.services.head()
    refused = api.client.post(f"/api/v1/{HOME}/cases/B-H1/certify_charge",
                              json={"at": CERTIFY_AT, "tax_year": 2026}, headers=api.as_("clerk"))
    assert refused.status_code == 409, refused.text
    assert refused.json()["detail"] == REFUSAL
    assert api.services.head() == head  # nothing recorded
    shown = api.client.get(f"/api/v1/{HOME}/cases/B-H1", headers=api.as_("clerk")).json()
    assert shown["status"] == "billed"
    done = api.client.post(f"/api/v1/{HOME}/cases/B-D1/certify_charge",
                           json={"at": CERTIFY_AT, "tax_year": 2026}, headers=api.as_("clerk"))
    assert done.status_code == 200, done.text
    assert cli.json("case", "show", "--municipality", HOME, "B-D1")["status"] == "certified"

"""The ordinance rules catalog: the real data files, version lookup and error messages.

The core facts below are DOMAIN.md's "Core rules" table, each row citing the section it comes
from. They are checked against the catalog loaded from ``cases/rules/*.yaml``.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from cases.errors import RuleCatalogError, UnknownRuleError
from cases.rules.catalog import NOT_SET, Catalog, Period

# A violation date on which every version-1 rule is in force.
ON = dt.date(2025, 3, 1)
CATALOG_START = dt.date(2020, 1, 1)


def hours(n: int) -> Period:
    return Period(amount=n, unit="hours")


def days(n: int) -> Period:
    return Period(amount=n, unit="calendar_days")


class Has:
    """Matches a string that contains ``text`` (for citations, statutes, officers)."""

    def __init__(self, text: str):
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.text in other

    def __repr__(self) -> str:
        return f"Has({self.text!r})"


def field(rule: Any, path: str) -> Any:
    """Follow a dotted path; ``escalation:NAME`` picks an escalation by name."""
    value = rule
    for part in path.split("."):
        if part.startswith("escalation:"):
            name = part.partition(":")[2]
            matches = [e for e in value.escalations if e.name == name]
            assert matches, f"{rule.key} has no escalation {name!r}"
            value = matches[0]
        else:
            value = getattr(value, part)
    return value


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.load()


CORE_RULE_KEYS = [
    "belleville:9.09",
    "belleville:9.07",
    "belleville:9.13",
    "belleville:9.14",
    "belleville:9.15",
    "belleville:9.24",
    "belleville:9.25",
    "belleville:11.013",
    "belleville:10.11",
    "belleville:13",
    "mazomanie:360-10",
    "mazomanie:360-8",
    "mazomanie:360-9",
    "mazomanie:sidewalk-repair",
]


def fact(key: str, path: str, expected: Any, section: str) -> Any:
    return pytest.param(key, path, expected, id=f"{key} {path} ({section})")


CORE_FACTS = [
    # Belleville § 9.09 snow and ice
    fact("belleville:9.09", "owner_duty.period", hours(24), "§ 9.09(1)"),
    fact("belleville:9.09", "owner_duty.starts", "snow_ended", "§ 9.09(1)"),
    fact("belleville:9.09", "cure.period", hours(24), "§ 9.09(1), (6)"),
    fact("belleville:9.09", "cure.starts", "notice_delivered", "§ 9.09(6)"),
    fact("belleville:9.09", "escalation:notice_due.after", hours(24), "§ 9.09(2)(a)1"),
    fact("belleville:9.09", "escalation:notice_due.starts", "snow_ended", "§ 9.09(2)(a)1"),
    fact("belleville:9.09", "escalation:notice_due.needs_person", True, "§ 9.09(2)(a)1"),
    fact("belleville:9.09", "escalation:forfeiture_period_started.after", hours(36), "§ 9.09(2)(a)2"),
    fact("belleville:9.09", "escalation:forfeiture_period_started.starts", "snow_ended", "§ 9.09(2)(a)2"),
    fact("belleville:9.09", "hazard.cure.period", hours(2), "§ 9.09(2)(b)"),
    fact("belleville:9.09", "hazard.cure.starts", "notice_delivered", "§ 9.09(2)(b)"),
    fact("belleville:9.09", "hazard.when_nobody_reachable", "immediate_abatement", "§ 9.09(2)(b)"),
    fact("belleville:9.09", "hazard.notice_after_abatement", Has("last known address"), "§ 9.09(2)(b)"),
    fact("belleville:9.09", "abatement.notice_required", True, "§ 9.09(6)"),
    fact("belleville:9.09", "abatement.without_notice_when", ["hazard_nobody_reachable"], "§ 9.09(2)(b)"),
    fact("belleville:9.09", "billing.bill_to", "owner", "§ 9.09(7)"),
    fact("belleville:9.09", "billing.due.period", days(10), "§ 9.09(7)"),
    fact("belleville:9.09", "billing.due.starts", "bill_received", "§ 9.09(7)"),
    fact("belleville:9.09", "tax_roll.trigger", "unpaid_after_incurred", "§ 9.09(7)"),
    fact("belleville:9.09", "tax_roll.period", days(60), "§ 9.09(7)"),
    fact("belleville:9.09", "tax_roll.mandatory", True, "§ 9.09(7)"),
    fact("belleville:9.09", "tax_roll.charge_type", "special_tax", "§ 9.09(7)"),
    fact("belleville:9.09", "tax_roll.statute", Has("66.0907(5)"), "§ 9.09(7)"),
    fact("belleville:9.09", "tax_roll.entered_by", Has("Finance Director/Treasurer"), "§ 9.09(7)"),
    fact("belleville:9.09", "penalty.separate_offense", Has("twenty-four (24) hour"), "§ 9.09(5)"),
    fact("belleville:9.09", "repeat", None, "§ 9.09 states no repeat window"),
    # Mazomanie § 360-10 snow and ice
    fact("mazomanie:360-10", "owner_duty.period", hours(48), "§ 360-10A"),
    fact("mazomanie:360-10", "owner_duty.starts", "snow_ended", "§ 360-10A"),
    fact("mazomanie:360-10", "cure.starts", "notice_delivered", "§ 360-10 Abatement after notice"),
    fact("mazomanie:360-10", "hazard.cure.period", hours(8), "§ 360-10B(1)"),
    fact("mazomanie:360-10", "hazard.cure.starts", "notice_delivered", "§ 360-10B(1)"),
    fact("mazomanie:360-10", "hazard.when_nobody_reachable", "door_tape_notice", "§ 360-10B(1)"),
    fact("mazomanie:360-10", "abatement.by_village", True, "§ 360-10 Abatement after notice"),
    fact("mazomanie:360-10", "abatement.without_notice_when", [], "§ 360-10B(1)"),
    fact("mazomanie:360-10", "billing.due.period", days(10), "§ 360-10 Expense"),
    fact("mazomanie:360-10", "billing.due.starts", "bill_received", "§ 360-10 Expense"),
    fact("mazomanie:360-10", "tax_roll.trigger", "unpaid_after_incurred", "§ 360-10 Expense"),
    fact("mazomanie:360-10", "tax_roll.period", days(90), "§ 360-10 Expense"),
    fact("mazomanie:360-10", "tax_roll.charge_type", "special_tax", "§ 360-10 Expense"),
    fact("mazomanie:360-10", "tax_roll.statute", Has("66.0907(5)"), "§ 360-10 Expense"),
    fact("mazomanie:360-10", "tax_roll.entered_by", Has("Clerk-Treasurer"), "§ 360-10 Expense"),
    fact("mazomanie:360-10", "penalty.separate_offense", Has("twenty-four-hour"), "§ 360-10 Continued violations"),
    # Belleville § 9.07 obstruction
    fact("belleville:9.07", "cure.period", hours(24), "§ 9.07(4), (5)"),
    fact("belleville:9.07", "cure.starts", "notice_delivered", "§ 9.07(4), (5)"),
    fact("belleville:9.07", "abatement.by_village", True, "§ 9.07(6)(a)"),
    fact("belleville:9.07", "billing.due.period", days(10), "§ 9.07(6)(a)"),
    fact("belleville:9.07", "billing.due.starts", "bill_received", "§ 9.07(6)(a)"),
    fact("belleville:9.07", "tax_roll.trigger", "unpaid_after_incurred", "§ 9.07(6)(a)"),
    fact("belleville:9.07", "tax_roll.period", days(60), "§ 9.07(6)(a)"),
    fact("belleville:9.07", "tax_roll.charge_type", "special_tax", "§ 9.07(6)(a)"),
    fact("belleville:9.07", "tax_roll.entered_by", "Village Clerk", "§ 9.07(6)(a)"),
    fact("belleville:9.07", "tax_roll.statute", NOT_SET, "§ 9.07(6)(a) names no statute"),
    # Mazomanie § 360-8 obstruction of public areas
    fact("mazomanie:360-8", "cure.period", hours(24), "§ 360-8 Removal by Village"),
    fact("mazomanie:360-8", "billing.due.period", days(10), "§ 360-8 Failure to remove"),
    fact("mazomanie:360-8", "tax_roll.trigger", "unpaid_after_incurred", "§ 360-8 Failure to remove"),
    fact("mazomanie:360-8", "tax_roll.period", days(60), "§ 360-8 Failure to remove"),
    fact("mazomanie:360-8", "tax_roll.charge_type", "special_tax", "§ 360-8 Failure to remove"),
    # Mazomanie § 360-9 obstructed sidewalk
    fact("mazomanie:360-9", "cure.period", hours(24), "§ 360-9 Removal by Village"),
    fact("mazomanie:360-9", "cure.starts", "notice_delivered", "§ 360-9 Removal by Village"),
    fact("mazomanie:360-9", "abatement.by_village", True, "§ 360-9 Removal by Village"),
    fact("mazomanie:360-9", "billing", None, "§ 360-9 no bill"),
    fact("mazomanie:360-9", "tax_roll.trigger", "next_annual_roll", "§ 360-9 Removal by Village"),
    fact("mazomanie:360-9", "tax_roll.charge_type", "special_charge", "§ 360-9 Removal by Village"),
    # Belleville § 9.13 unlawful dumping
    fact("belleville:9.13", "cure.period", hours(72), "§ 9.13(2)"),
    fact("belleville:9.13", "cure.starts", "notice_delivered", "§ 9.13(2)"),
    fact("belleville:9.13", "cure_expiry_consequence", Has("without further notice"), "§ 9.13(3)"),
    fact("belleville:9.13", "abatement.without_notice_when", ["repeat_offense"], "§ 9.13(5)"),
    fact("belleville:9.13", "billing.bill_to", "owner", "§ 9.13(3)"),
    fact("belleville:9.13", "billing.due.period", days(30), "§ 9.13(4)"),
    fact("belleville:9.13", "billing.due.starts", "bill_issued", "§ 9.13(4)"),
    fact("belleville:9.13", "billing.appeal.to", "Village Clerk", "§ 9.13(7)(a)"),
    fact("belleville:9.13", "billing.appeal.window.period", days(10), "§ 9.13(7)(a)"),
    fact("belleville:9.13", "billing.appeal.window.starts", "bill_issued", "§ 9.13(7)(a)"),
    fact("belleville:9.13", "billing.appeal.stays_charge", True, "§ 9.13(7)(b)"),
    fact("belleville:9.13", "billing.appeal.decided_by", Has("Village Board"), "§ 9.13(7)(b)"),
    fact("belleville:9.13", "billing.appeal.decision_due", Has("30 days"), "§ 9.13(7)(b)"),
    fact("belleville:9.13", "billing.appeal.due_after_denial", days(10), "§ 9.13(7)(c)"),
    fact("belleville:9.13", "tax_roll.trigger", "unpaid_after_billing", "§ 9.13(4)"),
    fact("belleville:9.13", "tax_roll.period", days(30), "§ 9.13(4)"),
    fact("belleville:9.13", "tax_roll.mandatory", True, "§ 9.13(4) shall"),
    fact("belleville:9.13", "tax_roll.charge_type", "special_charge", "§ 9.13(4)"),
    fact("belleville:9.13", "tax_roll.statute", Has("66.0627(4)"), "§ 9.13(4)"),
    fact("belleville:9.13", "repeat.window_months", 12, "§ 9.13(5)"),
    # Belleville § 9.14 ditch obstruction
    fact("belleville:9.14", "cure.period", hours(72), "§ 9.14(2)"),
    fact("belleville:9.14", "abatement.without_notice_when", ["repeat_offense"], "§ 9.14(3), (5)"),
    fact("belleville:9.14", "billing.due.period", days(30), "§ 9.14(4)"),
    fact("belleville:9.14", "billing.appeal", None, "§ 9.14 has no appeal clause"),
    fact("belleville:9.14", "tax_roll.mandatory", False, "§ 9.14(4) may"),
    fact("belleville:9.14", "tax_roll.charge_type", "special_charge", "§ 9.14(4)"),
    fact("belleville:9.14", "tax_roll.statute", Has("66.0627(4)"), "§ 9.14(4)"),
    fact("belleville:9.14", "repeat.window_months", 12, "§ 9.14(5)"),
    # Belleville § 9.15 house numbers
    fact("belleville:9.15", "escalation:notice_due.after", days(20), "§ 9.15(3)"),
    fact("belleville:9.15", "escalation:notice_due.starts", "observed", "§ 9.15(3)"),
    fact("belleville:9.15", "escalation:notice_due.needs_person", True, "§ 9.15(3)"),
    fact("belleville:9.15", "cure.period", days(10), "§ 9.15(3)"),
    fact("belleville:9.15", "cure.starts", "notice_delivered", "§ 9.15(3)"),
    fact("belleville:9.15", "cure_expiry_consequence", Has("forfeiture"), "§ 9.15(3)"),
    # Belleville § 9.24 grading
    fact("belleville:9.24", "service.methods", ["certified_mail"], "§ 9.24(4)(d)6"),
    fact("belleville:9.24", "cure.period", days(30), "§ 9.24(4)(d)6"),
    fact("belleville:9.24", "cure.starts", "notice_delivered", "§ 9.24(4)(d)6"),
    fact("belleville:9.24", "abatement.performed_by", Has("Village Engineer"), "§ 9.24(8)"),
    fact("belleville:9.24", "billing.bill_to", "permittee", "§ 9.24(8)"),
    fact("belleville:9.24", "billing.due", NOT_SET, "§ 9.24(8) states no due period"),
    fact("belleville:9.24", "tax_roll.trigger", "year_work_completed", "§ 9.24(8)"),
    fact("belleville:9.24", "tax_roll.charge_type", "special_charge", "§ 9.24(8)"),
    fact("belleville:9.24", "tax_roll.statute", Has("66.0627"), "§ 9.24(8)"),
    # Belleville § 9.25 refuse
    fact("belleville:9.25", "tax_roll.trigger", "lien_when_unpaid", "§ 9.25(29)"),
    fact("belleville:9.25", "tax_roll.charge_type", "lien", "§ 9.25(29)"),
    fact("belleville:9.25", "repeat.window_months", 12, "§ 9.25(28) one (1) year"),
    fact("belleville:9.25", "repeat.consequence", Has("warning notice"), "§ 9.25(28)"),
    fact("belleville:9.25", "penalty.separate_offense", Has("each day"), "§ 9.25(28)"),
    # Mazomanie sidewalk repair order
    fact("mazomanie:sidewalk-repair", "cure.period", days(30), "66.0907(3)(c) notice"),
    fact("mazomanie:sidewalk-repair", "cure.starts", "notice_delivered", "66.0907(3)(c) notice"),
    fact("mazomanie:sidewalk-repair", "hazard.cure.period", days(20), "life-threatening"),
    fact("mazomanie:sidewalk-repair", "hazard.when_nobody_reachable", NOT_SET, "no fallback stated"),
    fact("mazomanie:sidewalk-repair", "abatement.performed_by", "Village Board", "Sidewalk repair"),
    fact("mazomanie:sidewalk-repair", "billing", None, "no bill"),
    fact("mazomanie:sidewalk-repair", "tax_roll.charge_type", "special_tax", "Sidewalk repair"),
    fact("mazomanie:sidewalk-repair", "tax_roll.mandatory", True, "Sidewalk repair shall"),
    # Belleville Ch. 11 property maintenance
    fact("belleville:11.013", "service.methods", ["certified_mail", "personal", "abode", "posting"], "§ 11.013(2)(a)"),
    fact("belleville:11.013", "cure.period", "stated_in_notice", "§ 11.013(2)(b)"),
    fact("belleville:11.013", "cure.starts", "notice_delivered", "§ 11.013(2)(b)"),
    fact("belleville:11.013", "abatement.by_village", True, "§ 11.013(2)(b) may"),
    fact("belleville:11.013", "tax_roll.charge_type", "special_assessment", "§ 11.013(2)(b)"),
    fact("belleville:11.013", "tax_roll.entered_by", Has("Dane or Green County"), "§ 11.013(2)(b)"),
    fact("belleville:11.013", "penalty.forfeiture_min", Decimal("50"), "§ 11.013(1)"),
    fact("belleville:11.013", "penalty.forfeiture_max", Decimal("150"), "§ 11.013(1)"),
    fact("belleville:11.013", "penalty.separate_offense", Has("each day"), "§ 11.013(1)"),
    fact("belleville:11.013", "repeat.window_months", 12, "§ 11.013(1)"),
    fact("belleville:11.013", "referral", Has("Village Attorney"), "§ 11.013(1)"),
    # Belleville § 10.11 dogs
    fact("belleville:10.11", "cure.period", days(15), "§ 10.11(3)"),
    fact("belleville:10.11", "cure.starts", "notice_delivered", "§ 10.11(3)"),
    fact("belleville:10.11", "penalty.source", Has("Municipal Court Deposit Schedule"), "§ 10.11(3)"),
    # Belleville Ch. 13 floodplain / shoreland
    fact("belleville:13", "cure", None, "§§ 13.021, 13.056 no cure step"),
    fact("belleville:13", "referral", Has("Village Attorney"), "§§ 13.021, 13.056"),
    fact("belleville:13", "penalty.separate_offense", Has("each day"), "§§ 13.021, 13.056"),
]


@pytest.mark.parametrize("key", CORE_RULE_KEYS)
def test_every_core_rule_of_the_domain_table_is_in_the_catalog(catalog, key):
    rule = catalog.rule_in_force(key, ON)
    assert rule.key == key


@pytest.mark.parametrize("key, path, expected", CORE_FACTS)
def test_core_rule_encodes_the_fact_its_section_states(catalog, key, path, expected):
    rule = catalog.rule_in_force(key, ON)
    assert expected == field(rule, path)


def test_hour_and_day_periods_keep_their_units(catalog):
    snow = catalog.rule_in_force("belleville:9.09", ON)
    dumping = catalog.rule_in_force("belleville:9.13", ON)
    assert str(snow.cure.period) == "24 hours"
    assert str(dumping.billing.appeal.window.period) == "10 calendar days"


def all_rules(catalog):
    for municipality in catalog.municipalities.values():
        yield from municipality.rules


def test_every_rule_starts_at_version_1_on_the_catalog_start_date(catalog):
    for rule in all_rules(catalog):
        assert (rule.version, rule.effective_from) == (1, CATALOG_START), rule.key


def _citations(model: BaseModel):
    """Every ``citation`` / ``source`` string in a rule, with where it sits."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        if name in ("citation", "source"):
            yield name, value
        elif isinstance(value, BaseModel):
            yield from ((f"{name}.{n}", v) for n, v in _citations(value))
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, BaseModel):
                    yield from ((f"{name}.{n}", v) for n, v in _citations(item))


def test_every_citation_names_its_own_municipality_code(catalog):
    for rule in all_rules(catalog):
        code = "Belleville Code" if rule.municipality == "belleville" else "Mazomanie Code"
        for where, citation in _citations(rule):
            if where.endswith("citation"):
                assert code in citation, f"{rule.key} {where}: {citation!r}"


def test_no_rule_states_an_interest_rate_the_texts_do_not_give(catalog):
    for rule in all_rules(catalog):
        if rule.tax_roll is not None:
            assert rule.tax_roll.interest_rate == NOT_SET, rule.key


UNSET_FORFEITURES = [
    pytest.param("belleville:9.09", id="belleville:9.09 (§ 1.08, snow fee structure)"),
    pytest.param("belleville:9.13", id="belleville:9.13 (§ 9.13(5) additional forfeiture)"),
    pytest.param("belleville:9.15", id="belleville:9.15 (§ 1.08)"),
    pytest.param("belleville:9.24", id="belleville:9.24 (§ 14.10)"),
    pytest.param("belleville:10.11", id="belleville:10.11 (deposit schedule)"),
    pytest.param("belleville:13", id="belleville:13 (§ 1.08)"),
    pytest.param("mazomanie:360-10", id="mazomanie:360-10 (§ 1-3)"),
    pytest.param("mazomanie:360-8", id="mazomanie:360-8"),
    pytest.param("mazomanie:360-9", id="mazomanie:360-9"),
    pytest.param("mazomanie:sidewalk-repair", id="mazomanie:sidewalk-repair"),
]


@pytest.mark.parametrize("key", UNSET_FORFEITURES)
def test_forfeiture_the_texts_do_not_give_stays_not_set(catalog, key):
    rule = catalog.rule_in_force(key, ON)
    assert rule.penalty.forfeiture_min == NOT_SET
    assert rule.penalty.forfeiture_max == NOT_SET
    description = rule.penalty.describe(rule.municipality)
    assert description.startswith(f"forfeiture amount not set for {rule.municipality}")


def test_property_maintenance_forfeiture_is_described_as_50_to_150(catalog):
    rule = catalog.rule_in_force("belleville:11.013", ON)
    assert rule.penalty.describe("belleville").startswith("$50–$150")


@pytest.mark.parametrize(
    "key",
    [
        pytest.param("belleville:9.15", id="belleville:9.15 (§ 9.15(3) forfeiture only)"),
        pytest.param("belleville:10.11", id="belleville:10.11 (§ 10.11(3) fine only)"),
        pytest.param("belleville:13", id="belleville:13 (§§ 13.021, 13.056 referral only)"),
    ],
)
def test_rule_without_village_abatement_has_no_bill_and_no_tax_roll(catalog, key):
    rule = catalog.rule_in_force(key, ON)
    assert rule.abatement is None or rule.abatement.by_village is False
    assert rule.billing is None
    assert rule.tax_roll is None


@pytest.mark.parametrize(
    "key, trigger",
    [
        pytest.param("mazomanie:360-9", "next_annual_roll", id="mazomanie:360-9 (next annual roll)"),
        pytest.param("mazomanie:sidewalk-repair", "next_annual_roll", id="mazomanie:sidewalk-repair"),
        pytest.param("belleville:11.013", "next_annual_roll", id="belleville:11.013 (§ 11.013(2)(b))"),
    ],
)
def test_rule_with_no_bill_still_puts_the_cost_on_the_tax_roll(catalog, key, trigger):
    rule = catalog.rule_in_force(key, ON)
    assert rule.billing is None
    assert rule.tax_roll.trigger == trigger
    assert rule.tax_roll.mandatory is True


def test_only_dumping_charges_can_be_appealed(catalog):
    with_appeal = [
        rule.key for rule in all_rules(catalog) if rule.billing and rule.billing.appeal
    ]
    assert with_appeal == ["belleville:9.13"]


def test_abatement_without_notice_follows_the_text(catalog):
    without_notice = {
        rule.key: rule.abatement.without_notice_when
        for rule in all_rules(catalog)
        if rule.abatement and rule.abatement.without_notice_when
    }
    assert without_notice == {
        "belleville:9.09": ["hazard_nobody_reachable"],  # § 9.09(2)(b)
        "belleville:9.13": ["repeat_offense"],  # § 9.13(3), (5)
        "belleville:9.14": ["repeat_offense"],  # § 9.14(3), (5)
    }


# --- municipality settings ------------------------------------------------------------------


def test_municipalities_use_chicago_time_and_a_november_15_cutoff(catalog):
    for municipality in catalog.municipalities.values():
        assert municipality.time_zone == "America/Chicago"
        assert municipality.certification_cutoff == "11-15"
    assert catalog.municipality("belleville").name == "Village of Belleville"
    assert catalog.municipality("mazomanie").name == "Village of Mazomanie"


@pytest.mark.parametrize(
    "village, county, number",
    [
        ("belleville", "Dane", "0509-123-4567-0"),
        ("belleville", "Green", "23002 0100.0000"),
        ("mazomanie", "Dane", "0509-123-4567-0"),
    ],
)
def test_parcel_number_in_its_county_format_is_accepted(catalog, village, county, number):
    assert catalog.municipality(village).parcel_error(county, number) is None


@pytest.mark.parametrize(
    "village, county, number, says",
    [
        ("belleville", "Dane", "23002 0100.0000", "Dane County format"),
        ("belleville", "Green", "0509-123-4567-0", "Green County format"),
        ("belleville", "Dane", " 0509-123-4567-0", "Dane County format"),  # never normalised
        ("mazomanie", "Green", "23002 0100.0000", "not in Village of Mazomanie"),
    ],
)
def test_parcel_number_outside_its_county_format_is_refused(catalog, village, county, number, says):
    assert says in catalog.municipality(village).parcel_error(county, number)


# --- version lookup -------------------------------------------------------------------------


def minimal_rule(**overrides: Any) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "id": "1.01",
        "version": 1,
        "effective_from": dt.date(2020, 1, 1),
        "citation": "Testville Code § 1.01",
        "title": "Test rule",
        "family": "snow",
        "notice_to": ["owner"],
        "cure": {"period": "24 hours", "starts": "notice_delivered", "citation": "§ 1.01(1)"},
    }
    rule.update(overrides)
    return rule


def write_catalog(directory: Path, rules: list[dict[str, Any]], stem: str = "testville") -> Path:
    data = {
        "municipality": "testville",
        "name": "Village of Testville",
        "time_zone": "America/Chicago",
        "counties": {"Dane": r"^\d{4}-\d{3}-\d{4}-\d$"},
        "certification_cutoff": "11-15",
        "rules": rules,
    }
    path = directory / f"{stem}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture
def two_versions(tmp_path) -> Catalog:
    amended = minimal_rule(
        version=2,
        effective_from=dt.date(2024, 7, 1),
        cure={"period": "48 hours", "starts": "notice_delivered", "citation": "§ 1.01(1) as amended"},
    )
    write_catalog(tmp_path, [minimal_rule(), amended])
    return Catalog.load(tmp_path)


@pytest.mark.parametrize(
    "violation_date, version, cure",
    [
        (dt.date(2020, 1, 1), 1, "24 hours"),
        (dt.date(2024, 6, 30), 1, "24 hours"),
        (dt.date(2024, 7, 1), 2, "48 hours"),
        (dt.date(2026, 1, 15), 2, "48 hours"),
    ],
)
def test_rule_in_force_is_the_version_effective_on_the_violation_date(
    two_versions, violation_date, version, cure
):
    rule = two_versions.rule_in_force("testville:1.01", violation_date)
    assert rule.version == version
    assert str(rule.cure.period) == cure


def test_an_old_version_stays_reachable_by_its_number(two_versions):
    assert str(two_versions.rule_version("testville:1.01", 1).cure.period) == "24 hours"


def test_violation_before_the_first_version_has_no_rule_in_force(two_versions):
    with pytest.raises(UnknownRuleError, match="not in force on 2019-12-31"):
        two_versions.rule_in_force("testville:1.01", dt.date(2019, 12, 31))


def test_unknown_rule_names_the_known_rules(catalog):
    with pytest.raises(UnknownRuleError, match=r"no rule belleville:9\.99 \(known: .*9\.09"):
        catalog.rule_in_force("belleville:9.99", ON)


# --- errors name file, rule and field -----------------------------------------------------------


@pytest.mark.parametrize(
    "rule, field_name, says",
    [
        pytest.param(
            minimal_rule(cure={"period": "ten hours", "starts": "notice_delivered", "citation": "§ 1.01"}),
            "cure.period",
            "'ten hours' must look like '24 hours'",
            id="bad period",
        ),
        pytest.param(
            {k: v for k, v in minimal_rule().items() if k != "citation"},
            "field citation",
            "Field required",
            id="missing citation",
        ),
        pytest.param(
            minimal_rule(colour="red"),
            "field colour",
            "Extra inputs are not permitted",
            id="unknown field",
        ),
        pytest.param(
            minimal_rule(cure={"period": "24 hours", "starts": "sunrise", "citation": "§ 1.01"}),
            "field cure.starts",
            "notice_delivered",
            id="unknown clock start",
        ),
        pytest.param(
            minimal_rule(
                tax_roll={
                    "trigger": "unpaid_after_incurred",
                    "mandatory": True,
                    "charge_type": "special_tax",
                    "statute": "not set",
                    "entered_by": "Clerk",
                    "citation": "§ 1.01(2)",
                }
            ),
            "field tax_roll",
            "needs a period",
            id="tax roll trigger without period",
        ),
    ],
)
def test_malformed_rule_error_names_the_file_the_rule_and_the_field(tmp_path, rule, field_name, says):
    write_catalog(tmp_path, [minimal_rule(id="1.00"), rule])
    with pytest.raises(RuleCatalogError) as caught:
        Catalog.load(tmp_path)
    message = str(caught.value)
    assert "testville.yaml, rule 1.01" in message
    assert field_name in message
    assert says in message


def test_municipality_that_does_not_match_its_file_name_is_refused(tmp_path):
    write_catalog(tmp_path, [minimal_rule()], stem="otherville")
    with pytest.raises(RuleCatalogError, match="otherville.yaml, field municipality"):
        Catalog.load(tmp_path)


def test_same_rule_version_twice_is_refused(tmp_path):
    write_catalog(tmp_path, [minimal_rule(), minimal_rule()])
    with pytest.raises(RuleCatalogError, match="testville.yaml.*rule 1.01 version 1 appears twice"):
        Catalog.load(tmp_path)


def test_file_that_is_not_yaml_is_refused_by_name(tmp_path):
    (tmp_path / "brokenville.yaml").write_text("rules: [\n", encoding="utf-8")
    with pytest.raises(RuleCatalogError, match="brokenville.yaml: not valid YAML"):
        Catalog.load(tmp_path)


def test_directory_without_rule_files_is_refused(tmp_path):
    with pytest.raises(RuleCatalogError, match="no rule files"):
        Catalog.load(tmp_path)

"""A charge goes to the county only under the statute that authorises it.

Where the rule that made a charge leaves that statute ``not set`` (the ordinance says "as
provided by the state statutes" and names none, e.g. Belleville § 9.07(6), Mazomanie
§ 360-9), the charge cannot be certified until the village attorney names the statute in a
new version of the rule. One refusal text for every door: a single ``certify_charge`` (the
domain), and a list certified at once (``projections.certification``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cases.rules.files import NOT_SET

if TYPE_CHECKING:  # the domain imports this module; reading a case builds no catalog
    from cases.rules.catalog import Rule

# How a list, a page or a case marks such a charge.
STATUTE_NOT_SET = "statute not set — cannot be certified"


def statute_given(rule: Rule) -> bool:
    """Whether the rule names the statute its tax-roll charge is certified under."""
    return rule.tax_roll is not None and rule.tax_roll.statute != NOT_SET


def statute_not_set(charges: Sequence[Mapping[str, Any]], *, listed: int | None = None) -> str:
    """Why ``charges`` (each: case_ref, charge_type, rule, rule_version) cannot be
    certified and what to do; ``listed`` is how many of a list's charges cannot be (all of
    them, when more are counted than named), None for a single charge."""
    named = ", ".join(f"{c['case_ref']} ({c['charge_type'].replace('_', ' ')} under "
                      f"{c['rule']} v{c['rule_version']})" for c in charges)
    more = f" and {listed - len(charges)} more" if listed and listed > len(charges) else ""
    whom = "the charge" if listed is None else f"{listed} of the listed charges"
    return (f"{whom} cannot be certified: the statute that authorises the charge is not set "
            f"in its rule: {named}{more}; nothing was certified: the village attorney names "
            "the statute in the rules catalog (a new version of the rule, docs/rules.md)")


def case_charge_not_certifiable(case_ref: str, rule: Rule) -> str:
    """The refusal for one case's charge made under ``rule`` (whose statute is not set)."""
    assert rule.tax_roll is not None
    return statute_not_set([{"case_ref": case_ref, "charge_type": rule.tax_roll.charge_type,
                             "rule": rule.key, "rule_version": rule.version}])

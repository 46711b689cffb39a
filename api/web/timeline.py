"""A case's timeline as its page shows it: every event, oldest first, with the corrections
of each beside it, and the facts a program keeps by a name said in words: the rule by its
section and title (not ``belleville:9.13``), the forfeiture of a citation as the ordinance
provides it (never "not set"), an event named by its label. The codes inside a fact
(``certified_mail``) are said by ``api.web.render.fact``."""

from __future__ import annotations

from typing import Any, Callable

from cases.business_time import effective_times
from cases.errors import AbateError
from cases.history import describe_event
from cases.vocabulary import deadline_label, deadline_start, event_label, rule_label

RuleVersion = Callable[[str, int], Any]


def timeline(events: list[Any], rule_version: RuleVersion) -> list[dict[str, Any]]:
    """Every event, oldest first, its facts in words, with the corrections of each beside it."""
    times = effective_times(events)
    described = [describe_event(e, times.get(e.originator_version)) for e in events]
    by_position = {e["position"]: e for e in described}
    for event in described:
        event["corrections"] = []
        event["facts"] = _in_words(event["facts"], rule_version)
    for event in described:
        target = event["facts"].get("supersedes") if event["type"] == "Corrected" else None
        if target in by_position:
            by_position[target]["corrections"].append(event)
            event["corrects"] = target
    return described


def _rule(facts: dict[str, Any], rule_version: RuleVersion) -> Any:
    try:
        return rule_version(facts["rule"], int(facts["rule_version"]))
    except (AbateError, KeyError, TypeError, ValueError):
        return None  # a fact without its rule version keeps its recorded words


def _in_words(facts: dict[str, Any], rule_version: RuleVersion) -> dict[str, Any]:
    """The facts with the rule named by its label (its version beside it), nested facts
    that repeat the event's rule left out, and a citation's forfeiture in the ordinance's
    terms."""
    facts = dict(facts)
    facts.pop("rule_family", None)  # the program's grouping: the rule's title says it
    if isinstance(facts.get("supersedes_type"), str):
        facts["supersedes_type"] = event_label(facts["supersedes_type"])
    rule = _rule(facts, rule_version)
    if rule is None:
        return facts
    facts["rule"] = f"{rule_label(rule)} (version {rule.version})"
    del facts["rule_version"]
    if isinstance(facts.get("offense_basis"), dict):  # the citation's own rule, said above
        basis = {k: v for k, v in facts["offense_basis"].items()
                 if k not in ("rule", "rule_version")}
        began = deadline_start(str(basis.get("began_by", "")))
        if began:  # "deadline cure (§ ...)": the deadline by its label
            name, citation = began
            basis["began_by"] = f"{deadline_label(name).lower()} ({citation})"
        facts["offense_basis"] = basis
    if "forfeiture" in facts and rule.penalty is not None:
        facts["forfeiture"] = _forfeiture(rule.penalty, facts.get("offenses"))
    return facts


def _forfeiture(penalty: Any, offenses: Any) -> str:
    """A citation's forfeiture: the ordinance's amounts (per offense where it counts
    separate offenses) or the section that provides them, and how many offenses."""
    words = penalty.in_words()
    if not isinstance(offenses, list) or not offenses:
        return words
    per = " per offense" if penalty.amounts_set else ""
    count = len(offenses)
    return f"{words}{per}; {count} separate offense{'s' if count != 1 else ''}"

"""The ordinance rules catalog: schema, loader and version lookup.

Rules are data (one YAML file per municipality beside this module). The loader
validates every file against the schema below and names file, rule and field in
every error, so a clerk editing a value gets told exactly what is wrong.
Values the ordinance texts do not give are written ``not set`` and stay
visibly unset: nothing computed from them pretends to be a number.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from cases.action_kinds import ActionKind  # the keys of a rule's acted_by
from cases.errors import RuleCatalogError, UnknownRuleError
from cases.money import dollars
from cases.rules.files import NOT_SET, RULES_DIR, YAMLError, read_rule_file, rule_files
from cases.rules.counties import county_named
from cases.rules.parcel_formats import parcel_example
from cases.text_policy import ADDRESS_MAX, PHONE_MAX

NotSet = Literal["not set"]

TimeUnit = Literal["hours", "calendar_days", "business_days"]
ServiceMethod = Literal[
    "personal", "certified_mail", "first_class_mail", "posting", "door_tape", "abode"
]
Party = Literal[
    "owner", "occupant", "person_in_charge", "responsible_party", "permittee", "keeper"
]
ClockStart = Literal[
    "observed",  # when the violation was observed (the case's violation time)
    "snow_ended",  # end of the snowfall, when recorded; else observed
    "notice_delivered",  # delivery of the written notice
    "bill_issued",  # the bill's issue (mailing) date
    "bill_received",  # receipt of the bill by the owner
    "incurred",  # the day the abatement cost was incurred
]

_PERIOD_RE = re.compile(r"^\s*(\d+)\s+(hours?|calendar[_ ]days?|business[_ ]days?|days?)\s*$")


def _parse_period(value: Any) -> Any:
    """Accept ``"72 hours"``, ``"10 calendar_days"`` as well as a mapping."""
    if isinstance(value, str) and value != NOT_SET:
        match = _PERIOD_RE.match(value)
        if not match:
            raise ValueError(
                f"period {value!r} must look like '24 hours', '10 calendar_days' or "
                "'5 business_days'"
            )
        amount, unit = int(match.group(1)), match.group(2).replace(" ", "_")
        if unit.startswith("hour"):
            unit = "hours"
        elif unit.startswith("business"):
            unit = "business_days"
        else:
            unit = "calendar_days"
        return {"amount": amount, "unit": unit}
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Period(_Strict):
    amount: int = Field(gt=0)
    unit: TimeUnit

    def __str__(self) -> str:
        return f"{self.amount} {self.unit.replace('_', ' ')}"


PeriodField = Annotated[Period, BeforeValidator(_parse_period)]


class Clock(_Strict):
    """A period and the fact that starts it."""

    period: PeriodField | Literal["stated_in_notice"]
    starts: ClockStart
    citation: str


class Escalation(_Strict):
    """A step that follows by itself once time passes (e.g. forfeiture after 36 h)."""

    name: str = Field(pattern=r"^[a-z_]+$")
    after: PeriodField
    starts: ClockStart
    consequence: str
    needs_person: bool = False  # e.g. serving a notice: put on the worklist, never pretend
    citation: str


class Hazard(_Strict):
    """The short-clock variant of a rule, for a condition that is a danger."""

    cure: Clock
    # ``not set`` where the text gives the short clock but no fallback (Mazomanie sidewalk repair).
    when_nobody_reachable: Literal["immediate_abatement", "door_tape_notice", "posting"] | NotSet
    notice_after_abatement: str | None = None
    citation: str


class Fallback(_Strict):
    """Service methods the text allows only after the primary ones failed (e.g. § 11.013(2):
    abode delivery or posting "if the owner ... cannot be found")."""

    methods: list[ServiceMethod] = Field(min_length=1)
    after_attempt_by: list[ServiceMethod] = Field(min_length=1)  # one of these must have been tried
    text: str  # the words of the ordinance that make it a fallback
    citation: str

    @model_validator(mode="after")
    def _disjoint(self) -> "Fallback":
        both = set(self.methods) & set(self.after_attempt_by)
        if both:
            raise ValueError(f"{', '.join(sorted(both))} cannot be both fallback and primary")
        return self


class Service(_Strict):
    methods: list[ServiceMethod] = Field(min_length=1)
    when_nobody_found: str | None = None
    fallback: Fallback | None = None
    citation: str

    @model_validator(mode="after")
    def _fallback_methods_allowed(self) -> "Service":
        if self.fallback is not None:
            missing = set(self.fallback.methods + self.fallback.after_attempt_by) - set(self.methods)
            if missing:
                raise ValueError(f"fallback names {', '.join(sorted(missing))}, not in methods")
        return self


class Abatement(_Strict):
    by_village: bool
    notice_required: bool
    without_notice_when: list[Literal["hazard_nobody_reachable", "repeat_offense", "always"]] = []
    performed_by: str | None = None
    citation: str


class Appeal(_Strict):
    to: str
    window: Clock
    stays_charge: bool
    decided_by: str
    decision_due: str
    decision_after_meeting: PeriodField | None = None  # counted from the deciding body's meeting
    due_after_denial: PeriodField
    citation: str


class Bond(_Strict):
    """A security the village draws on before the roll (e.g. § 9.24(8): the grading permit's
    performance bond): only what it does not cover goes on the tax roll."""

    name: str
    text: str  # the words of the ordinance that order bill, bond, then roll
    citation: str


class Billing(_Strict):
    bill_to: Party
    due: Clock | NotSet
    appeal: Appeal | None = None
    bond: Bond | None = None
    citation: str


TaxRollTrigger = Literal[
    "unpaid_after_incurred",  # N days after the cost was incurred, still unpaid
    "unpaid_after_billing",  # N days after the bill was issued, still unpaid
    "next_annual_roll",  # no bill: the cost goes on the next annual roll
    "year_work_completed",  # the roll of the year the work is completed
    "lien_when_unpaid",  # unpaid charge is a lien on the tax bill (no period stated)
]


class TaxRoll(_Strict):
    trigger: TaxRollTrigger
    period: PeriodField | None = None
    mandatory: bool  # "shall" (true) versus "may" (false)
    charge_type: Literal["special_tax", "special_charge", "special_assessment", "lien"]
    statute: str
    entered_by: str
    interest_rate: Decimal | NotSet = NOT_SET
    citation: str

    @model_validator(mode="after")
    def _period_matches_trigger(self) -> "TaxRoll":
        needs_period = self.trigger in ("unpaid_after_incurred", "unpaid_after_billing")
        if needs_period and self.period is None:
            raise ValueError(f"trigger {self.trigger} needs a period")
        return self


# Whom a repeat window counts: prior violations on the same parcel, by the same responsible
# party (the case's responsible party, else its owner), either of the two, or the same person
# previously notified (a notice or citation) or convicted, dated by that notice or conviction.
RepeatCounts = Literal["parcel", "responsible_party", "parcel_or_party",
                       "person_notified_or_convicted"]


class Repeat(_Strict):
    window_months: int = Field(gt=0)
    # The default is the reading Abate had before this setting existed (a rule file that
    # does not say keeps its old answers); every rule in the catalog states its own.
    counts: RepeatCounts = "parcel_or_party"
    counts_text: str | None = None  # the words of the ordinance that decide ``counts``
    # True where a repeat changes what a notice means (e.g. § 9.25(28): the first offense is a
    # warning, a second within a year a forfeiture): the notice then records the look-up.
    escalates_notice: bool = False
    consequence: str
    citation: str


class OffensePeriods(_Strict):
    """How a continuing violation divides into separate offenses ("each twenty-four (24) hour
    period", "each day"), and the fact that starts the first one."""

    unit: Literal["24_hours", "calendar_day"]
    # ``observed``: when the violation was observed; ``deadline:NAME``: when the case's
    # deadline NAME ran (e.g. the forfeiture threshold, the owner's own time).
    starts: str = Field(pattern=r"^(observed|deadline:[a-z_]+)$")
    text: str  # the words of the ordinance
    citation: str


class Penalty(_Strict):
    forfeiture_min: Decimal | NotSet
    forfeiture_max: Decimal | NotSet
    separate_offense: str | None = None
    offenses: OffensePeriods | None = None
    source: str
    # The section of the village's code that the ordinance text names as providing the
    # penalty, worded to follow "a forfeiture under" in a letter ("§ 1.08 of the Village
    # Code"); None where the texts name none. A letter cites it when no amount is set, so it
    # never prints an amount the ordinance does not give, nor "not set".
    provided_by: str | None = Field(default=None, min_length=1, max_length=200)

    def describe(self, municipality: str) -> str:
        if self.forfeiture_min == NOT_SET or self.forfeiture_max == NOT_SET:
            return f"forfeiture amount not set for {municipality} ({self.source})"
        return f"${self.forfeiture_min}–${self.forfeiture_max} ({self.source})"

    def in_words(self) -> str:
        """The forfeiture as a page says it: "$50.00 to $150.00", or where the ordinance
        sets no amount, the section that provides one, else what the texts say; never an
        invented amount, never "not set" (``describe`` is the recorded wording)."""
        if self.amounts_set:
            return f"{dollars(self.forfeiture_min)} to {dollars(self.forfeiture_max)}"
        if self.provided_by:
            return f"a forfeiture under {self.provided_by}; the ordinance texts give no amount"
        return f"the ordinance texts give no amount: {self.source}"

    @property
    def amounts_set(self) -> bool:
        return NOT_SET not in (self.forfeiture_min, self.forfeiture_max)


class Actor(_Strict):
    """Who takes a step, in the ordinance's words, where no other field of the rule names
    them (the abating office, the tax-roll officer and the appeal body have their own)."""

    by: str
    text: str  # the words of the ordinance that name them
    citation: str


class Rule(_Strict):
    """One version of one ordinance rule."""

    id: str = Field(pattern=r"^[0-9A-Za-z.\-()]+$")
    version: int = Field(ge=1)
    effective_from: dt.date
    citation: str
    # The catalog's word to auditors about the citation ("subsection numbers
    # reconstructed"): shown in docs/rules.md and on the audit page, never in a citation a
    # resident reads (letters, the case page).
    citation_note: str | None = None
    title: str
    family: str = Field(pattern=r"^[a-z_]+$")
    notice_to: list[Party]
    service: Service | None = None
    cure: Clock | None = None
    owner_duty: Clock | None = None
    cure_expiry_consequence: str | None = None
    hazard: Hazard | None = None
    escalations: list[Escalation] = []
    abatement: Abatement | None = None
    billing: Billing | None = None
    tax_roll: TaxRoll | None = None
    repeat: Repeat | None = None
    penalty: Penalty | None = None
    referral: str | None = None
    acted_by: dict[ActionKind, Actor] = {}
    readings: list[str] = []

    # Filled in by the loader from the file, so a rule can name its village.
    municipality: str = ""

    @property
    def key(self) -> str:
        return f"{self.municipality}:{self.id}"


class Municipality(_Strict):
    municipality: str = Field(pattern=r"^[a-z]+$")
    name: str
    time_zone: str
    counties: dict[str, str]  # county name -> parcel-number pattern (a regular expression)
    certification_cutoff: str = Field(pattern=r"^\d{2}-\d{2}$")  # MM-DD
    # The largest amount (a cost item, a payment, a forfeiture) a command may carry: a guard
    # against typing errors and hostile input, not an ordinance value.
    max_amount: Decimal = Field(default=Decimal("100000.00"), gt=0, max_digits=17,
                                decimal_places=2)
    holidays_subdivision: str = "WI"
    # The village office as its letters print it (letterhead, "questions" line): "not set"
    # until the village writes it here or in the village settings file (which wins:
    # cases/village_settings.py); never invented.
    address: str = Field(default=NOT_SET, min_length=1, max_length=ADDRESS_MAX)
    phone: str = Field(default=NOT_SET, min_length=1, max_length=PHONE_MAX)
    rules: list[Rule]

    @model_validator(mode="after")
    def _unique_versions(self) -> "Municipality":
        seen: set[tuple[str, int]] = set()
        for rule in self.rules:
            if (rule.id, rule.version) in seen:
                raise ValueError(f"rule {rule.id} version {rule.version} appears twice")
            seen.add((rule.id, rule.version))
        return self

    def parcel_error(self, county: str, number: str) -> str | None:
        """Why a parcel number is not valid for its county (never normalised)."""
        pattern = self.counties.get(county)
        if pattern is None:
            return f"county {county!r} is not in {self.name} (known: {', '.join(self.counties)})"
        if not re.fullmatch(pattern, number):
            example = parcel_example(pattern)
            return (f"parcel number {number!r} does not match the {county} County format "
                    f"{pattern}" + (f" (like {example})" if example else ""))
        return None

    def county_named(self, name: str) -> str:
        """The county as the catalog spells it, for a name typed in a query (``dane`` ->
        ``Dane``); a journal's parcel county is never normalised."""
        return county_named(self, name)

    def rule_in_force(self, rule_id: str, on: dt.date) -> Rule:
        """The version of a rule in force on a violation date."""
        versions = [r for r in self.rules if r.id == rule_id]
        if not versions:
            known = ", ".join(sorted({r.id for r in self.rules}))
            raise UnknownRuleError(f"no rule {self.municipality}:{rule_id} (known: {known})")
        in_force = [r for r in versions if r.effective_from <= on]
        if not in_force:
            first = min(r.effective_from for r in versions)
            raise UnknownRuleError(
                f"rule {self.municipality}:{rule_id} is not in force on {on} (first version from {first})"
            )
        return max(in_force, key=lambda r: r.effective_from)

    def rule_version(self, rule_id: str, version: int) -> Rule:
        for rule in self.rules:
            if rule.id == rule_id and rule.version == version:
                return rule
        raise UnknownRuleError(f"no rule {self.municipality}:{rule_id} version {version}")


def _format_validation_error(path: Path, data: Any, error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        loc = list(item["loc"])
        where = str(path.name)
        if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int):
            try:
                rule_id = data["rules"][loc[1]].get("id", f"#{loc[1] + 1}")
            except (KeyError, IndexError, TypeError, AttributeError):
                rule_id = f"#{loc[1] + 1}"
            where += f", rule {rule_id}"
            loc = loc[2:]
        field = ".".join(str(p) for p in loc) or "(file)"
        lines.append(f"{where}, field {field}: {item['msg']}")
    return "\n".join(lines)


def load_municipality(path: Path) -> Municipality:
    """Load and validate one municipality's rules file."""
    try:
        data = read_rule_file(path)
    except YAMLError as exc:
        raise RuleCatalogError(f"{path.name}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise RuleCatalogError(f"{path.name}: expected a mapping at the top level")
    try:
        municipality = Municipality.model_validate(data)
    except ValidationError as exc:
        raise RuleCatalogError(_format_validation_error(path, data, exc)) from None
    expected = path.stem
    if municipality.municipality != expected:
        raise RuleCatalogError(
            f"{path.name}, field municipality: {municipality.municipality!r} must match the file name {expected!r}"
        )
    rules = [r.model_copy(update={"municipality": municipality.municipality}) for r in municipality.rules]
    return municipality.model_copy(update={"rules": rules})


class Catalog:
    """All municipalities' rules, looked up by ``municipality:id``."""

    def __init__(self, municipalities: dict[str, Municipality]):
        self.municipalities = municipalities

    @classmethod
    def load(cls, directory: Path = RULES_DIR) -> "Catalog":
        found = {}
        for path in rule_files(directory):
            municipality = load_municipality(path)
            found[municipality.municipality] = municipality
        if not found:
            raise RuleCatalogError(f"no rule files (*.yaml) in {directory}")
        return cls(found)

    def with_letterhead(self, overrides: dict[str, dict[str, str]]) -> "Catalog":
        """This catalog with each named village's letterhead values (``address``, ``phone``)
        from the village settings file (cases/village_settings.py), which win over the
        rules file's; the rules themselves are unchanged."""
        if not overrides:
            return self
        return Catalog({name: place.model_copy(update=overrides.get(name, {}))
                        for name, place in self.municipalities.items()})

    def municipality(self, name: str) -> Municipality:
        try:
            return self.municipalities[name]
        except KeyError:
            known = ", ".join(sorted(self.municipalities))
            raise UnknownRuleError(f"unknown municipality {name!r} (known: {known})") from None

    def place(self, municipality: str, county: str | None = None) -> tuple[Municipality, str | None]:
        """The municipality and the county (as the catalog spells it) a read command asks
        about; an unknown one is an error naming the known ones, never an empty answer."""
        found = self.municipality(municipality)
        return found, (found.county_named(county) if county is not None else None)

    def rule_in_force(self, rule_key: str, on: dt.date) -> Rule:
        municipality, _, rule_id = rule_key.partition(":")
        if not rule_id:
            raise UnknownRuleError(f"rule {rule_key!r} must look like 'belleville:9.13'")
        return self.municipality(municipality).rule_in_force(rule_id, on)

    def rule_version(self, rule_key: str, version: int) -> Rule:
        municipality, _, rule_id = rule_key.partition(":")
        return self.municipality(municipality).rule_version(rule_id, version)


@cache
def default_catalog() -> Catalog:
    return Catalog.load()

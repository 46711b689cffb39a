"""Render the rules catalog as Markdown (docs/rules.md is generated from it, so it stays true)."""

from __future__ import annotations

from cases import vocabulary
from cases.rules.catalog import Catalog, Clock, Rule

HEADER = """# Rules catalog

Generated from `cases/rules/*.yaml` by `abate rules --markdown > docs/rules.md`; a test fails
when this page and the catalog disagree. Each rule is data: a change to an ordinance adds a
version with its effective date, and a case keeps the version in force on its violation date.
Values the ordinance texts do not give are shown as **not set**; nothing is computed from them.

A note in parentheses after a rule's citation (e.g. "subsection numbers reconstructed") is the
catalog's note for auditors (`citation_note`), not part of the citation: letters, bills, the
referral packet and the case page print the citation without it. Splitting it off a citation
changed no deadline or amount, so it was done in the rule version in place.

How to read the periods: hour periods run in elapsed hours (a 24-hour deadline across a
daylight-saving change is still 24 real hours); day periods count from the local calendar day of
the start and end at the end of the last local day (America/Chicago); business days skip
weekends and Wisconsin state holidays.
"""


def _clock(clock: Clock | None) -> str:
    if clock is None:
        return "—"
    period = "stated in the notice" if clock.period == "stated_in_notice" else str(clock.period)
    return f"{period} from {clock.starts.replace('_', ' ')} ({clock.citation})"


def _rule(rule: Rule) -> list[str]:
    lines = [f"### `{rule.key}` v{rule.version} — {rule.title}", "",
             f"{rule.citation}{f' ({rule.citation_note})' if rule.citation_note else ''}; "
             f"in force from {rule.effective_from}; family `{rule.family}`.", ""]
    rows = [("notice to", ", ".join(p.replace("_", " ") for p in rule.notice_to) or "—")]
    if rule.service:
        rows.append(("service", ", ".join(m.replace("_", " ") for m in rule.service.methods)
                     + (f"; nobody found: {rule.service.when_nobody_found}"
                        if rule.service.when_nobody_found else "")))
        fallback = rule.service.fallback
        if fallback:
            rows.append(("service fallback",
                         f"{', '.join(m.replace('_', ' ') for m in fallback.methods)} only after a "
                         f"recorded attempt by {' or '.join(m.replace('_', ' ') for m in fallback.after_attempt_by)}: "
                         f"\"{fallback.text}\" ({fallback.citation})"))
    rows.append(("owner's time before notice", _clock(rule.owner_duty)))
    rows.append(("cure", _clock(rule.cure)
                 + (f"; then: {rule.cure_expiry_consequence}" if rule.cure_expiry_consequence else "")))
    if rule.hazard:
        rows.append(("hazard", f"{_clock(rule.hazard.cure)}; nobody reachable: "
                     f"{str(rule.hazard.when_nobody_reachable).replace('_', ' ')}"))
    for step in rule.escalations:
        rows.append((f"escalation `{step.name}`",
                     f"{step.after} after {step.starts.replace('_', ' ')}: {step.consequence}"
                     f"{' (needs a person)' if step.needs_person else ''} ({step.citation})"))
    if rule.abatement:
        a = rule.abatement
        rows.append(("village abatement",
                     ("yes" if a.by_village else "no")
                     + ("; after written notice" if a.notice_required else "; no notice needed")
                     + (f"; without notice when: {', '.join(a.without_notice_when)}"
                        if a.without_notice_when else "") + f" ({a.citation})"))
    if rule.billing:
        b = rule.billing
        due = "**not set**" if b.due == "not set" else _clock(b.due)
        rows.append(("bill", f"to {b.bill_to.replace('_', ' ')}; due {due}"))
        if b.appeal:
            ap = b.appeal
            rows.append(("appeal", f"to {ap.to} within {_clock(ap.window)}; "
                         f"{'stays the charge' if ap.stays_charge else 'does not stay the charge'}; "
                         f"decided by {ap.decided_by} {ap.decision_due}; if denied due "
                         f"{ap.due_after_denial} after the decision"))
        if b.bond:
            rows.append(("bond", f"the {b.bond.name} is drawn on when the bill is left unpaid; "
                         f"only what it does not cover goes on the tax roll: \"{b.bond.text}\" "
                         f"({b.bond.citation})"))
    if rule.tax_roll:
        t = rule.tax_roll
        trigger = t.trigger.replace("_", " ") + (f" ({t.period})" if t.period else "")
        rate = "**not set**" if t.interest_rate == "not set" else f"{t.interest_rate}"
        rows.append(("tax roll", f"{trigger}; {'shall' if t.mandatory else 'may'}; "
                     f"{t.charge_type.replace('_', ' ')}, {t.statute}; entered by {t.entered_by}; "
                     f"interest {rate} ({t.citation})"))
    if rule.repeat:
        rows.append(("repeat offense", f"{rule.repeat.window_months} months: "
                     f"{rule.repeat.consequence} ({rule.repeat.citation})"))
        rows.append(("repeat window counts", rule.repeat.counts.replace("_", " ")
                     + (f": \"{rule.repeat.counts_text}\"" if rule.repeat.counts_text else "")))
    if rule.penalty:
        p = rule.penalty
        amount = p.describe(rule.municipality).replace("not set", "**not set**")
        rows.append(("forfeiture", amount + (f"; {p.separate_offense}" if p.separate_offense else "")))
        rows.append(("forfeiture provided by", p.provided_by or "no section named in the texts "
                     "(a notice states no forfeiture)"))
        if p.offenses:
            unit = vocabulary.offense_unit_label(p.offenses.unit)
            start = ("when the violation was observed" if p.offenses.starts == "observed"
                     else f"when deadline `{p.offenses.starts.partition(':')[2]}` runs")
            rows.append(("separate offenses", f"each {unit} from {start} to the abatement, "
                         f"compliance or citation: \"{p.offenses.text}\" ({p.offenses.citation})"))
    if rule.referral:
        rows.append(("referral", rule.referral))
    for kind, actor in rule.acted_by.items():
        rows.append((f"who acts: {kind.replace('_', ' ')}",
                     f"{actor.by}: \"{actor.text.strip()}\" ({actor.citation})"))
    lines += ["| | |", "|---|---|"]
    lines += [f"| {k} | {str(v).replace('|', '/').replace(chr(10), ' ')} |" for k, v in rows]
    if rule.readings:
        lines += ["", "Readings where the text is open:", ""]
        lines += [f"- {r.strip()}" for r in rule.readings]
    return lines + [""]


def catalog_markdown(catalog: Catalog) -> str:
    lines = [HEADER]
    for municipality in catalog.municipalities.values():
        counties = ", ".join(f"{c} (`{p}`)" for c, p in municipality.counties.items())
        lines += [f"## {municipality.name}", "",
                  f"Time zone {municipality.time_zone}; counties and parcel-number formats: "
                  f"{counties}; tax-roll certification cut-off {municipality.certification_cutoff} "
                  f"(month-day); largest amount a command may carry {municipality.max_amount} "
                  "(`max_amount`, a guard against typing errors, not an ordinance value). "
                  f"Letterhead of its documents (docs/documents.md): address {municipality.address}, "
                  f"phone {municipality.phone} (`address`, `phone`).", ""]
        for rule in municipality.rules:
            lines += _rule(rule)
    return "\n".join(lines).rstrip() + "\n"

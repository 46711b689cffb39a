"""A realistic command journal of any size, for the import benchmarks and the memory test.

Per ten cases (the mix the journal-import measurements of issue 11 asked for):
- three Belleville § 9.25 refuse cases: a warning notice (every notice asks the
  repeat-offense question, and one parcel in three had a case some months before, so
  about a third of them find a prior violation), compliance, close;
- three Belleville § 9.13 dumping cases: notice, 72 hours, Village removal, bill; two
  of them are paid and closed, one appeals (denied), then pays;
- two Belleville § 9.09 snow cases on the hazard path: hazard declared with nobody
  reachable, immediate abatement, the notice mailed afterwards, bill, payment;
- one Mazomanie § 360-10 snow case: notice, 48 hours, abatement, bill (left unpaid);
- one Belleville § 9.07 obstruction: notice, compliance, close.

Cases start on days spread over January to October 2026, so the journal is in
business-time order per case; the lines of different cases interleave as a day's work
would (all of a case's lines are written together, which is what journals exported from
other systems look like).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any
from zoneinfo import ZoneInfo

ZONE = ZoneInfo("America/Chicago")
FIRST_DAY = dt.date(2026, 1, 5)
SPREAD_DAYS = 270


def _at(day: dt.date, hour: int, minute: int = 0) -> str:
    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=ZONE).isoformat()


def _parcel(municipality: str, n: int) -> dict[str, str]:
    return {"county": "Dane", "number": f"0509-{n // 10000 % 1000:03d}-{n % 10000:04d}-0"}


def case_lines(i: int) -> list[dict[str, Any]]:
    """The commands of case ``i``."""
    kind = i % 10
    day = FIRST_DAY + dt.timedelta(days=(i * 7919) % SPREAD_DAYS)
    municipality = "mazomanie" if kind == 8 else "belleville"
    ref = f"{'MZ' if kind == 8 else 'BV'}-G-{i}"
    # One refuse parcel in three repeats the parcel of the refuse case 30 cases earlier.
    parcel_no = i - 30 if kind < 3 and i >= 30 and (i // 10) % 3 == 0 else i
    base = {"municipality": municipality, "case_ref": ref, "actor": "officer.generated"}

    def line(command: str, at: str, **fields: Any) -> dict[str, Any]:
        return {"command": command, **base, "at": at, "id": f"g{i}-{command}", **fields}

    opened = line("open_case", _at(day, 9), rule=_RULES[kind], parcel=_parcel(municipality, parcel_no),
                  site_address=f"{i} Main St", description="observed on patrol",
                  owner={"name": f"Owner {parcel_no}", "mailing_address": f"{parcel_no} Main St"})
    later = day + dt.timedelta(days=4)
    if kind < 3:  # § 9.25 refuse: warning notice (repeat look-up), compliance, close
        return [opened,
                line("serve_notice", _at(day, 10), method="personal", served_on=f"Owner {parcel_no}"),
                line("record_compliance", _at(later, 9), notes="carts removed"),
                line("close_case", _at(later, 10), reason="complied")]
    if kind < 6:  # § 9.13 dumping: notice, removal after 72 h, bill, (appeal,) payment
        steps = [opened,
                 line("serve_notice", _at(day, 10), method="personal", served_on=f"Owner {parcel_no}"),
                 line("record_abatement", _at(later, 9),
                      costs=[{"item": "crew", "amount": "150.00"}]),
                 line("issue_bill", _at(later + dt.timedelta(days=1), 9))]
        pay_day = later + dt.timedelta(days=12)
        if kind == 5:
            steps += [line("file_appeal", _at(later + dt.timedelta(days=3), 9),
                           grounds="not my debris"),
                      line("decide_appeal", _at(later + dt.timedelta(days=9), 19),
                           outcome="denied")]
        return steps + [line("record_payment", _at(pay_day, 11), amount="150.00"),
                        line("close_case", _at(pay_day, 12), reason="paid in full")]
    if kind < 8:  # § 9.09 snow, hazard path: immediate abatement, notice afterwards, bill, payment
        return [{**opened, "snow_ended_at": _at(day, 6)},
                line("declare_hazard", _at(day, 9, 30), description="ice at the ramp",
                     nobody_reachable=True),
                line("record_abatement", _at(day, 11), without_notice_reason="hazard_nobody_reachable",
                     costs=[{"item": "crew and salt", "amount": "85.00"}]),
                line("serve_notice", _at(day, 14), method="first_class_mail",
                     served_on=f"Owner {parcel_no}"),
                line("issue_bill", _at(day + dt.timedelta(days=1), 9)),
                line("record_payment", _at(day + dt.timedelta(days=8), 9), amount="85.00")]
    if kind == 8:  # Mazomanie § 360-10: notice, 48 h, abatement, bill (left unpaid)
        return [{**opened, "snow_ended_at": _at(day, 6)},
                line("serve_notice", _at(day, 10), method="personal", served_on=f"Owner {parcel_no}"),
                line("record_abatement", _at(later, 9), costs=[{"item": "crew", "amount": "60.00"}]),
                line("issue_bill", _at(later + dt.timedelta(days=1), 9))]
    return [opened,  # § 9.07 obstruction: notice, compliance, close
            line("serve_notice", _at(day, 10), method="personal", served_on=f"Owner {parcel_no}"),
            line("record_compliance", _at(day + dt.timedelta(days=1), 9), notes="removed"),
            line("close_case", _at(day + dt.timedelta(days=1), 10), reason="complied")]


_RULES = {0: "belleville:9.25", 1: "belleville:9.25", 2: "belleville:9.25",
          3: "belleville:9.13", 4: "belleville:9.13", 5: "belleville:9.13",
          6: "belleville:9.09", 7: "belleville:9.09", 8: "mazomanie:360-10",
          9: "belleville:9.07"}


def journal_lines(cases: int, start: int = 0) -> Iterator[str]:
    """The journal of generated cases ``start`` .. ``start + cases - 1``, one JSON command
    per line."""
    for i in range(start, start + cases):
        for command in case_lines(i):
            yield json.dumps(command)


def write_journal(path: str, cases: int) -> int:
    """Write the journal to ``path``; returns the number of lines."""
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for text in journal_lines(cases):
            out.write(text + "\n")
            count += 1
    return count

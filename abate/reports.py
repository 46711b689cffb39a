"""CLI commands that read the views: tax roll, repeat offenses, worklist, case lists,
projection status and rebuild. Each catches the views up first, so a read after a
command sees that command."""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from tqdm import tqdm

from cases.application import CaseService, Outcome, UnitOfWork
from cases.commands import parse_command
from cases.errors import AbateError
from cases.rules.catalog import default_catalog
from cases.rules.clock import end_of_local_day
from cases.settings import Settings
from cases.store import CaseStore
from projections import ALL_VIEWS, CaseSummaries, RepeatOffenses, TaxRoll, Worklist
from projections.lookups import ProjectedDueDeadlines, ProjectedRepeatOffenses
from projections.runner import ViewRunner
from projections.tax_roll import CSV_COLUMNS


def open_views(store: CaseStore) -> ViewRunner:
    return ViewRunner(store, ALL_VIEWS)


def service_with_views(store: CaseStore, runner: ViewRunner) -> CaseService:
    settings = Settings.from_env()
    return CaseService(store, repeat_offenses=ProjectedRepeatOffenses(runner),
                       due_deadlines=ProjectedDueDeadlines(runner),
                       future_tolerance=settings.future_tolerance,
                       journal_max_line_bytes=settings.journal_max_line_bytes,
                       journal_max_depth=settings.journal_max_depth)


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


@contextmanager
def reading(store: CaseStore, view_name: str) -> Iterator[tuple[Any, Any]]:
    """(view, connection) of a view caught up to the latest event."""
    runner = open_views(store)
    try:
        runner.catch_up([view_name])
        view = runner.active(view_name)
        with runner.engine.connect() as conn:
            yield view, conn
    finally:
        runner.close()


def _zone(municipality: str) -> ZoneInfo:
    return ZoneInfo(default_catalog().municipality(municipality).time_zone)


def _today(municipality: str) -> dt.date:
    return dt.datetime.now(_zone(municipality)).date()


# ---------------------------------------------------------------- tax roll


def tax_roll_rows(store: CaseStore, args: argparse.Namespace) -> list[dict[str, Any]]:
    default_catalog().municipality(args.municipality)  # names the known ones if wrong
    with reading(store, TaxRoll.name) as (view, conn):
        return view.charges(conn, municipality=args.municipality, tax_year=args.tax_year,
                            as_of=args.as_of or _today(args.municipality),
                            known_at=args.known_at, county=args.county)


def write_csv(rows: list[dict[str, Any]], out: io.TextIOBase, totals: bool = False) -> None:
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    if totals:
        total = sum((Decimal(r["total"]) for r in rows), Decimal("0.00"))
        out.write(f"# totals: {len(rows)} charges, {total}\n")


def cmd_tax_roll_export(args: argparse.Namespace, store: CaseStore) -> int:
    rows = tax_roll_rows(store, args)
    if args.format == "json":
        _print_json({"municipality": args.municipality, "tax_year": args.tax_year,
                     "county": args.county, "as_of": (args.as_of or _today(args.municipality)).isoformat(),
                     "known_at": args.known_at.isoformat() if args.known_at else None,
                     "charges": rows})
    else:
        write_csv(rows, sys.stdout)
    return 0


def cmd_tax_roll_certify(args: argparse.Namespace, store: CaseStore) -> int:
    """Record a certification on every listed, not yet certified charge (once), then
    write the certified list with a totals line."""
    args.as_of, args.known_at = None, None
    rows = tax_roll_rows(store, args)
    runner = open_views(store)
    try:
        now = dt.datetime.now(dt.timezone.utc)
        service = service_with_views(store, runner)
        uow = UnitOfWork(store)
        outcome = Outcome()
        for row in rows:
            if row["certified"]:
                continue
            command = parse_command({
                "command": "certify_charge", "municipality": args.municipality,
                "case_ref": row["case_ref"], "at": now.isoformat(), "actor": args.actor,
                "tax_year": args.tax_year, "id": f"certify:{args.tax_year}:{row['case_ref']}"})
            service.execute(command, now, uow, outcome)
        uow.commit()
    finally:
        runner.close()
    certified = [r for r in tax_roll_rows(store, args) if r["certified"]]
    target = open(args.output, "w", newline="", encoding="utf-8") if args.output else sys.stdout
    try:
        write_csv(certified, target, totals=True)
    finally:
        if args.output:
            target.close()
    print(f"certified {outcome.applied} new charges; {len(certified)} on the "
          f"{args.tax_year} {args.county} County list", file=sys.stderr)
    return 0


def cmd_tax_roll_reconcile(args: argparse.Namespace, store: CaseStore) -> int:
    with reading(store, TaxRoll.name) as (view, conn):
        payments = view.late_payments(conn, municipality=args.municipality,
                                      tax_year=args.tax_year)
    by_county: dict[str, Decimal] = {}
    for payment in payments:
        by_county[payment["county"]] = by_county.get(payment["county"], Decimal("0.00")) + Decimal(payment["amount"])
    _print_json({"municipality": args.municipality, "tax_year": args.tax_year,
                 "payments_after_certification": payments,
                 "to_credit_or_refund_by_county": {k: str(v) for k, v in by_county.items()}})
    return 0


# ---------------------------------------------------------------- repeat offenses, worklist, cases


def cmd_repeat_offenses(args: argparse.Namespace, store: CaseStore) -> int:
    catalog = default_catalog()
    municipality = catalog.municipality(args.municipality)
    windows = {r.repeat.window_months for r in municipality.rules
               if r.family == args.rule_family and r.repeat}
    parcel = None
    if args.parcel:
        county, _, number = args.parcel.partition("/")
        if not number:
            raise AbateError(f"--parcel {args.parcel!r} must look like COUNTY/NUMBER")
        parcel = {"county": county, "number": number}
    as_of = args.as_of or _today(args.municipality)
    with reading(store, RepeatOffenses.name) as (view, conn):
        evidence = view.prior_violations(
            conn, municipality=args.municipality, family=args.rule_family, parcel=parcel,
            party=args.party, violation_date=as_of, window_months=max(windows or {12}),
            as_of=end_of_local_day(as_of, _zone(args.municipality)))
    _print_json({"municipality": args.municipality, "rule_family": args.rule_family,
                 "parcel": args.parcel, "party": args.party, "as_of": as_of.isoformat(),
                 "count": evidence.count, "window_start": evidence.window_start.isoformat(),
                 "window_end": evidence.window_end.isoformat(), "case_refs": evidence.case_refs})
    return 0


def cmd_worklist(args: argparse.Namespace, store: CaseStore) -> int:
    default_catalog().municipality(args.municipality)
    as_of = (end_of_local_day(args.as_of, _zone(args.municipality)) if args.as_of
             else dt.datetime.now(dt.timezone.utc))
    with reading(store, Worklist.name) as (view, conn):
        rows = view.listing(conn, municipality=args.municipality, as_of=as_of,
                            overdue_only=args.overdue)
        actions = view.action_listing(conn, municipality=args.municipality, as_of=as_of,
                                      overdue_only=args.overdue)
    _print_json({"municipality": args.municipality, "as_of": as_of.isoformat(),
                 "overdue_only": args.overdue, "actions": actions, "deadlines": rows})
    return 0


def cmd_cases_list(args: argparse.Namespace, store: CaseStore) -> int:
    with reading(store, CaseSummaries.name) as (view, conn):
        rows = view.search(conn, municipality=args.municipality, status=args.status,
                           parcel=args.parcel, owner=args.owner, rule=args.rule)
    _print_json(rows)
    return 0


# ---------------------------------------------------------------- projections


def cmd_projections_status(args: argparse.Namespace, store: CaseStore) -> int:
    runner = open_views(store)
    try:
        _print_json([s.as_dict() for s in runner.status()])
    finally:
        runner.close()
    return 0


def cmd_projections_rebuild(args: argparse.Namespace, store: CaseStore) -> int:
    runner = open_views(store)
    try:
        names = [args.name] if args.name else list(runner.view_classes)
        for name in names:
            if name not in runner.view_classes:
                raise AbateError(f"no view {name!r} (known: {', '.join(runner.view_classes)})")
        with tqdm(total=runner.head(), desc=f"rebuild {', '.join(names)}", unit="event",
                  file=sys.stderr, disable=not sys.stderr.isatty() and not args.progress) as bar:
            runner.rebuild(*names, progress=bar.update)
        _print_json([s.as_dict() for s in runner.status()])
    finally:
        runner.close()
    return 0


def cmd_projections_run(args: argparse.Namespace, store: CaseStore) -> int:
    import signal
    import threading

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    runner = open_views(store)
    try:
        runner.follow(stop, poll_seconds=args.poll_seconds)
    except KeyboardInterrupt:
        stop.set()
    finally:
        runner.close()
    return 0


def add_parsers(sub: Any, timestamp: Any) -> None:
    def date(value: str) -> dt.date:
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a date (YYYY-MM-DD)") from None

    tax = sub.add_parser("tax-roll", help="charges to certify to the county tax roll")
    tax_sub = tax.add_subparsers(dest="tax_command", required=True)
    p = tax_sub.add_parser("export", help="the list of charges to certify")
    p.add_argument("--municipality", required=True)
    p.add_argument("--tax-year", type=int, required=True)
    p.add_argument("--county")
    p.add_argument("--as-of", type=date, help="the business date the list is for (default today)")
    p.add_argument("--known-at", type=timestamp, help="the list as the system knew it then")
    p.add_argument("--format", choices=["csv", "json"], default="csv")
    p.set_defaults(func=cmd_tax_roll_export)
    p = tax_sub.add_parser("certify", help="certify the listed charges (once) and write the list")
    p.add_argument("--municipality", required=True)
    p.add_argument("--tax-year", type=int, required=True)
    p.add_argument("--county", required=True)
    p.add_argument("--actor", required=True)
    p.add_argument("--output", help="write the certified list (CSV) here instead of stdout")
    p.set_defaults(func=cmd_tax_roll_certify)
    p = tax_sub.add_parser("reconcile", help="payments after certification, for the county")
    p.add_argument("--municipality", required=True)
    p.add_argument("--tax-year", type=int, required=True)
    p.set_defaults(func=cmd_tax_roll_reconcile)

    p = sub.add_parser("repeat-offenses", help="prior violations in the look-back window")
    p.add_argument("--municipality", required=True)
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--parcel", help="COUNTY/NUMBER, e.g. Dane/0509-123-4567-0")
    who.add_argument("--party", help="owner or responsible party name")
    p.add_argument("--rule-family", required=True)
    p.add_argument("--as-of", type=date, help="count as of this date (default today)")
    p.set_defaults(func=cmd_repeat_offenses)

    p = sub.add_parser("worklist", help="actions due (who acts, which rule) and open deadlines, earliest first")
    p.add_argument("--municipality", required=True)
    p.add_argument("--as-of", type=date)
    p.add_argument("--overdue", action="store_true")
    p.set_defaults(func=cmd_worklist)

    cases = sub.add_parser("cases", help="list and search cases")
    cases_sub = cases.add_subparsers(dest="cases_command", required=True)
    p = cases_sub.add_parser("list")
    p.add_argument("--municipality", required=True)
    p.add_argument("--status")
    p.add_argument("--parcel", help="parcel number")
    p.add_argument("--owner", help="part of the owner's name")
    p.add_argument("--rule", help="e.g. belleville:9.13")
    p.set_defaults(func=cmd_cases_list)

    proj = sub.add_parser("projections", help="the read models")
    proj_sub = proj.add_subparsers(dest="projections_command", required=True)
    p = proj_sub.add_parser("status", help="position and lag per view")
    p.set_defaults(func=cmd_projections_status)
    p = proj_sub.add_parser("rebuild", help="rebuild a view (or all) from the first event")
    p.add_argument("name", nargs="?")
    p.add_argument("--progress", action="store_true", help="show the progress bar even when not on a terminal")
    p.set_defaults(func=cmd_projections_rebuild)
    p = proj_sub.add_parser("run", help="keep the views up to date until stopped")
    p.add_argument("--poll-seconds", type=float, default=1.0)
    p.set_defaults(func=cmd_projections_run)


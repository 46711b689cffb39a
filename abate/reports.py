"""CLI commands that read the views: tax roll, repeat offenses, worklist, case lists,
projection status and rebuild. Each catches the views up first, so a read after a
command sees that command."""

from __future__ import annotations

import argparse
import datetime as dt
import errno
import json
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from cases.errors import AbateError
from cases.localtime import localized, table_time
from cases.rules.catalog import Municipality, default_catalog
from cases.rules.clock import end_of_local_day
from cases.settings import Settings
from cases.store import CaseStore
from projections import ALL_VIEWS, CaseSummaries, RepeatOffenses, TaxRoll, Worklist
from projections.csv_cells import visible_controls
from projections.runner import ViewRunner
from projections.tax_roll_file import csv_text, encoded, summary, summary_path

if TYPE_CHECKING:
    from cases.application import CaseService


def open_views(store: CaseStore, reading: bool = False) -> ViewRunner:
    """The views; ``reading`` for a command that only reads them (no table set-up when
    they are in place: projections/runner.py)."""
    return ViewRunner(store, ALL_VIEWS, reading=reading)


def service_with_views(store: CaseStore, runner: ViewRunner) -> CaseService:
    """A service whose look-ups read the views (the commands behind it are imported here,
    not by the read-only commands of this module)."""
    from cases.application import CaseService
    from projections.lookups import ProjectedDueDeadlines, ProjectedRepeatOffenses

    settings = Settings.from_env()
    return CaseService(store, repeat_offenses=ProjectedRepeatOffenses(runner),
                       due_deadlines=ProjectedDueDeadlines(runner),
                       future_tolerance=settings.future_tolerance,
                       journal_max_line_bytes=settings.journal_max_line_bytes,
                       journal_max_depth=settings.journal_max_depth)


def counted(number: int, noun: str) -> str:
    """``1 case``, ``2 cases``: the lines a person reads are grammatical."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def _print_table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    """Columns padded to their widest cell; control characters shown, never sent raw."""
    cells = [tuple(visible_controls(str(v)).replace("\n", " ") for v in row)
             for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())


@contextmanager
def reading(store: CaseStore, view_name: str) -> Iterator[tuple[Any, Any]]:
    """(view, connection) of a view caught up to the latest event."""
    runner = open_views(store, reading=True)
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


def _place(municipality: str) -> Municipality:
    return default_catalog().municipality(municipality)


def _check_output(path: str | None) -> str | None:
    """Why ``--output`` cannot be written (checked before anything is recorded), or None."""
    if path is None:
        return None
    folder = Path(path).resolve().parent
    if not folder.is_dir():
        return f"--output {path}: the folder {folder} does not exist"
    if Path(path).is_dir():
        return f"--output {path} is a folder; give a file name such as {path}/roll.csv"
    if Path(summary_path(path)).is_dir():
        return f"--output {path}: its summary {summary_path(path)} would overwrite a folder"
    return None


def _write_files(files: dict[str, bytes]) -> None:
    """Write each whole or none: temporary files beside them first, then renamed over them."""
    for path in files:
        if Path(path).is_dir():
            raise IsADirectoryError(errno.EISDIR, "it is a folder", path)
    written: list[str] = []
    try:
        for path, data in files.items():
            with open(f"{path}.partial", "wb") as out:
                written.append(f"{path}.partial")
                out.write(data)
        for path in files:
            os.replace(f"{path}.partial", path)
    finally:
        for temporary in written:
            Path(temporary).unlink(missing_ok=True)


class OutputError(Exception):
    """A list could not be written where ``--output`` says (exit 2)."""


def _hand_out(args: argparse.Namespace, charges: list[dict[str, Any]], *, certified: bool,
              as_of: dt.date, newly_certified: int | None = None,
              seal: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write the CSV (to ``--output`` with its summary beside it, else to stdout) and
    return the summary. A certification's ``seal`` (id, position, digest) goes in both."""
    place = _place(args.municipality)
    data = encoded(csv_text(charges, place, seal=seal), args.excel)
    info = summary(charges, place, tax_year=args.tax_year, county=args.county, as_of=as_of,
                   known_at=getattr(args, "known_at", None), certified=certified,
                   produced_at=dt.datetime.now(dt.timezone.utc), csv_bytes=data,
                   csv_file=Path(args.output).name if args.output else None,
                   excel=args.excel, newly_certified=newly_certified, seal=seal)
    if args.output:
        text = json.dumps(info, indent=2, ensure_ascii=False) + "\n"
        try:
            _write_files({args.output: data, summary_path(args.output): text.encode("utf-8")})
        except OSError as exc:
            raise OutputError(f"cannot write {exc.filename}: {exc.strerror}; "
                              "nothing was written") from None
        _print_json({**info, "written": {"csv": args.output,
                                         "summary": summary_path(args.output)}})
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    return info


def cmd_tax_roll_export(args: argparse.Namespace, store: CaseStore) -> int:
    if args.format == "json" and (args.output or args.excel):
        print("abate tax-roll export: --output and --excel write the CSV; --format json prints "
              "the list and its summary on stdout", file=sys.stderr)
        return 2
    if problem := _check_output(args.output):
        print(f"abate tax-roll export: {problem}", file=sys.stderr)
        return 2
    rows = tax_roll_rows(store, args)
    as_of = args.as_of or _today(args.municipality)
    if args.format == "json":
        place = _place(args.municipality)
        info = summary(rows, place, tax_year=args.tax_year, county=args.county, as_of=as_of,
                       known_at=args.known_at, certified=False,
                       produced_at=dt.datetime.now(dt.timezone.utc))
        _print_json({"summary": info, "charges": localized(rows, place.time_zone)})
    else:
        try:
            _hand_out(args, rows, certified=False, as_of=as_of)
        except OutputError as exc:
            print(f"abate tax-roll export: {exc}", file=sys.stderr)
            return 2
    return 0


def cmd_tax_roll_certify(args: argparse.Namespace, store: CaseStore) -> int:
    """Record a certification on every listed, not yet certified charge (once), then
    write the certified list and its summary."""
    if problem := _check_output(args.output):
        print(f"abate tax-roll certify: {problem}; nothing was certified", file=sys.stderr)
        return 2
    args.as_of, args.known_at = None, None
    from cases.application import Outcome, UnitOfWork
    from cases.commands import parse_command
    from cases.seals import seal_store

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
    # The list carries the seal taken right after its certifications, so a printed list
    # is itself the copy kept outside the database (docs/operations.md, seals).
    seal = seal_store(store, actor=args.actor,
                      reason=f"certification {args.municipality} {args.tax_year} {args.county}")
    certified = [r for r in tax_roll_rows(store, args) if r["certified"]]
    try:
        info = _hand_out(args, certified, certified=True, as_of=_today(args.municipality),
                         newly_certified=outcome.applied,
                         seal={"id": seal.seal_id, "position": seal.position,
                               "digest": seal.log_digest, "line": seal.line()})
    except OutputError as exc:
        print(f"abate tax-roll certify: {exc}; the {outcome.applied} new certifications are "
              "recorded: run certify again with another --output to write the list "
              "(it certifies nothing twice)", file=sys.stderr)
        return 2
    print(f"certified {counted(outcome.applied, 'new charge')}; {len(certified)} on the "
          f"{args.tax_year} {args.county} County list, total {info['total']}; "
          f"sealed: {seal.line()}", file=sys.stderr)
    return 0


def cmd_tax_roll_reconcile(args: argparse.Namespace, store: CaseStore) -> int:
    _place(args.municipality)
    with reading(store, TaxRoll.name) as (view, conn):
        payments = view.late_payments(conn, municipality=args.municipality,
                                      tax_year=args.tax_year)
    by_county: dict[str, Decimal] = {}
    for payment in payments:
        by_county[payment["county"]] = by_county.get(payment["county"], Decimal("0.00")) + Decimal(payment["amount"])
    _print_json(localized({"municipality": args.municipality, "tax_year": args.tax_year,
                           "payments_after_certification": payments,
                           "to_credit_or_refund_by_county": {k: str(v) for k, v in by_county.items()}},
                          _zone(args.municipality)))
    return 0


# ---------------------------------------------------------------- repeat offenses, worklist, cases


def cmd_repeat_offenses(args: argparse.Namespace, store: CaseStore) -> int:
    catalog = default_catalog()
    municipality = catalog.municipality(args.municipality)
    as_of = args.as_of or _today(args.municipality)
    rules = [r for r in municipality.rules if r.family == args.rule_family]
    in_force = [r for r in rules if r.effective_from <= as_of and r.repeat]
    repeat = max(in_force, key=lambda r: r.effective_from).repeat if in_force else None
    counts = repeat.counts if repeat else "parcel_or_party"
    parcel = None
    if args.parcel:
        if counts not in ("parcel", "parcel_or_party"):
            raise AbateError(
                f"--parcel: a repeat window of the {args.rule_family} rules counts the "
                f"{counts.replace('_', ' ')}, not the parcel (\"{' '.join((repeat.counts_text or '').split())}\", "
                f"{repeat.citation}); give --party")
        county, _, number = args.parcel.partition("/")
        if not number:
            raise AbateError(f"--parcel {args.parcel!r} must look like COUNTY/NUMBER")
        parcel = {"county": county, "number": number}
    if args.party and counts == "parcel":
        raise AbateError(f"--party: a repeat window of the {args.rule_family} rules counts "
                         f"the parcel ({repeat.citation}); give --parcel")
    with reading(store, RepeatOffenses.name) as (view, conn):
        evidence = view.prior_violations(
            conn, municipality=args.municipality, family=args.rule_family, parcel=parcel,
            party=args.party, violation_date=as_of,
            window_months=repeat.window_months if repeat else 12,
            as_of=end_of_local_day(as_of, _zone(args.municipality)), counts=counts)
    _print_json({"municipality": args.municipality, "rule_family": args.rule_family,
                 "parcel": args.parcel, "party": args.party, "as_of": as_of.isoformat(),
                 "counts": counts, "rule_citation": repeat.citation if repeat else None,
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
    tz = _zone(args.municipality)
    if args.format == "table":
        _print_table(("due", "case", "to do", "who", "overdue", "rule"),
                     [(table_time(a["due_at"], tz), a["case_ref"], a["action"], a["by"],
                       "yes" if a["overdue"] else "", f"{a['rule']} v{a['rule_version']}")
                      for a in actions])
        print(f"{len(actions)} actions")
        print()
        _print_table(("due", "case", "deadline", "overdue", "rule", "consequence"),
                     [(table_time(r["due_at"], tz), r["case_ref"], r["deadline"],
                       "yes" if r["overdue"] else "", f"{r['rule']} v{r['rule_version']}",
                       r["consequence"]) for r in rows])
        print(f"{len(rows)} open deadlines; as of {table_time(as_of, tz)}")
        return 0
    _print_json(localized({"municipality": args.municipality, "as_of": as_of.isoformat(),
                           "overdue_only": args.overdue, "actions": actions, "deadlines": rows},
                          tz))
    return 0


def cmd_cases_list(args: argparse.Namespace, store: CaseStore) -> int:
    with reading(store, CaseSummaries.name) as (view, conn):
        rows = view.search(conn, municipality=args.municipality, status=args.status,
                           parcel=args.parcel, owner=args.owner, rule=args.rule)
    if args.format == "table":
        tz = _zone(args.municipality)
        _print_table(("case", "rule", "status", "parcel", "owner", "next deadline", "due",
                      "balance"),
                     [(r["case_ref"], r["rule"], r["status"], r["parcel_number"], r["owner_name"],
                       r["next_deadline"] or "-", table_time(r["next_deadline_at"], tz),
                       r["balance"]) for r in rows])
        print(counted(len(rows), "case"))
        return 0
    _print_json(localized(rows, _zone(args.municipality)))
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
    from tqdm import tqdm

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

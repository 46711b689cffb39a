"""CLI commands that read the views: tax roll, repeat offenses, worklist, case lists,
projection status and rebuild. Each catches the views up first, so a read after a
command sees that command."""

from __future__ import annotations

import argparse
import datetime as dt
import errno
import hashlib
import json
import os
import shlex
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO
from zoneinfo import ZoneInfo

from cases import filters
from cases.errors import UsageError
from cases.localtime import localized, table_time
from cases.settings import Settings
from projections import CaseSummaries, RepeatOffenses, TaxRoll, Worklist
from projections.bootstrap import case_service, open_views
from projections.certification import (ListChanged, ListDigest, NotCertifiable, certify_listed,
                                       charges_reader, check_reviewed)
from projections.csv_cells import visible_controls
from projections.reconciliation import reconciliation
from projections.repeat_question import repeat_offenses
from projections.tax_roll import listed_charge, only_certified
from projections.tax_roll_file import ListTotals, csv_batch_chunks, summary, summary_path
from projections.worklist_report import worklist, worklist_moment

if TYPE_CHECKING:
    from cases.rules.catalog import Municipality
    from cases.rules.places import Place
    from cases.store import CaseStore


def counted(number: int, noun: str) -> str:
    """``1 case``, ``2 cases``: the lines a person reads are grammatical."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def shown_of(offset: int, shown: int, total: int, noun: str) -> str:
    """``cases 101-200 of 1,234``, ``2 cases``: what part of a paged list a table shows."""
    if offset == 0 and shown == total:
        return counted(total, noun)
    plural = noun + ("" if noun.endswith("s") else "s")
    if not shown:
        return f"no {plural} from {offset + 1:,} (there are {total:,})"
    return f"{plural} {offset + 1:,}-{offset + shown:,} of {total:,}"


def next_page_hint(next_offset: int | None) -> None:
    """Where the next page starts, on stderr so the table itself stays one table."""
    if next_offset is not None:
        print(f"more follow: the next page is --offset {next_offset}", file=sys.stderr)


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
    from cases.rules.places import place

    return ZoneInfo(place(municipality).time_zone)


def _today(municipality: str) -> dt.date:
    return dt.datetime.now(_zone(municipality)).date()


# ---------------------------------------------------------------- tax roll


@contextmanager
def tax_roll_listing(store: CaseStore,
                     args: argparse.Namespace) -> Iterator[Iterator[list[tuple[Any, ...]]]]:
    """The list's charges (batches of rows of ``LISTED_COLUMNS``), streamed from the
    caught-up view while the block runs."""
    _list_place(args.municipality)  # names the known ones if wrong
    filters.day("as_of", args.as_of)
    filters.instant("known_at", args.known_at)
    with reading(store, TaxRoll.name) as (view, conn):
        yield view.iter_row_batches(
            conn, municipality=args.municipality, tax_year=args.tax_year,
            as_of=args.as_of or _today(args.municipality), known_at=args.known_at,
            county=args.county)


def _place(municipality: str) -> Municipality:
    """The municipality with its rule versions (the validated catalog)."""
    from cases.rules.catalog import default_catalog

    return default_catalog().municipality(municipality)


def _list_place(municipality: str) -> Place | Municipality:
    """The municipality's name, code and time zone, all a tax-roll file needs (read from
    its rule file without building the catalog: start-up of an export)."""
    from cases.rules.places import place

    return place(municipality)


def _check_output(path: str | None) -> str | None:
    """Why ``--output``'s summary file cannot be written (checked before anything is
    recorded), or None; the CSV's own path was checked for every command before it ran
    (``cases.failures.check_output_folder``)."""
    if path is None:
        return None
    if Path(summary_path(path)).is_dir():
        return f"--output {path}: its summary {summary_path(path)} would overwrite a folder"
    return None


def _write_files(files: dict[str, Callable[[BinaryIO], None]]) -> None:
    """Write each whole or none: temporary files beside them first (each written by its
    function, in order), then renamed over them."""
    for path in files:
        if Path(path).is_dir():
            raise IsADirectoryError(errno.EISDIR, "it is a folder", path)
    written: list[str] = []
    try:
        for path, write in files.items():
            with open(f"{path}.partial", "wb") as out:
                written.append(f"{path}.partial")
                write(out)
        for path in files:
            os.replace(f"{path}.partial", path)
    finally:
        for temporary in written:
            Path(temporary).unlink(missing_ok=True)


class OutputError(Exception):
    """A list could not be written where ``--output`` says (exit 2)."""


def _hand_out(args: argparse.Namespace, batches: Iterable[list[tuple[Any, ...]]], *,
              certified: bool, as_of: dt.date, newly_certified: int | None = None,
              seal: Mapping[str, Any] | None = None,
              produced_at: dt.datetime | None = None) -> dict[str, Any]:
    """Write the CSV (to ``--output`` with its summary beside it, else to stdout) as the
    charges (batches of rows of ``LISTED_COLUMNS``) stream past, and return the summary.
    A certification's ``seal`` (id, position, digest) goes in both."""
    place = _list_place(args.municipality)
    totals, digest, listed = ListTotals(), hashlib.sha256(), ListDigest()
    produced_at = produced_at or dt.datetime.now(dt.timezone.utc)
    chunks = csv_batch_chunks(totals.counted_batches(listed.counted_batches(batches)), place,
                              seal=seal, excel=args.excel)

    def info() -> dict[str, Any]:
        return summary(totals, place, tax_year=args.tax_year, county=args.county, as_of=as_of,
                       known_at=getattr(args, "known_at", None), certified=certified,
                       produced_at=produced_at, csv_sha256=digest.hexdigest(),
                       csv_file=Path(args.output).name if args.output else None,
                       excel=args.excel, newly_certified=newly_certified, seal=seal,
                       list_sha256=listed.hexdigest())

    def write_csv(out: BinaryIO) -> None:
        for chunk in chunks:
            digest.update(chunk)
            out.write(chunk)

    if args.output:
        def write_summary(out: BinaryIO) -> None:
            out.write((json.dumps(info(), indent=2, ensure_ascii=False) + "\n").encode("utf-8"))

        try:
            _write_files({args.output: write_csv, summary_path(args.output): write_summary})
        except OSError as exc:
            raise OutputError(f"cannot write {exc.filename}: {exc.strerror}; "
                              "nothing was written") from None
        _print_json({**info(), "written": {"csv": args.output,
                                           "summary": summary_path(args.output)}})
    else:
        sys.stdout.flush()
        write_csv(sys.stdout.buffer)
        sys.stdout.buffer.flush()
    return info()


def summary_first_json(charges: Iterable[dict[str, Any]], info: Callable[[], dict[str, Any]],
                       out: Any) -> dict[str, Any]:
    """``{"summary": ..., "charges": [...]}`` as ``json.dump(..., indent=2)`` writes it,
    without holding the list: the charges go to a spooled file (memory up to 8 MB, then
    disk) while their totals are taken, then the summary is written and the file after it."""
    with tempfile.SpooledTemporaryFile(max_size=8 << 20, mode="w+", encoding="utf-8") as kept:
        count = 0
        for charge in charges:
            kept.write(("" if not count else ",\n")
                       + textwrap.indent(json.dumps(charge, indent=2, ensure_ascii=False),
                                         "    "))
            count += 1
        made = info()
        head = json.dumps({"summary": made, "charges": []}, indent=2, ensure_ascii=False)
        if not count:
            out.write(head + "\n")
            return made
        out.write(head[:-len("[]\n}")] + "[\n")
        kept.seek(0)
        shutil.copyfileobj(kept, out)
        out.write("\n  ]\n}\n")
        return made


def cmd_tax_roll_export(args: argparse.Namespace, store: CaseStore) -> int:
    if args.format == "json" and (args.output or args.excel):
        print("abate tax-roll export: --output and --excel write the CSV; --format json prints "
              "the list and its summary on stdout", file=sys.stderr)
        return 2
    if problem := _check_output(args.output):
        print(f"abate tax-roll export: {problem}", file=sys.stderr)
        return 2
    as_of = args.as_of or _today(args.municipality)
    with tax_roll_listing(store, args) as listed:
        produced_at = dt.datetime.now(dt.timezone.utc)
        if args.format == "json":
            place = _list_place(args.municipality)
            totals, digest = ListTotals(), ListDigest()

            def charges() -> Iterator[dict[str, Any]]:
                for batch in totals.counted_batches(digest.counted_batches(listed)):
                    yield from localized([listed_charge(row) for row in batch],
                                         place.time_zone)

            def made() -> dict[str, Any]:
                return summary(totals, place, tax_year=args.tax_year, county=args.county,
                               as_of=as_of, known_at=args.known_at, certified=False,
                               produced_at=produced_at, list_sha256=digest.hexdigest())

            info = summary_first_json(charges(), made, sys.stdout)
        else:
            try:
                info = _hand_out(args, listed, certified=False, as_of=as_of,
                                 produced_at=produced_at)
            except OutputError as exc:
                print(f"abate tax-roll export: {exc}", file=sys.stderr)
                return 2
    _print_next_step(args, info, args.known_at or produced_at)
    return 0


def _print_next_step(args: argparse.Namespace, info: Mapping[str, Any],
                     known_at: dt.datetime) -> None:
    """On stderr: the list's SHA-256 and the certify command that certifies exactly this
    list (refused, naming the changes, if it is no longer the list shown). ``known_at``:
    the moment the list was read as of (to the microsecond: the list rebuilt then is it)."""
    print(f"list SHA-256 {info['list_sha256']} ({counted(info['charges'], 'charge')}, total "
          f"{info['total']}, as of {info['as_of']})", file=sys.stderr)
    for charge in info.get("not_certifiable") or ():
        print(f"{charge['case_ref']}: {charge['problem']} ({charge['rule']} "
              f"v{charge['rule_version']})", file=sys.stderr)
    if args.county is None:
        print("to certify: certification goes county by county; export with --county to get "
              "the certify command for one county's list", file=sys.stderr)
        return
    county = shlex.quote(args.county)
    print(f"to certify this list: abate tax-roll certify --municipality {args.municipality} "
          f"--tax-year {args.tax_year} --county {county} --as-of {info['as_of']} "
          f"--known-at {_utc_text(known_at)} --expect-sha256 {info['list_sha256']} "
          "--actor YOUR-NAME", file=sys.stderr)


def _utc_text(moment: dt.datetime) -> str:
    """An instant as ``2026-11-16T15:04:05.123456Z`` (UTC, to the microsecond)."""
    text = moment.astimezone(dt.timezone.utc).isoformat(timespec="microseconds")
    return text.replace("+00:00", "Z")


def _reviewed_list(store: CaseStore, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The list to certify, once shown to be the list reviewed (``--as-of``, ``--known-at``,
    ``--expect-sha256``; projections.certification.check_reviewed)."""
    _place(args.municipality)  # names the known ones if wrong
    with reading(store, TaxRoll.name) as (view, conn):
        read = charges_reader(view, conn, municipality=args.municipality,
                              tax_year=args.tax_year, county=args.county)
        return check_reviewed(read, today=_today(args.municipality),
                              as_of=args.reviewed_as_of, known_at=args.reviewed_known_at,
                              expected_sha256=args.expect_sha256, known_at_named="--known-at")


def _print_list_changed(exc: ListChanged) -> None:
    """The refusal and each change named, one line each, on stderr."""
    print(f"abate tax-roll certify: {exc.detail}", file=sys.stderr)
    for change in exc.changes or ():
        amounts = "; ".join(f"{name} {change[name]['reviewed']} -> {change[name]['now']}"
                            for name in ("principal", "interest", "total")
                            if isinstance(change.get(name), dict))
        others = ", ".join(change.get("columns", ()))
        what = amounts or (f"total {change['total']}" if "total" in change else "")
        print(f"  {change['case_ref']}: {change['change'].replace('_', ' ')}"
              + (f" ({what})" if what else "") + (f"; changed: {others}" if others else ""),
              file=sys.stderr)
    if exc.changes is not None and exc.changed_charges and exc.changed_charges > len(exc.changes):
        print(f"  and {exc.changed_charges - len(exc.changes)} more", file=sys.stderr)


def cmd_tax_roll_certify(args: argparse.Namespace, store: CaseStore) -> int:
    """Record a certification on every listed, not yet certified charge (once), then
    write the certified list and its summary (projections.certification). Exit 1, with
    nothing recorded, when the list is not the one reviewed."""
    if problem := _check_output(args.output):
        print(f"abate tax-roll certify: {problem}; nothing was certified", file=sys.stderr)
        return 2
    args.as_of, args.known_at = None, None
    try:
        rows = _reviewed_list(store, args)
        runner = open_views(store)
        try:
            done = certify_listed(case_service(Settings.from_env(), store, runner), store, rows,
                                  municipality=args.municipality, tax_year=args.tax_year,
                                  county=args.county, actor=args.actor,
                                  now=dt.datetime.now(dt.timezone.utc))
        finally:
            runner.close()
    except ListChanged as exc:
        _print_list_changed(exc)
        return 1
    except NotCertifiable as exc:
        print(f"abate tax-roll certify: {exc.detail}", file=sys.stderr)
        return 1
    try:
        with tax_roll_listing(store, args) as listed:
            info = _hand_out(args, only_certified(listed), certified=True,
                             as_of=_today(args.municipality),
                             newly_certified=done.newly_certified, seal=done.seal)
    except OutputError as exc:
        print(f"abate tax-roll certify: {exc}; the {done.newly_certified} new certifications "
              "are recorded: run certify again with another --output to write the list "
              "(it certifies nothing twice)", file=sys.stderr)
        return 2
    print(f"certified {counted(done.newly_certified, 'new charge')}; "
          f"{info['charges']} on the "
          f"{args.tax_year} {args.county} County list, total {info['total']}; "
          f"sealed: {done.seal['line']}", file=sys.stderr)
    return 0


def cmd_tax_roll_reconcile(args: argparse.Namespace, store: CaseStore) -> int:
    _place(args.municipality)
    with reading(store, TaxRoll.name) as (view, conn):
        found = reconciliation(view, conn, municipality=args.municipality,
                               tax_year=args.tax_year, limit=args.limit, offset=args.offset)
    _print_json(localized(found, _zone(args.municipality)))
    return 0


# ---------------------------------------------------------------- repeat offenses, worklist, cases


def cmd_repeat_offenses(args: argparse.Namespace, store: CaseStore) -> int:
    place = _place(args.municipality)
    filters.day("as_of", args.as_of)
    filters.rule_family(place, args.rule_family)
    with reading(store, RepeatOffenses.name) as (view, conn):
        found = repeat_offenses(view, conn, place, rule_family=args.rule_family,
                                parcel=filters.parcel(place, args.parcel),
                                party=filters.one_line("party", args.party),
                                as_of=args.as_of or _today(args.municipality))
    _print_json(found)
    return 0


def cmd_worklist(args: argparse.Namespace, store: CaseStore) -> int:
    from cases.action_kinds import UNDATED
    from cases.rules.clock import end_of_local_day
    from cases.rules.places import place as named_place

    place = named_place(args.municipality)  # the deadline names its rules set, not the versions
    tz = _zone(args.municipality)
    as_of = worklist_moment(filters.day("as_of", args.as_of), tz,
                            dt.datetime.now(dt.timezone.utc))
    due_by = filters.day("due_by", args.due_by)
    with reading(store, Worklist.name) as (view, conn):
        found = worklist(view, conn, municipality=args.municipality, as_of=as_of,
                         overdue_only=args.overdue,
                         due_by=end_of_local_day(due_by, tz) if due_by else None,
                         action=filters.action(args.action),
                         deadline=filters.deadline(place, args.deadline),
                         limit=args.limit, offset=args.offset)
    actions, rows = found["actions"], found["deadlines"]
    if args.format == "table":
        _print_table(("due", "case", "to do", "who", "overdue", "rule"),
                     [("none" if a["action"] in UNDATED else table_time(a["due_at"], tz),
                       a["case_ref"], a["action"], a["by"],
                       "yes" if a["overdue"] else "", f"{a['rule']} v{a['rule_version']}")
                      for a in actions])
        print(shown_of(args.offset, len(actions), found["actions_total"], "action"))
        print()
        _print_table(("due", "case", "deadline", "overdue", "rule", "consequence"),
                     [(table_time(r["due_at"], tz), r["case_ref"], r["deadline"],
                       "yes" if r["overdue"] else "", f"{r['rule']} v{r['rule_version']}",
                       r["consequence"]) for r in rows])
        print(f"{shown_of(args.offset, len(rows), found['deadlines_total'], 'open deadline')}; "
              f"as of {table_time(as_of, tz)}")
        next_page_hint(found["next_offset"])
        return 0
    _print_json(localized(found, tz))
    return 0


def cmd_cases_list(args: argparse.Namespace, store: CaseStore) -> int:
    from cases.rules.places import place as named_place

    place = named_place(args.municipality)  # the counties and rule keys, not the versions
    filters.parcel_number(place, args.parcel)
    filters.rule_key(place, args.rule)
    parcel_part = filters.parcel_part(args.parcel_part)
    chosen = {"status": args.status, "parcel": args.parcel, "parcel_part": parcel_part,
              "owner": filters.one_line("owner", args.owner), "rule": args.rule}
    with reading(store, CaseSummaries.name) as (view, conn):
        found = view.page(conn, municipality=args.municipality, limit=args.limit,
                          offset=args.offset, **chosen)
    rows, tz = found.rows, _zone(args.municipality)
    if args.format == "table":
        _print_table(("case", "rule", "status", "parcel", "owner", "next deadline", "due",
                      "balance"),
                     [(r["case_ref"], r["rule"], r["status"], r["parcel_number"], r["owner_name"],
                       r["next_deadline"] or "-", table_time(r["next_deadline_at"], tz),
                       r["balance"]) for r in rows])
        print(shown_of(args.offset, len(rows), found.total, "case"))
        next_page_hint(found.next_offset)
        return 0
    _print_json({"municipality": args.municipality, "cases": localized(rows, tz),
                 "limit": found.limit, "offset": found.offset,
                 "next_offset": found.next_offset, "total": found.total})
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
                raise UsageError(f"no view {name!r} (known: {', '.join(runner.view_classes)})")
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

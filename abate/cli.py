"""The ``abate`` command: the door people use to reach their cases.

It reads the settings, opens the store, runs one command inside the failure guard
(cases/failures.py: one line and a documented exit code, never a traceback), and
prints JSON (or a short table) for people and scripts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from abate.arguments import command, page_options, policed
from abate.auto_seal import auto_seal
from abate.documents_cli import add_parsers as add_document_parsers
from abate.report_options import add_parsers
from abate.service_cli import add_parsers as add_service_parsers
from cases.errors import (AbateError, ConfigurationError, InputError, JournalError,
                          UnreadableLineError, UsageError)
from cases.failures import OneLineParser
from scheduler.options import timestamp

if TYPE_CHECKING:  # imported where used: ``abate --help`` starts without them (docs/benchmarks.md)
    from cases.store import CaseStore
    from projections.runner import ViewRunner


def _log() -> Any:
    import structlog

    return structlog.get_logger("abate")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


# ---------------------------------------------------------------- commands


def cmd_import(args: argparse.Namespace, store: CaseStore) -> int:
    """Apply a journal read as it streams (cases.journal_file), all or nothing."""
    from cases.journal_file import journal_lines
    from cases.settings import Settings
    from projections.bootstrap import case_service, open_views

    path = Path(args.file)
    try:
        file = path.open("rb")
    except OSError as exc:
        print(f"abate import: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    runner = open_views(store)
    try:
        service = case_service(Settings.from_env(), store, runner)
        lines = journal_lines(file, service.journal_max_line_bytes)
        outcome = service.import_journal(lines, now=_now())
    except UnreadableLineError as exc:
        print(f"abate import: {path}: {_where(exc)}; nothing was recorded", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"abate import: cannot read {path}: {exc.strerror}; nothing was recorded",
              file=sys.stderr)
        return 2
    except JournalError as exc:
        print(f"abate import: {path}: {_where(exc)}; nothing was recorded", file=sys.stderr)
        return 1
    finally:
        file.close()
        runner.close()
    _log().info("journal_imported", file=str(path), **outcome.as_dict())
    seal = auto_seal(store, outcome.events_recorded, f"automatic: import {path.name}")
    _print_json({"file": str(path), **outcome.as_dict(),
                 **({"seal": seal.line()} if seal else {})})
    return 0


def _where(exc: JournalError) -> str:
    """``line N: reason``, or for what is found only when the journal is saved (line 0)
    ``at the end of the journal: reason``."""
    return str(exc) if exc.line else f"at the end of the journal: {exc.reason}"


def cmd_case_show(args: argparse.Namespace, store: CaseStore) -> int:
    from cases import filters
    from cases.history import case_at, describe_case
    from cases.localtime import localized
    from cases.rules.places import place

    filters.instant("as_of", args.as_of)
    filters.instant("known_at", args.known_at)

    case, events = case_at(store, args.municipality, args.case_ref, as_of=args.as_of,
                           known_at=args.known_at)
    _print_json(localized(describe_case(case, events, as_of=args.as_of, known_at=args.known_at,
                                        window=(args.limit, args.offset)),
                          place(args.municipality).time_zone))
    return 0


def cmd_case_referral(args: argparse.Namespace, store: CaseStore) -> int:
    """The attorney's packet (the same as GET .../cases/REF/referral), as JSON."""
    from projections.bootstrap import open_views
    from cases.localtime import localized
    from cases.referral import referral_packet
    from cases.rules.catalog import default_catalog
    from projections.lookups import ProjectedRepeatOffenses

    runner = open_views(store)
    try:
        packet = referral_packet(store, default_catalog(), args.municipality, args.case_ref,
                                 prior=ProjectedRepeatOffenses(runner), now=_now())
    finally:
        runner.close()
    _print_json(localized(packet, default_catalog().municipality(args.municipality).time_zone))
    return 0


def cmd_verify(args: argparse.Namespace, store: CaseStore) -> int:
    """The events (chains, seals, snapshots; or against a kept seal) and then the views
    against what the events give (projections/view_check.py): exit 1 if either differs."""
    from abate.reports import counted, open_views
    from cases.localtime import localized, shared_zone
    from cases.rules.catalog import default_catalog
    from cases.seal_check import check_kept_seal, read_kept_seal
    from cases.verify import verify_store
    from projections.view_check import check_views

    tz = shared_zone(m.time_zone for m in default_catalog().municipalities.values())

    if args.seal is not None and not args.seal.strip():
        raise UsageError("--seal is empty: give the kept seal's file, its line or its digest")
    if args.seal:
        try:
            kept = read_kept_seal(args.seal)
        except InputError as exc:
            print(f"abate verify: {exc}", file=sys.stderr)
            return 2
        events_ok, report = check_kept_seal(store, kept)
        found = len(report.get("differences") or [])
        told = (f"the store does NOT match the kept seal ({found} differences located; the "
                "JSON report on stdout says what and where)")
    else:
        checked = verify_store(store)
        events_ok, report = checked.ok, checked.as_dict()
        first = checked.problems[0] if checked.problems else None
        told = first and (
            f"{counted(len(checked.problems), 'problem')} found; first: case {first.case} "
            f"position {first.position}: {first.problem} (the JSON report on stdout lists "
            "them all)")
    runner = open_views(store)
    try:
        views = check_views(store, runner)
    finally:
        runner.close()
    report["views"] = views.as_dict()
    report["ok"] = events_ok and views.ok
    _print_json(localized(report, tz))
    # A person at a terminal reads stderr first: one line, then the JSON.
    if not events_ok:
        also = "" if views.ok else "; " + (
            "the views were not compared with them" if views.not_checked
            else "the views differ from them too") + ' ("views" in the report)'
        print(f"abate verify: {told}{also}", file=sys.stderr)
    elif not views.ok:
        print(f"abate verify: {views.summary()} (\"views\" in the JSON report on stdout lists "
              "every difference)", file=sys.stderr)
    return 0 if events_ok and views.ok else 1


def cmd_seal(args: argparse.Namespace, store: CaseStore) -> int:
    """Record a seal over the whole log; print it (JSON and the line to keep)."""
    from cases.seals import seal_store

    if args.reindex:
        rows = store.integrity.reindex_sealed_cases()
        _print_json({"reindexed": {"seals": len(store.integrity.seal_fields()), "rows": rows}})
        return 0
    seal = seal_store(store, actor=args.actor, reason=args.reason)
    _print_json({**seal.as_dict(), "line": seal.line()})
    print(f"keep this line outside the database: {seal.line()}", file=sys.stderr)
    if args.output:  # its folder was checked before sealing (check_arguments)
        try:
            Path(args.output).write_text(json.dumps(seal.as_dict(), indent=2) + "\n",
                                         encoding="utf-8")
        except OSError as exc:
            raise ConfigurationError(
                f"cannot write {args.output}: {exc.strerror or exc}; the seal IS recorded "
                f"(seal {seal.seal_id}, the line above): keep that line; abate verify --seal "
                "takes that line as well as the file") from None
    return 0


def cmd_scheduler(args: argparse.Namespace, store: CaseStore | None) -> int:
    from cases.settings import Settings
    from scheduler.__main__ import run

    return run(args, Settings.from_env())


def cmd_rules(args: argparse.Namespace, store: CaseStore | None) -> int:
    from cases.rules.catalog import default_catalog
    from cases.rules.document import catalog_markdown

    catalog = default_catalog()
    if args.markdown:
        sys.stdout.write(catalog_markdown(catalog))
        return 0
    if args.rule:
        municipality, _, rule_id = args.rule.partition(":")
        rules = [r for r in catalog.municipality(municipality).rules if r.id == rule_id]
        if not rules:
            catalog.rule_in_force(args.rule, dt.date.max)  # raises with the known rules
        _print_json([r.model_dump(mode="json") for r in rules])
        return 0
    for municipality in catalog.municipalities.values():
        for rule in municipality.rules:
            print(f"{rule.key:28} v{rule.version} from {rule.effective_from}  {rule.title}")
    return 0


def cmd_demo(args: argparse.Namespace, store: CaseStore) -> int:
    """Load the demo journal (idempotent), pass due deadlines, print a summary; refuse a
    store that holds cases the demo did not open (events are never deleted)."""
    from abate.demo_store import demo_journal_path, describe_location, load_demo
    from abate.demo_store import refuse_other_cases
    from projections.bootstrap import open_views

    lines = demo_journal_path().read_text(encoding="utf-8").splitlines()
    if not args.into_nonempty:
        refuse_other_cases(store, lines)
    where = describe_location(store.database_url)
    runner = open_views(store)
    try:
        load_demo(store, runner, lines, _now())
        print(f"demo store: {where}")
        print_summary(runner)
    finally:
        runner.close()
    return 0


def print_summary(runner: ViewRunner) -> None:
    """Every case from the case-summaries view, one line each."""
    from zoneinfo import ZoneInfo
    
    from abate.reports import counted
    from cases.localtime import table_time
    from cases.rules.catalog import default_catalog
    from projections import CaseSummaries

    catalog = default_catalog()
    runner.catch_up()
    view = runner.active(CaseSummaries.name)
    rows = []
    with runner.engine.connect() as conn:
        for municipality in catalog.municipalities:
            tz = ZoneInfo(catalog.municipality(municipality).time_zone)
            for case in view.search(conn, municipality=municipality):
                due = case["next_deadline_at"]
                rows.append((case["municipality"], case["case_ref"], case["rule"],
                             case["status"], case["next_deadline"] or "-",
                             table_time(due, tz), case["balance"]))
    rows.sort()
    header = ("municipality", "case", "rule", "status", "next deadline", "due", "balance")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    print(counted(len(rows), "case"))


# ---------------------------------------------------------------- parser

ABOUT = """\
Abate keeps a village's code-enforcement cases (snow not cleared, a sidewalk obstructed,
dumping, a blocked ditch, a property not maintained). Every fact of a case is recorded once
and never changed; every deadline and amount names the ordinance rule it comes from."""

# Who uses which command; ``abate --help`` lists them in these groups. A command that is
# in no group (a new one) is listed under "Other commands" with its own help line.
GROUPS: dict[str, dict[str, str]] = {
    "For clerks and officers": {
        "import": "record a journal of commands (JSON lines), all or nothing",
        "case": "one case and its whole history (case show), or the attorney's referral "
                "packet (case referral)",
        "cases": "find cases by status, parcel, owner or rule (cases list)",
        "worklist": "what is due or overdue, earliest first",
        "repeat-offenses": "prior violations that make a new one a repeat offense",
        "tax-roll": "list the charges for the county tax roll, certify them, reconcile",
        "document": "notices, bills and referral packets as PDF: issue (recorded with its "
                    "digest), list, get",
    },
    "For auditors": {
        "verify": "check that no recorded fact was altered, removed or reordered, "
                  "or check the store against a seal kept outside it (--seal); and that "
                  "every view holds what the events give",
        "seal": "record a seal over everything recorded so far, to keep outside the database",
        "rules": "the ordinance rules Abate applies, with their citations",
    },
    "For operators": {
        "scheduler": "record deadlines as they fall due (a service, or --once from cron)",
        "projections": "the views behind the lists and reports: status, rebuild, run",
        "demo": "load the demo cases into an empty store, to try Abate",
        "serve": "serve the HTTP API on the configured database",
        "users": "accounts of the HTTP API: add or rotate (prints the token once), revoke, list",
    },
}

CLOSING = """\
Run "abate COMMAND --help" for what a command does and its options.
The store is ABATE_DATABASE_URL (default sqlite:///var/abate.sqlite3) or --database-url.
Exit status: 0 done; 1 refused or a problem found; 2 usage, unreadable input or settings.
Documentation: README.md and docs/ (commands.md the journal, operations.md running Abate)."""


def _grouped_commands(sub: argparse._SubParsersAction) -> str:
    """The command list for ``abate --help``, in GROUPS, then any command no group names."""
    helps = {action.dest: action.help or "" for action in sub._choices_actions}
    grouped = [(title, list(commands.items())) for title, commands in GROUPS.items()]
    named = {name for commands in GROUPS.values() for name in commands}
    others = [(name, text) for name, text in helps.items() if name not in named]
    if others:
        grouped.append(("Other commands", others))
    width = max(len(name) for name in sub.choices) + 2
    blocks = []
    for title, commands in grouped:
        lines = [f"  {name:{width}}{text}" for name, text in commands if name in sub.choices]
        blocks.append(f"{title}:\n" + "\n".join(lines))
    return "\n\n".join(blocks)


def _describe_subcommands(parser: argparse.ArgumentParser, summaries: dict[str, str]) -> None:
    """Each command's ``--help`` opens with what it does for a person (its summary line)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                child = action.choices[choice.dest]
                summary = summaries.get(choice.dest) or choice.help
                if summary and not child.description:
                    child.description = summary[0].upper() + summary[1:] + "."
                if choice.dest in summaries:
                    choice.help = summaries[choice.dest]
                child.set_defaults(command_prog=child.prog)  # "abate tax-roll certify"
                _describe_subcommands(child, {})


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="abate", usage="abate [--database-url URL] COMMAND ...", description=ABOUT,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", metavar="URL", help="the store for this command "
                        "(overrides ABATE_DATABASE_URL)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", prog="abate")

    p = sub.add_parser("import", help="apply a command journal (JSON lines), all or nothing",
                       epilog="The journal format: docs/commands.md. Exit status 1 names the "
                              "refused line; nothing from the journal is recorded then.")
    p.add_argument("file", help="the journal, one JSON command per line")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("case", help="read one case")
    case_sub = p.add_subparsers(dest="case_command", required=True, metavar="COMMAND")
    show = case_sub.add_parser("show", help="a case with its history (a page of its events), "
                                           "as JSON")
    show.add_argument("--municipality", required=True, help="e.g. belleville")
    show.add_argument("case_ref", help="the case reference, e.g. BV-2026-001")
    show.add_argument("--as-of", type=timestamp, help="business time: facts that had happened by then")
    show.add_argument("--known-at", type=timestamp, help="system time: what had been recorded by then")
    page_options(show, "events")
    show.set_defaults(func=cmd_case_show)
    packet = case_sub.add_parser(
        "referral", help="the attorney referral packet of a case, as JSON",
        description="Parties, parcel and site, the ordinance cited, every fact in order, each "
                    "deadline met or missed, prior violations in the look-back window, "
                    "citations with their separate offenses and the forfeiture range "
                    "(docs/api.md, 'The referral packet').")
    packet.add_argument("--municipality", required=True, help="e.g. belleville")
    packet.add_argument("case_ref", help="the case reference, e.g. BV-2026-001")
    packet.set_defaults(func=cmd_case_referral)

    p = sub.add_parser("verify", help="check the cases' chains, the seals and the snapshots; "
                       "or, with --seal, the store against a seal kept outside it; then every "
                       "view against what the events give",
                       epilog="Exit status 1 when anything differs; a view that differs is "
                              "repaired by `abate projections rebuild VIEW`.")
    p.add_argument("--seal", metavar="FILE_OR_DIGEST",
                   help="a seal kept elsewhere: the JSON file `abate seal --output` wrote, "
                        "the printed abate-seal line, or its digest")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("seal", help="record a seal over the whole log and print it to keep")
    p.add_argument("--actor", default="clerk", type=policed("Actor", "who seals"),
                   help="who seals (default: clerk)")
    p.add_argument("--reason", default="manual", help="why (default: manual)")
    p.add_argument("--output", metavar="FILE", help="also write the seal as JSON to this file")
    p.add_argument("--reindex", action="store_true",
                   help="record no seal: rewrite the index of sealed cases (what reading one "
                        "case asks) from the seals' leaves, after `abate verify` found it altered")
    p.set_defaults(func=cmd_seal)

    from scheduler.options import DESCRIPTION as SCHEDULER_DESCRIPTION
    from scheduler.options import add_options

    p = sub.add_parser("scheduler", help="the deadline engine", description=SCHEDULER_DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(p)
    p.set_defaults(func=cmd_scheduler, no_store=True)

    p = sub.add_parser("rules", help="list the rules catalog, or show one rule")
    p.add_argument("rule", nargs="?", help="one rule as MUNICIPALITY:SECTION, e.g. belleville:9.09")
    p.add_argument("--markdown", action="store_true", help="the whole catalog as Markdown (docs/rules.md)")
    p.set_defaults(func=cmd_rules, no_store=True)

    p = sub.add_parser(
        "demo", help="load the demo journal and print the case summary",
        epilog="Demo cases are the ones opened by the demo journal's open_case lines (command "
               "ids demo-0001 ...; abate/demo/demo.jsonl). The demo refuses a store holding "
               "any other case, since events are never removed; loading it twice records "
               "nothing new.")
    p.add_argument("--into-nonempty", action="store_true",
                   help="load the demo even into a store that holds other cases")
    p.set_defaults(func=cmd_demo)

    add_parsers(sub, timestamp)
    add_document_parsers(sub, timestamp)
    add_service_parsers(sub)

    parser.epilog = _grouped_commands(sub) + "\n\n" + CLOSING
    _describe_subcommands(parser, {name: text for commands in GROUPS.values()
                                   for name, text in commands.items()})
    sub.help = argparse.SUPPRESS  # the grouped list above replaces argparse's flat one
    return parser


def check_arguments(args: argparse.Namespace) -> None:
    """Checks every command shares, before anything is opened or recorded: the municipality
    and county a command names exist in the rules catalog (a municipality or county typed
    in any case is taken as the catalog spells it: `Belleville`, `dane`), and an output
    file's folder exists."""
    from cases import filters
    from cases.failures import check_output_folder
    from cases.rules.places import known_place, place as named_place

    municipality = getattr(args, "municipality", None)
    county = getattr(args, "county", None)
    if municipality is not None:
        if known_place(municipality.lower()):
            municipality = args.municipality = municipality.lower()
        place = named_place(municipality)
        if county is not None:
            args.county = filters.county(place, county)
    elif county is not None:
        raise UsageError("--county needs --municipality")
    check_output_folder(getattr(args, "output", None))


# Commands that may start a new store; every other command reads (or adds to) one that exists.
CREATES_STORE = frozenset({"import", "demo"})
# Commands that only read: they get a StoreReader (cases/store_reader.py), not the
# eventsourcing Application, whose set-up cost them most of their start (docs/benchmarks.md).
READS_ONLY = frozenset({"cmd_cases_list", "cmd_case_show", "cmd_worklist",
                        "cmd_repeat_offenses", "cmd_tax_roll_export"})


def check_store_exists(url: str) -> None:
    """A command that reads never creates an empty SQLite store: run from another folder,
    the default ``var/abate.sqlite3`` would otherwise be a new file answering "0 cases"."""
    scheme, _, rest = url.partition(":///")
    if scheme.startswith("sqlite") and rest:
        path = Path(rest.split("?", 1)[0])
        if path.parent.is_dir() and not path.exists():  # a missing folder: store_env says so
            raise UsageError(
                f"no Abate store at {path.resolve()} (ABATE_DATABASE_URL or --database-url "
                "chooses the store; `abate import` or `abate demo` starts a new one)")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # --help and usage errors end here, before the imports below
    from cases.failures import ExitCode, failures_reported
    from cases.logging import configure_logging
    from cases.settings import Settings

    with failures_reported(getattr(args, "command_prog", "abate")) as reporter:
        settings = Settings.from_env()
        reads_only = getattr(getattr(args, "func", None), "__name__", "") in READS_ONLY
        configure_logging(settings.log_format, settings.log_level, lazy=reads_only)
        url = settings.database_url_for(args.database_url)
        reporter.database_url = url
        check_arguments(args)
        store = None
        try:
            if not getattr(args, "no_store", False):
                if args.command not in CREATES_STORE:
                    check_store_exists(url)
                if reads_only:
                    from cases.store_reader import open_reader

                    store = open_reader(url, extra_env=settings.store_env())
                if store is None:
                    from projections.bootstrap import open_store

                    store = open_store(settings, url)
            reporter.code = ExitCode(args.func(args, store))
            sys.stdout.flush()  # a reader that went away is noticed here, inside the guard
        finally:
            if store is not None:
                store.close()
    return reporter.code


if __name__ == "__main__":
    sys.exit(main())

"""The ``abate`` command: the one thin composition root.

It reads settings, builds the store and the service, takes ``now`` from the
clock, and prints JSON (or a short table) for people and scripts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import structlog

from abate.journal_file import journal_lines
from abate.reports import add_parsers, open_views, service_with_views
from cases.errors import AbateError, JournalError, UnreadableLineError
from cases.history import case_at, describe_case
from cases.logging import configure_logging
from cases.rules.catalog import default_catalog
from cases.rules.document import catalog_markdown
from cases.settings import Settings
from cases.store import CaseStore
from cases.verify import verify_store
from projections import CaseSummaries
from projections.runner import ViewRunner
from scheduler.jobs import sweep_deadlines

log = structlog.get_logger("abate")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _timestamp(value: str) -> dt.datetime:
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an ISO 8601 timestamp (e.g. 2026-01-15T09:00:00-06:00)") from None
    if parsed.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{value!r} needs a UTC offset (e.g. -06:00)")
    return parsed


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def demo_journal_path() -> Path:
    return Path(str(resources.files("abate") / "demo" / "demo.jsonl"))


# ---------------------------------------------------------------- commands


def cmd_import(args: argparse.Namespace, store: CaseStore) -> int:
    """Apply a journal read as it streams (abate.journal_file), all or nothing."""
    path = Path(args.file)
    try:
        file = path.open("rb")
    except OSError as exc:
        print(f"abate import: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    runner = open_views(store)
    try:
        service = service_with_views(store, runner)
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
    log.info("journal_imported", file=str(path), **outcome.as_dict())
    _print_json({"file": str(path), **outcome.as_dict()})
    return 0


def _where(exc: JournalError) -> str:
    """``line N: reason``, or for what is found only when the journal is saved (line 0)
    ``at the end of the journal: reason``."""
    return str(exc) if exc.line else f"at the end of the journal: {exc.reason}"


def cmd_case_show(args: argparse.Namespace, store: CaseStore) -> int:
    case, events = case_at(store, args.municipality, args.case_ref, as_of=args.as_of,
                           known_at=args.known_at)
    _print_json(describe_case(case, events, as_of=args.as_of, known_at=args.known_at))
    return 0


def cmd_verify(args: argparse.Namespace, store: CaseStore) -> int:
    cases, events, problems = verify_store(store)
    _print_json({"cases_checked": cases, "events_checked": events,
                 "ok": not problems, "problems": [p.as_dict() for p in problems]})
    return 0 if not problems else 1


def cmd_scheduler(args: argparse.Namespace, store: CaseStore | None) -> int:
    from scheduler.__main__ import main as scheduler_main

    forwarded = list(args.scheduler_args)
    if args.database_url:
        forwarded += ["--database-url", args.database_url]
    return scheduler_main(forwarded)


def cmd_rules(args: argparse.Namespace, store: CaseStore | None) -> int:
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
    """Load the demo journal (idempotent), pass due deadlines, print a summary."""
    runner = open_views(store)
    try:
        service = service_with_views(store, runner)
        now = _now()
        path = demo_journal_path()
        outcome = service.import_journal(path.read_text(encoding="utf-8").splitlines(), now=now)
        swept = sweep_deadlines(service, now)
        log.info("demo_loaded", database=store.database_url, journal=outcome.as_dict(),
                 deadlines_passed_since=swept.deadlines_passed)
        print_summary(runner)
    finally:
        runner.close()
    return 0


def print_summary(runner: ViewRunner) -> None:
    """Every case from the case-summaries view, one line each."""
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
                             dt.datetime.fromisoformat(due).astimezone(tz).strftime("%Y-%m-%d %H:%M")
                             if due else "-", case["balance"]))
    rows.sort()
    header = ("municipality", "case", "rule", "status", "next deadline", "due", "balance")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    print(f"{len(rows)} cases")


# ---------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="abate", description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="overrides ABATE_DATABASE_URL")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("import", help="apply a command journal (JSON lines), all or nothing")
    p.add_argument("file")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("case", help="read cases")
    case_sub = p.add_subparsers(dest="case_command", required=True)
    show = case_sub.add_parser("show", help="a case with its full history, as JSON")
    show.add_argument("--municipality", required=True)
    show.add_argument("case_ref")
    show.add_argument("--as-of", type=_timestamp, help="business time: facts that had happened by then")
    show.add_argument("--known-at", type=_timestamp, help="system time: what had been recorded by then")
    show.set_defaults(func=cmd_case_show)

    p = sub.add_parser("verify", help="check every case's hash chain")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("scheduler", help="the deadline engine (python -m scheduler)",
                       add_help=False)
    p.add_argument("scheduler_args", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_scheduler, no_store=True)

    p = sub.add_parser("rules", help="list the rules catalog, or show one rule")
    p.add_argument("rule", nargs="?", help="e.g. belleville:9.09")
    p.add_argument("--markdown", action="store_true", help="the whole catalog as Markdown (docs/rules.md)")
    p.set_defaults(func=cmd_rules, no_store=True)

    p = sub.add_parser("demo", help="load the demo journal and print the case summary")
    p.set_defaults(func=cmd_demo)

    add_parsers(sub, _timestamp)

    p = sub.add_parser("bench", help="benchmarks (prints figures; not a test)")
    p.add_argument("--cases", type=int, default=300)
    p.add_argument("--long-case-events", type=int, default=5000)
    p.add_argument("--postgres-url", help="also run on this PostgreSQL URL")
    p.add_argument("--catch-up-cases", type=int, default=5000,
                   help="cases in the log the projection catch-up is measured on")
    p.add_argument("--tax-roll-sizes", type=_int_list, default=(1000, 10000),
                   help="comma-separated case counts for the tax-roll exports, e.g. 1000,10000,100000")
    p.add_argument("--sweep-sizes", type=_int_list, default=(),
                   help="also time the deadline sweep with these numbers of open cases "
                        "(e.g. 10000,100000; SQLite; takes minutes)")
    p.add_argument("--only", type=_name_list, default=None,
                   help="comma-separated sections: lifecycle,long-case,catch-up,tax-roll,journal "
                        "(default all)")
    p.add_argument("--journal-lines", type=_int_list, default=(20_000,),
                   help="journal sizes in lines for the import benchmark, e.g. 100000,1000000")
    p.add_argument("--profile", action="store_true",
                   help="also print a cProfile of each view's catch-up")
    p.add_argument("--no-sqlite", dest="sqlite", action="store_false",
                   help="run on PostgreSQL only (needs a PostgreSQL URL)")
    p.set_defaults(func=cmd_bench, no_store=True)
    return parser


def _int_list(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}") from None


def _name_list(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def cmd_bench(args: argparse.Namespace, store: CaseStore | None) -> int:
    from abate.bench import SECTIONS, run_benchmarks

    run_benchmarks(cases=args.cases, long_case_events=args.long_case_events,
                   postgres_url=args.postgres_url, catch_up_cases=args.catch_up_cases,
                   tax_roll_sizes=args.tax_roll_sizes, only=args.only or SECTIONS,
                   profile=args.profile, sqlite=args.sqlite, journal_lines=args.journal_lines)
    if args.sweep_sizes:
        from abate.bench_sweep import run_sweep_benchmark

        run_sweep_benchmark(list(args.sweep_sizes))
    return 0


def main(argv: list[str] | None = None) -> int:
    settings = Settings.from_env()
    configure_logging(settings.log_format)
    args = build_parser().parse_args(argv)
    store = None
    try:
        if not getattr(args, "no_store", False):
            store = CaseStore(args.database_url or settings.database_url,
                              extra_env=settings.store_env())
        return args.func(args, store)
    except AbateError as exc:
        print(f"abate {args.command}: {exc}", file=sys.stderr)
        return 1
    finally:
        if store is not None:
            store.close()


if __name__ == "__main__":
    sys.exit(main())

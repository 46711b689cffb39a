"""The benchmarks' command line: ``python -m bench [options]`` from the repository root.

The options pick the sections and their sizes (docs/benchmarks.md); every temporary store
of a run lives in one temporary folder, removed at the end, also when the run is stopped.
Failures end as the product's commands end (cases/failures.py): one line, an exit status.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
from typing import Any

from abate.arguments import positive
from cases.failures import ExitCode, OneLineParser

PROG = "python -m bench"

# Sections run only when asked for with --only (each has its own module).
EXTRA_SECTIONS = ("integrity", "http", "load")
# Sections with their own module that the default run includes.
OWN_SECTIONS = ("startup",)


def _int_list(text: str) -> tuple[int, ...]:
    values = tuple(positive(part.strip()) for part in text.split(",") if part.strip())
    if not values:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}")
    return values


def _section_list(text: str) -> tuple[str, ...]:
    from bench.sections import SECTIONS

    known = (*SECTIONS, *OWN_SECTIONS, *EXTRA_SECTIONS)
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown section {', '.join(unknown) or text!r} (known: {', '.join(known)})")
    return names


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog=PROG, description="Abate's benchmarks: measure speed on throw-away stores and "
                               "print figures (not a test).",
        epilog="The defaults finish in under a minute; docs/benchmarks.md gives the sizes of "
               "the published figures. Temporary stores are removed at the end, also when "
               "interrupted. Run from the repository root (bench/ is not installed).")
    p.add_argument("--cases", type=positive, default=100, help="lifecycles on each side")
    p.add_argument("--long-case-events", type=positive, default=1000,
                   help="events in the one long case that is loaded")
    p.add_argument("--postgres-url", help="also run on this PostgreSQL URL")
    p.add_argument("--catch-up-cases", type=positive, default=500,
                   help="cases in the log the projection catch-up is measured on")
    p.add_argument("--catch-up-pairs", type=positive, default=3,
                   help="(bare read, view) pairs per catch-up pass; the median ratio is printed")
    catch_up_passes = p.add_mutually_exclusive_group()
    catch_up_passes.add_argument(
        "--catch-up-together", action="store_true",
        help="time only all views together in the catch-up section (not each view alone): the "
             "pass the target is about, and a fifth of the time")
    catch_up_passes.add_argument(
        "--catch-up-breakdown", action="store_true",
        help="time all views together, all but each one, and the floor under them (a view "
             "that writes nothing), and print what each view costs")
    p.add_argument("--tax-roll-sizes", type=_int_list, default=(300,),
                   help="comma-separated case counts for the tax-roll exports, e.g. 1000,10000,100000")
    p.add_argument("--sweep-sizes", type=_int_list, default=(),
                   help="also time the deadline sweep with these numbers of open cases "
                        "(e.g. 10000,100000; SQLite; takes minutes)")
    p.add_argument("--stop-sizes", type=_int_list, default=(),
                   help="also time abate serve stopping on SIGTERM during its first deadline "
                        "sweep, with these numbers of due cases (e.g. 10000,100000; SQLite)")
    p.add_argument("--only", type=_section_list, default=None,
                   help="comma-separated sections: lifecycle,long-case,catch-up,tax-roll,journal,"
                        "import-scaling,startup,integrity,http,load (default all but integrity, http "
                        "and load)")
    p.add_argument("--integrity-cases", type=int, default=2000,
                   help="cases the integrity section builds (about 5.5 events each)")
    p.add_argument("--journal-lines", type=_int_list, default=(5_000,),
                   help="journal sizes in lines for the import benchmark, e.g. 100000,1000000")
    p.add_argument("--http-cases", type=positive, default=300,
                   help="with --only http: cases in the store the API is measured on")
    p.add_argument("--http-requests", type=positive, default=200,
                   help="with --only http: requests per operation, over HTTP and in process")
    p.add_argument("--http-concurrency", type=positive, default=4,
                   help="with --only http: requests in flight at a time (connections)")
    p.add_argument("--http-workers", type=positive, default=2,
                   help="with --only http: abate serve --workers on PostgreSQL (SQLite: 1)")
    p.add_argument("--load-cases", type=positive, default=1000,
                   help="with --only load: cases in the store the open-loop load runs on")
    p.add_argument("--load-rates", type=_int_list, default=(50, 100),
                   help="with --only load: comma-separated requests per second, e.g. 50,100,200")
    p.add_argument("--load-seconds", type=positive, default=20,
                   help="with --only load: seconds of load per rate and side (after 2 not timed)")
    p.add_argument("--load-workers", type=positive, default=2,
                   help="with --only load: abate serve --workers on PostgreSQL (SQLite: 1)")
    p.add_argument("--startup-runs", type=positive, default=10,
                   help="runs of each command in the start-up section (median printed)")
    p.add_argument("--scaling-cases", type=_int_list, default=(100, 1_000),
                   help="case counts for the import-scaling section, e.g. 1000,10000,100000")
    p.add_argument("--per-command-cases", type=positive, default=100,
                   help="cases of the journal also applied one command at a time "
                        "(import-scaling section), e.g. 10000")
    p.add_argument("--profile", action="store_true",
                   help="also print a cProfile of each view's catch-up")
    p.add_argument("--no-sqlite", dest="sqlite", action="store_false",
                   help="run on PostgreSQL only (needs a PostgreSQL URL)")
    return p


def run_sections(args: argparse.Namespace) -> None:
    """The sections ``args`` asks for, in the order of docs/benchmarks.md."""
    from bench.sections import SECTIONS, print_table, resolve_postgres_url, run_benchmarks

    only = tuple(args.only or (*SECTIONS, *OWN_SECTIONS))
    rest = tuple(name for name in only if name in SECTIONS)
    if rest:
        run_benchmarks(cases=args.cases, long_case_events=args.long_case_events,
                       postgres_url=args.postgres_url,
                       catch_up_cases=args.catch_up_cases,
                       catch_up_pairs=args.catch_up_pairs,
                       catch_up_passes=("breakdown" if args.catch_up_breakdown else
                                        "together" if args.catch_up_together else
                                        "each"),
                       tax_roll_sizes=args.tax_roll_sizes, only=rest,
                       profile=args.profile, sqlite=args.sqlite,
                       journal_lines=args.journal_lines,
                       scaling_cases=args.scaling_cases,
                       per_command_cases=args.per_command_cases)
    if "startup" in only:
        from bench.startup import startup_rows

        print(f"start-up: the installed command, {args.startup_runs} runs each, in "
              "turns ...", flush=True)
        rows = startup_rows(args.startup_runs, resolve_postgres_url(args.postgres_url),
                            sqlite=args.sqlite)
        print("\n0. Start-up of the installed command on a demo store (seconds: wall "
              "clock, and the child's CPU time; floors: what no command can go under)")
        print_table(rows, ("backend", "what", "median", "min", "max", "cpu", "target"),
                    text_columns=2)
    if "integrity" in only:
        from bench.integrity import run_integrity_benchmark

        run_integrity_benchmark(args.integrity_cases, postgres_url=args.postgres_url,
                                sqlite=args.sqlite)
    if "http" in only:
        from bench.http_api import run_http_benchmark

        run_http_benchmark(args.http_cases, args.http_requests, args.http_concurrency,
                           args.http_workers, postgres_url=args.postgres_url,
                           sqlite=args.sqlite)
    if "load" in only:
        from bench.open_loop import run_load_benchmark

        run_load_benchmark(args.load_cases, args.load_rates, args.load_seconds,
                           args.load_workers, postgres_url=args.postgres_url,
                           sqlite=args.sqlite)
    if args.sweep_sizes:
        from bench.sweep import run_sweep_benchmark

        run_sweep_benchmark(list(args.sweep_sizes))
    if args.stop_sizes:
        from bench.stop_time import run_stop_benchmark

        run_stop_benchmark(list(args.stop_sizes))


def run_in_temporary_folder(args: argparse.Namespace) -> int:
    """Run the sections inside one temporary folder that is removed at the end, also when
    stopped: SIGTERM becomes an interruption (the stores and PostgreSQL schemas are removed
    on the way out), and if that interruption is lost (a signal can land where Python
    ignores exceptions) the folder is removed and the process ends 30 s later anyway."""
    from cases.logging import get_logger

    with tempfile.TemporaryDirectory(prefix="abate-bench-") as root:
        def stop_now(signum: int, frame: Any) -> None:
            shutil.rmtree(root, ignore_errors=True)
            print(f"{PROG}: interrupted", file=sys.stderr, flush=True)
            os._exit(ExitCode.INTERRUPTED)

        def interrupted(signum: int, frame: Any) -> None:
            signal.signal(signal.SIGALRM, stop_now)
            signal.alarm(30)
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, interrupted)
        # An interruption that lands in a weakref callback or __del__ is "ignored" by Python,
        # which prints its traceback: log it instead (the alarm above still ends the run).
        sys.unraisablehook = lambda unraisable: get_logger("abate.bench").warning(
            "bench_interruption_ignored", where=repr(unraisable.object),
            error=type(unraisable.exc_value).__name__)
        tempfile.tempdir = root  # every temporary store of this run goes in here
        try:
            run_sections(args)
        finally:
            tempfile.tempdir = None
    return ExitCode.OK


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)  # --help and usage errors end here
    from cases.failures import failures_reported
    from cases.logging import configure_logging
    from cases.settings import Settings

    with failures_reported(PROG) as reporter:
        settings = Settings.from_env()
        configure_logging(settings.log_format, settings.log_level)
        from bench.sections import resolve_postgres_url

        reporter.database_url = resolve_postgres_url(args.postgres_url)  # blanked in messages
        reporter.code = ExitCode(run_in_temporary_folder(args))
        sys.stdout.flush()  # a reader that went away is noticed here, inside the guard
    return reporter.code

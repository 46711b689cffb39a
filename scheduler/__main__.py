"""The scheduler process: ``python -m scheduler`` or ``abate scheduler`` (same options).

Runs ``sweep_deadlines`` at start-up (catch-up after downtime) and then every
``ABATE_SWEEP_SECONDS``, in its own process (``scheduler/engine.py`` does the work; on the
embedded SQLite store ``abate serve`` runs it beside the API instead). With ``--once`` it runs
one sweep and exits (for cron); ``--now`` sets the sweep time.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from zoneinfo import ZoneInfo

import structlog
from apscheduler.schedulers.blocking import BlockingScheduler

from cases.errors import UsageError
from cases.failures import ExitCode, OneLineParser, Reporter, failures_reported
from cases.logging import configure_logging
from cases.rules.catalog import default_catalog
from cases.settings import Settings
from scheduler.engine import DeadlineEngine
from scheduler.options import DESCRIPTION, add_options

log = structlog.get_logger("abate.scheduler")


def build_parser() -> argparse.ArgumentParser:
    return add_options(OneLineParser(
        prog="python -m scheduler", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter))


def _stop_requested(signum: int, frame: object) -> None:
    raise SystemExit(ExitCode.OK)


def run(args: argparse.Namespace, settings: Settings, reporter: Reporter | None = None) -> int:
    """Sweep once (``--once``) or until stopped, with parsed options."""
    if args.now and not args.once:
        raise UsageError("--now only goes with --once")
    if args.municipality:
        default_catalog().place(args.municipality)
    url = settings.database_url_for(getattr(args, "database_url", None))
    if reporter is not None:
        reporter.database_url = url
    engine = DeadlineEngine(settings, url, args.municipality)
    try:
        if args.once:
            engine.sweep(args.now)
            return ExitCode.OK
        scheduler = BlockingScheduler(timezone=ZoneInfo(settings.time_zone))
        engine.schedule_on(scheduler)
        log.info("scheduler_started", every_seconds=settings.sweep_seconds,
                 time_zone=settings.time_zone, pid=os.getpid())
        # SIGTERM (systemd, a container, kill) stops it as Ctrl-C does: the sweep under way
        # ends after its batch, the store closes, and the exit status says it was asked to stop.
        signal.signal(signal.SIGTERM, _stop_requested)
        try:
            scheduler.start()
        except (KeyboardInterrupt, SystemExit):
            engine.stop(scheduler)
            log.info("scheduler_stopped")
        return ExitCode.OK
    finally:
        engine.close()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with failures_reported("python -m scheduler") as reporter:
        settings = Settings.from_env()
        configure_logging(settings.log_format, settings.log_level)
        reporter.code = run(args, settings, reporter)
    return reporter.code


if __name__ == "__main__":
    sys.exit(main())

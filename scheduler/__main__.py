"""The scheduler process: ``python -m scheduler`` or ``abate scheduler`` (same options).

Runs ``sweep_deadlines`` at start-up (catch-up after downtime) and then every
``ABATE_SWEEP_SECONDS``, in its own process, never inside web workers. With
``--once`` it runs one sweep and exits (for cron); ``--now`` sets the sweep time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import signal
import sys
from zoneinfo import ZoneInfo

import structlog
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.interval import IntervalTrigger

from cases.application import SCHEDULER_ACTOR, CaseService
from cases.errors import UsageError
from cases.failures import ExitCode, Reporter, failures_reported
from cases.logging import configure_logging
from cases.rules.catalog import default_catalog
from cases.seals import seal_store
from cases.settings import Settings
from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.lookups import ProjectedDueDeadlines, ProjectedRepeatOffenses
from projections.runner import ViewRunner
from scheduler.jobs import sweep_deadlines
from scheduler.options import DESCRIPTION, add_options

log = structlog.get_logger("abate.scheduler")


def build_parser() -> argparse.ArgumentParser:
    return add_options(argparse.ArgumentParser(
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
    store = CaseStore(url, extra_env=settings.store_env())
    runner = ViewRunner(store, ALL_VIEWS, schema=settings.database_schema)
    service = CaseService(store, repeat_offenses=ProjectedRepeatOffenses(runner),
                          due_deadlines=ProjectedDueDeadlines(runner),
                          future_tolerance=settings.future_tolerance)

    def sweep(until: dt.datetime | None = None) -> None:
        now = dt.datetime.now(dt.timezone.utc)  # recorded time: always the real clock
        summary = sweep_deadlines(service, now, until=until or now,
                                  municipality=args.municipality)
        if summary.events_recorded:  # keep the unsealed tail small (docs/operations.md)
            seal_store(store, actor=SCHEDULER_ACTOR, reason="automatic: deadline sweep")

    try:
        if args.once:
            sweep(args.now)
            return ExitCode.OK
        scheduler = BlockingScheduler(timezone=ZoneInfo(settings.time_zone))
        scheduler.add_job(sweep, IntervalTrigger(seconds=settings.sweep_seconds),
                          id="sweep_deadlines", max_instances=1, coalesce=True,
                          next_run_time=dt.datetime.now(ZoneInfo(settings.time_zone)))
        log.info("scheduler_started", every_seconds=settings.sweep_seconds,
                 time_zone=settings.time_zone, pid=os.getpid())
        # SIGTERM (systemd, a container, kill) stops it as Ctrl-C does: the sweep under way
        # finishes its case, the store closes, and the exit status says it was asked to stop.
        signal.signal(signal.SIGTERM, _stop_requested)
        try:
            scheduler.start()
        except (KeyboardInterrupt, SystemExit):
            log.info("scheduler_stopped")
        return ExitCode.OK
    finally:
        runner.close()
        store.close()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with failures_reported("python -m scheduler") as reporter:
        settings = Settings.from_env()
        configure_logging(settings.log_format, settings.log_level)
        reporter.code = run(args, settings, reporter)
    return reporter.code


if __name__ == "__main__":
    sys.exit(main())

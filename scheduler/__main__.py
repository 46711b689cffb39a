"""The scheduler process: ``python -m scheduler`` (or ``abate scheduler``).

Runs ``sweep_deadlines`` at start-up (catch-up after downtime) and then every
``ABATE_SWEEP_SECONDS``, in its own process, never inside web workers. With
``--once`` it runs one sweep and exits (for cron); ``--now`` sets the sweep time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from zoneinfo import ZoneInfo

import structlog
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.interval import IntervalTrigger

from cases.application import SCHEDULER_ACTOR, CaseService
from cases.logging import configure_logging
from cases.seals import seal_store
from cases.settings import Settings
from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.lookups import ProjectedDueDeadlines, ProjectedRepeatOffenses
from projections.runner import ViewRunner
from scheduler.jobs import sweep_deadlines

log = structlog.get_logger("abate.scheduler")


def _timestamp(value: str) -> dt.datetime:
    parsed = dt.datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{value!r} needs a UTC offset (e.g. -06:00)")
    return parsed


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="abate scheduler", description=__doc__.splitlines()[0])
    parser.add_argument("--once", action="store_true", help="run one sweep and exit")
    parser.add_argument("--now", type=_timestamp, help="sweep as of this time (with --once)")
    parser.add_argument("--municipality", help="only this municipality's cases")
    parser.add_argument("--database-url", help="overrides ABATE_DATABASE_URL")
    return parser


def main(argv: list[str] | None = None) -> int:
    settings = Settings.from_env()
    configure_logging(settings.log_format)
    args = build_parser().parse_args(argv)
    if args.now and not args.once:
        print("abate scheduler: --now only goes with --once", file=sys.stderr)
        return 2
    store = CaseStore(args.database_url or settings.database_url,
                      extra_env=settings.store_env())
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
            return 0
        scheduler = BlockingScheduler(timezone=ZoneInfo(settings.time_zone))
        scheduler.add_job(sweep, IntervalTrigger(seconds=settings.sweep_seconds),
                          id="sweep_deadlines", max_instances=1, coalesce=True,
                          next_run_time=dt.datetime.now(ZoneInfo(settings.time_zone)))
        log.info("scheduler_started", every_seconds=settings.sweep_seconds,
                 time_zone=settings.time_zone, pid=os.getpid())
        try:
            scheduler.start()
        except (KeyboardInterrupt, SystemExit):
            log.info("scheduler_stopped")
        return 0
    finally:
        runner.close()
        store.close()


if __name__ == "__main__":
    sys.exit(main())

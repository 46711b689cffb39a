"""The scheduler's options, shared by ``abate scheduler`` and ``python -m scheduler``; a
module of its own so that building the command line imports none of the scheduler."""

from __future__ import annotations

import argparse
import datetime as dt

from cases.instant_bounds import EARLIEST, END, FIRST_DAY, LAST_DAY


def timestamp(value: str) -> dt.datetime:
    """An ISO 8601 time with its UTC offset (shared with the ``abate`` command line)."""
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an ISO 8601 timestamp (e.g. 2026-01-15T09:00:00-06:00)") from None
    if parsed.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{value!r} needs a UTC offset (e.g. -06:00)")
    if not EARLIEST <= parsed < END:
        raise argparse.ArgumentTypeError(f"{value!r} is outside the times Abate accepts "
                                         f"({FIRST_DAY} to {LAST_DAY})")
    return parsed


DESCRIPTION = """\
Records every deadline as it falls due (cure periods, bill due dates, appeal windows,
tax-roll eligibility), each at its own time, with the rule that sets it. Without --once it
sweeps now and then every ABATE_SWEEP_SECONDS until stopped (Ctrl-C or SIGTERM); with --once
it sweeps once and exits, for cron. Steps that need a person stay on the worklist."""


def add_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The scheduler's options: one definition for ``abate scheduler`` and ``python -m scheduler``."""
    parser.add_argument("--once", action="store_true", help="run one sweep and exit (for cron)")
    parser.add_argument("--now", type=timestamp, metavar="TIMESTAMP",
                        help="with --once: sweep as of this earlier time, e.g. "
                             "2026-03-01T07:00:00-06:00 (never later than the real clock)")
    parser.add_argument("--municipality", help="only this municipality's cases, e.g. belleville")
    parser.add_argument("--database-url", default=argparse.SUPPRESS,
                        help="overrides ABATE_DATABASE_URL")
    return parser

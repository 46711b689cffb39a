"""A clerk at work for the sweep test: records an inspection on one of the given cases
every ``INTERVAL`` seconds, round and round, until the stop file appears.

    python -m tests.clerk_worker DATABASE_URL SCHEMA|- CASE_PREFIX CASES INTERVAL STOP_FILE

Each inspection's business time is 2026-10-02 plus one second per command, so it stays
before the cases' cure deadlines (2026-10-04 10:00): the clerk never passes one itself.
Prints one line per command recorded (``recorded N``) or refused by a conflict
(``conflict N``), and ``done`` at the end.
"""

import datetime as dt
import itertools
import sys
import time
from pathlib import Path

from cases.application import CaseService
from cases.commands import parse_command
from cases.errors import ConcurrentChangeError
from cases.store import CaseStore

START = dt.datetime(2026, 10, 2, tzinfo=dt.timezone(dt.timedelta(hours=-5)))


def main() -> None:
    url, schema, prefix, cases, interval, stop = sys.argv[1:7]
    store = CaseStore(url, extra_env={"SQLALCHEMY_SCHEMA": schema} if schema != "-" else {})
    service = CaseService(store)
    stop_file = Path(stop)
    try:
        for number in itertools.count():
            if stop_file.exists():
                break
            ref = f"{prefix}{number % int(cases):03d}"
            command = parse_command({
                "command": "record_inspection", "municipality": "belleville", "case_ref": ref,
                "at": (START + dt.timedelta(seconds=number)).isoformat(), "actor": "clerk",
                "findings": f"visit {number}"})
            try:
                service.handle(command, dt.datetime.now(dt.timezone.utc))
                print(f"recorded {number}", flush=True)
            except ConcurrentChangeError:
                print(f"conflict {number}", flush=True)
            time.sleep(float(interval))
    finally:
        store.close()
    print("done", flush=True)


if __name__ == "__main__":
    main()

"""A projection process for the crash test: catches up in small pages, saying so after each
batch (``PAGES_PER_BATCH`` pages committed together).

    python -m tests.projection_worker DATABASE_URL SCHEMA|- PAGE_SIZE
"""

import sys
import time

from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.runner import ViewRunner


def main() -> None:
    url, schema, page_size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    schema = None if schema == "-" else schema
    store = CaseStore(url, extra_env={"SQLALCHEMY_SCHEMA": schema} if schema else {})
    runner = ViewRunner(store, ALL_VIEWS, schema=schema, page_size=page_size)
    batches = 0

    def report(count: int) -> None:
        nonlocal batches
        batches += 1
        print(f"batch {batches} {count}", flush=True)
        time.sleep(0.05)

    runner.catch_up(progress=report)
    print("done", flush=True)


if __name__ == "__main__":
    main()

"""Start-up under concurrency and clean-up after a killed rebuild, through the installed command.

Several processes starting together on a new database create the schema once and all
succeed; a rebuild killed half-way leaves nothing behind after the next start, and a rebuild
still running in another process is left alone.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from cases.application import CaseService
from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.runner import ViewRunner
from tests.builders import CaseLines
from tests.conftest import NOW

ROOT = Path(__file__).resolve().parent.parent
ABATE = str(Path(sys.executable).with_name("abate"))


def abate_env(database) -> dict[str, str]:
    url, _extra, schema = database
    env = {**os.environ, "ABATE_DATABASE_URL": url, "ABATE_LOG_FORMAT": "json"}
    env.pop("ABATE_DATABASE_SCHEMA", None)
    if schema:
        env["ABATE_DATABASE_SCHEMA"] = schema
    return env


def table_names(database) -> list[str]:
    url, _extra, schema = database
    engine = sa.create_engine(url)
    try:
        return sa.inspect(engine).get_table_names(schema=schema)
    finally:
        engine.dispose()


def positions(database) -> list[tuple]:
    url, _extra, schema = database
    engine = sa.create_engine(url)
    prefix = f'"{schema}".' if schema else ""
    try:
        with engine.connect() as conn:
            return sorted(tuple(r) for r in conn.execute(sa.text(
                f"select view, generation, active from {prefix}abate_view_positions")))
    finally:
        engine.dispose()


# ---------------------------------------------------------------- concurrent first start


@pytest.mark.parametrize("command", [
    ["cases", "list", "--municipality", "belleville"],
    ["projections", "status"],
])
def test_eight_processes_starting_together_on_a_new_database_all_succeed(database, command):
    env = abate_env(database)
    processes = [subprocess.Popen([ABATE, *command], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(8)]
    outcomes = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in processes]
    for process in processes:
        process.stdout.close()
        process.stderr.close()
    failed = [(rc, err[-2000:]) for rc, _out, err in outcomes if rc != 0]
    assert not failed, failed
    # The schema exists once: one generation per view, every table once.
    assert positions(database) == [(name, 1, True) for name in sorted(v.name for v in ALL_VIEWS)]
    tables = table_names(database)
    assert len(tables) == len(set(tables))
    assert not [t for t in tables if t.startswith("abate_") and t.endswith("_g2")]

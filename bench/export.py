"""A full tax-roll list at scale (issue 11, item 3): the list streamed in-process (as rows,
what an export streams), the CSV written to a file in-process (with its totals and digest, as
the export takes them), and ``abate tax-roll export --output`` in a child process,
beside a bare read of as many rows with SQLAlchemy Core written by ``csv.writer`` (no
neutralising, no arithmetic, no ordering by list rules: the floor any export stands on).
Prints figures and ratios; asserts nothing about time."""

from __future__ import annotations

import csv
import datetime as dt
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from bench.journal_import import measured
from cases.rules.catalog import default_catalog
from projections.certification import ListDigest
from projections.database import batches_of_rows
from projections.runner import ViewRunner
from projections.tax_roll import TaxRoll
from projections.tax_roll_file import ListTotals, csv_batch_chunks

REPEATS = 3
COLUMNS = ("county", "parcel_number", "owner_name", "owner_mailing_address", "site_address",
           "charge_type", "statute", "balance", "incurred_on", "billed_on", "due_on",
           "eligible_on", "case_ref", "rule", "rule_version")
EXPORT_COLUMNS = ("backend", "what", "charges", "median s", "min s", "vs bare", "peak MB")


def _median(run: Any) -> tuple[float, float, int]:
    times, count = [], 0
    for _ in range(REPEATS):
        start = time.perf_counter()
        count = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), count


def _bare(runner: ViewRunner, view: TaxRoll, municipality: str, out: Path) -> int:
    v = view.versions.c
    query = (sa.select(*(v[c] for c in COLUMNS)).where(v.municipality == municipality,
                                                       v.superseded_at.is_(None))
             .order_by(v.county, v.parcel_number, v.case_ref))
    count = 0
    with runner.engine.connect() as conn, open(out, "w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        for rows in batches_of_rows(conn, query, 2000):  # the fastest read either store has
            writer.writerows(rows)
            count += len(rows)
    return count


def _listed(runner: ViewRunner, view: TaxRoll, arguments: dict[str, Any]) -> int:
    with runner.engine.connect() as conn:
        return sum(map(len, view.iter_row_batches(conn, **arguments)))


def _written(runner: ViewRunner, view: TaxRoll, arguments: dict[str, Any], out: Path) -> int:
    place = default_catalog().municipality(arguments["municipality"])
    totals, digest = ListTotals(), ListDigest()
    with runner.engine.connect() as conn, open(out, "wb") as file:
        batches = totals.counted_batches(digest.counted_batches(
            view.iter_row_batches(conn, **arguments)))
        for chunk in csv_batch_chunks(batches, place):
            file.write(chunk)
    digest.hexdigest()  # taken to the end, as the export takes it
    return totals.all.charges


def _through_cli(url: str, env: dict[str, str], arguments: dict[str, Any],
                 out: Path) -> tuple[float, float, float]:
    """(median s, min s, peak MB of the child) of ``abate tax-roll export --output``, each run
    timed and measured by a small measuring process (``bench.journal_import.measured``): a
    child forked straight from this process would count this process's pages (the 100,000
    generated cases) in its peak."""
    child_env = {**os.environ, "ABATE_DATABASE_URL": url}
    if env.get("SQLALCHEMY_SCHEMA"):
        child_env["ABATE_DATABASE_SCHEMA"] = env["SQLALCHEMY_SCHEMA"]
    argv = [str(Path(sys.executable).with_name("abate")), "tax-roll", "export",
            "--municipality", arguments["municipality"], "--tax-year",
            str(arguments["tax_year"]), "--as-of", arguments["as_of"].isoformat(),
            "--output", str(out)]
    runs = [measured(argv, child_env) for _ in range(REPEATS)]
    times = [run["seconds"] for run in runs]
    return statistics.median(times), min(times), max(run["peak_mb"] for run in runs)


def export_rows(backend_name: str, url: str, env: dict[str, str], runner: ViewRunner,
                municipality: str, tax_year: int, as_of: dt.date) -> list[tuple]:
    """The figures of one full list (every row of the table printed by ``run_benchmarks``)."""
    view = runner.active(TaxRoll.name)
    arguments = {"municipality": municipality, "tax_year": tax_year, "as_of": as_of}
    with tempfile.TemporaryDirectory(prefix="abate-export-") as folder:
        out = Path(folder) / "roll.csv"
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        bare = _median(lambda: _bare(runner, view, municipality, out))
        listed = _median(lambda: _listed(runner, view, arguments))
        written = _median(lambda: _written(runner, view, arguments, out))
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        cli = _through_cli(url, env, arguments, out)
    grown = f"+{after - before:.0f}"  # this process's peak grew by (the list is not held)
    return [
        (backend_name, "bare: Core select + csv.writer", bare[2], f"{bare[0]:.2f}",
         f"{bare[1]:.2f}", "1.00", ""),
        (backend_name, "list in-process (iter_row_batches)", listed[2], f"{listed[0]:.2f}",
         f"{listed[1]:.2f}", f"{listed[0] / bare[0]:.2f}", grown),
        (backend_name, "CSV to a file in-process", written[2], f"{written[0]:.2f}",
         f"{written[1]:.2f}", f"{written[0] / bare[0]:.2f}", grown),
        (backend_name, "abate tax-roll export --output", written[2], f"{cli[0]:.2f}",
         f"{cli[1]:.2f}", f"{cli[0] / bare[0]:.2f}", f"{cli[2]:.0f}"),
    ]

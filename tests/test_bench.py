"""The benchmarks as a developer runs them, ``python -m bench`` from the repository root (the
package is not installed): each section prints its rows at a small size, and every
temporary store is gone at the end, also when the run is stopped. Their figures are not
checked: a benchmark is not a test of speed. Usage errors go through the in-process door
(``bench.cli.main``), which ends before anything runs."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.cli import build_parser, main
from cases.failures import ExitCode
from tests.abate_command import ROOT, abate_env

BENCH = [sys.executable, "-m", "bench"]


def run_bench(tmp: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m bench ARGS`` from the repository root, its temporary folder ``tmp``."""
    return subprocess.run([*BENCH, *args], cwd=ROOT, env=abate_env(TMPDIR=str(tmp)),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def tmp(tmp_path) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def test_lifecycle_sweep_and_stop_print_both_sides_and_leave_nothing_in_the_temp_folder(tmp):
    """20 lifecycles on each side; then 150 open cases: 100 fall due by T1, the other 50 by
    T2 (the bench checks the counts); then abate serve stopped during its first sweep of 200
    due cases, beside the same on an empty store."""
    done = run_bench(tmp, "--only", "lifecycle", "--cases", "20", "--sweep-sizes", "150",
                     "--stop-sizes", "200")
    assert done.returncode == 0, done.stderr
    assert "abate/bare" in done.stdout and "bare eventsourcing" in done.stdout
    assert "due/s cpu" in done.stdout
    assert re.search(r"^ +150 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9,]+ +[0-9,]+$",
                     done.stdout, re.MULTILINE), done.stdout
    assert re.search(r"^ +200 +200 +[0-9,]+ +[0-9.]+ +[0-9.]+ +0$", done.stdout,
                     re.MULTILINE), done.stdout
    assert list(tmp.iterdir()) == []


def test_http_prints_both_sides_and_stops_its_server(tmp):
    done = run_bench(tmp, "--only", "http", "--http-cases", "12", "--http-requests", "10",
                     "--http-concurrency", "2")
    assert done.returncode == 0, done.stderr
    table = done.stdout.split("8. The HTTP API", 1)[1].splitlines()
    rows = [line.split() for line in table if line.startswith("SQLite")]
    assert [row[1] for row in rows] == ["case", "case", "worklist", "tax-roll", "command"]
    assert all(row[-1] != "-" for row in rows)  # over HTTP as well as in process
    assert list(tmp.iterdir()) == []


def test_load_sends_at_its_rate_to_both_sides_and_stops_their_servers(tmp):
    done = run_bench(tmp, "--only", "load", "--load-cases", "12", "--load-rates", "10",
                     "--load-seconds", "2")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()
            if re.match(r"SQLite +(Abate|floor) +1 +10 ", line)]
    assert [row[1] for row in rows] == ["Abate", "floor"], done.stdout
    assert all(int(row[5]) > 0 and row[6:10] == ["0", "0", "0", "0"] for row in rows)
    assert "peak memory of a process" in done.stdout
    assert list(tmp.iterdir()) == []


def test_import_scaling_prints_each_size_and_the_per_command_rate(tmp):
    """Its children (``python -m bench.journal_import``) find the uninstalled package."""
    done = run_bench(tmp, "--only", "import-scaling", "--scaling-cases", "10,20",
                     "--per-command-cases", "10")
    assert done.returncode == 0, done.stderr
    assert re.search(r"abate import +20 +104 .* [0-9.]+x time for 2x cases", done.stdout)
    assert re.search(r"one command a time +10 +52 .* import [0-9.]+x its rate", done.stdout)
    assert list(tmp.iterdir()) == []


def _catch_up(tmp: Path, passes: str) -> subprocess.CompletedProcess:
    """The catch-up section over 30 cases, one pair, with ``passes`` (a ``--catch-up-...``
    flag); its temporary stores checked gone."""
    done = run_bench(tmp, "--only", "catch-up", "--catch-up-cases", "30", "--catch-up-pairs",
                     "1", passes)
    assert done.returncode == 0, done.stderr
    assert list(tmp.iterdir()) == []
    return done


def test_catch_up_together_times_only_all_views_with_the_pairs_asked_for(tmp):
    """The short catch-up run (for 100,000 cases): data written through the journal import,
    one pair, and only all views together beside the bare read."""
    done = _catch_up(tmp, "--catch-up-together")
    assert "median over 1 pairs" in done.stdout
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("SQLite")]
    assert [" ".join(row[1:3]) for row in rows] == ["bare read", "all views"]
    events = {int(row[3]) for row in rows}  # 30 generated cases: 6 to 9 events each
    assert len(events) == 1 and 180 <= events.pop() <= 270
    assert "CaseService.import_journal" in done.stdout


def test_catch_up_breakdown_times_all_views_all_but_each_and_the_floor(tmp):
    """Where catch-up's time goes: all views, all views but each one, and a view that writes
    nothing; then what each view costs in bare reads, from those passes."""
    done = _catch_up(tmp, "--catch-up-breakdown")
    labels = [re.match(r"SQLite +(.+?) +\d+ ", line).group(1)
              for line in done.stdout.splitlines() if line.startswith("SQLite")]
    views = ["case_summaries", "worklist", "repeat_offenses", "tax_roll", "case_months"]
    assert labels == ["bare read", "all views", *(f"all but {v}" for v in views),
                      "floor: no view rows"]
    [line] = [line for line in done.stdout.splitlines()
              if "[SQLite] in bare reads of CPU time" in line]
    figures = dict(re.findall(r"(\w+) (-?[0-9]+\.[0-9]{2})", line.split("each view's")[1].split(";")[0]))
    assert set(figures) == set(views)
    every = float(re.search(r"all views ([0-9.]+),", line).group(1))
    floor = float(re.search(r"no view rows\) ([0-9.]+),", line).group(1))
    views_cost = float(re.search(r"own Python and writes (-?[0-9.]+);", line).group(1))
    room = float(re.search(r"leaving the views (-?[0-9.]+) above the floor", line).group(1))
    assert abs(views_cost - (every - floor)) <= 0.011  # each printed rounded to 0.01
    assert abs(room - (2 - floor)) <= 0.011


def test_stopped_half_way_removes_its_temporary_stores(tmp):
    process = subprocess.Popen([*BENCH, "--only", "catch-up", "--catch-up-cases", "20000"],
                               cwd=ROOT, env=abate_env(TMPDIR=str(tmp)),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(tmp.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert any(tmp.iterdir()), "the benchmark made no temporary store"
    time.sleep(1)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=90)
    assert process.returncode == ExitCode.INTERRUPTED, stderr
    assert "python -m bench: interrupted" in stderr and "Traceback" not in stderr
    assert list(tmp.iterdir()) == []


def test_defaults_are_small():
    args = build_parser().parse_args([])
    assert args.cases <= 100 and args.catch_up_cases <= 1000
    assert args.long_case_events <= 1000 and max(args.tax_roll_sizes) <= 1000
    assert max(args.scaling_cases) <= 1000 and args.per_command_cases <= 100


@pytest.mark.parametrize("bad, said", [
    (["--only", "nothing"], "unknown section 'nothing' (known: lifecycle, long-case"),
    (["--cases", "0"], "must be at least 1, got 0"),
    (["--tax-roll-sizes", "10,x"], "expected a whole number, got 'x'"),
    (["--catch-up-pairs", "0"], "must be at least 1, got 0"),
    (["--catch-up-together", "--catch-up-breakdown"], "not allowed with argument"),
])
def test_bad_options_are_one_line_usage_errors(bad, said, capsys):
    with pytest.raises(SystemExit) as ended:
        main(bad)
    assert ended.value.code == ExitCode.USAGE
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("python -m bench: ") and said in line, line

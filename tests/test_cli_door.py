"""The ``abate`` command as a person meets it: the scheduler's options, one clear line and a
documented exit code for every known failure, unknown places refused, a demo that keeps out
of real stores, and help that speaks to a user.
The variations run ``abate.cli.main`` in this process (tests/abate_command.py); what only a
process shows (its imports, signals, a start-up) runs the installed command in a subprocess."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import uuid
from pathlib import Path

import pytest

from cases.failures import ExitCode
from tests.abate_command import (ABATE, ROOT, abate_env, assert_one_line_failure, run_abate,
                                  run_abate_process)
from tests.builders import CaseLines, as_lines
from tests.store_counts import events_stored, seals_stored
from tests.conftest import POSTGRES_URL


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory) -> str:
    """A SQLite store holding the demo (read-only for the tests that use it)."""
    path = tmp_path_factory.mktemp("demo") / "demo.sqlite3"
    url = f"sqlite:///{path}"
    done = run_abate("demo", database_url=url)
    assert done.returncode == 0, done.stderr
    return url


def events_recorded(url: str) -> int:
    return events_stored(url)


# ---------------------------------------------------------------- 1. the scheduler's options


def test_abate_scheduler_takes_once_now_and_help(demo_store):
    once = run_abate("scheduler", "--once", database_url=demo_store)
    assert once.returncode == 0, once.stderr
    assert "deadline_sweep" in once.stderr and "Traceback" not in once.stderr

    replay = run_abate("scheduler", "--once", "--now", "2026-11-01T07:00:00-05:00",
                       "--municipality", "belleville", database_url=demo_store)
    assert replay.returncode == 0, replay.stderr
    assert "deadline_sweep" in replay.stderr

    helped = run_abate("scheduler", "--help")
    assert helped.returncode == 0
    assert "usage: abate scheduler" in helped.stdout
    for option in ("--once", "--now TIMESTAMP", "--municipality", "--database-url"):
        assert option in helped.stdout


def test_abate_scheduler_and_python_m_scheduler_have_the_same_options():
    """One parser for both doors: the option lines of the two helps are the same."""
    abate_help = run_abate("scheduler", "--help").stdout
    module_help = subprocess.run([str(Path(ABATE).with_name("python")), "-m", "scheduler",
                                  "--help"], cwd=ROOT, capture_output=True, text=True).stdout

    def options(text: str) -> str:
        return text[text.index("options:"):]

    assert options(abate_help) == options(module_help)


def test_abate_scheduler_refuses_now_without_once_and_an_unknown_municipality(demo_store):
    assert_one_line_failure(
        run_abate("scheduler", "--now", "2026-11-01T07:00:00-05:00", database_url=demo_store),
        ExitCode.USAGE, "--now only goes with --once")
    assert_one_line_failure(
        run_abate("scheduler", "--once", "--municipality", "nowhere", database_url=demo_store),
        ExitCode.USAGE, "unknown municipality 'nowhere'")


# ---------------------------------------------------------------- 2. no tracebacks


@pytest.mark.parametrize(("amount", "exit_code"), [
    ("1e400", ExitCode.REFUSED),  # valid JSON, an amount no one can owe: refused content
    ("Infinity", ExitCode.USAGE), ("-Infinity", ExitCode.USAGE),  # not JSON at all:
    ("NaN", ExitCode.USAGE),                                       # an unreadable line
])
def test_a_json_number_out_of_range_is_a_field_error_not_a_traceback(demo_store, tmp_path, amount,
                                                                      exit_code):
    journal = tmp_path / "pay.jsonl"
    journal.write_text(
        '{"command": "record_payment", "municipality": "belleville", "case_ref": "BV-2026-002", '
        f'"at": "2026-04-20T14:30:00-05:00", "actor": "treasurer", "amount": {amount}, '
        '"id": "pay-x"}\n')
    done = run_abate("import", str(journal), database_url=demo_store)
    assert_one_line_failure(done, exit_code, "line 1", "nothing was recorded")


def test_certify_into_a_missing_folder_says_so_and_records_nothing(demo_store, tmp_path):
    before = events_recorded(demo_store)
    target = tmp_path / "no" / "such" / "folder" / "certified.csv"
    done = run_abate("tax-roll", "certify", "--municipality", "belleville", "--tax-year", "2026",
                     "--county", "Dane", "--actor", "Finance Director", "--output", str(target),
                     database_url=demo_store)
    assert_one_line_failure(done, ExitCode.USAGE, "abate tax-roll certify:",
                            f"{target.parent} does not exist", "nothing was recorded")
    assert events_recorded(demo_store) == before


@pytest.mark.parametrize("year", ["1850", "99999", "-5", "twenty"])
def test_a_tax_year_out_of_range_is_a_usage_error_before_anything_is_read(demo_store, tmp_path,
                                                                         year):
    """--tax-year 1850 certified an empty list (and recorded a seal); 99999 was exit 3."""
    before, seals = events_recorded(demo_store), _seals(demo_store)
    for args in (("export",), ("certify", "--county", "Dane", "--actor", "Clerk"),
                 ("certified-pdf", "--county", "Dane", "--output", str(tmp_path / "l.pdf"))):
        done = run_abate("tax-roll", args[0], "--municipality", "belleville",
                         f"--tax-year={year}", *args[1:], database_url=demo_store)
        assert_one_line_failure(done, ExitCode.USAGE, "argument --tax-year:")
    assert events_recorded(demo_store) == before and _seals(demo_store) == seals


@pytest.mark.parametrize("args, said", [
    (("projections", "rebuild", "nosuchview"), "no view 'nosuchview' (known: case_summaries"),
    (("projections",), "the following arguments are required: COMMAND"),
    (("tax-roll",), "the following arguments are required: COMMAND"),
    (("cases",), "the following arguments are required: COMMAND")])
def test_a_missing_or_unknown_name_is_a_usage_error_in_a_persons_words(demo_store, args, said):
    """An unknown view was exit 1 (refused) rather than 2 (usage), and a missing subcommand
    was named by Abate's own variable (``projections_command``)."""
    done = run_abate(*args, database_url=demo_store)
    line = assert_one_line_failure(done, ExitCode.USAGE, said)
    assert "_command" not in line


@pytest.mark.parametrize("command, said", [
    (["python", "-m", "scheduler", "--bogus"], "python -m scheduler: unrecognized arguments: "
                                               "--bogus (see python -m scheduler --help)"),
    (["python", "-m", "scheduler", "--once", "--now", "1850-01-01T00:00:00Z"],
     "is outside the times Abate accepts (1900-01-01 to 2200-12-31)"),
    (["abate", "scheduler", "--once", "--now", "1850-01-01T00:00:00Z"],
     "is outside the times Abate accepts (1900-01-01 to 2200-12-31)"),
    (["python", "-m", "api", "--port", "0"], "python -m api: argument --port:")])
def test_every_entry_point_refuses_a_bad_option_in_one_line(demo_store, command, said):
    """``python -m scheduler`` and ``python -m api`` printed argparse's usage block; a --now
    of 1850 was swept without a word."""
    program = {"python": str(Path(ABATE).with_name("python")), "abate": ABATE}[command[0]]
    done = subprocess.run([program, *command[1:]], capture_output=True, text=True,
                          env=abate_env(demo_store), timeout=120)
    assert_one_line_failure(done, ExitCode.USAGE, said)


@pytest.mark.parametrize("args, said", [
    (("verify", "--seal", ""), "--seal is empty"),
    (("serve", "--into-nonempty", "--port", "8"), "--into-nonempty goes with --demo")])
def test_an_option_given_empty_or_without_its_partner_is_refused(demo_store, args, said):
    """``verify --seal ""`` ran a plain verify and said all was well; ``serve
    --into-nonempty`` without ``--demo`` was taken without a word."""
    assert_one_line_failure(run_abate(*args, database_url=demo_store), ExitCode.USAGE, said)


def _seals(url: str) -> int:
    return seals_stored(url)


@pytest.mark.parametrize("args", [
    ("seal", "--reason", "board meeting"),
    ("document", "issue", "--municipality", "belleville", "BV-2026-028", "--kind", "bill",
     "--actor", "Clerk")])
def test_a_seal_or_document_to_a_folder_or_an_empty_name_records_nothing(demo_store, tmp_path,
                                                                         args):
    """Recorded first and then not written, each retry recorded another document or seal."""
    before, seals = events_recorded(demo_store), _seals(demo_store)
    for output, said in ((str(tmp_path), "it is a folder"), ("", "--output is empty")):
        done = run_abate(*args, "--output", output, database_url=demo_store)
        assert_one_line_failure(done, ExitCode.USAGE, said, "nothing was recorded")
    assert events_recorded(demo_store) == before and _seals(demo_store) == seals


@pytest.mark.parametrize("url", ["mysql://abate@db/abate", "foo", "postgresql+psycopg2://x@y/z",
                                 "sqlite://"])
def test_an_unsupported_database_url_is_one_line(url):
    done = run_abate("verify", database_url=url)
    assert_one_line_failure(done, ExitCode.USAGE, "abate verify: database URL")


@pytest.mark.parametrize("url, said", [
    ("postgresql+psycopg://abate:pw@127.0.0.1:5432/", "names no database"),
    ("postgresql+psycopg://abate:pw@127.0.0.1:5432", "names no database"),
    ("postgresql+psycopg://abate:pw@127.0.0.1:notaport/abate", "Port could not be cast"),
    ("postgresql+psycopg://abate:pw@[::1:5432/abate", "Invalid IPv6 URL")])
def test_a_postgresql_url_without_a_database_or_with_a_bad_port_is_refused_before_connecting(
        url, said):
    """Without a database name the server's default one would have received Abate's tables."""
    done = run_abate("verify", database_url=url)
    line = assert_one_line_failure(done, ExitCode.USAGE, "abate verify: database URL", said)
    assert "pw" not in line.replace("postgresql", "")


def test_a_file_that_is_not_a_database_is_one_line_not_a_bug(tmp_path):
    journal = tmp_path / "journal.jsonl"
    journal.write_text('{"command": "open_case"}\n')
    done = run_abate("verify", database_url=f"sqlite:///{journal}")
    assert_one_line_failure(done, ExitCode.USAGE, "cannot use the database",
                            "file is not a database")
    assert journal.read_text() == '{"command": "open_case"}\n'


@pytest.mark.parametrize("setting, value, said", [
    ("ABATE_SWEEP_SECONDS", "abc", "ABATE_SWEEP_SECONDS='abc' is not a whole number"),
    ("ABATE_SWEEP_SECONDS", "99999999999999", "must be from 1 to 86,400"),
    ("ABATE_FUTURE_TOLERANCE_MINUTES", "99999999999", "must be from 0 to 1,440"),
    ("ABATE_LOG_LEVEL", "verbose", "must be one of debug, info, warning, error"),
    ("ABATE_LOG_FORMAT", "xml", "must be one of auto, console, json"),
    ("ABATE_TIME_ZONE", "Mars/Olympus", "is not a time zone this system knows"),
])
def test_a_bad_setting_is_one_line_naming_it_and_no_traceback(demo_store, setting, value, said):
    """Before, the one line came with a debug line holding the traceback on stdout
    (structlog was not yet set up, so it printed every level there), and a bad time zone
    passed unchecked until a command used it (exit 3)."""
    for args in (("scheduler", "--once"), ("users", "list")):
        done = run_abate(*args, env=abate_env(demo_store, **{setting: value}))
        assert_one_line_failure(done, ExitCode.USAGE, said)
        assert done.stdout == "", done.stdout


def test_a_sqlite_file_in_a_missing_folder_is_refused_and_nothing_is_created(tmp_path):
    folder = tmp_path / "no" / "such" / "dir"
    done = run_abate("cases", "list", "--municipality", "belleville",
                     database_url=f"sqlite:///{folder / 'x.sqlite3'}")
    assert_one_line_failure(done, ExitCode.USAGE, f"the folder {folder} does not exist")
    assert not (tmp_path / "no").exists()


def test_a_reading_command_never_creates_an_empty_store(tmp_path):
    """Run from another folder, the default store would be a new empty file answering
    "0 cases" and verify "ok": a reading command says there is no store instead."""
    missing = tmp_path / "abate.sqlite3"
    for command in (("cases", "list", "--municipality", "belleville"), ("verify",),
                    ("worklist", "--municipality", "belleville")):
        done = run_abate(*command, database_url=f"sqlite:///{missing}")
        assert_one_line_failure(done, ExitCode.USAGE, f"no Abate store at {missing}")
        assert not missing.exists()


def test_the_database_url_option_is_checked_the_same_way(tmp_path):
    done = run_abate("--database-url", f"sqlite:///{tmp_path}/missing/x.sqlite3", "verify")
    assert_one_line_failure(done, ExitCode.USAGE, "does not exist")
    assert not (tmp_path / "missing").exists()


def test_a_database_schema_given_for_sqlite_says_it_is_for_postgresql(demo_store):
    done = run_abate("verify", env=abate_env(demo_store, ABATE_DATABASE_SCHEMA="abate"))
    assert_one_line_failure(done, ExitCode.USAGE, "ABATE_DATABASE_SCHEMA is for PostgreSQL")


@pytest.mark.postgres
def test_a_postgresql_schema_that_does_not_exist_is_one_line_naming_the_setting():
    """It was exit 3 ("a bug") with the CREATE TABLE statement on stderr."""
    if not POSTGRES_URL:
        pytest.skip("ABATE_TEST_DATABASE_URL is not set")
    schema = f"no_such_schema_{uuid.uuid4().hex[:8]}"
    done = run_abate("verify", env=abate_env(POSTGRES_URL, ABATE_DATABASE_SCHEMA=schema))
    assert_one_line_failure(done, ExitCode.USAGE, f'schema "{schema}" does not exist',
                            "ABATE_DATABASE_SCHEMA")


@pytest.mark.postgres
def test_a_postgresql_database_that_does_not_exist_is_one_line_without_the_password():
    if not POSTGRES_URL:
        pytest.skip("ABATE_TEST_DATABASE_URL is not set")
    import sqlalchemy as sa

    name = f"no_such_db_{uuid.uuid4().hex[:8]}"
    url = sa.engine.make_url(POSTGRES_URL).set(database=name, password="s3cret-Pw")
    typed = url.render_as_string(hide_password=False)
    done = run_abate("cases", "list", "--municipality", "belleville", database_url=typed)
    line = assert_one_line_failure(done, ExitCode.USAGE, "cannot use the database",
                                   f'database "{name}" does not exist')
    assert "s3cret-Pw" not in done.stderr and "***" in line
    debug = run_abate("cases", "list", "--municipality", "belleville",
                      env=abate_env(typed, ABATE_LOG_LEVEL="debug"))
    assert debug.returncode == ExitCode.USAGE and "command_failed" in debug.stderr
    assert "s3cret-Pw" not in debug.stderr


@pytest.mark.parametrize("args", [("rules", "--markdown"),
                                  ("cases", "list", "--municipality", "belleville")])
def test_a_reader_that_went_away_ends_abate_quietly(demo_store, args):
    """`abate ... | head -1`: the reader closes the pipe; abate stops like other Unix tools."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has already gone when abate writes
    try:
        done = subprocess.run([ABATE, *args], cwd=ROOT, env=abate_env(demo_store),
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == ExitCode.BROKEN_PIPE


def test_head_on_a_pipe_shows_the_first_line_and_nothing_on_stderr(demo_store):
    done = subprocess.run(["bash", "-o", "pipefail", "-c",
                           f"'{ABATE}' rules --markdown | head -1"], cwd=ROOT,
                          env=abate_env(demo_store), capture_output=True, text=True, timeout=60)
    assert done.stdout == "# Rules catalog\n"
    assert "Traceback" not in done.stderr and "Error" not in done.stderr, done.stderr


# ---------------------------------------------------------------- 3. unknown places


@pytest.mark.parametrize("args, fragment", [
    (("cases", "list", "--municipality", "nowhere"), "unknown municipality 'nowhere'"),
    (("worklist", "--municipality", "nowhere"), "unknown municipality 'nowhere'"),
    (("tax-roll", "export", "--municipality", "nowhere", "--tax-year", "2026"),
     "unknown municipality 'nowhere'"),
    (("tax-roll", "reconcile", "--municipality", "nowhere", "--tax-year", "2026"),
     "unknown municipality 'nowhere'"),
    (("repeat-offenses", "--municipality", "nowhere", "--party", "X", "--rule-family", "snow"),
     "unknown municipality 'nowhere'"),
    (("case", "show", "--municipality", "nowhere", "BV-2026-001"), "unknown municipality"),
    (("tax-roll", "export", "--municipality", "belleville", "--tax-year", "2026", "--county",
      "Rock"), "county 'Rock' is not one of the Village of Belleville's counties: Dane, Green"),
    (("tax-roll", "certify", "--municipality", "belleville", "--tax-year", "2026", "--county",
      "Rock", "--actor", "Finance Director"),
     "county 'Rock' is not one of the Village of Belleville's counties: Dane, Green"),
])
def test_an_unknown_municipality_or_county_is_an_error_not_an_empty_list(demo_store, args,
                                                                           fragment):
    before = events_recorded(demo_store) if "certify" in args else None
    assert_one_line_failure(run_abate(*args, database_url=demo_store), ExitCode.USAGE,
                            "(known: belleville, mazomanie)" if "county" not in fragment
                            else "Dane, Green", fragment)
    if before is not None:
        assert events_recorded(demo_store) == before


def test_county_names_match_without_regard_to_case(demo_store):
    common = ("tax-roll", "export", "--municipality", "belleville", "--tax-year", "2026",
              "--format", "json", "--county")
    typed = run_abate(*common, "dane", database_url=demo_store)
    spelled = run_abate(*common, "Dane", database_url=demo_store)
    assert typed.returncode == spelled.returncode == 0, typed.stderr
    rows = json.loads(typed.stdout)
    assert rows["summary"]["county"] == "Dane" and rows["charges"]
    assert rows["charges"] == json.loads(spelled.stdout)["charges"]


# ---------------------------------------------------------------- 4. the demo


def test_the_demo_refuses_a_store_with_other_cases_and_says_where_it_went(tmp_path):
    url = f"sqlite:///{tmp_path / 'village.sqlite3'}"
    journal = tmp_path / "real.jsonl"
    journal.write_text(json.dumps({
        "command": "open_case", "municipality": "belleville", "case_ref": "BV-2026-900",
        "at": "2026-01-06T15:10:00-06:00", "actor": "officer.kjelland", "rule": "belleville:9.09",
        "parcel": {"county": "Dane", "number": "0509-363-8125-2"},
        "site_address": "215 W Church St, Belleville, WI 53508",
        "owner": {"name": "A Real Owner", "mailing_address": "215 W Church St"},
        "description": "walk not cleared", "source": "observation", "id": "village-1"}) + "\n")
    assert run_abate("import", str(journal), database_url=url).returncode == 0
    before = events_recorded(url)

    # The README's run command refuses too (on a free port: the port is checked first).
    for command in (["demo"], ["serve", "--demo", "--port", str(_free_port())]):
        refused = run_abate(*command, database_url=url)
        assert_one_line_failure(refused, ExitCode.REFUSED, "belleville:BV-2026-900",
                                "not demo cases", "--into-nonempty",
                                str(tmp_path / "village.sqlite3"))
        assert events_recorded(url) == before
    assert "demo." not in run_abate("users", "list", database_url=url).stdout

    forced = run_abate("demo", "--into-nonempty", database_url=url)
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.rstrip().endswith("40 cases")


def test_the_demo_names_its_store_and_loads_twice_into_its_own(tmp_path):
    path = tmp_path / "demo.sqlite3"
    url = f"sqlite:///{path}"
    first = run_abate("demo", database_url=url)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[0] == f"demo store: {url} (the file {path})"
    again = run_abate("demo", database_url=url)
    assert again.returncode == 0, again.stderr
    assert again.stdout.rstrip().endswith("39 cases")


def test_the_demo_store_location_hides_a_password():
    from abate.demo_store import describe_location

    shown = describe_location("postgresql+psycopg://abate:hunter2@db:5432/abate")
    assert shown == "postgresql+psycopg://abate:***@db:5432/abate"


# ---------------------------------------------------------------- 5. help


def test_abate_help_speaks_to_a_user():
    done = run_abate("--help")
    assert done.returncode == 0
    text = done.stdout
    assert "composition root" not in text
    assert "code-enforcement cases" in text
    for group in ("For clerks and officers:", "For auditors:", "For operators:"):
        assert group in text
    assert "docs/" in text and "Exit status" in text


def _commands_in(help_text: str) -> list[str]:
    return re.findall(r"^  ([a-z][a-z-]+)  ", help_text, flags=re.M)


def test_every_command_help_says_what_it_does():
    top = run_abate("--help").stdout
    commands = _commands_in(top)
    assert {"import", "scheduler", "demo", "worklist", "tax-roll"} <= set(commands)
    assert "bench" not in commands  # the benchmarks are not installed: python -m bench
    for command in commands:
        done = run_abate(command, "--help")
        assert done.returncode == 0, (command, done.stderr)
        after_usage = done.stdout.split("\n\n")[1]
        assert not after_usage.startswith(("options:", "positional")), (command, done.stdout)
        assert len(after_usage.split()) >= 3, (command, after_usage)


@pytest.mark.parametrize("command", [
    ("seal", "--actor", ""),
    ("tax-roll", "certify", "--municipality", "belleville", "--tax-year", "2026", "--county",
     "Dane", "--actor", "   "),
])
def test_a_blank_actor_is_refused_like_a_blank_journal_actor(demo_store, command):
    before = events_recorded(demo_store)
    done = run_abate(*command, database_url=demo_store)
    assert done.returncode == ExitCode.USAGE and "Traceback" not in done.stderr
    assert "--actor" in done.stderr and "at least 1 character" in done.stderr
    assert events_recorded(demo_store) == before


@pytest.mark.parametrize("command, fragments", [
    (("cases", "list", "--municipality", "belleville", "--status", "bogus"),
     ("--status", "invalid choice", "'billed'")),
    (("repeat-offenses", "--municipality", "belleville", "--party", "Ann", "--rule-family", "x"),
     ("--rule-family", "'x' is not a rule family of belleville", "snow")),
])
def test_an_unknown_filter_value_is_a_usage_error_not_an_empty_list(demo_store, command,
                                                                      fragments):
    assert_one_line_failure(run_abate(*command, database_url=demo_store), ExitCode.USAGE,
                            *fragments)


def test_every_status_the_domain_sets_can_be_asked_for():
    from cases.domain import CASE_STATUSES

    source = "".join(module.read_text(encoding="utf-8")
                     for module in (ROOT / "cases" / "domain").glob("*.py"))
    assert set(re.findall(r'status = "([a-z_]+)"', source)) == set(CASE_STATUSES)


def test_a_municipality_typed_with_capitals_is_the_one_the_catalog_knows(demo_store):
    typed = run_abate("cases", "list", "--municipality", "Belleville", database_url=demo_store)
    spelled = run_abate("cases", "list", "--municipality", "belleville", database_url=demo_store)
    assert typed.returncode == 0 and json.loads(typed.stdout) == json.loads(spelled.stdout)


def test_cases_list_comes_in_pages_that_say_where_the_next_starts(demo_store):
    whole = json.loads(run_abate("cases", "list", "--municipality", "belleville",
                                 database_url=demo_store).stdout)
    refs = [c["case_ref"] for c in whole["cases"]]
    assert whole["total"] == len(refs) >= 3 and whole["next_offset"] is None
    first = run_abate("cases", "list", "--municipality", "belleville", "--limit", "2",
                      database_url=demo_store)
    page = json.loads(first.stdout)
    assert ([c["case_ref"] for c in page["cases"]], page["next_offset"], page["total"]) == (
        refs[:2], 2, len(refs))
    table = run_abate("cases", "list", "--municipality", "belleville", "--limit", "2",
                      "--offset", "2", "--format", "table", database_url=demo_store)
    last = min(4, len(refs))
    assert f"cases 3-{last} of {len(refs)}" in table.stdout
    assert ("the next page is --offset 4" in table.stderr) == (len(refs) > 4)
    assert refs[2] in table.stdout and refs[0] not in table.stdout


@pytest.mark.parametrize("option, value", [("--limit", "0"), ("--limit", "501"),
                                           ("--limit", "ten"), ("--offset", "-1")])
def test_a_page_out_of_bounds_is_refused_naming_the_option(demo_store, option, value):
    done = run_abate("cases", "list", "--municipality", "belleville", option, value,
                     database_url=demo_store)
    assert_one_line_failure(done, ExitCode.USAGE, f"{option}: {value!r} is not a whole number")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("command", [
    ("cases", "list", "--municipality", "belleville", "--owner", "Stauffacher\x01"),
    ("repeat-offenses", "--municipality", "belleville", "--rule-family", "dumping",
     "--party", "Stauffacher\x01"),
])
def test_a_name_filter_with_a_control_character_is_a_usage_error(demo_store, command):
    done = run_abate(*command, database_url=demo_store)
    option = command[-2]
    assert_one_line_failure(done, ExitCode.USAGE,
                            f"{option}: character U+0001 at position 12 is not allowed here")


def test_a_journal_line_refused_by_the_case_names_its_times_in_the_villages_time(tmp_path):
    """``abate import``: an abatement before the cure period ended is refused (nothing
    recorded), the cure period's end read as Belleville's time, not as ISO."""
    url = f"sqlite:///{tmp_path / 'village.sqlite3'}"
    lines = CaseLines("belleville", "BV-T-1")
    journal = tmp_path / "early.jsonl"
    journal.write_text("\n".join(as_lines(
        lines.open("belleville:9.13", "2026-03-02T09:00:00-06:00"),
        lines.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal",
                  served_on="Ann"),
        lines.cmd("record_abatement", "2026-03-03T09:00:00-06:00",
                  costs=[{"item": "crew", "amount": "150.00"}]))) + "\n")
    refused = run_abate("import", str(journal), database_url=url)
    assert_one_line_failure(refused, ExitCode.REFUSED, "line 3",
                            "runs until 2026-03-05 10:00 CST (",
                            "(at 2026-03-03 09:00 CST)")
    assert events_recorded(url) == 0


# ---------------------------------------------------------------- 6. what a read imports


@pytest.mark.parametrize("args, imports", [
    (("cases", "list", "--municipality", "belleville"), "projections.case_summaries"),
    (("case", "show", "--municipality", "belleville", "BV-2026-001"), "cases.domain"),
    (("case", "show", "--municipality", "belleville", "--as-of", "2026-01-07T12:00:00-06:00",
      "BV-2026-001"), "cases.domain"),
    (("worklist", "--municipality", "belleville", "--deadline", "notice_due", "--action",
      "serve_notice"), "projections.worklist"),
])
def test_a_case_list_a_case_or_the_worklist_is_read_without_the_rules_catalog(demo_store, args,
                                                                              imports):
    """The validated catalog (pydantic) and the holiday calendar were a fifth of these
    commands' start (docs/benchmarks.md); they answer from the rule files, the recorded
    events and the caught-up views. The interpreter's own import log
    (PYTHONPROFILEIMPORTTIME) says what was loaded."""
    done = run_abate_process(*args, env=abate_env(demo_store, PYTHONPROFILEIMPORTTIME="1"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)
    loaded = set(re.findall(r"^import time:.*\|\s*([\w.]+)$", done.stderr, flags=re.M))
    assert imports in loaded  # the log is read: the command's own module is in it
    assert not loaded & {"pydantic", "cases.rules.catalog", "holidays"}, sorted(loaded)


def test_abate_case_show_gives_a_page_of_the_cases_events(demo_store):
    def shown(*args: str) -> dict:
        done = run_abate("case", "show", "--municipality", "belleville", "BV-2026-001", *args,
                         database_url=demo_store)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    whole = shown()
    total = whole["events_page"]["total"]
    assert total == len(whole["events"]) > 3 and whole["events_page"]["next_offset"] is None
    page = shown("--limit", "2", "--offset", "1")
    assert page["events"] == whole["events"][1:3]
    assert page["events_page"] == {"total": total, "limit": 2, "offset": 1,
                                   "next_offset": 3 if total > 3 else None}
    refused = run_abate("case", "show", "--municipality", "belleville", "BV-2026-001",
                        "--limit", "501", database_url=demo_store)
    assert refused.returncode == ExitCode.USAGE and "--limit" in refused.stderr
    assert "events a page" in refused.stderr


@pytest.mark.parametrize("args", [("cases", "list", "--municipality", "belleville"),
                                  ("case", "show", "--municipality", "belleville",
                                   "BV-2026-001")])
def test_a_command_that_only_reads_loads_neither_the_application_nor_its_recorders(
        demo_store, args):
    """Their start is most of their time (docs/benchmarks.md, section 0): what they import
    is checked in a process of their own, as a person runs them."""
    script = ("import sys, io\nfrom abate.cli import main\nout = sys.stdout\n"
              "sys.stdout = io.StringIO()\n"
              f"code = main({list(args)!r})\nsys.stdout = out\n"
              "print(code, sorted(m for m in ('eventsourcing.application',\n"
              "    'eventsourcing_sqlalchemy', 'sqlalchemy_utils', 'sqlalchemy.orm')\n"
              "    if m in sys.modules))\n")
    done = subprocess.run([str(Path(ABATE).with_name("python")), "-c", script], cwd=ROOT,
                          env=abate_env(demo_store), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0 []", done.stdout

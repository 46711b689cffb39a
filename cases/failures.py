"""Exit codes, and the one place that turns a known failure into one line for a person.

Every entry point (``abate``, ``python -m scheduler``) runs its command inside
``failures_reported``: a person sees one line on stderr saying what was wrong and
what to do, never a traceback; operators get the details in the log (debug level,
``ABATE_LOG_LEVEL=debug``), with any database password blanked out.
"""

from __future__ import annotations

import argparse
import enum
import os
import re
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NoReturn

from cases.errors import (
    AbateError,
    ConfigurationError,
    InputError,
    UnknownRuleError,
    UsageError,
)
from cases.logging import get_logger

log = get_logger("abate")


class ExitCode(enum.IntEnum):
    """The exit statuses docs/operations.md promises (the only place they are defined)."""

    OK = 0
    REFUSED = 1  # content refused (a journal line, a command), or a problem found (verify)
    USAGE = 2  # usage, unreadable input, or configuration (database URL, output folder)
    UNEXPECTED = 3  # a failure Abate did not foresee (a bug): one line here, details in the log
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it
    BROKEN_PIPE = 141  # the reader went away (``abate ... | head``): 128 + SIGPIPE, quietly


_USAGE_ERRORS = (InputError, ConfigurationError, UnknownRuleError, UsageError)


def redact_url(url: str) -> str:
    """The database URL as it may be shown or logged: the password replaced by ``***``."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL SQLAlchemy reads: blank anything like a password
        return re.sub(r"(://[^:/@\s]*:)\S*@", r"\1***@", url)


def _password(url: str | None) -> str | None:
    from sqlalchemy.engine import make_url

    try:
        return make_url(url or "").password or None
    except Exception:  # noqa: BLE001
        match = re.search(r"://[^:/@\s]*:(\S*)@", url or "")
        return match.group(1) if match and match.group(1) else None


def _scrub(text: str, url: str | None) -> str:
    secret = _password(url)
    if url:
        text = text.replace(url, redact_url(url))
    return text.replace(secret, "***") if secret else text


def database_reason(exc: BaseException) -> str:
    """The driver's first line (e.g. 'database "x" does not exist'), not SQLAlchemy's wrapping."""
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    reason = lines[0] if lines else type(orig).__name__
    return re.split(r"FATAL:\s*", re.sub(r"^connection failed: ", "", reason))[-1]  # 'database "x" does not exist', not the socket


@dataclass
class Reporter:
    """What the guard needs to know to word its line: the program and the database URL."""

    prog: str
    database_url: str | None = None
    code: ExitCode = field(default=ExitCode.OK)

    def fail(self, code: ExitCode, message: str, exc: BaseException) -> None:
        self.code = code
        line = _scrub(message, self.database_url)
        print(f"{self.prog}: {line}", file=sys.stderr, flush=True)
        details = "".join(traceback.format_exception(exc))
        log.debug("command_failed", exit_code=int(code), error=type(exc).__name__,
                  message=line, details=_scrub(details, self.database_url))


def _quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the exit flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


@contextmanager
def failures_reported(prog: str) -> Iterator[Reporter]:
    """Run a command; known failures become one line on stderr and ``reporter.code``."""
    reporter = Reporter(prog)
    try:
        yield reporter
    except BrokenPipeError:
        _quiet_stdout()
        reporter.code = ExitCode.BROKEN_PIPE
    except KeyboardInterrupt as exc:
        reporter.fail(ExitCode.INTERRUPTED, "interrupted", exc)
    except _USAGE_ERRORS as exc:
        reporter.fail(ExitCode.USAGE, str(exc), exc)
    except AbateError as exc:
        reporter.fail(ExitCode.REFUSED, str(exc), exc)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        reporter.fail(ExitCode.USAGE, f"{where}{exc.strerror or exc}", exc)
    except Exception as exc:  # noqa: BLE001 - the last guard between a person and a traceback
        if _is_database_error(exc):
            url = redact_url(reporter.database_url or "")
            reporter.fail(ExitCode.USAGE, f"cannot use the database {url}: "
                          f"{database_reason(exc)}{_schema_hint(exc)}", exc)
        else:
            reporter.fail(ExitCode.UNEXPECTED, f"unexpected {type(exc).__name__}: {exc} "
                          "(a bug; run again with ABATE_LOG_LEVEL=debug for the details and "
                          "report it)", exc)


def _schema_hint(exc: BaseException) -> str:
    """What to do when the failure is ABATE_DATABASE_SCHEMA's: a PostgreSQL schema that does
    not exist, or a schema given for SQLite (which reads it as an attached database)."""
    orig = getattr(exc, "orig", None) or exc
    if type(orig).__name__ == "InvalidSchemaName":
        return " (ABATE_DATABASE_SCHEMA: create the schema first, or correct the name)"
    if str(orig).startswith("unknown database"):
        return " (ABATE_DATABASE_SCHEMA is for PostgreSQL: leave it unset with SQLite)"
    return ""


def _is_database_error(exc: BaseException) -> bool:
    """A database that cannot be reached or opened (SQLAlchemy, psycopg or sqlite3), or a
    file that is not a SQLite database at all (sqlite3's plain ``DatabaseError``: "file is
    not a database", "database disk image is malformed"; never one of its subclasses, such
    as an integrity error, which would be a bug)."""
    import sqlite3

    from sqlalchemy.exc import ArgumentError, OperationalError

    names = {"OperationalError", "InterfaceError"}
    orig = getattr(exc, "orig", None) or exc
    if type(orig).__name__ == "InvalidSchemaName":  # psycopg: ABATE_DATABASE_SCHEMA's schema
        return True
    return isinstance(exc, (OperationalError, ArgumentError)) or type(orig) is sqlite3.DatabaseError \
        or (type(exc).__name__ in names
            and type(exc).__module__.split(".")[0] in ("psycopg", "sqlite3"))


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line naming the option and what it accepts (exit status 2),
    like every other refusal of the command line; ``--help`` shows the usage. Every entry
    point's parser (``abate``, ``python -m scheduler``, ``python -m api``) is one."""

    def error(self, message: str) -> NoReturn:
        self.exit(ExitCode.USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def check_output_folder(path: str | None) -> None:
    """An output file's folder must exist, and the file must not be a folder, before
    anything is recorded (a document or a seal recorded and then not written leaves the
    person retrying, recording another each time)."""
    if path is None:
        return
    if not path.strip():
        raise ConfigurationError("--output is empty: give a file name; nothing was recorded")
    if os.path.isdir(path):
        raise ConfigurationError(f"cannot write {path}: it is a folder; give a file name in "
                                 "it; nothing was recorded")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ConfigurationError(f"cannot write {path}: the folder {folder} does not exist; "
                                 "nothing was recorded")
    if not os.access(folder, os.W_OK):
        raise ConfigurationError(f"cannot write {path}: the folder {folder} is not writable; "
                                 "nothing was recorded")

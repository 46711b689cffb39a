"""Where the demo may go: never into a store that holds real cases.

A demo case is one opened by an ``open_case`` line of the demo journal: its opening
event carries that line's command id (``demo-0001`` ...). A case with the same
reference opened by any other command is a real case, so a village whose own
numbering happens to reach BV-2026-001 is still protected. A case a demo user opened
through the API (``abate serve --demo``; actor ``demo.belleville.inspector`` ...) is
someone trying the demo, so the demo starts again on that store. The demo journal records
its own facts as those demo users too (tests/test_demo.py checks each line against the
API's role matrix).
"""

from __future__ import annotations

import datetime as dt
import json
from importlib import resources
from pathlib import Path

import structlog

from abate.demo_users import demo_user_names
from abate.reports import counted
from cases.domain import Case
from cases.errors import AbateError
from cases.failures import redact_url
from cases.seals import seal_store
from cases.settings import Settings
from cases.store import CaseStore
from projections.bootstrap import case_service
from projections.runner import ViewRunner
from scheduler.jobs import sweep_deadlines

log = structlog.get_logger("abate")


class DemoRefusedError(AbateError):
    """The demo would mix invented cases into a store with real ones."""


def demo_journal_path() -> Path:
    return Path(str(resources.files("abate") / "demo" / "demo.jsonl"))


def demo_opening_ids(lines: list[str]) -> set[str]:
    """The command ids of the demo journal's ``open_case`` lines."""
    ids = set()
    for line in lines:
        if line.strip() and not line.lstrip().startswith("#"):
            command = json.loads(line)
            if command.get("command") == "open_case" and command.get("id"):
                ids.add(command["id"])
    return ids


def other_cases(store: CaseStore, demo_ids: set[str], limit: int = 3) -> tuple[int, list[str]]:
    """(how many cases were found that the demo did not open, up to ``limit`` of their refs).

    Stops reading at ``limit``: the answer only has to say whether there are any."""
    found: list[str] = []
    for notification in store.notifications(topics=(Case.Opened.TOPIC,)):
        opened = store.mapper.to_domain_event(notification)
        if (getattr(opened, "command_id", None) not in demo_ids
                and opened.actor not in demo_user_names()):
            found.append(f"{opened.municipality}:{opened.case_ref}")
            if len(found) >= limit:
                break
    return len(found), found


def describe_location(database_url: str) -> str:
    """Where a store is, for a person: the URL without password, and a SQLite file's full path."""
    shown = redact_url(database_url)
    if database_url.startswith("sqlite"):
        path = database_url.split("///", 1)[1].split("?", 1)[0]
        return f"{shown} (the file {Path(path).resolve()})"
    if database_url.startswith("memory"):
        return f"{shown} (in memory: gone when this command ends)"
    return shown


def refuse_other_cases(store: CaseStore, lines: list[str]) -> None:
    """Refuse a store holding cases the demo did not open (events are never deleted)."""
    count, refs = other_cases(store, demo_opening_ids(lines))
    if count:
        raise DemoRefusedError(
            f"{describe_location(store.database_url)} already holds cases that are not demo "
            f"cases ({', '.join(refs)}{' ...' if count >= 3 else ''}); the demo's events could "
            "never be removed from it. Point ABATE_DATABASE_URL (or --database-url) at an "
            "empty store, or add --into-nonempty if you really mean this one")


def load_demo(store: CaseStore, runner: ViewRunner, lines: list[str], now: dt.datetime) -> str:
    """Import the demo journal (a second time records nothing), pass every deadline due by
    ``now``, and seal what was recorded. Logs and returns what happened, as a sentence."""
    service = case_service(Settings.from_env(), store, runner)
    outcome = service.import_journal(lines, now=now)
    swept = sweep_deadlines(service, now)
    sealed = bool(outcome.events_recorded + swept.events_recorded)
    if sealed:
        seal_store(store, actor="abate", reason="automatic: demo")
    where = describe_location(store.database_url)
    if outcome.events_recorded:
        said = (f"Demo loaded into {where}: {counted(outcome.applied, 'journal command')} "
                f"recorded {counted(outcome.events_recorded, 'event')}, "
                f"{outcome.deadlines_passed} of them deadlines passing as the journal's "
                f"dates went by")
    else:
        said = f"The demo was already in {where}: nothing was recorded twice"
    if swept.deadlines_passed:
        said += (f"; {counted(swept.deadlines_passed, 'deadline')} that came due since the "
                 "journal's last date passed now")
    said += "; a seal was taken." if sealed else "."
    log.info(said, database=where, journal=outcome.as_dict(),
             deadlines_passed_since=swept.deadlines_passed)
    return said


def store_holds(store: CaseStore, lines: list[str]) -> str:
    """Which cases the store holds, as a sentence: the demo's, and how many others (opened
    through the API while trying the demo, or let in with ``--into-nonempty``)."""
    demo_ids = demo_opening_ids(lines)
    total = demo = 0
    for notification in store.notifications(topics=(Case.Opened.TOPIC,)):
        total += 1
        opened = store.mapper.to_domain_event(notification)
        demo += getattr(opened, "command_id", None) in demo_ids
    where = describe_location(store.database_url)
    if total == demo:
        return f"The store at {where} holds the demo's {counted(demo, 'case')}."
    return (f"The store at {where} holds {counted(total, 'case')}: the demo's {demo} and "
            f"{counted(total - demo, 'other case')}.")

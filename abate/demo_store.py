"""Where the demo may go: never into a store that holds real cases.

A demo case is one opened by an ``open_case`` line of the demo journal: its opening
event carries that line's command id (``demo-0001`` ...). A case with the same
reference opened by any other command is a real case, so a village whose own
numbering happens to reach BV-2026-001 is still protected.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from cases.domain import Case
from cases.failures import redact_url
from cases.store import CaseStore


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
        if getattr(opened, "command_id", None) not in demo_ids:
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

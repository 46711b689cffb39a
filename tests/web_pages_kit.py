"""Facts written to a served store with ``abate import`` for the village pages' browser
tests (tests/test_web_village_pages.py): the clock advancing, abatements and bills
arriving beside the web pages, as the scheduler and a journal from the field record them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.abate_command import run_abate


def import_journal(database_url: str, folder: Path, *commands: dict[str, Any]) -> None:
    """Record journal lines with ``abate import`` on the served store."""
    path = folder / f"journal-{len(list(folder.glob('journal-*')))}.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in commands), encoding="utf-8")
    done = run_abate("import", str(path), database_url=database_url)
    assert done.returncode == 0, done.stderr

"""Browser checks of the village pages (tests/test_web_village_pages.py): axe-core run in
the page (vendored: tests/vendor/axe.min.js), the page's width against the window, and
facts written to the served store with ``abate import`` (the clock advancing included)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.abate_command import run_abate

AXE = Path(__file__).parent / "vendor" / "axe.min.js"


def serious_violations(page: Any) -> list[str]:
    """axe-core's serious and critical accessibility violations on the page as it stands."""
    page.add_script_tag(path=str(AXE))
    return list(page.evaluate("""async () => {
        const result = await axe.run(document, {resultTypes: ['violations']});
        return result.violations.filter(v => ['serious', 'critical'].includes(v.impact))
            .map(v => v.id + ': ' + v.help + ' at ' + v.nodes.map(n => n.target.join(' ')).join(', '));
    }"""))


def scrolls_sideways(page: Any) -> bool:
    """Whether the page is wider than the window (a horizontal scroll bar)."""
    return bool(page.evaluate(
        "() => document.documentElement.scrollWidth > document.documentElement.clientWidth"))


def import_journal(database_url: str, folder: Path, *commands: dict[str, Any]) -> None:
    """Record journal lines with ``abate import`` on the served store (as the scheduler's
    clock and a journal from the field arrive beside the web pages)."""
    path = folder / f"journal-{len(list(folder.glob('journal-*')))}.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in commands), encoding="utf-8")
    done = run_abate("import", str(path), database_url=database_url)
    assert done.returncode == 0, done.stderr

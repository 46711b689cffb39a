"""Finding the ``abate ...`` examples (and the benchmarks', ``python -m bench ...``) in
README.md and docs/, and turning each into commands that can run: optional ``[...]`` parts
expanded (without and with them), ``a|b`` alternatives split, and placeholders (``M``,
``FILE.jsonl``, ``DATE`` ...) replaced from one maintained table. An example that still
holds a placeholder, and is not in the table of special cases, is reported with its file
and line so the table (or the doc) is fixed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.abate_command import ROOT


@dataclass(frozen=True)
class Example:
    file: str  # relative to the repository root
    line: int
    text: str  # as written, without prompt and comment; ".venv/bin/abate" becomes "abate",
    # and "python3.11 dev.py bench" or ".venv/bin/python -m bench" becomes "python -m bench"

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def documentation_files(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


_COMMAND = re.compile(r"^(?:\$\s+)?(?:[\w.-]*/)*abate(?:\s|$)")
# The benchmarks (not installed): ``python -m bench`` from the checkout, or ``dev.py bench``.
_BENCH = re.compile(r"^(?:\$\s+)?(?:[\w.-]*/)*python[\d.]*\s+(?:-m|dev\.py)\s+bench(?:\s|$)")
BENCH = "python -m bench"


def _without_comment(text: str) -> str:
    """The text before a ``#`` comment (a ``#`` after a space, outside quotes)."""
    quote = None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i]
    return text


def _command_text(line: str) -> str | None:
    """The command on a line, if the line is an ``abate`` command or a benchmark (prompt and
    comment gone, ``.venv/bin/abate`` written ``abate``, a benchmark ``python -m bench``,
    spaces collapsed; otherwise as written)."""
    stripped = line.strip()
    bench = _BENCH.match(stripped)
    if not (bench or _COMMAND.match(stripped)):
        return None
    words = _without_comment(re.sub(r"^\$\s+", "", stripped)).split()
    if bench:
        return " ".join([BENCH, *words[words.index("bench") + 1:]])
    return " ".join(["abate", *words[1:]])


def extract(path: Path, root: Path = ROOT) -> list[Example]:
    """Every ``abate`` command (and benchmark) in a Markdown file: in fenced or indented code
    blocks, and lines that start with ``abate``. In a block that uses ``$`` prompts only
    prompted lines are commands (the others are output). A trailing backslash continues a
    command."""
    lines = path.read_text(encoding="utf-8").splitlines()
    relative = str(path.relative_to(root))
    found: list[Example] = []
    in_fence = False
    block: list[tuple[int, str]] = []

    def flush_block() -> None:
        prompted = any(text.lstrip().startswith("$ ") for _, text in block)
        i = 0
        while i < len(block):
            number, text = block[i]
            while text.rstrip().endswith("\\") and i + 1 < len(block):
                i += 1
                text = text.rstrip()[:-1] + " " + block[i][1].strip()
            if not prompted or text.lstrip().startswith("$ "):
                command = _command_text(text)
                if command:
                    found.append(Example(relative, number, command))
            i += 1
        block.clear()

    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("```"):
            if in_fence:
                flush_block()
            in_fence = not in_fence
            continue
        if in_fence or line.startswith("    ") or line.startswith("\t"):
            block.append((number, line))
            continue
        flush_block()
        if line.startswith(("abate ", ".venv/bin/abate ")):
            block.append((number, line))
            flush_block()
    flush_block()
    return found


def all_examples(root: Path = ROOT) -> list[Example]:
    return [example for path in documentation_files(root) for example in extract(path, root)]


# ---------------------------------------------------------------- making examples runnable

# A placeholder's value, by the option it follows (or "" for a positional one), then alone.
PLACEHOLDERS: dict[tuple[str, str], str] = {
    ("--municipality", "M"): "belleville",
    ("--tax-year", "Y"): "2026",
    ("--county", "C"): "Dane",
    ("--as-of", "DATE"): "2026-11-30",
    ("--as-of", "T"): "2026-11-30T12:00:00-06:00",
    ("--as-of", "TIMESTAMP"): "2026-11-30T12:00:00-06:00",
    ("--known-at", "T"): "2026-11-30T12:00:00-06:00",
    ("--known-at", "TIMESTAMP"): "2026-11-30T12:00:00-06:00",
    ("--now", "T"): "2026-11-30T12:00:00-06:00",
    ("--now", "TIMESTAMP"): "2026-11-30T12:00:00-06:00",
    ("--actor", "NAME"): "Finance Director",
    ("--party", "NAME"): "Karen Stauffacher",
    ("--parcel", "COUNTY/NUMBER"): "Dane/0509-363-8125-2",
    ("--parcel", "NUMBER"): "0509-363-8125-2",
    ("--rule-family", "F"): "snow",
    ("--status", "S"): "open",
    ("--due-by", "DATE"): "2026-12-31",
    ("--action", "KIND"): "serve_notice",
    ("--deadline", "NAME"): "cure",
    ("--owner", "TEXT"): "Stauff",
    ("--rule", "RULE"): "belleville:9.09",
    ("--limit", "N"): "2",
    ("--offset", "N"): "1",
    ("--output", "FILE"): "certified.csv",
    ("--output", "FILE.csv"): "certified.csv",
    # The benchmarks' options (docs/benchmarks.md); their examples are parsed, not run.
    ("--postgres-url", "..."): "postgresql+psycopg://postgres@127.0.0.1:5432/test",
    ("--postgres-url", "URL"): "postgresql+psycopg://postgres@127.0.0.1:5432/test",
    ("--integrity-cases", "N"): "2000",
    ("--http-cases", "N"): "300",
    ("--http-requests", "R"): "200",
    ("--http-concurrency", "C"): "4",
    ("--http-workers", "W"): "2",
    # A seal kept outside the store: the work folder's own seal (tests/test_documented_commands.py
    # records it as seal-12.json and fills these in).
    ("--seal", "abate-seal 12 position 55012 events 55012 cases 10003 digest 3f2a..."): "{seal_line}",
    ("--seal", "3f2a..."): "{seal_digest}",
    ("rebuild", "NAME"): "worklist",
    ("rules", "RULE"): "belleville:9.09",
    ("", "CASE_REF"): "BV-2026-001",
    ("", "FILE.jsonl"): "journal.jsonl",
    ("", "FILE"): "journal.jsonl",
}

# Files an example may name, in the folder the examples run in (the journals that docs show
# failing are given here: their refused line is what the docs describe).
WORK_FILES: dict[str, str] = {
    "bad.jsonl": ('{"command": "record_abatement", "municipality": "belleville", '
                  '"case_ref": "BV-2026-777", "at": "2026-03-20T10:00:00-05:00", '
                  '"actor": "dpw", "costs": [], "id": "bad-1"}\n'),
    "e2.jsonl": ('{"command": "serve_notice", "municipality": "belleville", "case_ref": "BV-1", '
                 '"at": "2026-03-17T10:00:00", "actor": "officer", "method": "pigeon", '
                 '"id": "e2-1"}\n'),
    "e3.jsonl": '{"command": "open_case" "municipality": "belleville"}\n',
}

# Examples documented to fail, with the exit status the docs promise.
EXPECTED_EXIT: dict[str, int] = {
    "abate import bad.jsonl": 1,
    "abate import e2.jsonl": 1,
    "abate import e3.jsonl": 1,
}

# Commands that run until stopped: run instead as given, or started and stopped (SIGTERM).
UNTIL_STOPPED: dict[str, str] = {
    "abate scheduler": "abate scheduler --once",
    "abate projections run": "stop",
}

# Examples not run, by the start of the command, each with the reason.
SKIPPED: dict[str, str] = {
    "abate serve": "a fixed port may be taken on a shared machine; tests/test_api_serve.py "
                   "starts `abate serve` on a free port and calls it",
}

_PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*(?:/[A-Z_]+)?(?:\.[a-z]+)?$|\.\.\.|<[^>]+>")


def skip_reason(command: str) -> str | None:
    for start, reason in SKIPPED.items():
        if command == start or command.startswith(start + " "):
            return reason
    return None


def _split_alternatives(text: str) -> list[str]:
    """``(a | b)`` and ``x|y|z`` tokens: one text per alternative (the first such group)."""
    group = re.search(r"\(([^()]*\|[^()]*)\)", text)
    if group:
        return [text[:group.start()] + choice.strip() + text[group.end():]
                for choice in group.group(1).split("|")]
    for token in text.split():
        if "|" in token and not token.startswith(("'", '"')):
            return [text.replace(token, choice, 1) for choice in token.split("|") if choice]
    return [text]


def variants(text: str) -> list[str]:
    """The concrete command texts for an example: optional parts left out, then all put in;
    each alternative once."""
    texts = [re.sub(r"\s*\[[^\[\]]*\]", "", text),
             re.sub(r"\[([^\[\]]*)\]", r"\1", text)]
    done: list[str] = []
    pending = list(dict.fromkeys(texts))
    while pending:
        current = pending.pop(0)
        split = _split_alternatives(current)
        if split == [current]:
            done.append(re.sub(r"\s+", " ", current).strip())
        else:
            pending = split + pending
    return list(dict.fromkeys(done))


def substitute(command: str) -> tuple[list[str], list[str]]:
    """(the argument list with placeholders replaced, the placeholders left unresolved)."""
    tokens = shlex.split(command)
    out: list[str] = []
    unresolved: list[str] = []
    for i, token in enumerate(tokens):
        previous = tokens[i - 1] if i else ""
        value = (PLACEHOLDERS.get((previous, token))
                 or (PLACEHOLDERS.get(("", token)) if _PLACEHOLDER.search(token) else None))
        if value is None and _PLACEHOLDER.search(token):
            unresolved.append(token)
        out.append(value if value is not None else token)
    return out, unresolved

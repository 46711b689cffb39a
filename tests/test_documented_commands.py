"""Every ``abate ...`` example in README.md and docs/ runs as written against a fresh demo
store: the README's through the installed command in a process, as a person types them, and
the docs' through ``abate.cli.main`` in this process (the same command line; a command that
runs until stopped always in a process); every benchmark example (``python -m bench ...``)
is taken by the benchmarks' parser (tests/documented_commands.py finds and expands them)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from abate.demo_store import demo_journal_path
from tests.abate_command import ABATE, ROOT, abate_env, run_abate
from tests.documented_commands import (
    BENCH,
    EXPECTED_EXIT,
    UNTIL_STOPPED,
    WORK_FILES,
    Example,
    all_examples,
    extract,
    skip_reason,
    substitute,
    variants,
)

EXAMPLES = [e for e in all_examples() if not e.text.startswith(BENCH)]
BENCH_EXAMPLES = [e for e in all_examples() if e.text.startswith(BENCH)]


def _example_journal() -> str:
    """The worked example of docs/commands.md (the block of ``ex-`` commands), as a file."""
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    for block in text.split("```")[1::2]:
        lines = [line for line in block.splitlines() if line.startswith("{")]
        if lines and all('"id": "ex-' in line for line in lines):
            return "\n".join(lines) + "\n"
    return ""


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """(the folder examples run in, their environment): a demo store and the files they name."""
    folder = tmp_path_factory.mktemp("documented")
    env = abate_env(f"sqlite:///{folder / 'abate.sqlite3'}")
    done = run_abate("demo", env=env, cwd=folder)
    assert done.returncode == 0, done.stderr
    shutil.copy(demo_journal_path(), folder / "journal.jsonl")
    (folder / "example.jsonl").write_text(_example_journal(), encoding="utf-8")
    for name, content in WORK_FILES.items():
        (folder / name).write_text(content, encoding="utf-8")
    sealed = run_abate("seal", "--output", "seal-12.json", env=env, cwd=folder)
    assert sealed.returncode == 0, sealed.stderr
    seal = json.loads(sealed.stdout)
    env = {**env, "seal_line": seal["line"], "seal_digest": seal["log_digest"]}
    return folder, env


def _run_until_stopped(args: list[str], folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    process = subprocess.Popen([ABATE, *args[1:]], cwd=folder, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    # Stopped once it says it is running (its first log line), not after a fixed pause: on a
    # loaded machine a SIGTERM sent before the command is up would end it as -15.
    first_line = process.stderr.readline()
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)
    return subprocess.CompletedProcess(args, process.returncode, stdout, first_line + stderr)


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.where for e in EXAMPLES])
def test_documented_command_runs_as_written(example: Example, work):
    folder, env = work
    reason = skip_reason(example.text)
    if reason:
        pytest.skip(f"{example.where}: {reason}")
    for variant in variants(example.text):
        stop = UNTIL_STOPPED.get(variant)
        command = stop if stop and stop != "stop" else variant
        args, unresolved = substitute(command)
        assert not unresolved, (
            f"{example.where}: `{example.text}` has placeholders {unresolved} that "
            "tests/documented_commands.py does not know: add them to PLACEHOLDERS, list the "
            "example in SKIPPED with a reason, or write the example with real values")
        args = [arg.format_map(env) if arg.startswith("{seal_") else arg for arg in args]
        if stop == "stop":
            done = _run_until_stopped(args, folder, env)
        elif example.where.startswith("README.md"):  # as a person types it: a process
            done = subprocess.run([ABATE, *args[1:]], cwd=folder, env=env, capture_output=True,
                                  text=True, timeout=300)
        else:  # the docs' many examples: the same command line, in this process
            done = run_abate(*args[1:], cwd=folder, env=env)
        expected = EXPECTED_EXIT.get(variant, 0)
        assert "Traceback" not in done.stderr, f"{example.where}: `{command}`\n{done.stderr}"
        assert done.returncode == expected, (
            f"{example.where}: `{command}` (from `{example.text}`) exited {done.returncode}, "
            f"documented {expected}:\n{done.stderr[-2000:]}")


@pytest.mark.parametrize("example", BENCH_EXAMPLES, ids=[e.where for e in BENCH_EXAMPLES])
def test_documented_benchmark_takes_its_options(example: Example, capsys):
    """A benchmark takes minutes of CPU, so the documented ones are not run here
    (tests/test_bench.py runs each section small): each is parsed by the benchmarks' own
    parser, so the docs name only sections, options and values that exist."""
    from bench.cli import build_parser

    for variant in variants(example.text):
        args, unresolved = substitute(variant)
        assert not unresolved, (
            f"{example.where}: `{example.text}` has placeholders {unresolved} that "
            "tests/documented_commands.py does not know: add them to PLACEHOLDERS")
        try:
            build_parser().parse_args(args[len(BENCH.split()):])
        except SystemExit as ended:  # --help ends with 0; a refusal with 2
            if ended.code:
                pytest.fail(f"{example.where}: `{variant}` is refused (exit {ended.code}): "
                            f"{capsys.readouterr().err.strip()}")


def test_the_examples_are_found():
    """The extraction sees the commands people copy (a guard against a silent zero)."""
    texts = {e.text for e in EXAMPLES}
    assert len(EXAMPLES) >= 25
    assert "abate scheduler [--once]" in texts
    assert "abate import example.jsonl" in texts
    assert all(e.text.startswith("abate") for e in EXAMPLES)
    readme = [e for e in EXAMPLES if e.file == "README.md"]
    assert len(readme) >= 10
    assert {e.file for e in BENCH_EXAMPLES} >= {"README.md", "docs/benchmarks.md"}


def test_extraction_handles_prompts_output_comments_and_continuations(tmp_path):
    doc = tmp_path / "docs.md"
    doc.write_text("\n".join([
        "Some prose mentioning `abate verify` inline.",
        "",
        "```sh",
        "abate worklist --municipality belleville \\",
        "               --overdue       # what is late",
        "python3.11 dev.py bench --only lifecycle   # a benchmark",
        ".venv/bin/python -m bench --cases 300 \\",
        "    --tax-roll-sizes 1000",
        "```",
        "",
        "```",
        "$ abate import bad.jsonl",
        "abate import: bad.jsonl: line 6: refused",
        "```",
        "",
        "    Environment=ABATE_DATABASE_URL=postgresql+psycopg://abate@db-host:5432/abate",
        "    .venv/bin/abate tax-roll certify --actor \"Finance Director\"  # certify",
        "",
    ]))
    found = extract(doc, tmp_path)
    assert [(e.line, e.text) for e in found] == [
        (4, "abate worklist --municipality belleville --overdue"),
        (6, "python -m bench --only lifecycle"),
        (7, "python -m bench --cases 300 --tax-roll-sizes 1000"),
        (12, "abate import bad.jsonl"),
        (17, 'abate tax-roll certify --actor "Finance Director"'),
    ]


def test_placeholders_and_optional_parts_expand():
    assert variants("abate worklist --municipality M [--as-of DATE] [--overdue]") == [
        "abate worklist --municipality M",
        "abate worklist --municipality M --as-of DATE --overdue"]
    assert variants("abate projections status|rebuild|run") == [
        "abate projections status", "abate projections rebuild", "abate projections run"]
    assert variants("abate r --m M (--parcel COUNTY/NUMBER | --party NAME) --f F") == [
        "abate r --m M --parcel COUNTY/NUMBER --f F", "abate r --m M --party NAME --f F"]
    args, unresolved = substitute("abate tax-roll export --municipality M --tax-year Y --county C")
    assert args[-5:] == ["belleville", "--tax-year", "2026", "--county", "Dane"] and not unresolved
    assert substitute("abate verify --seal FILE_OR_DIGEST")[1] == ["FILE_OR_DIGEST"]


def test_the_worked_example_journal_is_found():
    lines = _example_journal().splitlines()
    assert len(lines) >= 5 and all(json.loads(line)["id"].startswith("ex-") for line in lines)

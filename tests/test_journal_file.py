"""A journal file that is not a journal, through ``abate import`` as a user runs it: one clear
line naming the line and what to do, exit status 2, nothing recorded, never a traceback.

The case opened on line 1 is valid in every file, so "nothing recorded" is checked: the
import stops at the bad line and line 1 is not saved either.
"""

import json
import sys
from pathlib import Path

import pytest

from tests.abate_command import run_abate
from tests.builders import CaseLines, as_lines

ABATE = str(Path(sys.executable).with_name("abate"))
NUNEZ = CaseLines("belleville", "ENC-1")
OPENED = NUNEZ.open("belleville:9.13", "2026-03-02T09:00:00-06:00",
                    owner={"name": "José Núñez", "mailing_address": "1 Calle Mayor"})
NOTICE = NUNEZ.cmd("serve_notice", "2026-03-02T10:00:00-06:00", method="personal",
                   served_on="José Núñez")
TEXT = "\n".join(json.dumps(c, ensure_ascii=False) for c in (OPENED, NOTICE)) + "\n"


def import_file(tmp_path: Path, content: bytes, env: dict | None = None) -> tuple[int, str, str]:
    journal = tmp_path / "journal.jsonl"
    journal.write_bytes(content)
    url = f"sqlite:///{tmp_path / 'a.sqlite3'}"
    done = run_abate("--database-url", url, "import", str(journal), env=env)
    shown = run_abate("--database-url", url, "case", "show", "--municipality", "belleville",
                      "ENC-1")
    recorded = shown.stdout if shown.returncode == 0 else ""
    return done.returncode, done.stderr, recorded


def refused(tmp_path: Path, content: bytes, env: dict | None = None) -> str:
    """The one error line of a refused import, after checking exit 2 and nothing recorded."""
    code, stderr, recorded = import_file(tmp_path, content, env)
    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert recorded == ""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].endswith("nothing was recorded")
    return lines[0]


def test_a_latin1_journal_names_the_line_and_byte_and_the_conversion(tmp_path):
    message = refused(tmp_path, TEXT.encode("latin-1"))
    assert ": line 1: byte 0xE9 (byte " in message
    assert "is not UTF-8" in message and "iconv -f LATIN1 -t UTF-8" in message


def test_a_latin1_byte_on_a_later_line_names_that_line(tmp_path):
    content = (as_lines(OPENED)[0].encode() + b"\n"  # ASCII (escaped), then Latin-1
               + json.dumps(NOTICE, ensure_ascii=False).encode("latin-1") + b"\n")
    message = refused(tmp_path, content)
    assert ": line 2: byte 0xE9" in message
    in_line, in_file = content.split(b"\n")[1].index(b"\xe9") + 1, content.index(b"\xe9") + 1
    assert f"(byte {in_line} of the line, {in_file:,} of the file)" in message


def test_positions_count_from_one_in_the_line_and_in_the_file(tmp_path):
    """On line 1 the byte's place in the line is its place in the file; after a UTF-8
    byte-order mark (three bytes, skipped) the file's count is three more."""
    line = '{"command":"record_inspection","f":"caf\xe9"}'.encode("latin-1") + b"\n"
    place = line.index(b"\xe9") + 1
    assert f"(byte {place} of the line, {place} of the file)" in refused(tmp_path, line)
    marked = refused(tmp_path, b"\xef\xbb\xbf" + line)
    assert f"(byte {place} of the line, {place + 3} of the file)" in marked
    assert "(byte 2 of the line, 2 of the file)" in refused(tmp_path, "{}".encode("utf-16-le"))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_a_utf16_or_utf32_journal_with_a_byte_order_mark_is_named(tmp_path, encoding):
    message = refused(tmp_path, TEXT.encode(encoding))  # Python writes the mark first
    name = encoding.upper()
    assert f": line 1: the file is {name} text (it starts with a {name} byte-order mark)" in message
    assert f"iconv -f {name} -t UTF-8" in message


def test_a_utf16_journal_without_a_byte_order_mark_is_named_by_its_nul_bytes(tmp_path):
    message = refused(tmp_path, TEXT.encode("utf-16-le"))
    assert ": line 1: a NUL byte" in message and "looks like UTF-16" in message


def test_a_utf8_journal_with_a_byte_order_mark_is_imported(tmp_path):
    """Windows Notepad saves UTF-8 with a mark: accepted silently."""
    code, stderr, recorded = import_file(tmp_path, b"\xef\xbb\xbf" + TEXT.encode("utf-8"))
    assert code == 0, stderr
    assert json.loads(recorded)["owner"]["name"] == "José Núñez"


def test_windows_line_ends_are_read(tmp_path):
    code, stderr, _ = import_file(tmp_path, TEXT.replace("\n", "\r\n").encode())
    assert code == 0, stderr


def test_a_line_longer_than_the_limit_is_refused_without_being_read_whole(tmp_path):
    huge = json.dumps({**NOTICE, "served_on": "x" * 5_000_000})  # 5 MB, one line
    message = refused(tmp_path, (as_lines(OPENED)[0] + "\n" + huge + "\n").encode())
    assert ": line 2: the line is longer than the limit of 65,536 bytes" in message


def test_the_line_limit_is_a_setting(tmp_path):
    import os

    long_line = json.dumps({**NOTICE, "served_on": "x" * 3000})
    content = (as_lines(OPENED)[0] + "\n" + long_line + "\n").encode()
    env = {**os.environ, "ABATE_JOURNAL_MAX_LINE_BYTES": "2048"}
    assert ": line 2: the line is longer than the limit of 2,048 bytes" in refused(
        tmp_path, content, env)


def test_a_deeply_nested_line_names_its_depth(tmp_path):
    deep = json.dumps({**NOTICE, "extra": [[[[[[[[[[[[["x"]]]]]]]]]]]]]})
    message = refused(tmp_path, (as_lines(OPENED)[0] + "\n" + deep + "\n").encode())
    assert ": line 2: the JSON is nested 14 levels deep, deeper than the limit of 10" in message


def test_a_refused_command_before_an_unreadable_line_is_the_one_reported(tmp_path):
    """Lines are read ahead in chunks; the first bad line is still the one named."""
    early = NUNEZ.cmd("record_payment", "2026-03-02T11:00:00-06:00", amount="10.00")
    content = (TEXT + json.dumps(early) + "\n").encode() + "{\"é\": 1}\n".encode("latin-1")
    code, stderr, recorded = import_file(tmp_path, content)
    assert code == 1 and ": line 3: " in stderr and "Traceback" not in stderr
    assert recorded == ""


def test_a_file_that_cannot_be_opened_is_exit_2(tmp_path):
    done = run_abate("--database-url", f"sqlite:///{tmp_path / 'a.sqlite3'}", "import",
                     str(tmp_path))
    assert done.returncode == 2 and "cannot read" in done.stderr
    assert "Traceback" not in done.stderr

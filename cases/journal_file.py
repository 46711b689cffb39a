"""A journal file read line by line as UTF-8, never more than one bounded line in memory.

``abate import`` hands these lines to ``CaseService.import_journal`` as they are read, so a
journal of a million lines is never held whole. Bytes that are not a journal stop the
import at the line where they are met (the import then records nothing), with a message
that says what to do:

- a UTF-8 byte-order mark at the start (Windows Notepad writes one) is skipped silently;
- a UTF-16 or UTF-32 byte-order mark, or NUL bytes in a line (UTF-16 without a mark),
  ask for the file to be saved as UTF-8;
- bytes that are not UTF-8 (Latin-1, Windows-1252) are named with their line, column and
  byte offset in the file, with the conversion to make;
- a line longer than the limit is refused after reading one byte past the limit, so a
  huge line without a newline is never read whole.
"""

from __future__ import annotations

import codecs
import itertools
from collections.abc import Iterator
from typing import BinaryIO

from cases.errors import UnreadableLineError

_WIDE_MARKS = (  # UTF-32 first: its little-endian mark begins with UTF-16's
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)
_SAVE_AS_UTF8 = "save the journal as UTF-8 (for example: iconv -f {enc} -t UTF-8 IN > OUT) and import again"


def journal_lines(file: BinaryIO, max_line_bytes: int) -> Iterator[str]:
    """The lines of a journal opened in binary mode (without line ends), as UTF-8 text.

    Bytes that are not a journal raise ``UnreadableLineError`` naming the line.
    """
    offset = 0  # bytes before the current line in the file (positions shown count from 1)
    for number in itertools.count(1):
        raw = file.readline(max_line_bytes + 2)  # the limit, plus "\r\n"
        if not raw:
            return
        if number == 1:
            raw, offset = _without_utf8_mark(raw)
        content = raw.rstrip(b"\r\n")
        if len(content) > max_line_bytes:
            raise UnreadableLineError(
                number, f"the line is longer than the limit of {max_line_bytes:,} bytes "
                        "(ABATE_JOURNAL_MAX_LINE_BYTES)")
        yield _decoded(number, content, offset)
        offset += len(raw)


def _without_utf8_mark(raw: bytes) -> tuple[bytes, int]:
    for mark, encoding in _WIDE_MARKS:
        if raw.startswith(mark):
            raise UnreadableLineError(
                1, f"the file is {encoding} text (it starts with a {encoding} byte-order mark), "
                   f"not UTF-8: " + _SAVE_AS_UTF8.format(enc=encoding))
    if raw.startswith(codecs.BOM_UTF8):
        return raw[len(codecs.BOM_UTF8):], len(codecs.BOM_UTF8)
    return raw, 0


def _decoded(number: int, content: bytes, offset: int) -> str:
    nul = content.find(b"\x00")
    if nul >= 0:
        raise UnreadableLineError(
            number, f"a NUL byte (byte {nul + 1} of the line, {offset + nul + 1:,} of the file): the "
                    "file looks like UTF-16 or UTF-32 text, not UTF-8: "
                    + _SAVE_AS_UTF8.format(enc="UTF-16"))
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableLineError(
            number, f"byte 0x{content[exc.start]:02X} (byte {exc.start + 1} of the line, "
                    f"{offset + exc.start + 1:,} of the file) is not UTF-8; the file is perhaps "
                    "Latin-1 or Windows-1252: " + _SAVE_AS_UTF8.format(enc="LATIN1")) from None

"""The page every Abate document is printed on: US letter, PDF/A-2B, one embedded font, the
same bytes for the same inputs.

Why these choices: letters are mailed and kept for years (PDF/A keeps them readable; the
font is embedded from the ``font-source-sans-pro`` package, so nothing depends on the fonts
of the machine that prints); an auditor regenerates a letter and compares its SHA-256 with
the one recorded when it was issued, so nothing in the file may come from the clock or
chance: the creation and modification dates are the document's own date (from the case),
the XMP metadata is written here (fpdf2's own writes the current time), and the file
identifier is fpdf2's digest of the content.

The recipient's address block sits where a #10 window envelope shows it when the letter is
folded in three: 7/8 inch from the left edge, 2 inches from the top, 4 inches wide and
1 inch high (the window is 4 1/2 by 1 1/8 inches, 7/8 inch from the left and 1/2 inch from
the bottom of the envelope).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from copy import deepcopy
from html import escape
from pathlib import Path
from typing import Any

import font_source_sans_pro
import fpdf
from fpdf import FPDF
from fpdf.enums import XPos, YPos
from fpdf.recorder import FPDFRecorder

from cases.rules.catalog import NOT_SET

# Bumped whenever a builder's output for the same inputs changes (a new layout, new words);
# recorded on each issued document with fpdf2's version, which also shapes the bytes.
LAYOUT_VERSION = 5
GENERATOR = f"abate-documents/{LAYOUT_VERSION} fpdf2/{fpdf.__version__}"

INCH = 25.4  # millimetres
FONT = "SourceSansPro"
_FONT_FILES = Path(font_source_sans_pro.font_directory)

# The window of a #10 envelope on a letter folded in three (see the module's docstring).
WINDOW_LEFT = 0.875 * INCH
WINDOW_TOP = 2.0 * INCH
WINDOW_WIDTH = 4.0 * INCH
WINDOW_HEIGHT = 1.0 * INCH
MARGIN = 0.875 * INCH


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Page(FPDF):
    """A letter-size PDF/A-2B document with the embedded font and deterministic metadata."""

    def __init__(self, *, title: str, author: str, dated: dt.datetime, footer: str):
        super().__init__(orientation="P", unit="mm", format="letter", enforce_compliance="PDFA_2B")
        if dated.tzinfo is None:
            raise ValueError("a document's date needs its UTC offset")
        self._footer_text = footer
        self.set_margins(MARGIN, 0.75 * INCH, MARGIN)
        self.set_auto_page_break(True, margin=0.75 * INCH)
        self.add_font(FONT, "", str(_FONT_FILES / "SourceSansPro-Regular.ttf"))
        self.add_font(FONT, "B", str(_FONT_FILES / "SourceSansPro-Bold.ttf"))
        self.add_font(FONT, "I", str(_FONT_FILES / "SourceSansPro-It.ttf"))
        self.set_creation_date(dated)
        self.set_creator("Abate")
        self.set_lang("en-US")
        self.set_title(title)
        self.set_author(author)
        self.set_xmp_metadata(_xmp(title=title, author=author, dated=dated))
        self.add_page()

    def footer(self) -> None:
        self.set_y(-0.6 * INCH)
        self.set_font(FONT, "", 8)
        self.set_text_color(90, 90, 90)
        self.cell(0, 4, f"{self._footer_text}  ·  page {self.page_no()} of {{nb}}",
                  align="C")
        self.set_text_color(0, 0, 0)

    @contextmanager
    def offset_rendering(self) -> Iterator[FPDFRecorder]:
        """fpdf2's trial rendering (does this block fit on the page?), with each font's
        glyph widths and glyph ids shared instead of copied twice per trial: they are
        read only after the font is loaded, and copying them was most of the time it took
        to issue a referral packet. Everything rendering changes is still copied and
        restored, so the document's bytes are those of fpdf2's own trial."""
        prev_page, prev_y = self.page, self.y
        recorder = _SharingRecorder(self)
        recorder.page_break_triggered = False
        yield recorder
        y_scroll = recorder.y - prev_y + (recorder.page - prev_page) * self.eph
        if prev_y + y_scroll > self.page_break_trigger or recorder.page > prev_page:
            recorder.page_break_triggered = True
        recorder.rewind()

    # ----------------------------------------------------------- writing helpers

    def letterhead(self, name: str, address: str, phone: str) -> None:
        """The village's name, address and phone across the top (from its settings); a
        setting the village has not set is left out: a mailed letter never says "not set"."""
        self.set_font(FONT, "B", 16)
        self.cell(0, 8, name, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        self.set_font(FONT, "", 9.5)
        for label, value in (("Address", address), ("Phone", phone)):
            if value != NOT_SET:
                self.cell(0, 5, f"{label}: {value}", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        self.set_draw_color(60, 60, 60)
        self.line(MARGIN, self.get_y() + 1, self.w - MARGIN, self.get_y() + 1)

    def window_address(self, lines: list[str]) -> None:
        """The recipient, inside the envelope's window (at most five lines fit)."""
        self.set_xy(WINDOW_LEFT, WINDOW_TOP)
        self.set_font(FONT, "", 10.5)
        height = WINDOW_HEIGHT / 5
        for line in lines[:5]:
            self.set_x(WINDOW_LEFT)
            self.cell(WINDOW_WIDTH, height, line, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        self.set_y(WINDOW_TOP + WINDOW_HEIGHT + 0.25 * INCH)

    def heading(self, text: str, size: float = 13) -> None:
        self.ln(2)
        self.set_font(FONT, "B", size)
        self.multi_cell(0, size * 0.5, text, align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        self.ln(1)

    def paragraph(self, text: str, *, bold: bool = False, size: float = 10.5,
                  indent: float = 0, after: float = 1) -> None:
        """Text wrapped at spaces onto as many lines and pages as it needs (never cut),
        ``indent`` millimetres in from the left margin."""
        self.set_font(FONT, "B" if bold else "", size)
        self.set_x(self.l_margin + indent)
        self.multi_cell(0, size * 0.48, text, align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        self.ln(after)

    def field(self, label: str, value: str, *, width: float = 1.6 * INCH) -> None:
        """``label`` in bold (one line), then its value wrapped beside it."""
        self.set_font(FONT, "B", 10)
        self.cell(width, 4.8, label)
        self.set_font(FONT, "", 10)
        self.multi_cell(0, 4.8, value, align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        self.ln(0.8)

    def ruled_table(self, header: tuple[str, ...], rows: list[tuple[str, ...]],
              widths: tuple[float, ...], align: tuple[str, ...] | None = None,
              size: float = 9) -> None:
        """A plain ruled table; its header repeats on each page."""
        self.set_font(FONT, "", size)
        aligns = align or tuple("LEFT" for _ in header)
        with self.table(col_widths=widths, text_align=aligns, line_height=size * 0.5,
                           first_row_as_headings=True, repeat_headings=1,
                           headings_style=fpdf.FontFace(emphasis="BOLD"),
                           width=sum(widths)) as table:
            for row in (header, *rows):
                table.row(row)
        self.ln(2)

    def output_bytes(self) -> bytes:
        return bytes(self.output())


class _SharingRecorder(FPDFRecorder):
    """An ``FPDFRecorder`` (without page breaks) whose copies of the document's state share
    the fonts' read-only tables (``Page.offset_rendering``)."""

    def __init__(self, pdf: FPDF) -> None:
        self.pdf = pdf
        self._initial: dict[str, Any] = deepcopy(vars(pdf), _shared(pdf))
        self._calls = []
        self.accept_page_break = False

    def rewind(self) -> None:
        state = vars(self.pdf)
        state.clear()
        state.update(self._initial)
        self._initial = deepcopy(state, _shared(self.pdf))


def _shared(pdf: FPDF) -> dict[int, Any]:
    """A deepcopy memo that maps each font's widths and glyph ids to themselves."""
    memo: dict[int, Any] = {}
    for font in pdf.fonts.values():
        for name in ("cw", "glyph_ids"):
            table = getattr(font, name, None)
            if table is not None:
                memo[id(table)] = table
    return memo


def _xmp(*, title: str, author: str, dated: dt.datetime) -> str:
    """The XMP packet PDF/A asks for, with the document's own date as every date in it."""
    when = dated.isoformat(timespec="seconds")
    return (
        '<x:xmpmeta xmlns:x="adobe:ns:meta/">\n'
        ' <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
        '  <rdf:Description rdf:about=""\n'
        '    xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"\n'
        '    xmlns:dc="http://purl.org/dc/elements/1.1/"\n'
        '    xmlns:xmp="http://ns.adobe.com/xap/1.0/"\n'
        '    xmlns:pdf="http://ns.adobe.com/pdf/1.3/">\n'
        '   <pdfaid:part>2</pdfaid:part>\n'
        '   <pdfaid:conformance>B</pdfaid:conformance>\n'
        f'   <dc:title><rdf:Alt><rdf:li xml:lang="x-default">{escape(title)}</rdf:li>'
        '</rdf:Alt></dc:title>\n'
        f'   <dc:creator><rdf:Seq><rdf:li>{escape(author)}</rdf:li></rdf:Seq></dc:creator>\n'
        f'   <xmp:CreateDate>{when}</xmp:CreateDate>\n'
        f'   <xmp:ModifyDate>{when}</xmp:ModifyDate>\n'
        f'   <xmp:MetadataDate>{when}</xmp:MetadataDate>\n'
        f'   <xmp:CreatorTool>{escape(GENERATOR)}</xmp:CreatorTool>\n'
        f'   <pdf:Producer>{escape(GENERATOR)}</pdf:Producer>\n'
        '  </rdf:Description>\n'
        ' </rdf:RDF>\n'
        '</x:xmpmeta>'
    )

"""What PDF/A-2B (ISO 19005-2, conformance level B) asks of a file that can be checked from
its structure, read with pikepdf (qpdf): a list of what fails, each naming the clause.

Why this exists: the documents claim PDF/A-2B in their XMP, and no validator can be installed
from this project's package registries (veraPDF, the reference validator, is a Java program
from Maven Central or its own installer; tests/test_pdfa.py runs it when it is on PATH). This
checks the parts of the standard that a file's objects show; it is not a full validator:
docs/documents.md, "PDF/A", lists what is and is not verified.
"""

from __future__ import annotations

import io
import re
from typing import Any

import pikepdf
from fontTools.ttLib import TTFont

PDFA_ID = "http://www.aiim.org/pdfa/ns/id/"
# ICC colour space signature -> the number of components a DeviceXXX space has.
ICC_COMPONENTS = {b"RGB ": 3, b"GRAY": 1, b"CMYK": 4}
# Content operators that paint in a device colour space, and that space's components.
DEVICE_OPERATORS = {"rg": 3, "RG": 3, "g": 1, "G": 1, "k": 4, "K": 4}
# Annotation flags (ISO 32000-1, 12.5.3): Print must be set; Hidden, Invisible, NoView and
# ToggleNoView must not (ISO 19005-2, 6.3.2).
PRINT, FORBIDDEN_FLAGS = 4, 1 | 2 | 32 | 256
# Info dictionary key -> the XMP property it must agree with (ISO 19005-2, 6.6.3).
INFO_XMP = {"/Title": "{http://purl.org/dc/elements/1.1/}title",
            "/Author": "{http://purl.org/dc/elements/1.1/}creator",
            "/Creator": "{http://ns.adobe.com/xap/1.0/}CreatorTool",
            "/Producer": "{http://ns.adobe.com/pdf/1.3/}Producer"}


def pdfa_2b_problems(content: bytes) -> list[str]:
    """Every PDF/A-2B requirement this module checks that ``content`` fails (none: [])."""
    problems = _header(content)
    with pikepdf.open(io.BytesIO(content)) as pdf:
        problems += [f"qpdf: {p}" for p in pdf.check_pdf_syntax()]
        problems += _trailer(pdf) + _metadata(pdf) + _output_intent(pdf) + _actions(pdf)
        problems += _streams(pdf)
        for number, page in enumerate(pdf.pages, start=1):
            problems += [f"page {number}: {p}" for p in _page(pdf, page)]
    return problems


def _header(content: bytes) -> list[str]:
    lines = content.split(b"\n", 2)
    problems = []
    if not re.fullmatch(rb"%PDF-1\.[0-7]\r?", lines[0]):
        problems.append(f"6.1.2: the header is {lines[0][:12]!r}, not %PDF-1.n")
    if len(lines) < 2 or not (lines[1].startswith(b"%")
                              and sum(b > 127 for b in lines[1][1:5]) == 4):
        problems.append("6.1.2: the header is not followed by a comment of four bytes above 127")
    if not content.rstrip(b"\r\n").endswith(b"%%EOF"):
        problems.append("6.1.3: the file does not end with %%EOF")
    return problems


def _trailer(pdf: pikepdf.Pdf) -> list[str]:
    problems = []
    if "/Encrypt" in pdf.trailer:
        problems.append("6.1.3: the file is encrypted")
    if "/ID" not in pdf.trailer:
        problems.append("6.1.3: the trailer has no file identifier (/ID)")
    return problems


def _metadata(pdf: pikepdf.Pdf) -> list[str]:
    stream = pdf.Root.get("/Metadata")
    if stream is None:
        return ["6.6.2.1: the catalog has no XMP metadata stream"]
    problems = []
    if stream.get("/Type") != "/Metadata" or stream.get("/Subtype") != "/XML":
        problems.append("6.6.2.1: the metadata stream is not /Type /Metadata /Subtype /XML")
    packet = stream.read_bytes()
    header = re.match(rb"<\?xpacket ([^?]*)\?>", packet)
    if header and re.search(rb"\b(bytes|encoding)=", header.group(1)):
        problems.append("6.6.2.1: the xpacket header uses a bytes or encoding attribute")
    try:
        meta = dict(pdf.open_metadata(set_pikepdf_as_editor=False))
    except Exception as error:  # noqa: BLE001 - any parse failure is the finding
        return [*problems, f"6.6.2.1: the XMP is not well-formed ({error})"]
    if meta.get(f"{{{PDFA_ID}}}part") != "2" or meta.get(f"{{{PDFA_ID}}}conformance") != "B":
        problems.append(f"6.6.4: the XMP says pdfaid:part {meta.get(f'{{{PDFA_ID}}}part')!r} "
                        f"conformance {meta.get(f'{{{PDFA_ID}}}conformance')!r}, not 2 and B")
    for key, prop in INFO_XMP.items():
        if key in pdf.docinfo:
            xmp = meta.get(prop)
            xmp = xmp[0] if isinstance(xmp, list) and xmp else xmp
            if str(pdf.docinfo[key]) != xmp:
                problems.append(f"6.6.3: Info {key} {str(pdf.docinfo[key])!r} is not the "
                                f"XMP's {xmp!r}")
    return problems


def _output_intent(pdf: pikepdf.Pdf) -> list[str]:
    intents = [i for i in pdf.Root.get("/OutputIntents", []) if i.get("/S") == "/GTS_PDFA1"]
    if not intents:
        return ["6.2.3: no /GTS_PDFA1 output intent"]
    profiles = {i.DestOutputProfile.objgen for i in intents if "/DestOutputProfile" in i}
    if len(profiles) != 1:
        return ["6.2.3: output intents without one shared /DestOutputProfile"]
    profile = intents[0].DestOutputProfile
    icc = profile.read_bytes()
    problems = []
    if icc[36:40] != b"acsp":
        problems.append("6.2.3: the output intent's profile is not an ICC profile")
    if icc[12:16] not in (b"mntr", b"prtr"):
        problems.append(f"6.2.3: the ICC profile's class is {icc[12:16]!r}, not mntr or prtr")
    if icc[8] > 4:
        problems.append(f"6.2.3: ICC profile version {icc[8]} (at most 4)")
    if ICC_COMPONENTS.get(icc[16:20]) != int(profile.get("/N", 0)):
        problems.append(f"6.2.3: /N {profile.get('/N')} does not match the profile's "
                        f"{icc[16:20]!r} colour space")
    return problems


def _actions(pdf: pikepdf.Pdf) -> list[str]:
    problems = []
    names = pdf.Root.get("/Names", {})
    if "/JavaScript" in names:
        problems.append("6.5.1: the document has JavaScript")
    if "/EmbeddedFiles" in names:
        problems.append("6.8: the document embeds files (not checked to be PDF/A)")
    if "/AA" in pdf.Root:
        problems.append("6.5.2: the catalog has additional actions (/AA)")
    action = pdf.Root.get("/OpenAction")
    if isinstance(action, pikepdf.Dictionary) and action.get("/S") in (
            "/JavaScript", "/Launch", "/ImportData", "/ResetForm", "/Hide"):
        problems.append(f"6.5.1: the open action is {action.get('/S')}")
    form = pdf.Root.get("/AcroForm", {})
    if "/XFA" in form or form.get("/NeedsRendering") is True:
        problems.append("6.4.2: the form is an XFA form")
    return problems


def _streams(pdf: pikepdf.Pdf) -> list[str]:
    problems = []
    for obj in pdf.objects:
        if not isinstance(obj, pikepdf.Stream):
            continue
        filters = obj.get("/Filter")
        names = [str(f) for f in filters] if isinstance(filters, pikepdf.Array) else [str(filters)]
        if "/LZWDecode" in names:
            problems.append(f"6.1.7.2: stream {obj.objgen} uses LZWDecode")
        if set(obj.keys()) & {"/F", "/FFilter", "/FDecodeParms"}:
            problems.append(f"6.1.7.1: stream {obj.objgen} refers to an external file")
        if obj.get("/Subtype") == "/Image" and obj.get("/Interpolate") is True:
            problems.append(f"6.2.8: image {obj.objgen} asks for /Interpolate")
    return problems


def _page(pdf: pikepdf.Pdf, page: pikepdf.Page) -> list[str]:
    problems = []
    if "/AA" in page.obj:
        problems.append("6.5.2: additional actions (/AA)")
    for annotation in page.obj.get("/Annots", []):
        flags = int(annotation.get("/F", 0))
        if not flags & PRINT or flags & FORBIDDEN_FLAGS:
            problems.append(f"6.3.2: annotation {annotation.get('/Subtype')} has flags {flags}")
        if annotation.get("/Subtype") not in ("/Popup", "/Link") and "/AP" not in annotation:
            problems.append(f"6.3.3: annotation {annotation.get('/Subtype')} has no appearance")
    fonts = page.obj.Resources.get("/Font", {})
    checked = {name: _font(font) for name, font in fonts.items()}
    for name, found in checked.items():
        problems += [f"font {name}: {p}" for p in found.problems]
    intent = _intent_components(pdf)
    font = None
    for operands, operator in pikepdf.parse_content_stream(page):
        op = str(operator)
        if op in DEVICE_OPERATORS and DEVICE_OPERATORS[op] != intent:
            problems.append(f"6.2.4.3: {op} paints in a device colour space of "
                            f"{DEVICE_OPERATORS[op]} components; the output intent has {intent}")
        elif op == "Tf":
            font = checked.get(str(operands[0]))
        elif op in ("Tj", "'", '"', "TJ") and font is not None:
            strings = operands[0] if op == "TJ" else operands[-1:]
            for text in strings:
                if isinstance(text, pikepdf.String):
                    problems += font.shown(bytes(text))
    return sorted(set(problems), key=problems.index)


def _intent_components(pdf: pikepdf.Pdf) -> int:
    for intent in pdf.Root.get("/OutputIntents", []):
        if "/DestOutputProfile" in intent:
            return int(intent.DestOutputProfile.get("/N", 0))
    return 0


class _CheckedFont:
    """One font of a page: whether it is embedded, and for a CID font with its TrueType
    program, whether each glyph shown is in the program with the width the PDF says."""

    def __init__(self, problems: list[str], program: TTFont | None = None,
                 cid_to_gid: bytes | None = None, widths: dict[int, float] | None = None,
                 default_width: float = 1000):
        self.problems = problems
        self._program = program
        self._cid_to_gid = cid_to_gid
        self._widths = widths or {}
        self._default_width = default_width

    def shown(self, text: bytes) -> list[str]:
        if self._program is None:
            return []
        problems = []
        glyphs = self._program.getGlyphOrder()
        scale = 1000 / self._program["head"].unitsPerEm
        for i in range(0, len(text) - 1, 2):
            cid = int.from_bytes(text[i:i + 2], "big")
            gid = (cid if self._cid_to_gid is None
                   else int.from_bytes(self._cid_to_gid[2 * cid:2 * cid + 2], "big"))
            if gid == 0 or gid >= len(glyphs):
                problems.append(f"6.2.11.8/6.2.11.4.1: CID {cid} shows glyph {gid}, "
                                "the .notdef glyph or none in the embedded program")
                continue
            advance = self._program["hmtx"][glyphs[gid]][0] * scale
            width = self._widths.get(cid, self._default_width)
            if abs(advance - width) > 1:
                problems.append(f"6.2.11.5: CID {cid} is {width} wide in the PDF, "
                                f"{advance:.0f} in the embedded program")
        return problems


def _font(font: Any) -> _CheckedFont:
    if font.get("/Subtype") != "/Type0":
        descriptor = font.get("/FontDescriptor", {})
        if not set(descriptor.keys()) & {"/FontFile", "/FontFile2", "/FontFile3"}:
            return _CheckedFont([f"6.2.11.4.1: {font.get('/BaseFont')} is not embedded"])
        return _CheckedFont([])
    cid_font = font.DescendantFonts[0]
    descriptor = cid_font.get("/FontDescriptor", {})
    program = descriptor.get("/FontFile2")
    if program is None:
        if set(descriptor.keys()) & {"/FontFile", "/FontFile3"}:
            return _CheckedFont([])
        return _CheckedFont([f"6.2.11.4.1: {cid_font.get('/BaseFont')} is not embedded"])
    mapping = cid_font.get("/CIDToGIDMap")
    if mapping is None:
        return _CheckedFont(["6.2.11.3.2: a CIDFontType2 without /CIDToGIDMap"])
    return _CheckedFont([], TTFont(io.BytesIO(program.read_bytes())),
                        None if mapping == "/Identity" else mapping.read_bytes(),
                        _cid_widths(cid_font.get("/W", [])),
                        float(cid_font.get("/DW", 1000)))


def _cid_widths(w: Any) -> dict[int, float]:
    """A CID font's /W array (``c [w1 w2 ...]`` or ``c_first c_last w``) as CID -> width."""
    widths: dict[int, float] = {}
    items = list(w)
    i = 0
    while i < len(items):
        first = int(items[i])
        if isinstance(items[i + 1], pikepdf.Array):
            for offset, width in enumerate(items[i + 1]):
                widths[first + offset] = float(width)
            i += 2
        else:
            for cid in range(first, int(items[i + 1]) + 1):
                widths[cid] = float(items[i + 2])
            i += 3
    return widths

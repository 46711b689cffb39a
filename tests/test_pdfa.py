"""The four documents are PDF/A-2B as far as can be checked here (docs/documents.md, "PDF/A"):
a notice, a bill, a referral packet and a certified tax-roll list, each written by the
installed ``abate`` (``document issue --output``, ``tax-roll certified-pdf --output``), are
checked clause by clause with tests/pdfa_kit.py; the check is shown to catch each thing it
looks for on a file broken on purpose; and veraPDF, the reference validator, judges the same
files when it is installed (``verapdf`` on PATH)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pikepdf
import pytest

from tests.api_kit import HOME
from tests.builders import CaseLines, dumping_through_bill
from tests.pdfa_kit import pdfa_2b_problems
from tests.test_reports import Abate

KINDS = ("notice", "bill", "referral-packet")
VERAPDF_MISSING = (
    "veraPDF is not installed (`verapdf` is not on PATH): install Java (apt-get install -y "
    "default-jre-headless) and veraPDF with its installer (https://docs.verapdf.org/install/), "
    "then put its `verapdf` script on PATH; set ABATE_REQUIRE_VERAPDF=1 to make its absence a "
    "failure")


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> dict[str, bytes]:
    """Each kind of document as the installed ``abate`` writes it, by file name."""
    folder = tmp_path_factory.mktemp("pdfa")
    cli = Abate((f"sqlite:///{folder / 'abate.sqlite3'}", {}, None))
    cli.load(folder, *dumping_through_bill(CaseLines(HOME, "BV-PA1")))
    for kind in KINDS:
        cli.run("document", "issue", "--municipality", HOME, "BV-PA1", "--kind", kind,
                "--actor", "Finance Director", "--output", str(folder / f"{kind}.pdf"))
    cli.run("tax-roll", "certify", "--municipality", HOME, "--tax-year", "2026", "--county",
            "Dane", "--actor", "Finance Director", "--output", str(folder / "certified.csv"))
    cli.run("tax-roll", "certified-pdf", "--municipality", HOME, "--tax-year", "2026",
            "--county", "Dane", "--output", str(folder / "certified-list.pdf"))
    return {name: (folder / f"{name}.pdf").read_bytes() for name in (*KINDS, "certified-list")}


@pytest.mark.parametrize("name", [*KINDS, "certified-list"])
def test_each_document_meets_what_pdfa_2b_asks_of_its_structure(documents, name):
    assert documents[name].startswith(b"%PDF-")
    assert pdfa_2b_problems(documents[name]) == []


def _drop_output_intent(pdf: pikepdf.Pdf) -> None:
    del pdf.Root["/OutputIntents"]


def _claim_part_1(pdf: pikepdf.Pdf) -> None:
    packet = pdf.Root.Metadata.read_bytes().replace(b"<pdfaid:part>2<", b"<pdfaid:part>1<")
    pdf.Root.Metadata.write(packet)


def _info_disagrees(pdf: pikepdf.Pdf) -> None:
    pdf.trailer.Info = pdf.make_indirect(pikepdf.Dictionary(Producer="something else"))


def _unembed_font(pdf: pikepdf.Pdf) -> None:
    font = pdf.pages[0].Resources.Font
    del next(iter(font.values())).DescendantFonts[0].FontDescriptor["/FontFile2"]


def _wrong_width(pdf: pikepdf.Pdf) -> None:
    for font in pdf.pages[0].Resources.Font.values():
        cid_font = font.DescendantFonts[0]
        cid_font.DW = 1
        cid_font.W = pikepdf.Array()


def _paint_in_cmyk(pdf: pikepdf.Pdf) -> None:
    pdf.pages[0].contents_add(pdf.make_stream(b"0 0 0 1 k 0 0 10 10 re f"), prepend=True)


def _javascript(pdf: pikepdf.Pdf) -> None:
    pdf.Root.OpenAction = pikepdf.Dictionary(S=pikepdf.Name.JavaScript, JS="app.alert(1)")


@pytest.mark.parametrize("breaks, clause", [
    (_drop_output_intent, "6.2.3: no /GTS_PDFA1 output intent"),
    (_claim_part_1, "6.6.4: the XMP says pdfaid:part '1'"),
    (_info_disagrees, "6.6.3: Info /Producer 'something else'"),
    (_unembed_font, "is not embedded"),
    (_wrong_width, "6.2.11.5: CID"),
    (_paint_in_cmyk, "6.2.4.3: k paints in a device colour space of 4 components"),
    (_javascript, "6.5.1: the open action is /JavaScript"),
    ("encrypt", "6.1.3: the file is encrypted"),
])
def test_the_check_finds_what_breaks_pdfa(documents, tmp_path, breaks, clause):
    """The check is no formality: each fault made on purpose in a good bill is found."""
    broken = tmp_path / "broken.pdf"
    with pikepdf.open(_write(tmp_path / "bill.pdf", documents["bill"])) as pdf:
        if breaks == "encrypt":
            pdf.save(broken, encryption=pikepdf.Encryption(owner="o", user=""))
        else:
            breaks(pdf)
            pdf.save(broken)
    found = pdfa_2b_problems(broken.read_bytes())
    assert any(clause in problem for problem in found), found


def _write(path, content: bytes):
    path.write_bytes(content)
    return path


def _verapdf() -> str:
    found = shutil.which("verapdf")
    if found is None:
        if os.environ.get("ABATE_REQUIRE_VERAPDF") == "1":
            pytest.fail(VERAPDF_MISSING)
        pytest.skip(VERAPDF_MISSING)
    return found


@pytest.mark.parametrize("name", [*KINDS, "certified-list"])
def test_verapdf_finds_each_document_pdfa_2b(documents, tmp_path, name):
    verapdf = _verapdf()
    path = _write(tmp_path / f"{name}.pdf", documents[name])
    done = subprocess.run([verapdf, "--flavour", "2b", "--format", "xml", str(path)],
                          capture_output=True, text=True, timeout=300)
    report = done.stdout
    verdicts = re.findall(r'isCompliant="(true|false)"', report)
    assert verdicts, f"no veraPDF verdict (exit {done.returncode}): {done.stderr[-2000:]}"
    failed = re.findall(r'<rule [^>]*clause="([^"]+)"[^>]*>\s*<description>([^<]*)', report)
    assert verdicts == ["true"], failed or report[-3000:]

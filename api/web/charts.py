"""The charts page (``/{municipality}/charts``): cases opened and closed per month per
rule family over the last 12 months (village time), and the charges certified to the tax
roll per year and county. Each chart is an SVG drawn on the server by pygal (no script)
with its numbers in a table beside it, for those who read rather than look (and for
screen readers)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from xml.etree import ElementTree
from zoneinfo import ZoneInfo

import pygal
from pygal.etree import etree as pygal_etree
from dateutil.relativedelta import relativedelta
from fastapi import APIRouter, Path, Request
from markupsafe import Markup

from api.consistency import reach
from api.web.render import page
from api.web.session import in_grant, require
from projections import CaseMonths, TaxRoll
from projections.certified_totals import certified_totals

router = APIRouter(include_in_schema=False)
# pygal draws with lxml whenever lxml is installed (pikepdf, a test dependency, brings it),
# and its lxml tree cannot be written by the standard library's ElementTree used below:
# always draw with the standard library, whatever else is installed.
pygal_etree.to_etree()
ElementTree.register_namespace("", "http://www.w3.org/2000/svg")
ElementTree.register_namespace("xlink", "http://www.w3.org/1999/xlink")
MONTHS = 12
# Colours a reader with a common colour-vision deficiency can tell apart (Okabe-Ito).
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")


def bar_chart(title: str, labels: Sequence[str], series: dict[str, list[float]],
              y_title: str, *, counts: bool = False) -> Markup:
    """An SVG bar chart, sized by its container (no JavaScript, no XML declaration)."""
    style = pygal.style.Style(colors=COLOURS, background="white", plot_background="white",
                              foreground="#1b1b1b", foreground_strong="#1b1b1b",
                              foreground_subtle="#4b5563", font_family="system-ui, sans-serif")
    chart = pygal.Bar(js=[], disable_xml_declaration=True, explicit_size=False, width=720,
                      height=360, style=style, title=title, y_title=y_title,
                      x_label_rotation=30, legend_at_bottom=True, print_values=False,
                      show_y_guides=True, min_scale=1, max_scale=6)
    chart.x_labels = list(labels)
    if counts:  # whole-number guides (never "0.8 cases")
        top = max((max(values, default=0) for values in series.values()), default=0)
        step = max(1, -(-int(top) // 6))
        chart.y_labels = list(range(0, int(top) + step + 1, step))
    for name, values in series.items():
        chart.add(name, values)
    if not series:
        chart.add("none", [0 for _ in labels])
    tree = chart.render_tree()
    for parent in list(tree.iter()):  # pygal's tooltip script: a page of ours runs none
        for child in [c for c in parent if str(c.tag).endswith("script")]:
            parent.remove(child)
    return Markup(ElementTree.tostring(tree, encoding="unicode"))


def months_ending(last: Any, count: int) -> list[str]:
    return [(last - relativedelta(months=n)).strftime("%Y-%m") for n in range(count - 1, -1, -1)]


@router.get("/{municipality}/charts", name="page.charts")
def charts_page(request: Request,
                municipality: str = Path(pattern=r"^[a-z]+$", max_length=32)) -> Any:
    user = require(request, "page.charts")
    in_grant(user, municipality)
    svc = request.app.state.services
    place = svc.cases.catalog.municipality(municipality)
    today = svc.clock().astimezone(ZoneInfo(place.time_zone)).date()
    months = months_ending(today.replace(day=1), MONTHS)
    reach(svc, (CaseMonths.name, TaxRoll.name), None)
    with svc.runner.engine.connect() as conn:
        counted = svc.runner.active(CaseMonths.name).per_month(
            conn, municipality=municipality, first_month=months[0], last_month=months[-1])
        certified = certified_totals(svc.runner.active(TaxRoll.name), conn,
                                     municipality=municipality)
    families = sorted({r.family for r in place.rules})
    tables, svgs = {}, {}
    for what in ("opened", "closed"):
        rows = [{"month": m, **{f: counted[what][(m, f)] for f in families},
                 "all": sum(counted[what][(m, f)] for f in families)} for m in months]
        tables[what] = rows
        svgs[what] = bar_chart(f"Cases {what} per month, by rule family", months,
                               {f.replace("_", " "): [r[f] for r in rows] for f in families},
                               "cases", counts=True)
    years = sorted({c["tax_year"] for c in certified})
    counties = sorted({c["county"] for c in certified})
    amounts = {(c["tax_year"], c["county"]): float(c["amount"]) for c in certified}
    svgs["certified"] = bar_chart(
        "Charges certified to the tax roll per year, by county (dollars)",
        [str(y) for y in years],
        {f"{county} County": [amounts.get((y, county), 0.0) for y in years]
         for county in counties}, "dollars")
    return page(request, "charts.html", {
        "municipality": municipality, "village": place.name, "families": families,
        "months": months, "tables": tables, "certified": certified, "svgs": svgs})

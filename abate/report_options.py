"""The options of the commands that read the views (abate/reports.py): tax roll, repeat
offenses, worklist, case lists, projections. Apart from the commands so that building the
parser imports none of them."""

from __future__ import annotations

import argparse
import datetime as dt
import re
from typing import Any

from abate.arguments import command, page_options, policed, tax_year
from cases.rules.files import rule_families
from cases.statuses import CASE_STATUSES


def _format_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=["json", "table"], default="json",
                   help="json (default; local times with UTC beside them) or a table to read, "
                        "times in local YYYY-MM-DD HH:MM and the zone")


def _file_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--output", metavar="FILE.csv",
                   help=f"write {what} here and its totals to FILE.summary.json beside it "
                        "(default: the CSV on stdout)")
    p.add_argument("--excel", action="store_true",
                   help="start the CSV with a UTF-8 byte-order mark so Excel on Windows shows "
                        "§ and accents right (leave it off for the county's software)")


def sha256_hex(value: str) -> str:
    """A list's SHA-256 as the export prints it (64 hexadecimal digits; any case)."""
    if re.fullmatch(r"[0-9a-fA-F]{64}", value):
        return value.lower()
    shown = repr(value[:20]) + ("..." if len(value) > 20 else "")
    raise argparse.ArgumentTypeError(
        f"{shown} is not a SHA-256: 64 hexadecimal digits (0-9, a-f), as the export prints it")


def add_parsers(sub: Any, timestamp: Any) -> None:
    def date(value: str) -> dt.date:
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a date (YYYY-MM-DD)") from None

    tax = sub.add_parser("tax-roll", help="charges to certify to the county tax roll")
    tax_sub = tax.add_subparsers(dest="tax_command", required=True, metavar="COMMAND")
    p = tax_sub.add_parser("export", help="the list of charges to certify")
    p.add_argument("--municipality", required=True)
    p.add_argument("--tax-year", type=tax_year, required=True)
    p.add_argument("--county")
    p.add_argument("--as-of", type=date, help="the business date the list is for (default today)")
    p.add_argument("--known-at", type=timestamp, help="the list as the system knew it then")
    p.add_argument("--format", choices=["csv", "json"], default="csv")
    _file_options(p, "the list (CSV)")
    p.set_defaults(func=command("abate.reports", "cmd_tax_roll_export"))
    p = tax_sub.add_parser("certify", help="certify the listed charges (once) and write the list")
    p.add_argument("--municipality", required=True)
    p.add_argument("--tax-year", type=tax_year, required=True)
    p.add_argument("--county", required=True)
    p.add_argument("--actor", required=True, type=policed("Actor", "who certifies"),
                   help="who certifies (recorded on each certification and on the seal)")
    p.add_argument("--as-of", type=date, dest="reviewed_as_of",
                   help="the date the reviewed list was as of (export's --as-of; default "
                        "today): refused, naming the changes, if the list changed since")
    p.add_argument("--known-at", type=timestamp, dest="reviewed_known_at",
                   help="when the reviewed list was read (printed by the export): lets a "
                        "refusal name what changed since")
    p.add_argument("--expect-sha256", metavar="SHA256", type=sha256_hex,
                   help="the reviewed list's SHA-256 (printed by the export): refused, exit "
                        "1, nothing recorded, if the list is not that one")
    _file_options(p, "the certified list (CSV)")
    p.set_defaults(func=command("abate.reports", "cmd_tax_roll_certify"))
    p = tax_sub.add_parser("reconcile", help="payments after certification, a page at a time, "
                                             "and what to credit or refund per county")
    p.add_argument("--municipality", required=True)
    p.add_argument("--tax-year", type=tax_year, required=True)
    page_options(p, "payments")
    p.set_defaults(func=command("abate.reports", "cmd_tax_roll_reconcile"))
    from abate.documents_cli import add_tax_roll_parser

    add_tax_roll_parser(tax_sub)

    p = sub.add_parser("repeat-offenses", help="prior violations in the look-back window")
    p.add_argument("--municipality", required=True)
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--parcel", help="COUNTY/NUMBER, e.g. Dane/0509-123-4567-0")
    who.add_argument("--party", help="owner or responsible party name")
    families = rule_families()  # None when a rule file is broken: the catalog says why
    p.add_argument("--rule-family", required=True, metavar="FAMILY",
                   help=f"a family of the municipality's rules: {', '.join(families or ())}")
    p.add_argument("--as-of", type=date, help="count as of this date (default today)")
    p.set_defaults(func=command("abate.reports", "cmd_repeat_offenses"))

    p = sub.add_parser("worklist", help="actions due (who acts, which rule) and open deadlines, earliest first")
    p.add_argument("--municipality", required=True)
    p.add_argument("--as-of", type=date, help="as of the end of this local day (default now)")
    p.add_argument("--overdue", action="store_true", help="only what is overdue")
    p.add_argument("--due-by", type=date, help="only what is due by the end of this local day")
    p.add_argument("--action", help="only actions of this kind, e.g. serve_notice")
    p.add_argument("--deadline", help="only deadlines of this name, e.g. cure")
    page_options(p, "actions and deadlines each")
    _format_option(p)
    p.set_defaults(func=command("abate.reports", "cmd_worklist"))

    cases = sub.add_parser("cases", help="list and search cases")
    cases_sub = cases.add_subparsers(dest="cases_command", required=True, metavar="COMMAND")
    p = cases_sub.add_parser("list", help="cases by status, parcel, owner or rule",
                             description="Cases from the case-summaries view, one line or "
                                         "object each, with their next deadline.")
    p.add_argument("--municipality", required=True, help="e.g. belleville")
    p.add_argument("--status", choices=CASE_STATUSES, type=str.lower, metavar="STATUS",
                   help=f"one of: {', '.join(CASE_STATUSES)}")
    p.add_argument("--parcel", help="parcel number, in one of the county formats")
    p.add_argument("--parcel-part", help="any part of a parcel number, e.g. 4567")
    p.add_argument("--owner", help="part of the owner's name")
    p.add_argument("--rule", help="a rule of the municipality, e.g. belleville:9.13")
    page_options(p, "cases")
    _format_option(p)
    p.set_defaults(func=command("abate.reports", "cmd_cases_list"))

    proj = sub.add_parser("projections", help="the read models")
    proj_sub = proj.add_subparsers(dest="projections_command", required=True, metavar="COMMAND")
    p = proj_sub.add_parser("status", help="position and lag per view")
    p.set_defaults(func=command("abate.reports", "cmd_projections_status"))
    p = proj_sub.add_parser("rebuild", help="rebuild a view (or all) from the first event")
    p.add_argument("name", nargs="?")
    p.add_argument("--progress", action="store_true", help="show the progress bar even when not on a terminal")
    p.set_defaults(func=command("abate.reports", "cmd_projections_rebuild"))
    p = proj_sub.add_parser("run", help="keep the views up to date until stopped")
    p.add_argument("--poll-seconds", type=float, default=1.0)
    p.set_defaults(func=command("abate.reports", "cmd_projections_run"))


"""``abate document issue|list|get`` and ``abate tax-roll certified-pdf``: documents as PDF
(docs/documents.md) from the command line, the same as the API's document routes.

``issue`` runs the journal command (``issue_notice_document`` ...) as the given actor, so a
document issued here is recorded exactly as one issued from a journal or over HTTP; ``get``
builds a recorded document again and writes it only when its SHA-256 is the recorded one.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from abate.arguments import command, page_options, policed, tax_year
from cases.errors import ConfigurationError

# --kind as a person types it -> the journal command that issues it.
KIND_COMMANDS = {"notice": "issue_notice_document", "bill": "issue_bill_document",
                 "referral-packet": "issue_referral_packet"}


def add_parsers(sub: Any, timestamp: Any) -> None:
    doc = sub.add_parser("document", help="notices, bills and referral packets as PDF: issue "
                                          "one (recorded with its digest), list, get")
    doc_sub = doc.add_subparsers(dest="document_command", required=True, metavar="COMMAND")
    p = doc_sub.add_parser("issue", help="build a document from the case and record it",
                           description="Builds the notice of violation (of the latest notice "
                                       "served), the bill, or the attorney referral packet, and "
                                       "records it on the case with its SHA-256 "
                                       "(docs/documents.md).")
    _case(p)
    p.add_argument("--kind", required=True, choices=sorted(KIND_COMMANDS))
    p.add_argument("--actor", required=True, type=policed("Actor", "who issues it"),
                   help="who issues it (recorded on the case)")
    p.add_argument("--at", type=timestamp, help="when it is issued (default now)")
    p.add_argument("--output", metavar="FILE.pdf", help="also write the PDF here")
    p.set_defaults(func=command("abate.documents_cli", "cmd_document_issue"))
    p = doc_sub.add_parser("list", help="the documents issued on a case, oldest first, a "
                                        "page at a time, as JSON")
    _case(p)
    page_options(p, "documents")
    p.set_defaults(func=command("abate.documents_cli", "cmd_document_list"))
    p = doc_sub.add_parser("get", help="build a recorded document again and write it",
                           description="Builds the document at POSITION again from its "
                                       "recorded inputs; writes it only if its SHA-256 is the "
                                       "recorded one (exit 1 otherwise).")
    _case(p)
    p.add_argument("position", type=_position,
                   help="the document's position in the case (from list), or last")
    p.add_argument("--output", required=True, metavar="FILE.pdf", help="where to write it")
    p.set_defaults(func=command("abate.documents_cli", "cmd_document_get"))


def add_tax_roll_parser(tax_sub: Any) -> None:
    p = tax_sub.add_parser("certified-pdf", help="the certified list of a county and year as "
                                                 "PDF, for the county treasurer")
    p.add_argument("--municipality", required=True)
    p.add_argument("--tax-year", type=tax_year, required=True)
    p.add_argument("--county", required=True)
    p.add_argument("--output", required=True, metavar="FILE.pdf", help="where to write it")
    p.set_defaults(func=command("abate.documents_cli", "cmd_tax_roll_certified_pdf"))


def _position(text: str) -> int | str:
    if text == "last":
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a position (1, 2, ...) nor last")
    return value


def _case(p: argparse.ArgumentParser) -> None:
    p.add_argument("--municipality", required=True, help="e.g. belleville")
    p.add_argument("case_ref", help="the case reference, e.g. BV-2026-001")


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def _zone(municipality: str) -> str:
    from cases.rules.catalog import default_catalog

    return default_catalog().municipality(municipality).time_zone


def _write(path: str, content: bytes) -> None:
    """Whole or not at all: a temporary file beside it, then renamed over it."""
    target = Path(path)
    partial = target.with_name(f".{target.name}.partial")
    partial.write_bytes(content)
    partial.replace(target)


def cmd_document_issue(args: argparse.Namespace, store: Any) -> int:
    from abate.auto_seal import auto_seal
    from cases.commands import parse_command
    from cases.documents.issued import issued_documents, rebuild
    from cases.history import load_events
    from cases.localtime import localized
    from cases.rules.catalog import default_catalog
    from cases.settings import Settings
    from projections.bootstrap import case_service, open_views

    now = dt.datetime.now(dt.timezone.utc)
    command_ = parse_command({
        "command": KIND_COMMANDS[args.kind], "municipality": args.municipality,
        "case_ref": args.case_ref, "actor": args.actor,
        "at": (args.at or now).isoformat()})
    runner = open_views(store)
    try:
        outcome = case_service(Settings.from_env(), store, runner).handle(command_, now)
    finally:
        runner.close()
    events = load_events(store, args.municipality, args.case_ref)
    issued = issued_documents(events)[-1]
    auto_seal(store, outcome.events_recorded, f"automatic: document {args.case_ref}")
    if args.output:
        built = rebuild(events, issued["position"], default_catalog().rule_version,
                        _zone(args.municipality))
        try:
            _write(args.output, built.content)
        except OSError as exc:
            raise ConfigurationError(
                f"cannot write {args.output}: {exc.strerror or exc}; the document IS recorded "
                f"(position {issued['position']}): write it with abate document get "
                f"--municipality {args.municipality} {shlex.quote(args.case_ref)} "
                f"{issued['position']} --output FILE.pdf") from None
    _print_json(localized({"municipality": args.municipality, "case_ref": args.case_ref,
                           **issued, **({"file": args.output} if args.output else {})},
                          _zone(args.municipality)))
    return 0


def cmd_document_list(args: argparse.Namespace, store: Any) -> int:
    from cases.documents.issued import issued_documents
    from cases.history import load_events
    from cases.localtime import localized
    from cases.page_sizes import page_of, paged

    events = load_events(store, args.municipality, args.case_ref)
    every = issued_documents(events)
    _print_json(localized({"municipality": args.municipality, "case_ref": args.case_ref,
                           "documents": paged(every, args.limit, args.offset),
                           **page_of(len(every), args.limit, args.offset)},
                          _zone(args.municipality)))
    return 0


def cmd_document_get(args: argparse.Namespace, store: Any) -> int:
    from cases.documents.issued import issued_documents, rebuild
    from cases.errors import CaseNotFoundError
    from cases.history import load_events
    from cases.rules.catalog import default_catalog

    events = load_events(store, args.municipality, args.case_ref)
    position = args.position
    if position == "last":
        issued = issued_documents(events)
        if not issued:
            raise CaseNotFoundError(f"no document issued on case {args.case_ref}")
        position = issued[-1]["position"]
    built = rebuild(events, position, default_catalog().rule_version,
                    _zone(args.municipality))
    if not built.matches:
        print(f"abate document get: document {position} of case {args.case_ref} built "
              f"again has SHA-256 {built.sha256}, not the recorded {built.recorded_sha256} "
              f"(recorded by {built.recorded_generator}; this is {built.generator}); "
              "nothing was written", file=sys.stderr)
        return 1
    _write(args.output, built.content)
    _print_json({"file": args.output, "document": built.document, "position": position,
                 "sha256": built.sha256, "matches_recorded": True})
    return 0


def cmd_tax_roll_certified_pdf(args: argparse.Namespace, store: Any) -> int:
    from abate.reports import _today, reading
    from cases.documents.pdf import sha256
    from cases.settings import Settings
    from projections import TaxRoll
    from projections.tax_roll_document import certified_list_pdf

    # The letterhead as the village settings file gives it (docs/operations.md).
    place = Settings.from_env().catalog().municipality(args.municipality)
    with reading(store, TaxRoll.name) as (view, conn):
        charges = list(view.iter_charges(conn, municipality=args.municipality,
                                         tax_year=args.tax_year,
                                         as_of=_today(args.municipality), county=args.county))
    content = certified_list_pdf(place, charges, tax_year=args.tax_year, county=args.county)
    _write(args.output, content)
    _print_json({"file": args.output, "tax_year": args.tax_year, "county": args.county,
                 "charges": sum(1 for c in charges if c["certified"]),
                 "sha256": sha256(content)})
    return 0

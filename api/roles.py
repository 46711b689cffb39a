"""The role matrix, as data: each route's name and the roles that may call it.

Checked in one place (``api.deps.allowed``, a dependency of every ``/api/v1`` router,
which looks up the matched route's name here); a route whose name is missing is refused
to everyone, and tests/test_api_roles.py walks the app's own route table against it.
Commands are routes of their own (``command.<journal name>``).

Who does what (issue 10): an inspector records inspections, notices and abatements; a
clerk bills, takes payments and appeals, certifies and exports, and may record everything an
inspector records too (in a village of 2,000 the clerk-treasurer often records the whole
case: trial finding 3); an attorney reads cases
and records citations, referrals and dispositions, nothing financial; an auditor reads
everything in its municipalities and writes nothing; an admin manages the users of its
municipalities (``admin.users.*``, or ``abate users`` on the server) and reaches no case.
"""

from __future__ import annotations

from cases.commands import COMMAND_NAMES

INSPECTOR, CLERK, ATTORNEY, AUDITOR, ADMIN = "inspector", "clerk", "attorney", "auditor", "admin"
READERS = frozenset({INSPECTOR, CLERK, ATTORNEY, AUDITOR})

# Journal commands reachable over HTTP: all but advance_clock (the scheduler's clock).
HTTP_COMMANDS = tuple(name for name in COMMAND_NAMES if name not in ("advance_clock",
                                                                      "open_case"))

# The inspector's facts on a case: recorded by an inspector, or by the clerk where the
# clerk-treasurer does the whole case.
INSPECTION = frozenset({INSPECTOR, CLERK})

COMMAND_ROLES: dict[str, frozenset[str]] = {
    "record_inspection": INSPECTION,
    "serve_notice": INSPECTION,
    "record_service_attempt": INSPECTION,
    "declare_hazard": INSPECTION,
    "record_compliance": INSPECTION,
    "record_abatement": INSPECTION,
    "issue_bill": frozenset({CLERK}),
    "record_payment": frozenset({CLERK}),
    "record_bond_draw": frozenset({CLERK}),
    "file_appeal": frozenset({CLERK}),
    "decide_appeal": frozenset({CLERK}),
    "certify_charge": frozenset({CLERK}),
    "issue_citation": frozenset({ATTORNEY}),
    "refer_to_attorney": frozenset({ATTORNEY, CLERK}),
    "record_disposition": frozenset({ATTORNEY}),
    "close_case": frozenset({INSPECTOR, CLERK}),
    "reopen_case": frozenset({CLERK}),
    "correct": frozenset({INSPECTOR, CLERK}),
    # Documents (docs/documents.md): who serves prints the notice, who bills the bill, and
    # the referral packet is the attorney's (the clerk prepares it too).
    "issue_notice_document": INSPECTION,
    "issue_bill_document": frozenset({CLERK}),
    "issue_referral_packet": frozenset({ATTORNEY, CLERK}),
}

ROUTE_ROLES: dict[str, frozenset[str]] = {
    "cases.open": frozenset({INSPECTOR, CLERK}),
    "cases.list": READERS,
    "cases.show": READERS,
    "cases.history": READERS,
    # The attorney's packet; the inspector gathers the facts but does not prosecute.
    "cases.referral": frozenset({ATTORNEY, CLERK, AUDITOR}),
    # Issued documents: every reader lists and downloads them (a referral packet only the
    # roles of cases.referral: checked in api/routes/documents.py).
    "cases.documents.list": READERS,
    "cases.documents.get": READERS,
    # Audit routes: scoped by the user's grants, not by a municipality in the path.
    "audit.verify": frozenset({AUDITOR}),
    "audit.access_log": frozenset({AUDITOR}),
    **{f"command.{name}": roles for name, roles in COMMAND_ROLES.items()},
    "admin.users.add": frozenset({ADMIN}),
    "admin.users.list": frozenset({ADMIN}),
    "admin.users.revoke": frozenset({ADMIN}),
    "admin.users.rotate": frozenset({ADMIN}),
    "admin.users.set_password": frozenset({ADMIN}),
    "worklist.list": READERS,
    "repeat_offenses.count": READERS,
    "tax_roll.export": frozenset({CLERK, AUDITOR}),
    "tax_roll.certify": frozenset({CLERK}),
    "tax_roll.reconcile": frozenset({CLERK, AUDITOR}),
    "tax_roll.certified_pdf": frozenset({CLERK, AUDITOR}),
    "journal.import": frozenset({INSPECTOR, CLERK, ATTORNEY}),  # and per command, per line
}

# The web pages (api/web): each page's name and the roles that may open it. A command's
# form is shown, and its post accepted, only for the roles of COMMAND_ROLES (the same
# check as the API's command routes: ``may_page(role, "page.command.<name>")``).
PAGE_ROLES: dict[str, frozenset[str]] = {
    "page.home": frozenset({INSPECTOR, CLERK, ATTORNEY, AUDITOR, ADMIN}),
    "page.worklist": READERS,
    "page.cases.list": READERS,
    "page.cases.show": READERS,
    # An issued document from the case page (a referral packet only for cases.referral's
    # roles, as the API's download: checked in api/web/cases.py).
    "page.documents.get": ROUTE_ROLES["cases.documents.get"],
    **{f"page.command.{name}": roles for name, roles in COMMAND_ROLES.items()},
    # The pages of api/web: new_case, tax_roll, repeat_offenders, audit, charts.
    "page.cases.new": ROUTE_ROLES["cases.open"],
    "page.cases.new.open": ROUTE_ROLES["cases.open"],
    "page.tax_roll": ROUTE_ROLES["tax_roll.export"],
    "page.tax_roll.csv": ROUTE_ROLES["tax_roll.export"],
    "page.tax_roll.certified_pdf": ROUTE_ROLES["tax_roll.certified_pdf"],
    "page.tax_roll.certify": ROUTE_ROLES["tax_roll.certify"],
    "page.tax_roll.certify.confirmed": ROUTE_ROLES["tax_roll.certify"],
    "page.repeat_offenders": ROUTE_ROLES["repeat_offenses.count"],
    "page.audit": READERS,
    "page.audit.verify": ROUTE_ROLES["audit.verify"],
    "page.charts": READERS,
    # The admin's users page (api/web/users.py): the admin.users.* routes' role.
    "page.admin.users": ROUTE_ROLES["admin.users.list"],
    "page.admin.users.add": ROUTE_ROLES["admin.users.add"],
    "page.admin.users.password": ROUTE_ROLES["admin.users.set_password"],
    "page.admin.users.rotate": ROUTE_ROLES["admin.users.rotate"],
    "page.admin.users.disable": ROUTE_ROLES["admin.users.revoke"],
    "page.admin.users.disable.confirm": ROUTE_ROLES["admin.users.revoke"],
    # the address of a users-page form, opened (a bookmark, a copied address): the page
    "page.admin.users.form_address": ROUTE_ROLES["admin.users.list"],
}

# Routes anyone may call without a token.
PUBLIC_ROUTES = frozenset({"health"})

WRITES = frozenset({"cases.open", *(f"command.{name}" for name in COMMAND_ROLES),
                    "admin.users.add", "admin.users.revoke", "admin.users.rotate",
                    "admin.users.set_password", "page.admin.users.add",
                    "page.admin.users.password", "page.admin.users.rotate",
                    "page.admin.users.disable",
                    "tax_roll.certify",
                    "journal.import", "page.cases.new.open", "page.tax_roll.certify.confirmed"})
# Writes the access log records as certifications (what goes to the county).
CERTIFYING = frozenset({"command.certify_charge", "tax_roll.certify",
                        "page.tax_roll.certify.confirmed"})


def may(role: str, route_name: str) -> bool:
    return role in ROUTE_ROLES.get(route_name, frozenset())


def may_page(role: str, page_name: str) -> bool:
    """The role check of every web page and form (a page missing here is refused)."""
    return role in PAGE_ROLES.get(page_name, frozenset())

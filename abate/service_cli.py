"""``abate users`` (accounts of the HTTP API) and ``abate serve`` (the API itself)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from typing import Any

from abate.arguments import positive
from api.account_terms import DEFAULT_EXPIRES_DAYS, ROLES


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def _shown(user: Any) -> dict[str, Any]:
    """A user as people read it: times in the operator's zone with ``*_utc`` beside."""
    from cases.localtime import localized
    from cases.settings import Settings

    return localized(user.as_dict(), Settings.from_env().time_zone)


def _accounts(args: argparse.Namespace) -> Any:
    """The accounts table (imported here: the parser is built without SQLAlchemy)."""
    from api.accounts import Accounts
    from cases.settings import Settings
    from projections.database import view_engine

    settings = Settings.from_env()
    url = settings.database_url_for(args.database_url)
    return Accounts(view_engine(url, settings.database_schema), url, settings.database_schema)


def cmd_users_add(args: argparse.Namespace, store: Any) -> int:
    accounts = _accounts(args)
    try:
        user, token = accounts.add(args.name, args.role, args.municipalities, now=_now(),
                                   expires_days=args.expires_days)
    finally:
        accounts.engine.dispose()
    _print_json({**_shown(user), "token": token})
    print("the token is shown only now: give it to the user; Abate keeps only its hash",
          file=sys.stderr)
    return 0


def cmd_users_revoke(args: argparse.Namespace, store: Any) -> int:
    accounts = _accounts(args)
    try:
        _print_json(_shown(accounts.revoke(args.name, now=_now())))
    finally:
        accounts.engine.dispose()
    return 0


def cmd_users_list(args: argparse.Namespace, store: Any) -> int:
    accounts = _accounts(args)
    try:
        _print_json([_shown(user) for user in accounts.list()])
    finally:
        accounts.engine.dispose()
    return 0


def cmd_serve(args: argparse.Namespace, store: Any) -> int:
    from api.serve import serve

    return serve(args.host, args.port, args.database_url)


def add_parsers(sub: Any) -> None:
    users = sub.add_parser("users", help="accounts of the HTTP API: add, revoke, list")
    users_sub = users.add_subparsers(dest="users_command", required=True, metavar="COMMAND")
    p = users_sub.add_parser(
        "add", help="add a user and print their token (shown once)",
        epilog="Prints JSON with the token; only its SHA-256 is kept. A name is never "
               "reused: it is the actor recorded on the events the user causes.")
    p.add_argument("--name", required=True, help="the user's name, recorded as the actor")
    p.add_argument("--role", required=True, choices=ROLES)
    p.add_argument("--municipality", dest="municipalities", required=True, action="append",
                   help="a municipality the user works in (repeat for more)")
    p.add_argument("--expires-days", type=positive, default=DEFAULT_EXPIRES_DAYS,
                   help=f"days until the token expires (default {DEFAULT_EXPIRES_DAYS})")
    p.set_defaults(func=cmd_users_add, no_store=True)
    p = users_sub.add_parser("revoke", help="refuse the user's token from now on")
    p.add_argument("name")
    p.set_defaults(func=cmd_users_revoke, no_store=True)
    p = users_sub.add_parser("list", help="every user, role, municipalities and expiry "
                                          "(never a token or its hash)")
    p.set_defaults(func=cmd_users_list, no_store=True)

    from api.serve import DESCRIPTION as SERVE_DESCRIPTION
    from api.serve import add_options

    p = sub.add_parser("serve", help="serve the HTTP API on the configured database",
                       description=SERVE_DESCRIPTION,
                       epilog="docs/api.md: routes, roles, and calling them with curl.")
    add_options(p)
    p.set_defaults(func=cmd_serve, no_store=True)

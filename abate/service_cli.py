"""``abate users`` (accounts of the HTTP API) and ``abate serve`` (the API itself)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from typing import TYPE_CHECKING, Any

from abate.arguments import page_options, positive
from api.account_terms import DEFAULT_EXPIRES_DAYS, ROLES
from cases.errors import UsageError

if TYPE_CHECKING:  # imported where used: the parser is built without SQLAlchemy
    from api.accounts import Accounts
    from cases.settings import Settings


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


def _accounts(args: argparse.Namespace) -> Accounts:
    from api.accounts import Accounts
    from cases.settings import Settings
    from projections.database import records_engine

    settings = Settings.from_env()
    url = settings.database_url_for(args.database_url)
    return Accounts(records_engine(url, settings.database_schema), url,
                    settings.database_schema)


def _issued(accounts: Accounts, issue: Any, note: str) -> int:
    """Print the user and the token ``issue(accounts)`` made: the only time it is shown."""
    try:
        user, token = issue(accounts)
    finally:
        accounts.engine.dispose()
    _print_json({**_shown(user), "token": token})
    print(note, file=sys.stderr)
    return 0


def cmd_users_add(args: argparse.Namespace, store: Any) -> int:
    import shlex

    from api.accounts import UserExistsError

    try:
        return _issued(_accounts(args), lambda accounts: accounts.add(
            args.name, args.role, args.municipalities, now=_now(),
            expires_days=args.expires_days),
            "the token is shown only now: give it to the user; Abate keeps only its hash")
    except UserExistsError as exc:
        rotate = f"abate users rotate {shlex.quote(exc.existing or args.name)}"
        raise UserExistsError(f"{exc}; `{rotate}` gives that user a new token",
                              exc.existing) from None


def cmd_users_revoke(args: argparse.Namespace, store: Any) -> int:
    accounts = _accounts(args)
    try:
        _print_json(_shown(accounts.revoke(args.name, now=_now())))
    finally:
        accounts.engine.dispose()
    return 0


def cmd_users_list(args: argparse.Namespace, store: Any) -> int:
    from cases.page_sizes import page_of, paged

    accounts = _accounts(args)
    try:
        users = accounts.list()
        _print_json({"users": [_shown(user) for user in paged(users, args.limit, args.offset)],
                     **page_of(len(users), args.limit, args.offset)})
    finally:
        accounts.engine.dispose()
    return 0


def cmd_users_rotate(args: argparse.Namespace, store: Any) -> int:
    return _issued(_accounts(args), lambda accounts: accounts.rotate(
        args.name, now=_now(), expires_days=args.expires_days),
        "the new token is shown only now; the user's old token is refused from now on")


def _read_password() -> str:
    """The new password: prompted for twice on a terminal, else the first line of stdin."""
    import getpass

    if sys.stdin.isatty():
        first = getpass.getpass("new password (12 to 128 characters): ")
        if getpass.getpass("the same again: ") != first:
            raise UsageError("the two passwords differ; nothing was changed")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def cmd_users_set_password(args: argparse.Namespace, store: Any) -> int:
    from api.passwords import password_problem

    password = _read_password()
    problem = password_problem(password)
    if problem:
        raise UsageError(f"password: {problem}; nothing was changed")
    accounts = _accounts(args)
    try:
        _print_json(_shown(accounts.set_password(args.name, password)))
    finally:
        accounts.engine.dispose()
    print("the password is set: the user signs in to the web pages with it; Abate keeps only "
          "its Argon2 hash", file=sys.stderr)
    return 0


def cmd_serve(args: argparse.Namespace, store: Any) -> int:
    """Serve the API; with --demo load the demo and print its users' tokens first; on
    SQLite (or with --with-scheduler) run the scheduler and the view runner beside it."""
    from abate.beside_api import beside_api
    from api.serve import announce, check_port, serve
    from cases.settings import Settings

    if args.into_nonempty and not args.demo:
        raise UsageError("--into-nonempty goes with --demo (it lets the demo into a store "
                         "that holds other cases); without --demo it does nothing")
    settings = Settings.from_env()
    url = settings.database_url_for(args.database_url)
    beside = url.startswith("sqlite") if args.with_scheduler is None else args.with_scheduler
    if url.startswith("memory") and (beside or args.demo):
        raise UsageError("memory:// is a new empty store for each connection: --demo and "
                         "--with-scheduler need a database file or server "
                         "(sqlite:///PATH or PostgreSQL)")
    check_port(args.host, args.port)  # before the demo is loaded
    if args.demo:
        banner = demo_banner(settings, url, args, beside)
        on_ready = lambda: print(banner, flush=True)  # noqa: E731
    else:
        on_ready = lambda: announce(args.host, args.port)  # noqa: E731
    with beside_api(settings, url, scheduler=beside, views=beside) as started:
        # The banner once the scheduler's first sweep and the views' catch-up have logged
        # their lines: the last thing on screen before requests, not lost among them.
        return serve(args.host, args.port, url, workers=args.workers,
                     on_ready=lambda: started.then(on_ready))


def demo_banner(settings: Settings, url: str, args: argparse.Namespace, beside: bool) -> str:
    """Load the demo (refusing a store with other cases), give the demo users fresh tokens,
    and say where everything is."""
    from abate.demo_store import (
        demo_journal_path,
        load_demo,
        refuse_other_cases,
        store_holds,
    )
    from abate.demo_users import issue_demo_tokens
    from api.accounts import Accounts
    from projections.bootstrap import open_store, open_views
    from projections.database import records_engine

    store = open_store(settings, url)
    try:
        lines = demo_journal_path().read_text(encoding="utf-8").splitlines()
        if not args.into_nonempty:
            refuse_other_cases(store, lines)
        runner = open_views(store)
        try:
            now = _now()
            load_demo(store, runner, lines, now)
            holds = store_holds(store, lines)
            records = records_engine(url, store.schema)
            try:
                issued = issue_demo_tokens(Accounts(records, url, store.schema), now)
            finally:
                records.dispose()
        finally:
            runner.close()
    finally:
        store.close()
    base = f"http://{args.host}:{args.port}"
    width = max(len(t.user.name) for t in issued)
    rows = [f"  {t.user.name:{width}}  {t.user.role:9}  {','.join(t.user.municipalities):20}  "
            f"{t.token or '(' + t.note + ')'}" for t in issued]
    example = next(t for t in issued if t.token and t.user.role != "admin")
    village = example.user.municipalities[0]
    return "\n".join([
        f"Abate API on {base}/ with the demo data; interactive docs at {base}/docs, "
        f"health at {base}/health",
        holds,
        "Demo users and their tokens (new at every start; the ones printed before are "
        "refused now):",
        *rows,
        f"Try: curl -H \"Authorization: Bearer {example.token}\" {base}/api/v1/{village}/cases",
        f"Web pages: open {base}/ and sign in with a user's token above (the form \"With "
        "your token\"), or with a password set by `abate users set-password --name NAME`",
        ("The deadline scheduler and the view runner run in this process; " if beside else "")
        + "Ctrl-C stops it",
    ])


def add_parsers(sub: Any) -> None:
    users = sub.add_parser("users", help="accounts of the HTTP API: add, rotate, revoke, list")
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
    p = users_sub.add_parser(
        "rotate", help="a new token for a user (shown once); the old one is refused from now on",
        epilog="Name, role and municipalities stay; the expiry starts again from now. A "
               "revoked user gets no new token.")
    p.add_argument("name")
    p.add_argument("--expires-days", type=positive, default=DEFAULT_EXPIRES_DAYS,
                   help=f"days until the new token expires (default {DEFAULT_EXPIRES_DAYS})")
    p.set_defaults(func=cmd_users_rotate, no_store=True)
    p = users_sub.add_parser(
        "set-password", help="set the password a user signs in to the web pages with",
        epilog="Reads the password from standard input (its first line), or asks for it "
               "twice on a terminal; 12 to 128 characters. Only its Argon2 hash is kept.")
    p.add_argument("--name", required=True, help="the user's name")
    p.set_defaults(func=cmd_users_set_password, no_store=True)
    p = users_sub.add_parser("list", help="the users by name, a page at a time: role, "
                                          "municipalities and expiry (never a token or its "
                                          "hash)")
    page_options(p, "users")
    p.set_defaults(func=cmd_users_list, no_store=True)

    from api.serve_options import DESCRIPTION as SERVE_DESCRIPTION
    from api.serve_options import add_options

    p = sub.add_parser("serve", help="serve the HTTP API on the configured database",
                       description=SERVE_DESCRIPTION,
                       epilog="docs/api.md: routes, roles, and calling them with curl. "
                              "docs/operations.md: running it in production.")
    add_options(p)
    p.add_argument("--demo", action="store_true",
                   help="first load the demo cases (only into a store without other cases) "
                        "and print a token for each demo user (new at every start)")
    p.add_argument("--into-nonempty", action="store_true",
                   help="with --demo: load the demo even into a store that holds other cases")
    beside = p.add_mutually_exclusive_group()
    beside.add_argument("--with-scheduler", dest="with_scheduler", action="store_const",
                        const=True, default=None,
                        help="run the deadline scheduler and the view runner in this process "
                             "(the default on SQLite)")
    beside.add_argument("--without-scheduler", dest="with_scheduler", action="store_const",
                        const=False, help="serve the API only (the default on PostgreSQL, "
                        "where `abate scheduler` and `abate projections run` are processes "
                        "of their own)")
    p.set_defaults(func=cmd_serve, no_store=True)

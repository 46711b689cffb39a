"""The demo's users: one per role and village, and one admin, so every door of the API can
be tried with the demo cases.

Tokens are kept only as hashes, so a token printed at one start cannot be printed again:
each start of the demo gives every demo user a fresh token (``Accounts.rotate``), which
refuses the one printed before. A demo user's name is never given to another person: a
name that exists with another role or other villages is left alone and named.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from api.accounts import Accounts, User
from cases.rules.catalog import default_catalog

DEMO_ROLES = ("inspector", "clerk", "attorney", "auditor")
DEMO_ADMIN = "demo.admin"
DEMO_EXPIRES_DAYS = 30


def demo_users() -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, role, municipalities) of every demo user, e.g. ``demo.belleville.clerk``."""
    villages = tuple(default_catalog().municipalities)
    users = [(f"demo.{village}.{role}", role, (village,))
             for village in villages for role in DEMO_ROLES]
    return [*users, (DEMO_ADMIN, "admin", villages)]


def demo_user_names() -> frozenset[str]:
    return frozenset(name for name, _, _ in demo_users())


@dataclass(frozen=True)
class DemoToken:
    user: User
    token: str | None  # None: the user is revoked or is not the demo's, and gets none
    note: str = ""


def issue_demo_tokens(accounts: Accounts, now: dt.datetime) -> list[DemoToken]:
    """A fresh token for every demo user: added the first time, rotated at every later start."""
    issued = []
    for name, role, villages in demo_users():
        existing = accounts.get(name)
        if existing is None:
            user, token = accounts.add(name, role, list(villages), now=now,
                                       expires_days=DEMO_EXPIRES_DAYS)
        elif existing.revoked_at is not None:
            issued.append(DemoToken(existing, None, "revoked: no token"))
            continue
        elif (existing.role, set(existing.municipalities)) != (role, set(villages)):
            issued.append(DemoToken(existing, None, "not a demo user (another role or "
                                                    "village): no token"))
            continue
        else:
            user, token = accounts.rotate(name, now=now, expires_days=DEMO_EXPIRES_DAYS)
        issued.append(DemoToken(user, token))
    return issued

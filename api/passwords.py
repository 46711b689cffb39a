"""Passwords for the web pages: the policy (12 to 128 characters) and their Argon2 hashes.

Only the hash is kept (``abate_users.password_hash``), made and checked by pwdlib's
Argon2 hasher, a maintained library with sane defaults; a password a person chose can be
guessed, so it gets a deliberately slow hash (a token does not: api/accounts.py)."""

from __future__ import annotations

from functools import lru_cache

from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

from cases.errors import UsageError

MIN_LENGTH, MAX_LENGTH = 12, 128


@lru_cache(maxsize=1)
def _hasher() -> PasswordHash:
    return PasswordHash((Argon2Hasher(),))


@lru_cache(maxsize=1)
def _decoy() -> str:
    """A hash to check against when a user has none, so both answers take as long."""
    return _hasher().hash("no password is set for this user")


def password_problem(password: str) -> str | None:
    """Why ``password`` is refused, or None."""
    if not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        return (f"a password is {MIN_LENGTH} to {MAX_LENGTH} characters "
                f"(this one has {len(password)})")
    if any(ord(c) < 32 or ord(c) == 127 or 0xD800 <= ord(c) <= 0xDFFF for c in password):
        return "a password holds no control characters (no line breaks or tabs)"
    return None


def password_hash(password: str) -> str:
    problem = password_problem(password)
    if problem:
        raise UsageError(f"password: {problem}")
    return _hasher().hash(password)


def password_matches(password: str, stored: str | None) -> bool:
    if len(password) > MAX_LENGTH:
        _hasher().verify("x" * MIN_LENGTH, _decoy())
        return False
    if stored is None:
        _hasher().verify(password, _decoy())
        return False
    try:
        return _hasher().verify(password, stored)
    except Exception:  # a damaged hash signs nobody in
        return False

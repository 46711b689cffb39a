"""The per-case hash chain that makes tampering evident.

Each event stores the hash of the case's previous event (``prev_hash``) and its
own ``hash``, a SHA-256 over its canonical content (every field but ``hash``,
plus its topic). Altering an event breaks its own hash; removing or reordering
events breaks the link from the next event. ``abate verify`` recomputes both.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from decimal import Decimal
from typing import Any
from uuid import UUID

GENESIS = "0" * 64


def _canonical(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, (Decimal, UUID)):
        return str(value)
    raise TypeError(f"cannot hash a value of type {type(value).__name__}")


def content_hash(topic: str, fields: dict[str, Any]) -> str:
    """SHA-256 over an event's topic and fields (its own ``hash`` excluded)."""
    body = {k: v for k, v in fields.items() if k != "hash"}
    text = json.dumps(
        {"topic": topic, "fields": body},
        sort_keys=True,
        separators=(",", ":"),
        default=_canonical,
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

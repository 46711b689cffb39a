"""The seal a command takes after it recorded something (``abate import``, ``abate document
issue``), so the unsealed tail of the log stays small; nothing recorded, no seal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cases.store import CaseStore


def auto_seal(store: CaseStore, recorded: int, reason: str) -> Any:
    from cases.seals import seal_store

    if not recorded:
        return None
    return seal_store(store, actor="abate", reason=reason)

"""Certifying a tax-roll list: a ``certify_charge`` on every listed charge not yet
certified (once each, in one transaction), then a seal taken right after, so the certified
list carries the seal that covers its certifications (docs/operations.md, seals).

The same certification for ``abate tax-roll certify`` and ``POST tax-roll/certify``: the
caller lists the charges (``TaxRoll.iter_charges`` as of today) and hands its service in.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cases.application import CaseService, Outcome, UnitOfWork
from cases.commands import parse_command
from cases.seals import seal_store
from cases.store import CaseStore


@dataclass(frozen=True)
class Certification:
    newly_certified: int  # certifications recorded now (0 when every charge had one)
    seal: dict[str, Any]  # id, position, digest and the seal's line, as the list carries it


def certify_listed(service: CaseService, store: CaseStore,
                   charges: Iterable[Mapping[str, Any]], *, municipality: str, tax_year: int,
                   county: str, actor: str, now: dt.datetime) -> Certification:
    """Record a certification on each listed charge that has none (idempotent by command id:
    certifying again records nothing twice), then seal the store."""
    uow, outcome = UnitOfWork(store), Outcome()
    pending = [charge["case_ref"] for charge in charges if not charge["certified"]]
    for case_ref in pending:
        command = parse_command({
            "command": "certify_charge", "municipality": municipality, "case_ref": case_ref,
            "at": now.isoformat(), "actor": actor, "tax_year": tax_year,
            "id": f"certify:{tax_year}:{case_ref}"})
        service.execute(command, now, uow, outcome)
    uow.commit()
    seal = seal_store(store, actor=actor,
                      reason=f"certification {municipality} {tax_year} {county}")
    return Certification(outcome.applied, {"id": seal.seal_id, "position": seal.position,
                                           "digest": seal.log_digest, "line": seal.line()})

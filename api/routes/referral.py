"""``GET /api/v1/{municipality}/cases/{case_ref}/referral``: the attorney's packet
(``cases.referral``), in the village's local time; always in the access log as an export."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from api.case_reads import zone
from api.deps import CaseDep, ServicesDep
from api.errors import ERROR_RESPONSES
from api.request_log import Export
from cases.localtime import localized

router = APIRouter(tags=["cases"])


@router.get("/{municipality}/cases/{case_ref}/referral", name="cases.referral",
            response_model=dict[str, Any], responses=ERROR_RESPONSES, dependencies=[Export],
            summary="The attorney referral packet: parties, ordinance, chronology, deadlines "
                    "met or missed, prior violations, citations, forfeiture range")
def referral(svc: ServicesDep, case: CaseDep) -> dict[str, Any]:
    packet = svc.referral(case.municipality, case.case_ref)
    return localized(packet, zone(svc, case.municipality))

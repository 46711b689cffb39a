"""``GET repeat-offenses``: prior violations of a rule family in the look-back window
before a date, by parcel or by party, counted as the rule in force says; the same answer
as ``abate repeat-offenses`` (projections.repeat_question)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Query
from pydantic import BaseModel

from api.params import bounded_day, one_line
from api.deps import GrantedMunicipality, ServicesDep
from api.consistency import NOT_YET, caught_up
from api.errors import ERROR_RESPONSES, ApiError
from cases import filters
from cases.text_policy import COUNTY_MAX, NAME_MAX, PARCEL_MAX
from projections import RepeatOffenses
from projections.repeat_question import RepeatQuestionError, repeat_offenses

router = APIRouter(tags=["reports"])


class RepeatAnswer(BaseModel):
    municipality: str
    rule_family: str
    parcel: str | None
    party: str | None
    as_of: str
    counts: str  # whom the window counts: parcel, party, either, person notified or convicted
    rule_citation: str | None
    window_basis: str  # the repeat clause, or why the inspectors' 12 months are used instead
    count: int
    window_start: str
    window_end: str
    case_refs: list[str]


def _query_name(name: str) -> str:
    return f"query parameter {name}"


@router.get("/{municipality}/repeat-offenses", name="repeat_offenses.count",
            response_model=RepeatAnswer, responses={**ERROR_RESPONSES, **NOT_YET},
            dependencies=[caught_up(RepeatOffenses.name)],
            summary="Prior violations in the look-back window (by parcel or party)")
def get_repeat_offenses(
        svc: ServicesDep, municipality: GrantedMunicipality,
        rule_family: Annotated[str, Query(max_length=32, pattern=r"^[a-z0-9_]+$",
                                          description="e.g. junk")],
        parcel: Annotated[str | None, Query(max_length=COUNTY_MAX + 1 + PARCEL_MAX,
                                            description="COUNTY/NUMBER")] = None,
        party: Annotated[str | None, Query(max_length=NAME_MAX,
                                           description="owner or responsible party")] = None,
        as_of: Annotated[dt.date | None, Query(
            description="count as of this date (default: today, local)")] = None
) -> dict[str, Any]:
    place = svc.cases.catalog.municipality(municipality)
    filters.rule_family(place, rule_family, _query_name)
    if (parcel is None) == (party is None):
        raise ApiError(422, "invalid", "give one of the query parameters parcel "
                                       "(COUNTY/NUMBER) or party")
    day = bounded_day("as_of", as_of) or svc.clock().astimezone(ZoneInfo(place.time_zone)).date()
    view = svc.runner.active(RepeatOffenses.name)
    try:
        with svc.runner.engine.connect() as conn:
            return repeat_offenses(view, conn, place, rule_family=rule_family,
                                   parcel=filters.parcel(place, one_line("parcel", parcel),
                                                         _query_name),
                                   party=one_line("party", party), as_of=day,
                                   named=_query_name)
    except RepeatQuestionError as exc:
        raise ApiError(422, "invalid", str(exc), exc.field) from None

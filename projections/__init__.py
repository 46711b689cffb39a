"""Read models built from the event log: case summaries, worklist, repeat offenses, tax roll,
case months (the charts' opened and closed dates)."""

from projections.case_months import CaseMonths
from projections.case_summaries import CaseSummaries
from projections.repeat_offenses import RepeatOffenses
from projections.tax_roll import TaxRoll
from projections.worklist import Worklist

ALL_VIEWS = (CaseSummaries, Worklist, RepeatOffenses, TaxRoll, CaseMonths)

__all__ = ["ALL_VIEWS", "CaseMonths", "CaseSummaries", "RepeatOffenses", "TaxRoll", "Worklist"]

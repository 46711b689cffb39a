"""Read models built from the event log: case summaries, worklist, repeat offenses, tax roll."""

from projections.case_summaries import CaseSummaries
from projections.repeat_offenses import RepeatOffenses
from projections.tax_roll import TaxRoll
from projections.worklist import Worklist

ALL_VIEWS = (CaseSummaries, Worklist, RepeatOffenses, TaxRoll)

__all__ = ["ALL_VIEWS", "CaseSummaries", "RepeatOffenses", "TaxRoll", "Worklist"]

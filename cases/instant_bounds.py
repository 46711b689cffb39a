"""The first and last times and dates Abate accepts (cases/instants.py says why), apart from
the pydantic types built on them: checking a command's arguments needs the bounds only, and
importing pydantic cost a read-only command about 0.07 s (docs/benchmarks.md)."""

from __future__ import annotations

import datetime as dt

EARLIEST = dt.datetime(1900, 1, 1, tzinfo=dt.timezone.utc)
END = dt.datetime(2201, 1, 1, tzinfo=dt.timezone.utc)  # exclusive
FIRST_DAY, LAST_DAY = dt.date(1900, 1, 1), dt.date(2200, 12, 31)
# The tax years a charge may be certified for: the command (cases.commands.CertifyCharge) and
# the command line's --tax-year (abate.arguments.tax_year) read them here.
TAX_YEAR_FIRST, TAX_YEAR_LAST = 2000, 2200

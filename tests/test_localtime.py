"""``localized``: every moment shown in the village's zone with its UTC value beside it,
the same whatever shortcut it takes for times the views store in UTC already."""

import datetime as dt
import itertools
from zoneinfo import ZoneInfo

import pytest

from cases.localtime import localized

CHICAGO = ZoneInfo("America/Chicago")


def plainly(data, tz):
    """What ``localized`` promises, written the slow, obvious way."""
    if isinstance(data, list):
        return [plainly(item, tz) for item in data]
    if not isinstance(data, dict):
        return data
    shown = {}
    for key, value in data.items():
        moment = key == "at" or key.endswith("_at") or key in ("as_of", "cure_deadline",
                                                                "from", "to")
        if value is None and (key in ("at", "cure_deadline") or key.endswith("_at")):
            shown[key] = shown[f"{key}_utc"] = None
            continue
        instant = None
        if moment and isinstance(value, str) and "T" in value:
            try:
                instant = dt.datetime.fromisoformat(value)
            except ValueError:
                instant = None
        elif moment and isinstance(value, dt.datetime):
            instant = value
        if instant is None or instant.tzinfo is None:
            shown[key] = plainly(value, tz)
            continue
        shown[key] = instant.astimezone(tz).isoformat(timespec="seconds")
        shown[f"{key}_utc"] = instant.astimezone(dt.UTC).isoformat(timespec="seconds")
    return shown


TIMES = ["2026-11-16T05:59:59+00:00",  # as the views store them
         "2026-03-08T08:30:00+00:00",  # the hour daylight saving time begins
         "2026-11-01T06:30:00+00:00",  # the hour that happens twice
         "2026-11-16T05:59:59.250000+00:00", "2026-11-16T05:59:59Z",
         "2026-11-15T23:59:59-06:00", "2026-W47-1T05:59:59+00:00",  # a week date
         "2026-11-16T05:59:59", "2026-11-16", "not a time", None, 7,
         dt.datetime(2026, 7, 4, 17, tzinfo=dt.UTC)]
KEYS = ["at", "due_at", "cure_deadline", "as_of", "from", "served_on", "what"]


@pytest.mark.parametrize(("key", "value"), list(itertools.product(KEYS, TIMES)))
def test_each_field_reads_as_the_plain_rule_says(key, value):
    row = {"case_ref": "BV-1", key: value, "nested": {key: value}, "rows": [{key: value}]}
    assert localized(row, "America/Chicago") == plainly(row, CHICAGO)
    assert localized([row, row], CHICAGO) == plainly([row, row], CHICAGO)

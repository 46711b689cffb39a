"""Every name a case records has its plain-English label (cases.vocabulary): a new event
type, status or deadline without one would show its internal name on the pages."""

from __future__ import annotations

from cases.deadlines import deadline_names
from cases.domain import Case
from cases.money import dollars
from cases.rules.catalog import default_catalog
from cases.statuses import CASE_STATUSES
from cases.vocabulary import DEADLINES, EVENTS, STATUSES, deadline_label, event_label


def test_every_event_type_status_and_deadline_has_a_label():
    recorded = {name for name, value in vars(Case).items()  # (each its own TOPIC)
                if isinstance(value, type) and issubclass(value, Case.Event)
                and value.TOPIC != Case.Event.TOPIC}
    assert recorded and recorded == set(EVENTS)
    assert set(CASE_STATUSES) == set(STATUSES)
    catalog = default_catalog()
    every_rule = [r for place in catalog.municipalities.values() for r in place.rules]
    assert set(deadline_names(every_rule)) <= set(DEADLINES)
    assert len(set(EVENTS.values())) == len(EVENTS)  # no two events read the same


def test_a_name_without_a_label_reads_as_words_not_as_nothing():
    assert event_label("FenceRepaired") == "Fence repaired"
    assert deadline_label("fence_inspection") == "Fence inspection"
    assert event_label(None) == ""


def test_amounts_read_as_dollars_with_thousands():
    assert [dollars(v) for v in ("1234.5", "0.00", "1234567.89", "-12")] == \
        ["$1,234.50", "$0.00", "$1,234,567.89", "-$12.00"]
    assert dollars(None) == "-" and dollars("not set") == "not set"

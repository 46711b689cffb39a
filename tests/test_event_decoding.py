"""The views' decoder (projections/event_decoding.py) gives exactly the mapper's events, and
views rebuilt with it hold exactly the rows they hold when rebuilt with the mapper."""

import json
from types import SimpleNamespace
from uuid import uuid4

import pytest
from eventsourcing.persistence import MapperDeserialisationError

from bench.sections import EXPORT_NOW, generate_cases
from cases.domain import case_id
from projections.event_decoding import EventDecoder
from tests.test_projections import dump, load_demo

# Every kind of event the demo journal records (all but DocumentIssued).
DEMO_KINDS = {
    "AbatementRecorded", "AppealDecided", "AppealFiled", "BillIssued", "BondDrawn",
    "ChargeCertified", "CitationIssued", "Closed", "ComplianceVerified", "Corrected",
    "DeadlinePassed", "DispositionRecorded", "HazardDeclared", "InspectionRecorded",
    "NoticeServed", "Opened", "PaymentReceived", "ReferredToAttorney", "Reopened",
    "ServiceAttempted"}


def exactly(event) -> tuple:
    """The event's class and every field with its type, nested (Decimal('1.0') is not
    Decimal('1.00'), and a date is not a datetime)."""
    def typed(value):
        if isinstance(value, dict):
            return {k: typed(v) for k, v in value.items()}
        if isinstance(value, list):
            return [typed(v) for v in value]
        return (type(value).__name__, repr(value))
    return type(event), typed(vars(event))


def log_rows(store) -> list:
    rows, start = [], 1
    while batch := store.log_page(start, 500):
        rows += batch
        start = batch[-1].id + 1
    return rows


def realistic_store(service, store) -> None:
    """The demo journal (every kind of event but a document), the bench's generated cases,
    and corrections of an owner, of an opening's time and of a payment (voided, after
    reopening the case)."""
    load_demo(service)
    generate_cases(store, 40)
    paid = next(i for i in range(40) if "PaymentReceived" in kinds_of(store, f"TR-{i}"))
    payment = kinds_of(store, f"TR-{paid}").index("PaymentReceived") + 1
    lines = [
        {"command": "correct", "case_ref": "TR-3", "supersedes": 1,
         "changes": {"owner": {"name": "Ann Corrected", "mailing_address": "1 Elm St"}},
         "reason": "the deed names another owner"},
        {"command": "correct", "case_ref": "TR-4", "supersedes": 1,
         "changes": {"at": "2026-01-04T08:00:00-06:00"}, "reason": "typed the wrong day"},
        {"command": "reopen_case", "case_ref": f"TR-{paid}", "reason": "the check bounced"},
        {"command": "correct", "case_ref": f"TR-{paid}", "supersedes": payment,
         "changes": {"void": True}, "reason": "the check bounced"},
    ]
    base = {"municipality": "belleville", "actor": "clerk", "at": "2026-06-01T09:00:00-05:00"}
    service.import_journal([json.dumps({**base, **line}) for line in lines], now=EXPORT_NOW)


def kinds_of(store, case_ref: str) -> list[str]:
    return [type(e).__name__ for e in store.case_events(case_id("belleville", case_ref))]


def test_the_views_decoder_gives_exactly_the_mappers_events(views):
    store, _, service = views
    realistic_store(service, store)
    rows = log_rows(store)
    decode = EventDecoder(store.mapper)
    assert decode.fast
    kinds = set()
    for row in rows:
        ours, mappers = decode(row), store.mapper.to_domain_event(row)
        assert exactly(ours) == exactly(mappers), (row.id, row.topic)
        assert ours == mappers
        kinds.add(type(ours).__name__)
    assert kinds >= DEMO_KINDS
    assert sum(type(decode(r)).__name__ == "Corrected" for r in rows) >= 4


def test_rows_read_with_case_ids_as_stored_decode_to_the_same_events(views):
    """The runner reads case ids as the database stores them (on SQLite 16 bytes) and the
    decoder makes one UUID per case: the events are the mapper's of the usual rows."""
    store, _, service = views
    realistic_store(service, store)
    rows, stored, start = log_rows(store), [], 1
    while batch := store.log_page(start, 500, ids_as_stored=True):
        stored += batch
        start = batch[-1].id + 1
    if store.recorder.datastore.engine.dialect.name == "sqlite":
        assert {type(r.originator_id) for r in stored} == {bytes}
    decode = EventDecoder(store.mapper)
    for row, as_stored in zip(rows, stored, strict=True):
        assert exactly(decode(as_stored)) == exactly(store.mapper.to_domain_event(row))
    cases = {decode(r).originator_id for r in stored}
    assert len({id(c) for c in cases}) == len(cases)  # one UUID object per case


def test_a_row_with_a_stored_case_id_left_to_the_mapper_decodes_too(views):
    store, _, _ = views
    case = uuid4()
    state = b'{"amount":123456789012345678901234567890}'  # beyond 64 bits: the mapper's
    row = SimpleNamespace(id=1, originator_id=case.bytes, originator_version=3,
                          topic="abate.case:Case.Closed", state=state)
    ours = EventDecoder(store.mapper)(row)
    assert ours.originator_id == case
    assert vars(ours)["amount"] == 123456789012345678901234567890


def test_views_rebuilt_with_either_decoder_hold_the_same_rows(views):
    store, runner, service = views
    realistic_store(service, store)
    runner.rebuild()
    assert isinstance(runner.decode, EventDecoder)
    fast = dump(runner)
    runner.decode = store.mapper.to_domain_event
    runner.rebuild()
    assert dump(runner) == fast
    assert sum(len(rows) for rows in fast.values()) > 300


@pytest.mark.parametrize("state, why", [
    (b'{"amount":123456789012345678901234567890}', "an integer beyond 64 bits"),
    (b'{"amount":{"_type_":"decimal_str","_data_":1.5}}', "a float as a typed value's data"),
    (b'{"amount":NaN}', "a constant orjson refuses"),
])
def test_what_orjson_would_read_otherwise_is_left_to_the_mapper(views, state, why):
    store, _, _ = views
    row = SimpleNamespace(id=1, originator_id=uuid4(), originator_version=3,
                          topic="abate.case:Case.Closed", state=state)
    ours, mappers = EventDecoder(store.mapper)(row), store.mapper.to_domain_event(row)
    assert repr(vars(ours)) == repr(vars(mappers)), why


def test_an_unknown_transcoding_is_reported_by_the_mapper_as_always(views):
    store, _, _ = views
    row = SimpleNamespace(id=1, originator_id=uuid4(), originator_version=3,
                          topic="abate.case:Case.Closed",
                          state=b'{"at":{"_type_":"no_such_type","_data_":"x"}}')
    with pytest.raises(MapperDeserialisationError, match="no_such_type"):
        EventDecoder(store.mapper)(row)

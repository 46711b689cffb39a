"""Stored events into domain events for the views: the mapper's result, with less work.

Decoding the events' JSON was most of reading the log (docs/benchmarks.md): the
eventsourcing mapper's decoder is the standard library's, with a Python hook called for
every JSON object. The views decode with orjson (JSON parsed in C, about two and a half
times faster), then convert the transcoder's typed values (``{"_type_": name, "_data_":
data}``: dates, times, amounts, ids) with the same transcodings, visiting containers
only, and build the event as ``Mapper.to_domain_event`` does (its class by topic, the
originator's id and version, upcasting an older ``class_version``).

The result equals the mapper's (tests/test_event_decoding.py rebuilds every view both
ways). Whatever this path cannot take exactly as the mapper would goes to the mapper
itself: a store that encrypts or compresses its events, a transcoder other than the JSON
one, any state orjson refuses (a NaN, a lone surrogate) or that names an unknown
transcoding, which the mapper then reports as it always does, and any state holding a
float (orjson reads an integer beyond 64 bits as one; the domain stores no floats).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import (
    DatetimeAsISO,
    DecimalAsStr,
    JSONTranscoder,
    Mapper,
    StoredEvent,
    UUIDAsHex,
    find_id_convertor,
)
from eventsourcing.utils import resolve_topic

from cases.store_config import DateAsISO

_CONTAINERS = (dict, list)
_KEPT_IDS = 20_000  # case ids kept by their stored bytes, as the runner keeps case states
_NOT_SEEN = (None, 1, None, None)  # a topic not met yet: looked up below
# What these transcodings' ``decode`` calls on a text, called directly (a Python call less
# for each of the about three typed values of every event).
_FROM_TEXT: dict[type, Callable[[str], Any]] = {
    DatetimeAsISO: dt.datetime.fromisoformat, DateAsISO: dt.date.fromisoformat,
    DecimalAsStr: Decimal, UUIDAsHex: UUID}


class _FloatMet(Exception):
    """orjson reads an integer beyond 64 bits as a float, where the standard library reads
    an int; no event of the domain holds a float (amounts are decimal texts), so an event
    with one is left to the mapper, exact whatever the number was."""


class EventDecoder:
    """``decoder(row)`` is ``mapper.to_domain_event(row)``, computed faster."""

    def __init__(self, mapper: Mapper):
        self.mapper = mapper
        transcoder = mapper.transcoder
        self.fast = (type(transcoder) is JSONTranscoder and mapper.cipher is None
                     and mapper.compressor is None)
        names = transcoder.names if self.fast else {}
        self._decoders: dict[str, Callable[[Any], Any]] = {
            name: t.decode for name, t in names.items()}
        self._from_text: dict[str, Callable[[str], Any]] = {
            name: _FROM_TEXT.get(type(t), t.decode) for name, t in names.items()}
        # topic: (event class, its class_version, the id type its id convertor is for, it)
        self._classes: dict[str, tuple[type, int, type, Callable[[Any], Any]]] = {}
        self._ids: dict[bytes, UUID] = {}  # case ids by their stored bytes (``_case_id``)

    def __call__(self, row: Any) -> Any:
        if self.fast:
            try:
                return self._decode(row)
            except Exception:  # noqa: BLE001 -- the mapper decides, and reports, as always
                pass
        if row.originator_id.__class__ is bytes:
            row = StoredEvent(self._case_id(row.originator_id), row.originator_version,
                              row.topic, row.state)
        return self.mapper.to_domain_event(row)

    def _case_id(self, stored: bytes) -> UUID:
        """The case id of 16 stored bytes (a row read ``ids_as_stored`` from SQLite): one UUID
        per case, kept for the next of its events, where SQLAlchemy's column type made one
        for every row in Python. At most ``_KEPT_IDS`` are kept."""
        found = self._ids.get(stored)
        if found is None:
            if len(self._ids) >= _KEPT_IDS:
                self._ids.clear()
            found = self._ids[stored] = UUID(bytes=stored)
        return found

    def _decode(self, row: Any) -> Any:
        state = self._convert(orjson.loads(row.state))
        originator_id = row.originator_id
        if originator_id.__class__ is bytes:
            originator_id = self._case_id(originator_id)
        cls, class_version, id_type, convert_id = self._classes.get(row.topic) or _NOT_SEEN
        if id_type is not originator_id.__class__:
            cls, class_version, id_type, convert_id = self._class_of(row.topic, originator_id)
        state["originator_id"] = convert_id(originator_id)
        state["originator_version"] = row.originator_version
        from_version = state.pop("class_version", 1)
        while from_version < class_version:
            getattr(cls, f"upcast_v{from_version}_v{from_version + 1}")(state)
            from_version += 1
        event = object.__new__(cls)
        object.__setattr__(event, "__dict__", state)
        return event

    def _class_of(self, topic: str, originator_id: Any) -> tuple[type, int, type, Callable]:
        cls = resolve_topic(topic)
        id_type = originator_id.__class__
        found = self._classes[topic] = (cls, getattr(cls, "class_version", 1), id_type,
                                        find_id_convertor(cls, id_type))
        return found

    def _convert(self, value: Any) -> Any:
        """The JSON decoder's hook, applied inside out as the decoder applies it: a dict of
        exactly ``_type_`` and ``_data_`` becomes its transcoding's value. A typed value
        whose data is a text (every transcoding registered here) is converted in place,
        without a call of its own: most of the dicts met are those."""
        if value.__class__ is dict:
            if len(value) == 2 and "_type_" in value and "_data_" in value:
                return self._typed(value)
            items = value.items()
        else:
            items = enumerate(value)  # replacing items in place is safe while enumerating
        from_text = self._from_text
        for key, item in items:
            if item.__class__ is dict:
                if (len(item) == 2 and "_type_" in item and "_data_" in item
                        and item["_data_"].__class__ is str):
                    value[key] = from_text[item["_type_"]](item["_data_"])
                else:
                    value[key] = self._convert(item)
            elif item.__class__ is list:
                value[key] = self._convert(item)
            elif item.__class__ is float:
                raise _FloatMet
        return value

    def _typed(self, value: dict[str, Any]) -> Any:
        data = value["_data_"]
        if data.__class__ is float:
            raise _FloatMet
        if data.__class__ in _CONTAINERS:
            data = self._convert(data)
        return self._decoders[value["_type_"]](data)

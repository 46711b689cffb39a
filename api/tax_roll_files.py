"""The tax roll's list as an HTTP answer: CSV (spooled, its digest in a header) or JSON
(streamed, its digest in the summary), read from the caught-up view in one snapshot. The
API's routes and the tax-roll page both answer with ``tax_roll_list``, so the file is the
same byte for byte at either door."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any, Literal
from zoneinfo import ZoneInfo

from fastapi.responses import StreamingResponse

from api.params import bounded_day, bounded_instant, one_line, query_name
from api.services import Services
from cases import filters
from cases.localtime import localized
from cases.rules.catalog import Municipality
from projections import TaxRoll
from projections.certification import ListDigest
from projections.tax_roll import listed_charge, only_certified
from projections.tax_roll_file import ListTotals, csv_batch_chunks, summary

Format = Literal["csv", "json"]
_JSON_ROWS = 500  # charges serialised and handed on at a time
_SPOOL_BYTES = 8 * 1024 * 1024  # a CSV list held in memory up to this, then on disk
_SEND_BYTES = 64 * 1024  # the spooled CSV sent in pieces of this size


def tax_roll_list(svc: Services, municipality: str, tax_year: int, *, county: str | None,
                  as_of: dt.date | None, known_at: dt.datetime | None, fmt: Format,
                  excel: bool) -> StreamingResponse:
    """The charges to certify for ``tax_year`` (one county's, or all), as of a business date
    (default today) and as known at a time (default now)."""
    place = place_of(svc, municipality)
    day = bounded_day("as_of", as_of) or today(svc, place)
    bounded_instant("known_at", known_at)
    county = filters.county(place, one_line("county", county), query_name)
    name = "-".join(["tax-roll", municipality, str(tax_year),
                     *([slug(county)] if county else []), "as-of", day.isoformat()])
    return list_answer(svc, place, fmt, filename=f"{name}.csv", tax_year=tax_year,
                       county=county, as_of=day, known_at=known_at, certified=False,
                       excel=excel)


def slug(text: str) -> str:
    """A county's name as it goes into a file name."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def place_of(svc: Services, municipality: str) -> Municipality:
    return svc.cases.catalog.municipality(municipality)


def today(svc: Services, place: Municipality) -> dt.date:
    return svc.clock().astimezone(ZoneInfo(place.time_zone)).date()


def _json_chunks(charges: Iterable[dict[str, Any]], info: Any, tz: str) -> Iterator[bytes]:
    """``{"charges": [...], "summary": {...}}`` a few hundred charges at a time; ``info``
    makes the summary once every charge has passed (the totals are taken on the way)."""
    batch: list[str] = []
    before = '{"charges": ['  # written with the first batch, once the list is being read
    for charge in charges:
        batch.append(json.dumps(localized(charge, tz), ensure_ascii=False))
        if len(batch) == _JSON_ROWS:
            yield (before + ",".join(batch)).encode("utf-8")
            before, batch = ",", []
    yield ((before if batch else before.rstrip(",")) + ",".join(batch)).encode("utf-8")
    yield (b'], "summary": ' + json.dumps(info(), ensure_ascii=False).encode("utf-8") + b"}")


def _one_snapshot(conn: Any) -> Any:
    """The connection, its reads from now on seeing one state of the database: PostgreSQL's
    REPEATABLE READ; on a SQLite file an explicit BEGIN (WAL keeps that reader's snapshot;
    an in-memory store shares one connection and is left as it is)."""
    if conn.dialect.name == "postgresql":
        return conn.execution_options(isolation_level="REPEATABLE READ")
    if conn.dialect.name == "sqlite" and conn.engine.url.database not in (None, "", ":memory:"):
        conn.exec_driver_sql("BEGIN")
    return conn


def list_answer(svc: Services, place: Municipality, fmt: Format, *, filename: str,
            tax_year: int, county: str | None, as_of: dt.date, known_at: dt.datetime | None,
            certified: bool, excel: bool = False, newly_certified: int | None = None,
            seal: Mapping[str, Any] | None = None) -> StreamingResponse:
    """The list from the caught-up view (only the certified charges for a certified list),
    with its SHA-256 (``ListDigest``): JSON streamed as it is read, the digest at the end of
    its summary; the CSV read once into a spooled file (memory up to ``_SPOOL_BYTES``, then
    disk) while its digest is taken, then sent with the digest in its
    ``X-Abate-List-SHA256`` header, which goes before the body."""
    view = svc.runner.active(TaxRoll.name)
    produced_at = svc.clock()

    def batches(conn: Any) -> Iterator[list[tuple[Any, ...]]]:
        listed = view.iter_row_batches(conn, municipality=place.municipality,
                                       tax_year=tax_year, as_of=as_of, known_at=known_at,
                                       county=county)
        return only_certified(listed) if certified else listed

    if fmt == "csv":
        spooled = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)
        try:
            digest = ListDigest()
            with svc.runner.engine.connect() as conn:
                conn = _one_snapshot(conn)  # the probe and the list read one state
                spooled.writelines(csv_batch_chunks(digest.counted_batches(batches(conn)),
                                                    place, seal=seal, excel=excel))
            spooled.seek(0)
        except BaseException:
            spooled.close()
            raise
        headers = {"Content-Disposition": f'attachment; filename="{filename}"',
                   "X-Abate-List-SHA256": digest.hexdigest(),
                   "X-Abate-List-Produced-At": produced_at.isoformat()}
        if seal:
            headers["X-Abate-Seal"] = seal["line"]
        return StreamingResponse(_sent_and_closed(spooled), headers=headers,
                                 media_type="text/csv; charset=utf-8")

    def body() -> Iterator[bytes]:
        with svc.runner.engine.connect() as conn:
            digest = ListDigest()
            totals = ListTotals()
            charges = (listed_charge(row) for batch in
                       totals.counted_batches(digest.counted_batches(batches(conn)))
                       for row in batch)
            yield from _json_chunks(charges, lambda: summary(
                totals, place, tax_year=tax_year, county=county, as_of=as_of,
                known_at=known_at, certified=certified, produced_at=produced_at,
                newly_certified=newly_certified, seal=seal, list_sha256=digest.hexdigest()),
                place.time_zone)

    # The first chunk is made here, before the answer's status is sent: a failure to read
    # the list is then an error answer, not a cut-off body.
    chunks = body()
    first = next(chunks, b"")
    return StreamingResponse(itertools.chain([first], chunks), media_type="application/json")


def _sent_and_closed(spooled: IO[bytes]) -> Iterator[bytes]:
    """The spooled CSV in pieces, the file closed (and any disk copy removed) at the end or
    when the client goes away."""
    with spooled:
        while piece := spooled.read(_SEND_BYTES):
            yield piece

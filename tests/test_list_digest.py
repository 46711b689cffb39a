"""The list digest (projections.certification.ListDigest) is defined as the SHA-256 of one
``json.dumps(columns, ensure_ascii=False, separators=(",", ":"), default=str)`` line per
charge. It is computed with orjson, a batch at a time; these check the bytes hashed are the
definition's, for text that could confuse the batch's cutting (``],[`` inside a name),
control characters, non-ASCII text, numbers, None and booleans."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from projections.certification import ListDigest
from projections.tax_roll import CSV_WIDTH, LISTED_COLUMNS


def _defined(rows: list[tuple]) -> str:
    """The digest as the format defines it, with the standard library."""
    text = "".join(json.dumps(list(row[:CSV_WIDTH]), ensure_ascii=False,
                              separators=(",", ":"), default=str) + "\n" for row in rows)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _row(owner: str, number: int) -> tuple:
    """A row of LISTED_COLUMNS with ``owner`` as the owner's name."""
    values = {name: f"{name}-{number}" for name in LISTED_COLUMNS}
    values.update(tax_year=2026, owner_name=owner, rule_version=number % 3 + 1,
                  interest="", certified=number % 2 == 0, certified_at=None)
    return tuple(values[name] for name in LISTED_COLUMNS)


AWKWARD = ["],[", "x],[y", "]", "[", ",", "\"],[\"", "a\\],[b", "Ünïcødé §", "😀 owner",
           "tab\there", "line\nbreak", "nul\x00", "esc\x1b", "del\x7f", "\u2028", "", "null"]


@pytest.mark.parametrize("owner", AWKWARD)
def test_a_batch_digests_as_the_definition_says(owner: str) -> None:
    rows = [_row(owner if n % 2 else "Plain Owner", n) for n in range(7)]
    digest = ListDigest()
    digest.add_rows(rows)
    assert digest.hexdigest() == _defined(rows)


def test_batches_and_charges_give_one_digest_for_a_long_mixed_list() -> None:
    chooser = random.Random(11)
    rows = [_row(chooser.choice(AWKWARD + ["Owner"] * 20), n) for n in range(3000)]
    in_batches = ListDigest.of_batches([rows[i:i + 500] for i in range(0, len(rows), 500)])
    one_at_a_time = ListDigest.of(dict(zip(LISTED_COLUMNS, row)) for row in rows)
    assert in_batches == one_at_a_time == _defined(rows)


def test_an_empty_list_has_the_digest_of_no_bytes() -> None:
    assert ListDigest.of_batches([]) == hashlib.sha256(b"").hexdigest()

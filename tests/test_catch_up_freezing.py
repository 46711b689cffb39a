"""How a catch-up keeps the garbage collector off what survives its pages: a short one (a
server's, after a command) freezes nothing; a long one freezes after its first pages and
thaws everything at its end; a process that froze objects itself is left as it was."""

from __future__ import annotations

import gc

import pytest

from projections.runner import FREEZE_AFTER_PAGES, old_objects_left_alone


@pytest.fixture
def nothing_frozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_a_short_catch_up_freezes_nothing(nothing_frozen, monkeypatch):
    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    with old_objects_left_alone() as between_pages:
        for _ in range(FREEZE_AFTER_PAGES):
            between_pages()
    assert frozen == [] and gc.get_freeze_count() == 0


def test_a_long_catch_up_freezes_after_its_first_pages_and_thaws_at_the_end(nothing_frozen):
    kept = [[n] for n in range(1000)]  # objects that survive the pages
    with old_objects_left_alone() as between_pages:
        for _ in range(FREEZE_AFTER_PAGES):
            between_pages()
        assert gc.get_freeze_count() == 0
        between_pages()
        assert gc.get_freeze_count() >= len(kept)
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_itself_is_left_as_it_was(nothing_frozen):
    gc.freeze()
    before = gc.get_freeze_count()
    with old_objects_left_alone() as between_pages:
        for _ in range(FREEZE_AFTER_PAGES + 3):
            between_pages()
    assert gc.get_freeze_count() == before > 0

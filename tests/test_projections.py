"""The projection machinery: exactly once, crash-safe, rebuildable, readable while rebuilding."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from abate.cli import main
from abate.demo_store import demo_journal_path
from cases.application import CaseService
from cases.store import CaseStore
from projections import ALL_VIEWS
from projections.runner import PAGES_PER_BATCH, ViewRunner
from projections.tracking import PositionMovedError
from projections.view import made_on
from tests.abate_command import run_abate
from tests.conftest import NOW
from tests.stopping import StopAfterFirstCheck

ROOT = Path(__file__).resolve().parent.parent


def load_demo(service):
    service.import_journal(demo_journal_path().read_text().splitlines(), now=NOW)


def dump(runner: ViewRunner) -> dict[str, list[tuple]]:
    """Every row of every active view table, keyed by table name without its generation."""
    contents = {}
    with runner.engine.connect() as conn:
        for name in runner.view_classes:
            view = runner.active(name)
            for table in view.metadata.sorted_tables:
                key = table.name.replace(f"_g{view.generation}", "")
                rows = conn.execute(sa.select(table)).all()
                contents[key] = sorted(tuple(str(v) for v in row) for row in rows)
    return contents


def test_catch_up_is_resumable_and_equals_a_full_rebuild(views):
    store, runner, service = views
    load_demo(service)
    small_pages = ViewRunner(store, ALL_VIEWS, schema=runner_schema(runner), page_size=7)
    try:
        small_pages.catch_up(until=100)  # stop part-way, as a restart would
        assert {s.position for s in small_pages.status()} == {100}
        small_pages.catch_up()
        assert {s.lag for s in small_pages.status()} == {0}
        resumed = dump(small_pages)
        for name in small_pages.view_classes:
            small_pages.rebuild(name)
        assert dump(small_pages) == resumed
        assert {s.generation for s in small_pages.status()} == {2}
    finally:
        small_pages.close()


def test_a_catch_up_asked_to_stop_ends_after_its_batch_and_the_next_goes_on(views):
    store, runner, service = views
    load_demo(service)
    small_pages = ViewRunner(store, ALL_VIEWS, schema=runner_schema(runner), page_size=7)
    try:
        applied = small_pages.catch_up(stop=StopAfterFirstCheck())
        assert applied == 7 * PAGES_PER_BATCH  # one batch, committed with its position
        assert {s.position for s in small_pages.status()} == {applied}
        small_pages.catch_up()
        assert {s.lag for s in small_pages.status()} == {0}
        went_on = dump(small_pages)
        for name in small_pages.view_classes:
            small_pages.rebuild(name)
        assert dump(small_pages) == went_on
    finally:
        small_pages.close()


def test_a_large_catch_up_refreshes_the_planner_statistics_of_the_views_it_filled(
        views, monkeypatch):
    """On PostgreSQL, as a rebuild does: a list read right after a large import is planned
    on the rows there are, not on an empty table's statistics (``reltuples`` -1: never
    analyzed). A small catch-up (the usual one, a command's events) leaves them to autovacuum."""
    store, runner, service = views
    if runner.engine.dialect.name != "postgresql":
        pytest.skip("SQLite plans from its indexes alone: it keeps no statistics to refresh")
    load_demo(service)
    head = runner.head()
    tables = [t.name for name in runner.view_classes
              for t in runner.active(name).metadata.sorted_tables]

    def estimated_rows() -> dict[str, float]:
        with runner.engine.connect() as conn:
            return dict(conn.execute(sa.text(
                "select relname, reltuples from pg_class where relname = any(:names) "
                "and relnamespace = current_schema()::regnamespace"), {"names": tables}).all())

    monkeypatch.setattr("projections.runner.ANALYZE_AFTER_EVENTS", head)
    assert runner.catch_up(until=head - 1) == head - 1
    assert set(estimated_rows().values()) == {-1}
    monkeypatch.setattr("projections.runner.ANALYZE_AFTER_EVENTS", 1)
    assert runner.catch_up() == 1
    estimated = estimated_rows()
    with runner.engine.connect() as conn:
        stored = {t: conn.execute(sa.text(f'select count(*) from "{t}"')).scalar() for t in tables}
    assert estimated == {t: float(n) for t, n in stored.items()}
    assert stored[runner.active("tax_roll").versions.name] > 0


def test_views_at_different_positions_merge_and_end_equal_to_a_rebuild(views):
    store, runner, service = views
    load_demo(service)
    runner.catch_up(["repeat_offenses"], until=60)
    runner.catch_up(["tax_roll"], until=25)
    assert {s.view: s.position for s in runner.status()} == {
        "case_summaries": 0, "worklist": 0, "repeat_offenses": 60, "tax_roll": 25,
        "case_months": 0}
    runner.catch_up()
    assert {s.lag for s in runner.status()} == {0}
    merged = dump(runner)
    runner.rebuild()  # every view together, sharing each page
    assert dump(runner) == merged
    assert {s.generation for s in runner.status()} == {2}


def test_case_states_not_in_memory_are_loaded_from_the_store_at_the_right_version(views):
    store, runner, service = views
    load_demo(service)
    runner.catch_up()
    remembered = dump(runner)
    forgetful = ViewRunner(store, ALL_VIEWS, schema=runner_schema(runner), page_size=5)
    try:
        forgetful.states.max_cases = 0  # every later event needs its case from the store
        forgetful.rebuild()
        assert forgetful.states.loads > 0
        assert dump(forgetful) == remembered
    finally:
        forgetful.close()


def test_a_view_stored_by_an_older_abate_is_rebuilt_when_a_runner_starts(views):
    store, runner, service = views
    load_demo(service)
    runner.catch_up()
    current = dump(runner)
    with runner.engine.begin() as conn:  # what an older version left: a column short, a table more
        conn.execute(sa.text(
            "ALTER TABLE abate_tax_roll_versions_g1 DROP COLUMN owner_mailing_address"))
        conn.execute(sa.text("CREATE TABLE abate_worklist_g1_case_state (case_id varchar(36))"))
    upgraded = ViewRunner(store, ALL_VIEWS, schema=runner_schema(runner))
    try:
        assert {s.view: s.generation for s in upgraded.status()} == {
            "case_summaries": 1, "worklist": 2, "repeat_offenses": 1, "tax_roll": 2,
            "case_months": 1}
        assert {s.lag for s in upgraded.status()} == {0}
        assert dump(upgraded) == current
        with upgraded.engine.connect() as conn:
            assert not sa.inspect(conn).has_table("abate_worklist_g1_case_state")
    finally:
        upgraded.close()


def test_an_index_a_later_abate_added_is_built_at_the_next_start_without_a_rebuild(views):
    store, runner, service = views
    load_demo(service)
    runner.catch_up()
    current = dump(runner)
    # a store made by this Abate lacks none (an index for the other dialect is not missing)
    inspector = sa.inspect(runner.engine)
    assert [i.name for name in runner.view_classes
            for i in runner.active(name).missing_indexes(inspector)] == []
    index = "abate_case_summaries_place_ref_g1"
    with runner.engine.begin() as conn:  # what an Abate before that index left
        conn.execute(sa.text(f"DROP INDEX {index}"))
    upgraded = ViewRunner(store, ALL_VIEWS, schema=runner_schema(runner))
    try:
        assert {s.generation for s in upgraded.status()} == {1}  # nothing rebuilt
        stored = sa.inspect(upgraded.engine).get_indexes("abate_case_summaries_rows_g1")
        assert index in {i["name"] for i in stored}
        assert dump(upgraded) == current
    finally:
        upgraded.close()


def test_a_following_runner_applies_new_events_by_itself(database):
    """``abate projections run``: LISTEN/NOTIFY on PostgreSQL, polling on SQLite."""
    url, extra, schema = database
    store = CaseStore(url, extra_env=extra)
    follower = ViewRunner(store, ALL_VIEWS, schema=schema)
    stop = threading.Event()
    thread = threading.Thread(target=follower.follow, args=(stop,), kwargs={"poll_seconds": 0.05})
    thread.start()
    try:
        CaseService(store).import_journal(demo_journal_path().read_text().splitlines(), now=NOW)
        head = follower.head()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and {s.position for s in follower.status()} != {head}:
            time.sleep(0.05)
        assert {s.position for s in follower.status()} == {head}
    finally:
        stop.set()
        thread.join(timeout=30)
        follower.close()
        store.close()
    assert not thread.is_alive()


def runner_schema(runner: ViewRunner) -> str | None:
    if runner.engine.dialect.name != "postgresql":
        return None
    with runner.engine.connect() as conn:
        return conn.execute(sa.text("select current_schema()")).scalar()


def test_a_projection_process_killed_mid_run_resumes_and_ends_identical_to_a_rebuild(views):
    store, runner, service = views
    load_demo(service)
    schema = runner_schema(runner) or "-"
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.projection_worker", store.database_url, schema, "2"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True, env={**os.environ})
    try:
        for line in worker.stdout:  # batches of 10 pages of 2 events: killed after 80 of 290
            if line.startswith("batch 4 "):
                break
        worker.send_signal(signal.SIGKILL)
    finally:
        worker.wait(timeout=30)
    partial = runner.status()
    assert any(0 < s.position < s.head for s in partial), partial
    runner.catch_up()
    resumed = dump(runner)
    for name in runner.view_classes:
        runner.rebuild(name)
    assert dump(runner) == resumed


def test_a_page_already_applied_by_another_runner_is_never_applied_twice(views):
    store, runner, service = views
    load_demo(service)
    runner.catch_up()
    before = dump(runner)
    view = runner.active("tax_roll")
    page = store.recorder.select_notifications(start=1, limit=50)
    with pytest.raises(PositionMovedError):
        runner._apply_page([view], 0, page)  # a second runner that still thinks it is at 0
    assert dump(runner) == before


def test_readers_keep_the_old_view_until_the_rebuild_is_complete(views):
    store, runner, service = views
    load_demo(service)
    runner.catch_up()
    old = runner.active("worklist")
    seen_during = []

    def look(count: int) -> None:
        seen_during.append(runner.active("worklist").generation)

    runner.rebuild("worklist", progress=look)
    assert seen_during and set(seen_during) == {old.generation}
    assert runner.active("worklist").generation == old.generation + 1


def test_projection_status_and_rebuild_commands(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'p.sqlite3'}"
    assert main(["--database-url", url, "import", str(demo_journal_path())]) == 0
    capsys.readouterr()
    assert main(["--database-url", url, "projections", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert {s["view"] for s in status} == {"case_summaries", "worklist", "repeat_offenses", "tax_roll",
                                             "case_months"}
    assert main(["--database-url", url, "projections", "rebuild", "tax_roll", "--progress"]) == 0
    captured = capsys.readouterr()
    rebuilt = {s["view"]: s for s in json.loads(captured.out)}
    assert rebuilt["tax_roll"]["generation"] == 2 and rebuilt["tax_roll"]["lag"] == 0
    assert "rebuild tax_roll" in captured.err  # the progress bar


def test_a_view_written_by_an_older_definition_is_rebuilt_and_abate_worklist_reads_the_new(
        tmp_path):
    """The worklist's definition 2 words amounts as $1,234.56 and names the roll's year. A
    store an older Abate kept (no ``abate_view_definitions``, the old texts in the rows)
    is rebuilt at the next start of ``abate``; views whose definition did not change keep
    their generation."""
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    def run(*args: str) -> str:
        done = run_abate("--database-url", url, *args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("import", str(demo_journal_path()))
    run("worklist", "--municipality", "belleville")
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:  # what the first definition wrote, and no count of it
            conn.execute(sa.text("DROP TABLE abate_view_definitions"))
            old = conn.execute(sa.text(
                "UPDATE abate_worklist_actions_g1 SET what = 'enter the unpaid 485.00 on the "
                "tax roll as a special charge' WHERE action IN ('enter_tax_roll', 'name_statute')")
            ).rowcount
        assert old >= 1
        actions = json.loads(run("worklist", "--municipality", "belleville"))["actions"]
        texts = [a["what"] for a in actions if a["action"] in ("enter_tax_roll", "name_statute")]
        assert texts and not [t for t in texts if "485.00 on the tax roll" in t]
        assert all(re.search(r"the unpaid \$[0-9,]+\.[0-9]{2} (can go )?on the 20[0-9]{2} tax roll "
                             r"\((Dane|Green) County\) as a ", t) for t in texts), texts
        generations = {s["view"]: s["generation"]
                       for s in json.loads(run("projections", "status"))}
        assert generations == {"case_summaries": 1, "worklist": 2, "repeat_offenses": 2,
                               "tax_roll": 2, "case_months": 1}  # v3 > 1, tax_roll v2 > 1
        with engine.connect() as conn:
            noted = dict(conn.execute(sa.text(
                "SELECT view, definition_version FROM abate_view_definitions "
                "WHERE view IN ('worklist', 'tax_roll', 'case_summaries')")).all())
        # case_summaries kept generation 1: definition 1, unnoted
        assert noted == {"worklist": 4, "tax_roll": 2}
        run("worklist", "--municipality", "belleville")  # current now: nothing rebuilt again
        assert {s["view"]: s["generation"]
                for s in json.loads(run("projections", "status"))} == generations
    finally:
        engine.dispose()


def test_a_rebuilt_generation_gets_every_index_before_readers_switch_to_it(views):
    """A rebuild fills its new tables with only the case-id indexes the views write by and
    builds the rest at the end; readers must find every index either way."""
    store, runner, service = views
    load_demo(service)
    runner.catch_up()
    runner.rebuild()
    inspector = sa.inspect(runner.engine)
    for name in runner.view_classes:
        view = runner.active(name)
        assert view.generation == 2
        for table in view.metadata.sorted_tables:
            stored = {index["name"] for index in inspector.get_indexes(table.name)}
            assert stored == {index.name for index in table.indexes
                              if made_on(index, runner.engine.dialect.name)}, table.name


def test_a_view_does_nothing_with_the_events_it_does_not_listen_to(views):
    """The runner skips ``on_event`` for the classes a view's ``listens_to`` leaves out:
    for every event of the demo journal of such a class, given the case's state after it,
    the view collects nothing (no connection is given, so a write would fail)."""
    import copy

    from projections.view import View

    store, runner, service = views
    load_demo(service)
    decode = store.mapper.to_domain_event
    events = [decode(n) for n in store.recorder.select_notifications(start=1, limit=10_000)]
    choosy = [runner.view(name, 99) for name, cls in runner.view_classes.items()
              if cls.listens_to is not View.listens_to]
    assert {v.name for v in choosy} >= {"repeat_offenses", "tax_roll", "case_months"}
    for view in choosy:
        view.begin_page()
        assert not all(view.listens_to(type(e)) for e in events), view.name

    def collected(view: View) -> dict:
        return {k: copy.deepcopy(v) for k, v in vars(view).items()
                if not isinstance(v, (sa.MetaData, sa.Table))}

    skipped = 0
    for event in events:
        case = runner.states.advance(event)
        for view in choosy:
            if not view.listens_to(type(event)):
                before = collected(view)
                view.on_event(None, case, event)
                assert collected(view) == before, (view.name, type(event).__name__)
                skipped += 1
    assert skipped

"""What a summarize keeps of the suite for the next one: the runs' stats rows and each metric group's
replicates. A run is taken from there only while its result files are unchanged; the table and the
replicates are those reading and drawing everything again gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from holistic.results import SuiteReader
from holistic.results.output_cache import KEY_FILE_ENV, OutputCache
from holistic.results.schemas import STATS_TABLE
from holistic.summarize import replicates, stats_rows
from holistic.summarize.stats_rows import STATS_CACHE, STATS_COLUMNS, stats_table
from tests.support.calls import record_calls
from tests.support.fake_suite import FakeRun, rewrite_run, write_fake_suite

RUNS = [FakeRun(sc, f"model/{i}", skill=0.3 + 0.2 * i, num_instances=30) for sc in ("alpha", "beta") for i in range(2)]


@pytest.fixture(autouse=True)
def _own_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / "secret" / "key"))


def _cache(reader: SuiteReader) -> OutputCache:
    cache = OutputCache.beside(reader.derived_dir)
    assert cache is not None
    return cache


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return record_calls(monkeypatch, stats_rows, "_read", lambda run: run.run_id)


def test_stats_rows_are_read_once_then_only_a_rerun_runs_and_equal_reading_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_fake_suite(tmp_path, "s", RUNS)
    read = _reads(monkeypatch)
    reader = SuiteReader(suite)
    first = stats_table(reader, _cache(reader))
    assert len(read) == len(RUNS)
    assert first.equals(reader.dataset_table(STATS_TABLE, columns=STATS_COLUMNS))

    read.clear()
    reader = SuiteReader(suite)
    assert stats_table(reader, _cache(reader)).equals(first)
    assert read == []  # nothing changed: every run's rows from the cache

    rewrite_run(tmp_path, "s", RUNS[2], seed=5)
    reader = SuiteReader(suite)
    again = stats_table(reader, _cache(reader))
    assert read == [RUNS[2].run_id]
    assert again.equals(reader.dataset_table(STATS_TABLE, columns=STATS_COLUMNS))
    assert not again.equals(first)


def test_kept_stats_rows_under_another_secret_or_edited_are_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_fake_suite(tmp_path, "s", RUNS)
    reader = SuiteReader(suite)
    stats_table(reader, _cache(reader))
    (entry,) = (reader.derived_dir / ".summarize-cache" / STATS_CACHE).iterdir()
    data = entry.read_bytes()
    entry.write_bytes(data.replace(b'"alpha', b'"ALPHA'))  # another run's rows claimed for it
    read = _reads(monkeypatch)
    reader = SuiteReader(suite)
    assert stats_table(reader, _cache(reader)).equals(reader.dataset_table(STATS_TABLE, columns=STATS_COLUMNS))
    assert len(read) == len(RUNS)

    read.clear()
    monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / "another-user" / "key"))
    reader = SuiteReader(suite)
    stats_table(reader, _cache(reader))
    assert len(read) == len(RUNS)


def _group(reader: SuiteReader, cache: OutputCache | None) -> replicates.GroupReplicates:
    return replicates.GroupReplicates(cache, "accuracy", None, 3, 25)


def _draw_all(reader: SuiteReader, cache: OutputCache | None) -> tuple[replicates.Replicates, set[str]]:
    items = [(r.run_id, "exact_match", "test") for r in reader.runs]
    group = _group(reader, cache)
    todo = group.known(reader, items, set())
    per_run = {
        item: np.linspace(0.0, 1.0, 10 + i) for i, item in enumerate(items) if item[0] in todo
    }  # stand-ins for the values read: what matters is which runs are drawn
    group.draw(reader, [i for i in items if i[0] in todo], per_run)
    return group.replicates, todo


def test_a_groups_replicates_are_kept_in_one_entry_and_a_rerun_run_alone_is_drawn_again(tmp_path: Path) -> None:
    suite = write_fake_suite(tmp_path, "s", RUNS)
    reader = SuiteReader(suite)
    first, todo = _draw_all(reader, _cache(reader))
    assert todo == {r.run_id for r in RUNS}
    entries = list((reader.derived_dir / ".summarize-cache" / replicates.REPLICATES_CACHE).iterdir())
    assert len(entries) == 1  # one pack for the group, not an entry per run

    reader = SuiteReader(suite)
    again, todo = _draw_all(reader, _cache(reader))
    assert todo == set()
    assert again.keys() == first.keys()
    for key, (present, reps) in first.items():
        assert again[key][0] == present
        taken = again[key][1]
        assert reps is not None and taken is not None and np.array_equal(taken, reps)  # to the bit

    rewrite_run(tmp_path, "s", RUNS[1], seed=9)
    reader = SuiteReader(suite)
    _, todo = _draw_all(reader, _cache(reader))
    assert todo == {RUNS[1].run_id}


def test_a_damaged_pack_is_drawn_again(tmp_path: Path) -> None:
    suite = write_fake_suite(tmp_path, "s", RUNS)
    reader = SuiteReader(suite)
    _draw_all(reader, _cache(reader))
    (entry,) = (reader.derived_dir / ".summarize-cache" / replicates.REPLICATES_CACHE).iterdir()
    entry.write_bytes(entry.read_bytes()[:-9])
    reader = SuiteReader(suite)
    _, todo = _draw_all(reader, _cache(reader))
    assert todo == {r.run_id for r in RUNS}


def test_runs_read_again_for_a_median_metric_leave_the_pack_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_fake_suite(tmp_path, "s", RUNS)
    items = [(r.run_id, "exact_match", "test") for r in RUNS]
    per_run = {item: np.linspace(0.0, 1.0, 12) for item in items}
    written = record_calls(monkeypatch, replicates, "_write_pack", lambda cache, entry, pack: sorted(pack))
    for _ in range(2):
        reader = SuiteReader(suite)
        group = _group(reader, _cache(reader))
        todo = group.known(reader, items, {r.run_id for r in RUNS})  # every run pooled: always read
        assert todo == {r.run_id for r in RUNS}
        group.draw(reader, items, per_run)
    assert written == [sorted(r.run_id for r in RUNS)]  # written once: the same replicates the second time

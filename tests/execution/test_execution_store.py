"""The Parquet results store: suite.json, compatibility, atomic writes, one-table reads."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from holistic.core.errors import StoreError
from holistic.core.types import AdapterSpec, MetricName, PerInstanceStat, RunSpec, ScenarioSpec, Stat
from holistic.execution import shards
from holistic.results import COMPLETE_MARKER, atomic
from holistic.results.schemas import SCHEMA_VERSION, TABLES, arrow_schema, describe
from holistic.results.store import SuiteStore

REPO = Path(__file__).resolve().parents[2]
INFO = {"spec_path": "spec.yaml", "spec_sha256": "ab" * 32, "description": "d"}


def _run(scenario: str, model: str) -> RunSpec:
    return RunSpec(
        name=f"{scenario}:{model}", scenario=ScenarioSpec.make(scenario, {"n": 1}), adapter=AdapterSpec(), model=model
    )


def test_suite_json_records_spec_version_and_keeps_created_on_reopen(tmp_path: Path) -> None:
    store = SuiteStore(tmp_path, "s")
    store.open(**INFO)
    first = json.loads(store.suite_file.read_text())
    assert first["schema_version"] == SCHEMA_VERSION
    assert first["spec_sha256"] == "ab" * 32
    assert first["package_version"]
    assert first["runs"] == []
    store.record_runs([{"run_id": "r1", "status": "pending"}])
    store.record_runs([{"run_id": "r1", "status": "complete"}, {"run_id": "r2", "status": "failed"}])
    SuiteStore(tmp_path, "s").open(spec_path="other.yaml", spec_sha256="cd" * 32)
    again = json.loads(store.suite_file.read_text())
    assert again["created"] == first["created"]
    assert again["spec_path"] == "other.yaml"
    assert [(r["run_id"], r["status"]) for r in again["runs"]] == [("r1", "complete"), ("r2", "failed")]


def test_incompatible_schema_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "suite.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION + 41, "runs": []}))
    with pytest.raises(StoreError, match=rf"newer holistic.*schema_version {SCHEMA_VERSION + 41}.*upgrade"):
        SuiteStore(tmp_path, "s").open(**INFO)


def test_unwritable_output_dir_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot write results to"):
        SuiteStore(blocker / "out", "s").open(**INFO)


def test_suite_name_must_be_a_plain_folder_name(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="invalid suite name"):
        SuiteStore(tmp_path, "../escape")


def test_failed_atomic_write_leaves_neither_file_nor_temporary(tmp_path: Path) -> None:
    target = tmp_path / "stats.parquet"
    with pytest.raises(RuntimeError), atomic.atomic_path(target) as tmp:
        tmp.write_bytes(b"PAR1 half a file")
        raise RuntimeError("killed mid-write")
    assert list(tmp_path.iterdir()) == []


def test_begin_run_clears_leftovers_of_an_interrupted_attempt(tmp_path: Path) -> None:
    store = SuiteStore(tmp_path, "s")
    store.open(**INFO)
    folder = store.run_dir("r1")
    folder.mkdir(parents=True)
    (folder / ".stats.parquet.99999999-abc.tmp").write_bytes(b"partial, writer killed")
    live = folder / f".requests.parquet.{os.getpid()}-def.tmp"
    live.write_bytes(b"a writer that still runs")
    (folder / "instances.parquet").write_bytes(b"from an old attempt")
    writer = store.begin_run("r1")
    assert sorted(p.name for p in folder.iterdir()) == [live.name]
    live.unlink()
    assert not store.is_complete("r1")
    writer.write_json("run_spec.json", {"a": 1})
    writer.complete()
    assert store.is_complete("r1")
    assert (folder / COMPLETE_MARKER).exists()


def test_shards_of_a_suite_read_as_one_table(tmp_path: Path) -> None:
    store = SuiteStore(tmp_path, "s")
    store.open(**INFO)
    for run in (_run("arith", "simple/echo"), _run("reasoning", "simple/no-logprobs")):
        keys = shards.JoinKeys.of("s", run)
        name = MetricName("exact_match")
        per_instance = [PerInstanceStat("i1", 0, name, 1.0), PerInstanceStat("i2", 0, name, 0.0)]
        stat = Stat.of(name, [1.0, 0.0])
        writer = store.begin_run(run.run_id)
        writer.write_table("per_instance_stats", shards.per_instance_stats_table(keys, per_instance))
        # a run whose stats have no sub_split/perturbation/ci at all must still share the schema
        writer.write_table("stats", shards.stats_table(keys, [stat]))
        writer.complete()
    files = sorted(glob.glob(str(tmp_path / "s" / "runs" / "*" / "stats.parquet")))
    table = ds.dataset(files, format="parquet").to_table()
    assert table.num_rows == 2
    assert sorted(table.column("model").to_pylist()) == ["simple/echo", "simple/no-logprobs"]
    assert table.column("mean").to_pylist() == [0.5, 0.5]
    assert table.schema.field("ci_low").type == arrow_schema("stats").field("ci_low").type
    meta = pq.read_schema(files[0]).metadata
    assert meta[b"holistic.schema_version"] == str(SCHEMA_VERSION).encode()


def test_empty_tables_keep_their_column_types(tmp_path: Path) -> None:
    keys = shards.JoinKeys.of("s", _run("arith", "simple/echo"))
    for name, table in (
        ("requests", shards.requests_table(keys, [], [])),
        ("instances", shards.instances_table(keys, [], [])),
        ("stats", shards.stats_table(keys, [])),
    ):
        assert table.num_rows == 0
        assert table.schema.equals(arrow_schema(name), check_metadata=False)


def test_results_schema_file_documents_every_column() -> None:
    on_disk = json.loads((REPO / "schemas" / "results.schema.json").read_text(encoding="utf-8"))
    assert on_disk == describe(), "regenerate with: python -m holistic.results.schemas > schemas/results.schema.json"
    assert on_disk["schema_version"] == SCHEMA_VERSION
    for name, columns in TABLES.items():
        documented = on_disk["tables"][name]["columns"]
        assert [c["name"] for c in documented] == [c.name for c in columns]
        assert all(c["description"] for c in documented)
        assert {"suite", "run_id", "scenario", "model", "method"} <= {c["name"] for c in documented}

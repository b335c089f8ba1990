"""References in the ``instances`` table: the ranking judgements are typed fields that
survive a write and a read, and runs that stored them as tags read the same way."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from holistic.core.types import Instance, Reference
from holistic.execution.shards import JoinKeys, instances_table
from holistic.results import RunReader, reference_from_row, references_from_rows
from holistic.results.schemas import arrow_schema
from holistic.results.store import SuiteStore

PASSAGES = (
    Reference("relevant, retrieved first", ("correct",), relevance=3, first_stage_rank=1),
    Reference("judged not relevant", relevance=0, first_stage_rank=2),
    Reference("only judged", ("correct",), relevance=2),
    Reference("plain answer"),
)


def _write(tmp_path: Path, table: pa.Table) -> RunReader:
    store = SuiteStore(tmp_path, "s")
    writer = store.begin_run("r")
    writer.write_table("instances", table)
    writer.complete()
    return RunReader.at(tmp_path / "s" / "runs" / "r")


def test_reference_fields_survive_a_write_and_a_read_of_the_results(tmp_path: Path) -> None:
    keys = JoinKeys("s", "r", "r", "msmarco", "{}", "simple/echo", "ranking_binary")
    instance = Instance(id="q1", input="query", references=PASSAGES, split="valid")
    run = _write(tmp_path, instances_table(keys, [instance], []))
    (cell,) = run.table("instances", ["references"]).column("references").to_pylist()
    assert references_from_rows(cell) == list(PASSAGES)
    assert cell[0]["relevance"] == 3 and cell[0]["first_stage_rank"] == 1 and cell[0]["tags"] == ["correct"]
    assert cell[3]["relevance"] is None and cell[3]["first_stage_rank"] is None


def test_runs_that_stored_ranking_judgements_as_tags_read_as_fields(tmp_path: Path) -> None:
    old_reference = pa.struct(
        [pa.field("output", pa.string(), nullable=False), pa.field("tags", pa.list_(pa.string()), nullable=False)]
    )
    old = [
        {"output": "p0", "tags": ["first_stage_rank=1", "correct", "relevance=3"]},
        {"output": "p1", "tags": ["first_stage_rank=2", "relevance=0"]},
        {"output": "p2", "tags": ["correct", "relevance=2"]},
        {"output": "x", "tags": ["relevance=high"]},  # not a number: an ordinary tag
    ]
    schema = arrow_schema("instances")
    columns = {f.name: pa.nulls(1, f.type) for f in schema if f.name != "references"}
    table = pa.table(
        {**{n: columns[n] for n in columns}, "references": pa.array([old], pa.list_(old_reference))},
    )
    run = _write(tmp_path, table)
    (cell,) = run.table("instances", ["references"]).column("references").to_pylist()
    assert references_from_rows(cell) == [
        Reference("p0", ("correct",), relevance=3, first_stage_rank=1),
        Reference("p1", relevance=0, first_stage_rank=2),
        Reference("p2", ("correct",), relevance=2),
        Reference("x", ("relevance=high",)),
    ]


def test_a_field_wins_over_a_stale_tag() -> None:
    row = {"output": "p", "tags": ["relevance=1"], "relevance": 2, "first_stage_rank": None}
    assert reference_from_row(row) == Reference("p", relevance=2)

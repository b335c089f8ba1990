"""The per-instance values behind every leaderboard cell, computed in Arrow and NumPy, equal to the
bit what a plain row-by-row reading gives: trials averaged per instance, instances in id order,
the original (no or an empty perturbation name) apart from each perturbation, a missing or empty
split read as ``test``, rows without a value left out."""

from __future__ import annotations

import random
from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from holistic.summarize.per_instance import encoded
from holistic.summarize.per_instance import per_instance_arrays as _per_instance_arrays


def _row_by_row(rows: list[dict[str, object]], perturbation: str | None) -> dict[tuple[str, str, str], list[float]]:
    acc: dict[tuple[str, str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if (r["perturbation"] or None) != perturbation or r["value"] is None:
            continue
        acc[(str(r["run_id"]), str(r["metric"]), str(r["split"] or "test"))][str(r["instance_id"])].append(
            float(r["value"])  # type: ignore[arg-type]
        )
    return {
        key: [sum(v) / len(v) if len(v) < 8 else float(np.mean(v)) for _, v in sorted(by.items())]
        for key, by in acc.items()
    }


def _rows(seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    ids = ["a", "b", "é", "z9", "10", "2", "x\u4e2d"]
    rows = []
    for _ in range(400):
        rows.append(
            {
                "run_id": rng.choice(["r1", "r2", "r3"]),
                "instance_id": rng.choice(ids),
                "trial": rng.randrange(12),
                "metric": rng.choice(["exact_match", "f1"]),
                "split": rng.choice(["test", "valid", "", None]),
                "perturbation": rng.choice([None, "", "typos", "dialect"]),
                "value": None if rng.random() < 0.05 else rng.random() * rng.choice([1.0, 1e-3, 1e6]),
            }
        )
    return rows


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("perturbation", [None, "typos", "absent"])
def test_equal_to_a_row_by_row_reading(seed: int, perturbation: str | None) -> None:
    rows = _rows(seed)
    got = _per_instance_arrays(pa.Table.from_pylist(rows), perturbation)
    want = _row_by_row(rows, perturbation)
    assert sorted(got) == sorted(want)
    for key, values in want.items():
        assert got[key].tolist() == values  # to the bit


def test_no_rows_and_no_perturbation_column() -> None:
    assert _per_instance_arrays(pa.table({}), None) == {}
    table = pa.table({"run_id": ["r"], "instance_id": ["i"], "metric": ["m"], "value": [0.5]})
    assert {k: v.tolist() for k, v in _per_instance_arrays(table, None).items()} == {("r", "m", "test"): [0.5]}
    assert _per_instance_arrays(table, "typos") == {}


def _as_read(rows: list[dict[str, object]]) -> pa.Table:
    """The rows as a suite's read gives them: in chunks (one per run file), the strings as
    dictionaries, each chunk with its own."""
    half = len(rows) // 2
    chunks = [pa.Table.from_pylist(part) for part in (rows[:half], rows[half:])]
    encoded = [
        pa.table(
            {
                n: (pc.dictionary_encode(c) if pa.types.is_string(c.type) else c)
                for n, c in zip(t.column_names, t.columns, strict=True)
            }
        )
        for t in chunks
    ]
    return pa.concat_tables(encoded)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("perturbation", [None, "typos"])
def test_dictionary_columns_in_chunks_give_the_same_values(seed: int, perturbation: str | None) -> None:
    rows = _rows(seed)
    table = _as_read(rows)
    assert pa.types.is_dictionary(table.schema.field("run_id").type) and table.column("run_id").num_chunks == 2
    got = _per_instance_arrays(table, perturbation)
    want = _row_by_row(rows, perturbation)
    assert sorted(got) == sorted(want)
    for key, values in want.items():
        assert got[key].tolist() == values


def test_equal_values_get_one_code_whatever_the_dictionary() -> None:
    repeated = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, None, 2], pa.int32()), pa.array(["a", "b", "a"]))
    codes, values = encoded(pa.chunked_array([repeated]))
    assert [values[c] for c in codes] == ["a", "b", "a", None, "a"]
    assert codes[0] == codes[2] == codes[4] and len({codes[0], codes[1], codes[3]}) == 3

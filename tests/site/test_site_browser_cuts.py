"""The instance browser cuts every over-long string in Arrow, wherever a column nests it: plain
text, lists, structs, and maps (an output mapping), sliced arrays included; a short string, and
an array with nothing too long, are left as they are."""

from __future__ import annotations

import pyarrow as pa

from holistic.site.browser import _column_sizes, _cut_text

WHERE = "the column 'x' of run/requests.parquet"


def _cut(value: str, limit: int) -> str:
    return f"{value[:limit]} \u2026 [truncated here: {len(value)} characters in all; the full text is in {WHERE}]"


def test_a_map_value_and_key_are_cut() -> None:
    kind = pa.map_(pa.string(), pa.string())
    array = pa.array([[("A", "x" * 30)], None, [("k" * 25, "short")]], type=kind)
    assert _cut_text(array, 10, WHERE).to_pylist() == [
        [("A", _cut("x" * 30, 10))],
        None,
        [(_cut("k" * 25, 10), "short")],
    ]


def test_sliced_lists_and_maps_keep_their_rows() -> None:
    lists = pa.array([["a" * 20], None, ["b", "c" * 20]], type=pa.list_(pa.string())).slice(1)
    assert _cut_text(lists, 5, WHERE).to_pylist() == [None, ["b", _cut("c" * 20, 5)]]
    maps = pa.array([[("a", "a" * 20)], None, [("b", "c" * 20)]], type=pa.map_(pa.string(), pa.string())).slice(1)
    assert _cut_text(maps, 5, WHERE).to_pylist() == [None, [("b", _cut("c" * 20, 5))]]


def test_nothing_too_long_is_the_same_array() -> None:
    array = pa.array(
        [[{"role": "user", "content": "hi"}]],
        type=pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())])),
    )
    assert _cut_text(array, 10, WHERE) is array


def test_column_sizes_come_from_the_row_groups(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(
        pa.table({"small": ["a"] * 100, "big": [f"{i:04d}" + "x" * 1000 for i in range(100)]}), path, row_group_size=50
    )
    sizes = _column_sizes(pq.ParquetFile(path))
    assert sizes["small"] < sizes["big"]
    assert 50 * 1000 <= sizes["big"] < 100 * 1000  # the largest row group, not the whole column

"""Each sub-run's per-instance values, averaged over trials: what a cell's bootstrap resamples.

A suite of 5,000 runs has millions of per-instance rows, so this is done in Arrow and NumPy, not
row by row in Python. The rows are ordered by run, metric, split and instance id, as a stable sort
of those strings orders them (the order the bootstrap's draws index into); the strings are
replaced first by their rank among the column's distinct values, so the sort is one stable sort
of integers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from holistic.summarize.replicates import PerRun

KEYS = ("run_id", "metric", "split", "instance_id")


def per_instance_arrays(pis: pa.Table, perturbation: str | None) -> PerRun:
    """(run_id, metric, split) -> per-instance values averaged over trials, ordered by instance id.

    The rows of ``perturbation`` (an empty name is the original) with a value, the split missing
    or empty read as ``test``; each instance's trials in the table's order (the sort is stable);
    an instance's mean over one or two trials is computed in NumPy, over more by :func:`_mean`,
    the same value to the bit either way. The key columns may be plain or dictionary strings."""
    if pis.num_rows == 0:
        return {}
    rows = np.flatnonzero(_kept(pis, perturbation))
    if len(rows) == 0:
        return {}
    ranked = [_ranks(pis, k, rows) for k in KEYS]
    order = _stable_order([codes for codes, _ in ranked])
    codes = [c[order] for c, _ in ranked]
    values = np.asarray(pc.cast(pis.column("value"), pa.float64()).to_numpy(), dtype=np.float64)[rows][order]
    new_cell = np.zeros(len(values), dtype=bool)
    new_cell[0] = True
    for code in codes[:3]:
        new_cell[1:] |= code[1:] != code[:-1]
    new_instance = new_cell.copy()
    new_instance[1:] |= codes[3][1:] != codes[3][:-1]
    starts = np.flatnonzero(new_instance)
    counts = np.diff(np.append(starts, len(values)))
    means = values[starts].copy()
    two = counts == 2
    means[two] = (values[starts[two]] + values[starts[two] + 1]) / 2
    for k in np.flatnonzero(counts > 2):
        means[k] = _mean(values[starts[k] : starts[k] + counts[k]].tolist())
    cell_of_instance = np.cumsum(new_cell)[starts] - 1
    ends = np.append(np.flatnonzero(np.diff(cell_of_instance)) + 1, len(starts))
    first_rows = np.flatnonzero(new_cell).tolist()
    labels = [[names[code[i]] for i in first_rows] for code, (_, names) in zip(codes, ranked, strict=True)]
    out: PerRun = {}
    begin = 0
    for cell, end in enumerate(ends.tolist()):
        out[(labels[0][cell], labels[1][cell], labels[2][cell])] = means[begin:end]
        begin = end
    return out


def encoded(column: pa.ChunkedArray) -> tuple[np.ndarray, list[Any]]:
    """Integer codes of a column's values (equal values, equal codes; a missing value has its own)
    and the value of each code. A dictionary column's own codes are used (no string is hashed:
    its chunks' dictionaries are unified, as Arrow concatenates them)."""
    if column.num_chunks == 0:
        return np.zeros(0, dtype=np.int64), []
    if pa.types.is_dictionary(column.type):
        combined = column.combine_chunks()
    else:
        combined = pc.dictionary_encode(column.combine_chunks(), null_encoding="encode")
    values: list[Any] = combined.dictionary.to_pylist()
    indices = combined.indices
    if indices.null_count:
        indices = pc.fill_null(indices, len(values))
        values.append(None)
    codes = np.asarray(indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    if len(set(values)) < len(values):  # a dictionary that repeats a value: one code per value
        first = {value: k for k, value in reversed(list(enumerate(values)))}
        codes = np.array([first[v] for v in values], dtype=np.int64)[codes]
    return codes, values


def _kept(pis: pa.Table, perturbation: str | None) -> np.ndarray:
    """Which rows are of ``perturbation`` (``None``: the original, a missing or empty name) and have a value."""
    value = pis.column("value")
    keep = (
        np.ones(pis.num_rows, dtype=bool)
        if value.null_count == 0
        else np.asarray(pc.is_valid(value).to_numpy(zero_copy_only=False), dtype=bool)
    )
    if "perturbation" not in pis.column_names:
        return keep if perturbation is None else np.zeros(pis.num_rows, dtype=bool)
    codes, names = encoded(pis.column("perturbation"))
    original = [name is None or name == "" for name in names]
    wanted = (
        original
        if perturbation is None
        else [not o and n == perturbation for o, n in zip(original, names, strict=True)]
    )
    return np.asarray(keep & np.array(wanted, dtype=bool)[codes], dtype=bool)


def _ranks(pis: pa.Table, key: str, rows: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """The ``rows``' rank of their ``key`` among its distinct values in Arrow's ascending order
    (a missing value last; Python orders strings by code point as Arrow orders UTF-8 by byte),
    and the value of each rank. A missing or empty split is ``test``."""
    codes: np.ndarray
    names: list[Any]
    if key not in pis.column_names:
        codes, names = np.zeros(pis.num_rows, dtype=np.int64), [None]
    else:
        codes, names = encoded(pis.column(key))
    if key == "split":
        names = ["test" if name is None or name == "" else name for name in names]
    distinct: list[Any] = sorted({n for n in names if n is not None})
    distinct += [None] if None in names else []
    position = {name: k for k, name in enumerate(distinct)}
    rank = np.array([position[name] for name in names] or [0], dtype=np.int64)
    return rank[codes[rows]], distinct


def _stable_order(codes: list[np.ndarray]) -> np.ndarray:
    """The stable sort of the rows by the codes, the first one most significant."""
    sizes = [int(c.max()) + 1 for c in codes]
    if np.prod([float(s) for s in sizes]) < 2.0**62:  # one integer key per row
        key = np.zeros(len(codes[0]), dtype=np.int64)
        for code, size in zip(codes, sizes, strict=True):
            key = key * size + code
        return np.argsort(key, kind="stable")
    return np.lexsort(codes[::-1])  # stable as well; the last key is the most significant


def _mean(values: list[float]) -> float:
    """``np.mean(values)``, to the bit: below 8 values NumPy adds them one by one from 0, as ``sum``
    does (a call into NumPy per instance costs more than the few trials it averages)."""
    return sum(values) / len(values) if len(values) < 8 else float(np.mean(values))

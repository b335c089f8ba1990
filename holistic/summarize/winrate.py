"""Mean win rate, exactly as HELM defines it, and a bootstrap of it.

HELM's definition, for one metric group: for each column (a scenario) and each
model with a value in it, the share of the *other* models with a value in that
column that the model beats (a tie counts half; for lower-is-better columns,
beating means a smaller value). Columns with fewer than two values are skipped.
A model's mean win rate is the mean of its per-column win rates over the
columns where it has one.

Beyond HELM, :func:`bootstrap_win_rates` takes replicate matrices (one per
bootstrap resample of the instances) and gives each model's win-rate interval
and rank range, so that adjacent ranks whose intervals overlap can be flagged as
not separable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def column_win_rates(values: np.ndarray, lower_is_better: bool) -> np.ndarray:
    """Per-model win rates in one column.

    ``values`` has one entry per model, ``nan`` where the model has no value.
    Returns ``nan`` for models without a value, and for every model when fewer
    than two models have a value.
    """
    values = np.asarray(values, dtype=float)
    present = ~np.isnan(values)
    out = np.full(values.shape, np.nan)
    n = int(present.sum())
    if n < 2:
        return out
    v = values[present]
    if lower_is_better:
        v = -v
    # wins[i] = #others strictly below + 0.5 * #others tied (excluding self)
    less = (v[:, None] > v[None, :]).sum(axis=1)
    ties = (v[:, None] == v[None, :]).sum(axis=1) - 1
    out[present] = (less + 0.5 * ties) / (n - 1)
    return out


def mean_win_rates(matrix: np.ndarray, lower_is_better: Sequence[bool]) -> np.ndarray:
    """Mean win rate per model over the columns of ``matrix`` (models x columns).

    ``nan`` cells are missing values. A model with no usable column gets ``nan``.
    """
    matrix = np.asarray(matrix, dtype=float)
    n_models, n_cols = matrix.shape
    if n_cols == 0:
        return np.full(n_models, np.nan)
    per_col = np.column_stack([column_win_rates(matrix[:, j], bool(lower_is_better[j])) for j in range(n_cols)])
    counts = (~np.isnan(per_col)).sum(axis=1)
    sums = np.nansum(per_col, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _batched_mean_win_rates(replicates: np.ndarray, lower_is_better: Sequence[bool]) -> np.ndarray:
    """Vectorised :func:`mean_win_rates` over a leading replicate axis (R x models x columns)."""
    reps = np.asarray(replicates, dtype=float).copy()
    sign = np.where(np.asarray(lower_is_better, dtype=bool), -1.0, 1.0)
    reps *= sign[None, None, :]
    present = ~np.isnan(reps)
    n_present = present.sum(axis=1)  # R x columns
    a = reps[:, :, None, :]  # R x M x 1 x C
    b = reps[:, None, :, :]  # R x 1 x M x C
    both = present[:, :, None, :] & present[:, None, :, :]
    wins = ((a > b) & both).sum(axis=2)
    ties = ((a == b) & both).sum(axis=2) - present.astype(int)  # drop self-tie
    usable = present & (n_present[:, None, :] >= 2)
    denom = np.maximum(n_present[:, None, :] - 1, 1)
    per_col = np.where(usable, (wins + 0.5 * ties) / denom, np.nan)
    counts = usable.sum(axis=2)
    sums = np.nansum(per_col, axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


@dataclass(frozen=True)
class WinRateResult:
    """Win rates of one metric group with bootstrap uncertainty."""

    models: tuple[str, ...]
    win_rate: tuple[float, ...]
    """HELM's mean win rate on the full data (``nan`` when undefined)."""
    ci_low: tuple[float, ...]
    ci_high: tuple[float, ...]
    rank: tuple[int, ...]
    """1 = best; models without a win rate rank last."""
    rank_low: tuple[int, ...]
    rank_high: tuple[int, ...]
    """Central 95% range of the model's rank over bootstrap replicates."""
    separable_from_next: tuple[bool, ...]
    """In rank order: whether this model's rank range does not overlap the next one's."""


def ranks_of(win_rates: np.ndarray) -> np.ndarray:
    """Competition ranks (1 = best); ``nan`` win rates rank last."""
    filled = np.where(np.isnan(win_rates), -np.inf, win_rates)
    order = -filled
    return np.array([1 + int((order < order[i]).sum()) for i in range(len(order))])


def bootstrap_win_rates(
    models: Sequence[str],
    matrix: np.ndarray,
    replicates: np.ndarray,
    lower_is_better: Sequence[bool],
) -> WinRateResult:
    """HELM win rates on ``matrix`` plus intervals from ``replicates`` (R x models x columns)."""
    point = mean_win_rates(matrix, lower_is_better)
    ranks = ranks_of(point)
    if replicates.shape[0] == 0:
        lo = hi = point
        rlo = rhi = ranks
    else:
        rep_wr = _batched_mean_win_rates(replicates, lower_is_better)
        with np.errstate(invalid="ignore"):
            lo = np.nanpercentile(rep_wr, 2.5, axis=0) if np.isfinite(rep_wr).any() else point
            hi = np.nanpercentile(rep_wr, 97.5, axis=0) if np.isfinite(rep_wr).any() else point
        rep_ranks = np.stack([ranks_of(r) for r in rep_wr])
        rlo = np.floor(np.percentile(rep_ranks, 2.5, axis=0)).astype(int)
        rhi = np.ceil(np.percentile(rep_ranks, 97.5, axis=0)).astype(int)
    order = sorted(range(len(models)), key=lambda i: (ranks[i], models[i]))
    separable = [False] * len(models)
    for pos, i in enumerate(order[:-1]):
        j = order[pos + 1]
        separable[i] = bool(rhi[i] < rlo[j])
    return WinRateResult(
        models=tuple(models),
        win_rate=tuple(float(x) for x in point),
        ci_low=tuple(float(x) for x in np.atleast_1d(lo)),
        ci_high=tuple(float(x) for x in np.atleast_1d(hi)),
        rank=tuple(int(x) for x in ranks),
        rank_low=tuple(int(x) for x in rlo),
        rank_high=tuple(int(x) for x in rhi),
        separable_from_next=tuple(separable),
    )

"""Mean win rate exactly as HELM defines it, on hand-made tables."""

import math

import numpy as np

from holistic.summarize.winrate import (
    _batched_mean_win_rates,
    bootstrap_win_rates,
    column_win_rates,
    mean_win_rates,
)

nan = float("nan")


def test_ties_count_half() -> None:
    wr = column_win_rates(np.array([0.5, 0.5, 0.2]), lower_is_better=False)
    assert wr.tolist() == [0.75, 0.75, 0.0]


def test_lower_is_better_reverses_the_order() -> None:
    wr = column_win_rates(np.array([1.0, 2.0, 3.0]), lower_is_better=True)
    assert wr.tolist() == [1.0, 0.5, 0.0]


def test_missing_cells_and_columns_with_one_value_are_skipped() -> None:
    matrix = np.array(
        [
            [0.9, 0.1, 5.0],
            [0.8, nan, nan],
            [nan, nan, 1.0],
        ]
    )
    wr = mean_win_rates(matrix, [False, False, True])
    # column 0: A beats B (1.0), B 0.0; column 1 has one value: skipped;
    # column 2 (lower better): C beats A -> A 0.0, C 1.0.
    assert wr[0] == 0.5
    assert wr[1] == 0.0
    assert wr[2] == 1.0


def test_model_without_any_comparable_column_has_no_win_rate() -> None:
    wr = mean_win_rates(np.array([[0.3], [nan]]), [False])
    assert math.isnan(wr[0]) and math.isnan(wr[1])


def test_batched_equals_single() -> None:
    rng = np.random.default_rng(0)
    reps = rng.random((20, 5, 4))
    reps[reps < 0.1] = np.nan
    reps[:, :, 1] = np.round(reps[:, :, 1], 1)  # ties
    lib = [False, True, False, True]
    batched = _batched_mean_win_rates(reps, lib)
    for r in range(reps.shape[0]):
        np.testing.assert_allclose(batched[r], mean_win_rates(reps[r], lib), equal_nan=True)


def test_bootstrap_flags_overlapping_ranks() -> None:
    models = ["a", "b", "c"]
    point = np.array([[0.9, 0.9], [0.5, 0.5], [0.49, 0.49]])
    rng = np.random.default_rng(1)
    reps = np.stack([point + np.array([[0, 0], [1, 1], [1, 1]]) * rng.normal(0, 0.05, (3, 2)) for _ in range(200)])
    res = bootstrap_win_rates(models, point, reps, [False, False])
    assert res.rank == (1, 2, 3)
    assert res.separable_from_next[0] is True  # a is clearly first
    assert res.separable_from_next[1] is False  # b and c swap places across replicates
    assert res.rank_low[2] <= 2 <= res.rank_high[2]
    assert res.ci_low[0] <= res.win_rate[0] <= res.ci_high[0]

"""HELM's in-context example draw, reproduced step for step (issue 14, finding 1).

The expected ids were produced by crfm-helm 0.5.16 itself:
``InContextLearningAdapter.sample_examples(train, seed=trial)`` on the same pools.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from holistic.adaptation.selection import helm_examples
from holistic.core.types import AdapterSpec, Instance, Reference
from tests.support.data import DATA_MISSING, find_data_root

REPO = Path(__file__).resolve().parents[2]


def _pool(rows: list[tuple[str, str, bool]]) -> list[Instance]:
    return [
        Instance(id=i, input=f"text {i}", references=(Reference(label, ("correct",) if ok else ()),), split="train")
        for i, label, ok in rows
    ]


def _draws(pool: list[Instance], k: int, trials: int = 3) -> list[list[str]]:
    spec = AdapterSpec(max_train_instances=k)
    return [[e.id for e in helm_examples(pool, spec, seed=0, trial=t)] for t in range(trials)]


YES_NO = _pool(
    sorted(
        [(f"y{i}", "Yes", True) for i in range(12)] + [(f"n{i}", "No", True) for i in range(8)],
        key=lambda r: (int(r[0][1:]), r[0][0]),
    )
)
COUNTS = _pool(
    [(f"a{i}", "alpha", True) for i in range(3)]
    + [(f"b{i}", "beta", True) for i in range(3)]
    + [(f"c{i}", "gamma", True) for i in range(2)]
    + [("d0", "delta", True)]
    + [(f"u{i}", "zzz", False) for i in range(2)]
)
DISTINCT = _pool([(f"m{i}", f"choice {c}", True) for i, c in enumerate("qwert")])


def test_draws_are_helms_own() -> None:
    assert _draws(YES_NO, 5) == [
        ["y6", "n6", "y0", "n2", "y10"],
        ["y2", "n1", "y5", "n0", "y9"],
        ["y0", "n1", "y2", "n3", "y4"],
    ]
    # labels cycle (3, 3, 2, 1 examples) until k; unlabelled instances are not needed
    assert _draws(COUNTS, 8) == [
        ["a1", "b0", "c1", "d0", "a2", "b2", "c0", "a0"],
        ["b2", "a0", "c1", "d0", "b1", "a2", "c0", "b0"],
        ["b0", "a0", "c1", "d0", "b2", "a2", "c0", "b1"],
    ]
    # one example per label (MMLU's dev set labelled by choice text): the order is the draw
    assert _draws(DISTINCT, 5) == [
        ["m3", "m0", "m2", "m1", "m4"],
        ["m3", "m4", "m1", "m2", "m0"],
        ["m3", "m0", "m4", "m1", "m2"],
    ]


def test_a_120_yes_80_no_pool_always_gives_three_yes_and_two_no() -> None:
    pool = _pool([(f"y{i}", "Yes", True) for i in range(120)] + [(f"n{i}", "No", True) for i in range(80)])
    for trial in range(20):
        picked = helm_examples(pool, AdapterSpec(max_train_instances=5), seed=0, trial=trial)
        assert Counter(e.references[0].output for e in picked) == {"Yes": 3, "No": 2}


def test_unlabelled_instances_fill_what_labels_cannot() -> None:
    pool = _pool([("a0", "alpha", True), ("u0", "x", False), ("u1", "x", False)])
    picked = [e.id for e in helm_examples(pool, AdapterSpec(max_train_instances=3), seed=0, trial=0)]
    assert picked[0] == "a0" and sorted(picked[1:]) == ["u0", "u1"]


def _data_root() -> Path | None:
    root = find_data_root()
    return root if root is not None and (root / "mmlu" / "dev").is_dir() else None


@pytest.mark.needs_data
@pytest.mark.skipif(_data_root() is None, reason=f"{DATA_MISSING}: mmlu/dev (set HOLISTIC_DATA_ROOT)")
def test_no_mmlu_subject_repeats_a_trial() -> None:
    """MMLU's five dev questions are labelled by their answer's text, so the three trials
    are three orders of the same five examples; none repeats (before: 38 of 57 did)."""
    from holistic.core.interfaces import ScenarioContext
    from holistic.scenarios.mmlu import SUBJECTS, MMLUScenario

    repeated = []
    for subject in SUBJECTS:
        instances = MMLUScenario(subject=subject).get_instances(ScenarioContext(data_root=_data_root(), offline=True))
        train = [i for i in instances if i.split == "train"]
        draws = [
            tuple(e.id for e in helm_examples(train, AdapterSpec(max_train_instances=5), seed=0, trial=t))
            for t in range(3)
        ]
        if len(set(draws)) < 3:
            repeated.append(subject)
    assert repeated == []

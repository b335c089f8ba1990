"""Seeded down-sampling of evaluation instances."""

from __future__ import annotations

from holistic.core.types import Instance, ScenarioSpec
from holistic.execution.sampling import downsample, split_instances

SPEC = ScenarioSpec.make("arith", {"digits": 2})


def _instances(n: int) -> list[Instance]:
    return [Instance(id=f"id{i}", input=str(i)) for i in range(n)]


def test_sample_is_deterministic_ordered_and_nested() -> None:
    items = _instances(100)
    ten = downsample(items, 10, seed=0, scenario=SPEC)
    assert ten == downsample(items, 10, seed=0, scenario=SPEC)
    assert len(ten) == 10
    positions = [items.index(i) for i in ten]
    assert positions == sorted(positions)  # the scenario's order is kept
    twenty = downsample(items, 20, seed=0, scenario=SPEC)
    assert {i.id for i in ten} <= {i.id for i in twenty}  # raising k only adds instances
    assert ten != downsample(items, 10, seed=1, scenario=SPEC)
    assert ten != downsample(items, 10, seed=0, scenario=ScenarioSpec.make("arith", {"digits": 3}))


def test_no_limit_or_small_scenario_keeps_everything() -> None:
    items = _instances(5)
    assert downsample(items, None, seed=0, scenario=SPEC) == items
    assert downsample(items, 50, seed=0, scenario=SPEC) == items


def test_split_instances_separates_train_from_eval() -> None:
    items = [Instance("a", "x", split="train"), Instance("b", "y", split="valid"), Instance("c", "z", split="test")]
    train, evaluation = split_instances(items)
    assert [i.id for i in train] == ["a"]
    assert [i.id for i in evaluation] == ["b", "c"]


def test_helm_sampling_is_helms_runner_draw() -> None:
    """HELM's runner: ``np.random.seed(0)``, ``np.random.choice(pooled eval, k, replace=False)``,
    drawn order kept (issue 14, finding 8). The old hash-rank sample differs."""
    import numpy as np

    items = [Instance(id=f"v{i}", input=str(i), split="valid") for i in range(14)]
    items += [Instance(id=f"t{i}", input=str(i), split="test") for i in range(135)]
    np.random.seed(0)
    expected = list(np.random.choice(np.array(items, dtype=object), 10, replace=False))
    got = downsample(items, 10, seed=0, scenario=SPEC, method="helm")
    assert [i.id for i in got] == [i.id for i in expected]
    assert [i.id for i in got] != [i.id for i in downsample(items, 10, seed=0, scenario=SPEC, method="stable")]


def test_the_default_adapter_samples_as_helm_does() -> None:
    from holistic.core.types import AdapterSpec

    assert AdapterSpec().eval_sampling == "helm"


def _haystack(formatting: str) -> list[Instance]:
    from holistic.core.interfaces import ScenarioContext
    from holistic.scenarios.haystack.scenario import HaystackScenario

    scenario = HaystackScenario(
        tasks=["company", "time"], lengths=[1536, 2048], records_per_length=3, corpus_size=1500, formatting=formatting
    )
    return scenario.get_instances(ScenarioContext())


def test_units_keep_twins_balance_cells_and_ignore_ablation_arguments() -> None:
    kept: dict[str, list[str]] = {}
    for formatting in ("plain", "markdown"):
        spec = ScenarioSpec.make("haystack", {"formatting": formatting, "tasks": ["company", "time"]})
        sample = downsample(_haystack(formatting), 9, seed=0, scenario=spec)
        kept[formatting] = [i.id for i in sample]
        pairs: dict[str, set[bool]] = {}
        for inst in sample:
            pairs.setdefault(inst.metadata["pair"], set()).add(inst.metadata["zero_needle"])
        assert all(twins == {False, True} for twins in pairs.values())  # every needle record with its twin
        assert len(sample) == 8  # whole pairs only: 4 pairs fit in 9
        cells = [inst.metadata["sample_stratum"] for inst in sample if not inst.metadata["zero_needle"]]
        assert sorted(cells) == ["company|1536", "company|2048", "time|1536", "time|2048"]  # one pair per cell
    assert kept["plain"] == kept["markdown"]  # the same records under every ablation value

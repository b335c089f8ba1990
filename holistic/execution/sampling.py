"""Seeded down-sampling of evaluation instances to ``max_eval_instances``.

``helm`` (the default, HELM's runner ``downsample_eval_instances``): NumPy's legacy
generator seeded with the run seed (0 by default, as HELM) picks ``max_eval_instances``
of the pooled evaluation instances (valid then test, in scenario order) without
replacement; the picked instances keep the drawn order, as HELM evaluates them.

``stable``: each instance gets a rank from ``stable_seed(seed, "eval_sample", scenario, instance id)``;
the ``k`` lowest ranks are kept, in the scenario's own order. Consequences a user
can rely on: the same spec gives the same sample on every machine and for every
model (the model is not part of the seed); raising ``k`` only adds instances; and
adding instances to a dataset changes the sample only where a new one outranks an
old one.

``eval_instances: first`` takes the first ``k`` instead, in the data's own order (the
order of the file for user datasets), to match a peer that evaluates a prefix.

Scenarios whose instances come in units (``metadata["sample_unit"]``, e.g. a haystack
needle record and its zero-needle twin) are sampled by whole units, taken from each
``metadata["sample_stratum"]`` in turn (cells stay balanced). A unit's rank depends on
the seed, the scenario name and the unit only, not on the scenario's arguments, so runs
that differ by an ablation argument keep the same units.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from holistic.core.hashing import stable_seed
from holistic.core.specs import RUNNER_SAMPLING
from holistic.core.types import (
    EVAL_SPLITS,
    SAMPLE_STRATUM_KEY,
    SAMPLE_UNIT_KEY,
    TRAIN_SPLIT,
    Instance,
    RunSpec,
    ScenarioSpec,
)


def split_instances(instances: Sequence[Instance]) -> tuple[list[Instance], list[Instance]]:
    """``(train, eval)``: in-context candidates and evaluation instances (valid + test)."""
    train = [i for i in instances if i.split == TRAIN_SPLIT]
    evaluation = [i for i in instances if i.split in EVAL_SPLITS]
    return train, evaluation


def run_sample(instances: Sequence[Instance], run: RunSpec) -> list[Instance]:
    """``run``'s evaluation instances among ``instances``: :func:`downsample` to its
    ``max_eval_instances``, seeded with its seed, the way its ``eval_sampling`` and
    ``eval_instances`` say."""
    return downsample(
        instances,
        run.adapter.max_eval_instances,
        seed=run.adapter.seed,
        scenario=run.scenario,
        method=run.adapter.eval_sampling,
        mode=run.adapter.eval_instances,
    )


def downsample(
    instances: Sequence[Instance],
    max_instances: int | None,
    *,
    seed: int,
    scenario: ScenarioSpec,
    method: str = "stable",
    mode: str = "sample",
) -> list[Instance]:
    """At most ``max_instances`` of ``instances`` (all of them when ``None``), deterministically:
    a seeded sample, or with ``mode="first"`` the first ones in the scenario's order."""
    if max_instances is None or len(instances) <= max_instances:
        return list(instances)
    if max_instances < 0:
        raise ValueError(f"max_eval_instances must be >= 0, got {max_instances}")
    if mode == "first":
        return list(instances[:max_instances])
    if any(SAMPLE_UNIT_KEY in inst.metadata for inst in instances):  # the scenario's own units come first
        return _downsample_units(instances, max_instances, seed=seed, scenario=scenario.name)
    if method == RUNNER_SAMPLING:
        picks = np.random.RandomState(seed).choice(len(instances), max_instances, replace=False)
        return [instances[int(i)] for i in picks]
    scenario_key = [scenario.name, [list(a) for a in scenario.args]]
    ranked = sorted(
        range(len(instances)),
        key=lambda i: (stable_seed(seed, "eval_sample", scenario_key, instances[i].id, instances[i].split), i),
    )
    keep = set(ranked[:max_instances])
    return [inst for i, inst in enumerate(instances) if i in keep]


def _downsample_units(instances: Sequence[Instance], max_instances: int, *, seed: int, scenario: str) -> list[Instance]:
    """Whole units, round-robin over strata in order of first appearance, while they fit."""
    members: dict[str, list[int]] = {}
    strata: dict[str, list[str]] = {}
    for i, inst in enumerate(instances):
        unit = str(inst.metadata.get(SAMPLE_UNIT_KEY, f"instance:{inst.id}"))
        if unit not in members:
            strata.setdefault(str(inst.metadata.get(SAMPLE_STRATUM_KEY, "")), []).append(unit)
        members.setdefault(unit, []).append(i)
    queues = [
        sorted(units, key=lambda u: (stable_seed(seed, "eval_sample_unit", scenario, u), u))
        for units in strata.values()
    ]
    keep: set[int] = set()
    for depth in range(max(len(q) for q in queues)):
        for queue in queues:
            if depth >= len(queue):
                continue
            taken = members[queue[depth]]
            if len(keep) + len(taken) > max_instances:
                return [inst for i, inst in enumerate(instances) if i in keep]
            keep.update(taken)
    return [inst for i, inst in enumerate(instances) if i in keep]

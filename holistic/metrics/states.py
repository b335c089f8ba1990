"""Reading request states: which instance (and variant, trial) they belong to, and
what the model produced.

A run's states hold every trial and every perturbed variant of every instance.
Metrics score *instance units*: one (instance id, perturbation, trial). Each unit
gets one value per metric name, reported with a :class:`MetricName` carrying the
instance's split, sub-split and perturbation name.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from holistic.core.types import Instance, MetricName, PerInstanceStat, RequestRole, RequestState


@dataclass(frozen=True, order=True)
class UnitKey:
    """Identifies one scored unit: an instance (or one perturbed variant of it) in one trial."""

    instance_id: str
    perturbation: str | None
    trial: int


@dataclass(frozen=True)
class Unit:
    """All request states of one unit, in request order."""

    key: UnitKey
    instance: Instance
    states: tuple[RequestState, ...]

    def with_role(self, role: str) -> list[RequestState]:
        return [s for s in self.states if s.role == role]

    def stat(self, name: str, value: float) -> PerInstanceStat:
        """A per-instance value for this unit under the structured metric name ``name``."""
        return PerInstanceStat(
            instance_id=self.key.instance_id,
            trial=self.key.trial,
            name=metric_name(self.instance, name),
            value=float(value),
        )


def perturbation_name(instance: Instance) -> str | None:
    return instance.perturbation.name if instance.perturbation is not None else None


def metric_name(instance: Instance, name: str) -> MetricName:
    """The structured name of a value computed on ``instance``."""
    return MetricName(
        name=name,
        split=instance.split,
        sub_split=instance.sub_split,
        perturbation=perturbation_name(instance),
    )


def group_units(states: Iterable[RequestState]) -> list[Unit]:
    """Group states by (instance id, perturbation, trial); sorted by key for determinism."""
    groups: dict[UnitKey, list[RequestState]] = {}
    for state in states:
        key = UnitKey(state.instance.id, perturbation_name(state.instance), state.trial)
        groups.setdefault(key, []).append(state)
    units = []
    for key in sorted(groups, key=_sort_key):
        members = sorted(groups[key], key=lambda s: (s.role, s.request_index))
        units.append(Unit(key=key, instance=members[0].instance, states=tuple(members)))
    return units


def _sort_key(key: UnitKey) -> tuple[str, str, int]:
    return (key.instance_id, key.perturbation or "", key.trial)


def succeeded(state: RequestState) -> bool:
    """The request got an answer (failed requests are kept but carry no output)."""
    return state.result is not None and state.result.success


def outputs(state: RequestState) -> tuple[str, ...]:
    """The completions to score: post-processed texts when present, else raw texts.

    A failed or missing result yields one empty output, so an unanswered request
    scores as a wrong answer rather than silently disappearing.
    """
    if state.post_processed is not None:
        return state.post_processed or ("",)
    if not succeeded(state):
        return ("",)
    assert state.result is not None
    texts = tuple(c.text for c in state.result.completions)
    return texts or ("",)


def reference_texts(instance: Instance) -> list[str]:
    """Outputs of the references tagged correct (empty: the instance cannot be scored
    by reference-based metrics and gets no value for them)."""
    return [r.output for r in instance.correct_references]


def first_main(unit: Unit) -> RequestState | None:
    mains = unit.with_role(RequestRole.MAIN)
    return mains[0] if mains else None


def scorable_units(states: Iterable[RequestState]) -> Iterator[tuple[Unit, RequestState, list[str]]]:
    """``(unit, its first main state, its correct reference texts)`` for every unit that a
    reference-based metric can score (one with a main request and a correct reference)."""
    for unit in group_units(states):
        state = first_main(unit)
        references = reference_texts(unit.instance)
        if state is not None and references:
            yield unit, state, references


def states_of(units: Sequence[Unit]) -> list[RequestState]:
    return [s for u in units for s in u.states]

"""The complete contract of a scenario class: :class:`BaseScenario`.

Every registered scenario (built-in or plugin) subclasses :class:`BaseScenario`. It must set
``info`` and implement ``get_instances(ctx)``; every other member is an optional hook with a
default that does nothing, so the planner, ``--plan``, ``--fetch-only`` and the spec compiler
call the hooks directly.

A scenario's arguments are the fields of the class itself, a frozen dataclass
(``@dataclass(frozen=True, kw_only=True)``): a run spec's ``args`` are its constructor's keyword
arguments, and the JSON Schema they are validated against is derived from the fields
(:func:`~holistic.core.arguments.args_schema`; constraints through
:func:`~holistic.core.arguments.arg`). Checks of values that fit together go in
``__post_init__`` (raise :class:`~holistic.core.errors.ScenarioArgError` naming the argument):
the spec compiler constructs the scenario, which loads nothing, so they are spec errors (and
calls :meth:`BaseScenario.check_args` for checks that need more). Every other hook is asked of
the scenario so constructed, so it reads its arguments (with their defaults) from its fields;
none may load the dataset (they run while a spec is compiled or planned).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from holistic.core.arguments import args_schema
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import AdapterDefaults, Instance

if TYPE_CHECKING:
    from holistic.scenarios.loading.sources import DataNeeds

ArgProblem = tuple[tuple[str | int, ...], str]
"""A problem found by :meth:`BaseScenario.preflight`: (argument path, message)."""


@dataclass(frozen=True)
class PlanFacts:
    """What ``--plan`` may know about a scenario with given arguments, without loading its data
    (every field unknown or empty by default)."""

    num_instances: int | None = None
    """How many instances the dataset has (``None``: unknown; the run's cap is shown as a bound)."""
    num_references: int | None = None
    """Typical references per instance (``None``: unknown)."""
    input_chars: int | None = None
    """Typical input length in characters (``None``: the task's typical length)."""
    choice_chars: int | None = None
    """Typical length of one answer choice in characters (``None``: unknown)."""
    notes: tuple[str, ...] = ()
    """Lines ``--plan`` prints about these runs (about the data under the data root too, e.g.
    missing parts)."""
    builds_prompts: bool = False
    """The instances come from the arguments alone (no data files), so ``--plan`` builds every
    prompt and counts its tokens exactly."""
    samples_prompts: bool = False
    """The data files are small: when they are on this machine, ``--plan`` builds the prompts of
    a sample of the real instances and scales their tokens."""


class BaseScenario(ABC):
    """Base class of every scenario: required ``info`` and ``get_instances``, optional hooks."""

    info: ClassVar[ScenarioInfo]
    """Name, task, default adaptation, main metric (class attribute)."""

    @abstractmethod
    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        """Every instance (train and eval splits), deterministic for a given ``ctx.seed``."""

    def data_needs(self) -> DataNeeds | None:
        """The files this scenario reads (``helm-run --fetch-only`` fetches them); ``None``: none."""
        return None

    def check_args(self) -> None:
        """Checks of the arguments that need more than the values themselves (what
        ``__post_init__`` checks cheaply), made when a spec compiles, e.g. that a generated
        context fits; raise :class:`~holistic.core.errors.ScenarioArgError` naming the argument."""
        return None

    def preflight(self) -> list[ArgProblem]:
        """A cheap look at the data the arguments name (e.g. the first rows of a user file); the
        first problem becomes a spec error at that argument."""
        return []

    def adapter_problem(self, method: str) -> ArgProblem | None:
        """Why these arguments cannot be adapted by ``method`` (an error at that argument when
        the spec compiles), or ``None``."""
        return None

    def judge_fields(self) -> tuple[str, ...] | None:
        """Metadata fields a judge template may use with these arguments (default:
        ``info.judge_fields``; ``None``: not known before the data is read)."""
        return self.info.judge_fields

    def adapter_defaults(self) -> AdapterDefaults:
        """Recommended adapter fields for these arguments (default: ``info.default_adapter``)."""
        return self.info.default_adapter

    @classmethod
    def args_schema(cls) -> dict[str, Any]:
        """The JSON Schema of the scenario's arguments, derived from its fields."""
        return args_schema(cls)

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        """What ``--plan`` may know about this scenario (constructed from a run's arguments, no
        data loaded): sizes, notes about the data present under ``data_root`` and about runs
        capped at ``max_eval_instances``, and whether the prompts can be built."""
        return PlanFacts()

"""The complete contract of a scenario class: :class:`BaseScenario`.

Every registered scenario (built-in or plugin) subclasses :class:`BaseScenario`. It must set
``info`` and implement ``get_instances(ctx)``; every other member is an optional hook with a
default that does nothing, so the planner, ``--plan``, ``--fetch-only`` and the spec compiler
call the hooks directly. The hooks that take ``args`` are class methods: they run while a spec
is compiled or planned, before any instance exists, and must not load the dataset.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import Instance

if TYPE_CHECKING:
    from holistic.scenarios.loading.sources import DataNeeds

ArgProblem = tuple[tuple[str | int, ...], str]
"""A problem found by :meth:`BaseScenario.preflight`: (argument path, message)."""


class BaseScenario(ABC):
    """Base class of every scenario: required ``info`` and ``get_instances``, optional hooks."""

    info: ScenarioInfo
    """Name, task, default adaptation, main metric, argument schema (class attribute; an
    instance may refine it once its arguments are known)."""

    plan_builds_prompts: ClassVar[bool] = False
    """True when the scenario makes its instances from its arguments alone (no data files), so
    ``--plan`` can build every prompt and count its tokens exactly."""

    plan_samples_prompts: ClassVar[bool] = False
    """True when the scenario's data files are small: when they are on this machine,
    ``--plan`` builds the prompts of a sample of its real instances and scales their tokens."""

    @abstractmethod
    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        """Every instance (train and eval splits), deterministic for a given ``ctx.seed``."""

    def data_needs(self) -> DataNeeds | None:
        """The files this scenario reads (``helm-run --fetch-only`` fetches them); ``None``: none."""
        return None

    @classmethod
    def check_args(cls, args: dict[str, Any]) -> None:
        """Checks of argument values that fit together, beyond the JSON schema; raise
        :class:`~holistic.core.errors.ScenarioArgError` naming the argument."""
        return None

    @classmethod
    def preflight(cls, args: Mapping[str, Any]) -> list[ArgProblem]:
        """A cheap look at the data named by ``args`` (e.g. the first rows of a user file); the
        first problem becomes a spec error at that argument."""
        return []

    @classmethod
    def adapter_problem(cls, args: Mapping[str, Any], method: str) -> ArgProblem | None:
        """Why these arguments cannot be adapted by ``method`` (an error at that argument when
        the spec compiles), or ``None``."""
        return None

    @classmethod
    def judge_fields_for(cls, args: dict[str, Any]) -> tuple[str, ...] | None:
        """Metadata fields a judge template may use with these arguments (default:
        ``info.judge_fields``; ``None``: not known before the data is read)."""
        return cls.info.judge_fields

    @classmethod
    def default_adapter_for(cls, args: dict[str, Any]) -> Mapping[str, Any]:
        """Recommended adapter fields for these arguments (default: ``info.default_adapter``)."""
        return cls.info.default_adapter

    @classmethod
    def estimate_num_instances(cls, args: dict[str, Any]) -> int | None:
        """How many instances the dataset has with these arguments (``None``: unknown)."""
        return None

    @classmethod
    def estimate_num_references(cls, args: dict[str, Any]) -> int | None:
        """Typical references per instance (``None``: unknown)."""
        return None

    @classmethod
    def estimate_input_chars(cls, args: dict[str, Any]) -> int | None:
        """Typical input length in characters (``None``: use the task's typical length)."""
        return None

    @classmethod
    def estimate_choice_chars(cls, args: dict[str, Any]) -> int | None:
        """Typical length of one answer choice in characters (``None``: unknown)."""
        return None

    @classmethod
    def plan_note(cls, args: dict[str, Any], max_eval_instances: int | None) -> str | None:
        """A line ``--plan`` prints about the runs with these arguments (``None``: nothing)."""
        return None

    @classmethod
    def data_notes(cls, args: dict[str, Any], data_root: Path | None) -> list[str]:
        """Lines ``--plan`` prints about the data present under ``data_root`` (e.g. missing parts)."""
        return []

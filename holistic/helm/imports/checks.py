"""The checks of a HELM run folder that read no value twice: where its files are, and its names."""

from __future__ import annotations

from pathlib import Path

from holistic.core.untrusted import UntrustedValueError, check_inside, name_problem, terminal_safe
from holistic.helm.imports.layout import PER_INSTANCE_STATS, RUN_SPEC, SCENARIO, SCENARIO_STATE, STATS, RunSpecFacts
from holistic.helm.imports.stream import HelmFileError


def check_untrusted_paths(folder: Path, root: Path) -> None:
    """Every file the import reads stays inside the folder given (a symbolic link out is refused)."""
    for name in (RUN_SPEC, SCENARIO_STATE, PER_INSTANCE_STATS, STATS, SCENARIO):
        if (folder / name).exists() or (folder / name).is_symlink():
            try:
                check_inside(folder / name, root)
            except UntrustedValueError as exc:
                raise HelmFileError(folder / name, exc.problem) from None


def check_names(facts: RunSpecFacts, model: str, path: Path) -> None:
    """The run's and the model's names obey native names' rules (shown on pages and terminals)."""
    for what, value, field_name in (
        ("run name", facts.name, "name"),
        ("model name", model, "adapter_spec.model"),
        ("model name", facts.model, "adapter_spec.model"),
    ):
        problem = name_problem(value, what)
        if problem is not None:
            raise HelmFileError(path, f"{problem}; {terminal_safe(repr(value)[:80])} is refused", field=field_name)

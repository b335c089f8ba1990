"""Choosing and adjusting the runs of a compiled suite (``--models``, ``--scenarios``,
``--max-eval-instances``)."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import replace

from holistic.core.errors import HolisticError, did_you_mean
from holistic.core.specs import EvalInstances
from holistic.core.types import RunSpec


class SelectionError(HolisticError):
    """A ``--models`` / ``--scenarios`` pattern matches nothing."""

    exit_code = 2


def _check_patterns(kind: str, patterns: Sequence[str], names: Sequence[str]) -> None:
    for pattern in patterns:
        if not fnmatch.filter(names, pattern):
            hint = did_you_mean(pattern, names)
            suggestion = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            raise SelectionError(
                f"--{kind} pattern {pattern!r} matches no {kind[:-1]} of this suite "
                f"(it has: {', '.join(sorted(set(names)))}){suggestion}"
            )


def select_runs(runs: Sequence[RunSpec], *, models: Sequence[str] = (), scenarios: Sequence[str] = ()) -> list[RunSpec]:
    """The runs whose model matches one of ``models`` and whose scenario matches one of
    ``scenarios`` (``fnmatch`` glob patterns; an empty list matches everything).

    A pattern that matches nothing in the suite is an error (a typo would otherwise
    silently run nothing)."""
    _check_patterns("models", models, [r.model for r in runs])
    _check_patterns("scenarios", scenarios, [r.scenario.name for r in runs])
    out = []
    for run in runs:
        if models and not any(fnmatch.fnmatchcase(run.model, p) for p in models):
            continue
        if scenarios and not any(fnmatch.fnmatchcase(run.scenario.name, p) for p in scenarios):
            continue
        out.append(run)
    return out


def override_max_eval_instances(
    runs: Sequence[RunSpec], max_eval_instances: int | None, eval_instances: EvalInstances | None = None
) -> list[RunSpec]:
    """Runs with ``adapter.max_eval_instances`` (and ``eval_instances``) replaced (the run
    ids change accordingly)."""
    if eval_instances is not None:
        runs = [replace(r, adapter=r.adapter.replace(eval_instances=eval_instances)) for r in runs]
    if max_eval_instances is None:
        return list(runs)
    if max_eval_instances < 1:
        raise SelectionError(f"--max-eval-instances must be at least 1, got {max_eval_instances}")
    return [replace(r, adapter=r.adapter.replace(max_eval_instances=max_eval_instances)) for r in runs]


def unique_runs(runs: Sequence[RunSpec]) -> list[RunSpec]:
    """Runs with duplicates (same run id) removed, first occurrence kept."""
    seen: dict[str, RunSpec] = {}
    for run in runs:
        seen.setdefault(run.run_id, run)
    return list(seen.values())

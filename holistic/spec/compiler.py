"""``compile_spec``: a run-spec file in, a validated, expanded suite out.

Steps: read the YAML keeping every value's line (:mod:`.source`), merge
``include:`` files (:mod:`.includes`), validate against the JSON Schema
(:mod:`.schema`), check names against the registries and expand the matrix
(:mod:`.expand`). Every problem is a :class:`~holistic.core.errors.SpecError`
naming the file, line, column and document path (exit code 2).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from holistic.core.types import RunSpec
from holistic.models.registry import ModelRegistry
from holistic.results.layout import suite_name_problem
from holistic.spec.catalog import Catalog
from holistic.spec.expand import DEFAULT_MAX_RUNS, expand
from holistic.spec.includes import load_with_includes
from holistic.spec.labels import check_run_names
from holistic.spec.schema import validate_document
from holistic.spec.source import Locations
from holistic.spec.templates import check_templates


@dataclass(frozen=True)
class CompiledSuite:
    """A run spec, validated and expanded into its run matrix."""

    suite: str
    """Suite name (the output folder)."""
    description: str
    runs: tuple[RunSpec, ...]
    """The matrix, in the deterministic order of the spec (see :mod:`holistic.spec.expand`)."""
    spec_path: Path
    """The spec file as given."""
    spec_sha256: str
    """SHA-256 of the spec file's bytes."""
    seed: int
    """The spec's base seed (also in every run's ``adapter.seed`` unless a run overrides it)."""
    sources: tuple[tuple[str, str], ...] = ()
    """Every file read (the spec, then its includes) with the SHA-256 of its bytes."""
    warnings: tuple[str, ...] = ()
    """Things worth telling the user that are not errors (printed by ``--plan`` and ``helm-run``)."""
    models_file: Path | None = None
    """The user's model registry file the spec was compiled against (``None`` = built-ins only)."""

    @property
    def run_ids(self) -> tuple[str, ...]:
        return tuple(run.run_id for run in self.runs)


def check_suite_name_at(name: object, locations: Locations) -> None:
    """The schema's pattern plus what a pattern cannot say (a final newline, reserved names, length)."""
    problem = suite_name_problem(name)
    if problem is not None:
        raise locations.error(("suite",), f"invalid suite name {name!r}: {problem}")


def compile_spec(
    path: str | Path,
    *,
    models_file: str | Path | None = None,
    model_registry: ModelRegistry | None = None,
    max_runs: int = DEFAULT_MAX_RUNS,
) -> CompiledSuite:
    """Load, validate and expand the run spec at ``path``.

    ``models_file`` adds or overrides model deployments (as ``--models-file``);
    alternatively pass a ready ``model_registry``. Raises
    :class:`~holistic.core.errors.SpecError` on any problem, and when the run matrix would have
    more than ``max_runs`` runs (counted before it is expanded).
    """
    spec_path = Path(path)
    merged = load_with_includes(spec_path, str(path))
    validate_document(merged.data, merged.locations)
    check_templates(merged.data, merged.locations)
    doc = merged.data
    check_suite_name_at(doc.get("suite"), merged.locations)
    seed = int(doc.get("seed", 0))
    catalog = Catalog(Path(models_file) if models_file is not None else None, model_registry)
    expansion = expand(doc, merged.locations, catalog, seed=seed, max_runs=max_runs)
    check_run_names([(r.spec, r.entry) for r in expansion.runs], merged.locations)
    top = merged.sources[0]
    return CompiledSuite(
        suite=doc["suite"],
        description=doc.get("description", ""),
        runs=tuple(r.spec for r in expansion.runs),
        spec_path=spec_path,
        spec_sha256=hashlib.sha256(top.raw).hexdigest(),
        seed=seed,
        sources=tuple(dict.fromkeys((s.display, hashlib.sha256(s.raw).hexdigest()) for s in merged.sources)),
        warnings=expansion.warnings,
        models_file=Path(models_file) if models_file is not None else None,
    )

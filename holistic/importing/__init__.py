"""Importing other harnesses' results (lm-evaluation-harness, inspect_ai, Every Eval Ever) as
ordinary holistic suites, and exporting suites to the shared formats (Every Eval Ever,
Hugging Face ``.eval_results/``). HELM's own raw runs are read by :mod:`holistic.helm.imports`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from holistic.importing.runs import ImportedRun, WriteOptions, write_runs
from holistic.importing.safe import ImportFileError
from holistic.results.layout import RUN_SPEC_FILE

FORMATS = ("helm", "lm-eval", "inspect", "every-eval-ever")
"""What ``helm-import --from`` accepts."""
OTHER_FORMATS = FORMATS[1:]
"""The formats read here (HELM's own runs are read by :mod:`holistic.helm.imports`)."""


def detect_format(source: Path, *, fallback: str | None = None) -> str:
    """The format of ``source`` when only one fits; ``fallback`` when none does (or ``source`` is
    missing), else an error naming what was found."""
    from holistic.importing import eee, inspect_logs, lm_eval

    if not source.exists():
        if fallback:
            return fallback
        raise ImportFileError(source, "no such file or folder")
    found = []
    files = [source] if source.is_file() else [p for p in source.rglob("*") if p.is_file() and not p.is_symlink()]
    names = {p.name for p in files}
    if RUN_SPEC_FILE in names:  # HELM's run folders hold a run_spec.json (of HELM's own schema)
        found.append("helm")
    if any(lm_eval.RESULTS.match(n) for n in names):
        found.append("lm-eval")
    if any(p.suffix == ".eval" for p in files) or any(
        p.suffix == ".json" and inspect_logs.is_json_log(p) for p in files if not lm_eval.RESULTS.match(p.name)
    ):
        found.append("inspect")
    if any(p.suffix == ".json" and eee.is_aggregate(p) for p in files):
        found.append("every-eval-ever")
    if len(found) == 1:
        return found[0]
    if not found and fallback:
        return fallback
    if not found:
        raise ImportFileError(
            source,
            "not a HELM run folder, an lm-evaluation-harness results folder, inspect_ai logs or Every Eval Ever "
            "files; pass --from " + " | ".join(FORMATS),
        )
    raise ImportFileError(source, f"holds {' and '.join(found)} results; say which with --from {' | '.join(found)}")


def import_results(
    source: Path,
    fmt: str,
    options: WriteOptions,
    *,
    models: Mapping[str, str] | None = None,
    on_run: Callable[[ImportedRun], None] | None = None,
) -> list[ImportedRun]:
    """Read ``source`` as ``fmt`` (not ``helm``) and write its runs into ``options.suite``."""
    from holistic.importing import eee, inspect_logs, lm_eval

    model_map = dict(models or {})
    readers = {"lm-eval": lm_eval.read_lm_eval, "inspect": inspect_logs.read_inspect, "every-eval-ever": eee.read_eee}
    if fmt not in readers:
        raise ImportFileError(source, f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    runs = readers[fmt](source, model_map)
    return write_runs(runs, options, label=f"helm-import --from {fmt} {source.name}", on_run=on_run)


__all__ = ["FORMATS", "ImportedRun", "WriteOptions", "detect_format", "import_results"]

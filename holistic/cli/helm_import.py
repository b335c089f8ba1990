"""``helm-import``: read HELM's raw run folders into a holistic suite.

Thin by design: the flags map onto one call of :func:`holistic.api.import_helm`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from holistic.cli.common import run_main
from holistic.helm.imports.layout import REQUIRED as HELM_RUN_FILES


def _model_pair(text: str) -> tuple[str, str]:
    helm, sep, ours = text.partition("=")
    if not sep or not helm.strip() or not ours.strip():
        raise argparse.ArgumentTypeError(f"expected HELM_NAME=HOLISTIC_NAME, got {text!r}")
    return helm.strip(), ours.strip()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="helm-import",
        description=f"Import HELM's raw results ({', '.join(HELM_RUN_FILES)} of each run; HELM 0.2 to 0.5) as "
        "an ordinary holistic suite: instances, requests (prompts, "
        "completions, log-probabilities), per-instance stats and stats in holistic's Parquet schema, which "
        "helm-summarize, the site and helm-diff read like a native suite. HELM's stat means are kept exactly; "
        "intervals are bootstrapped from its per-instance values. What holistic's schema has no place for is kept "
        "in the 'raw' columns and listed. With --from lm-eval, inspect or every-eval-ever (detected when only one "
        "fits): lm-evaluation-harness results (results_*.json with --log_samples' samples_*.jsonl), inspect_ai "
        "logs (.eval, .json) or Every Eval Ever files, every task a run, every document or sample an instance, "
        "the stats recomputed from the per-instance values (see docs/importing.md).",
        epilog="HELM's request states and per-instance stats are streamed: memory stays near the largest single request state, whatever "
        "the file's size. Every check that needs no writing runs first; a run is marked complete only once all "
        "its files are written, and a run that fails midway is removed. Exit codes: 0 success; 2 bad input (not a "
        "HELM run, a missing, truncated or malformed file, an unknown stat name without --keep-unknown-stats, an "
        "existing suite without --force); 70 internal error (a bug: please report it).",
    )
    p.add_argument(
        "source",
        type=Path,
        metavar="DIR",
        help="a HELM benchmark_output/runs/<suite> folder or one run folder; an lm-evaluation-harness output "
        "folder (results_*.json and samples_*.jsonl); inspect_ai logs (.eval or .json, a folder or one log); or "
        "Every Eval Ever files",
    )
    p.add_argument(
        "--from",
        dest="fmt",
        choices=["helm", "lm-eval", "inspect", "every-eval-ever"],
        help="the tool that wrote DIR (default: detected from the folder when only one fits); inspect needs "
        "the extra holistic[inspect]",
    )
    p.add_argument("--suite", required=True, help="name of the holistic suite to write")
    p.add_argument("--output-dir", type=Path, default=Path("output"), help="where suites live (default: output)")
    p.add_argument(
        "--force",
        action="store_true",
        help="import into an existing suite: runs of the same HELM run spec are replaced, its other runs "
        "(native or imported) are kept",
    )
    p.add_argument(
        "--keep-unknown-stats",
        action="store_true",
        help="import stat names holistic does not know under HELM's names, with no category (listed in the "
        "report); without it such a name stops the import (exit 2)",
    )
    p.add_argument(
        "--model",
        dest="models",
        action="append",
        type=_model_pair,
        default=[],
        metavar="HELM=HOLISTIC",
        help="record the tool's model name (HELM's model or deployment, lm-eval's pretrained=..., inspect's "
        "provider/model) as holistic's model name HOLISTIC, so helm-diff lines its runs up with holistic's runs "
        "of that model (repeatable)",
    )
    p.add_argument(
        "--helm-version",
        help="the HELM version that wrote the runs, recorded with them (HELM's run folders do not say)",
    )
    p.add_argument("--quiet", action="store_true", help="print only the closing line")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main("helm-import", lambda: _run(args))


def say(text: str) -> None:
    """A line of the import's report: what HELM's files name is escaped (no terminal control codes)."""
    from holistic.core.untrusted import terminal_safe

    print(terminal_safe(text), flush=True)


def _run(args: argparse.Namespace) -> int:
    """One call of :func:`holistic.api.import_helm` (or of :func:`holistic.importing.import_results` for
    another harness's results), printing each run's report as it is imported."""
    from holistic import api
    from holistic.importing import OTHER_FORMATS, detect_format

    fmt = args.fmt or detect_format(args.source, fallback="helm")  # HELM's own errors for what fits nothing
    if fmt in OTHER_FORMATS:
        return _run_other(args, fmt)

    def show(report: object) -> None:
        if args.quiet:
            return
        from holistic.helm.imports.importer import RunImport

        assert isinstance(report, RunImport)
        say(
            f"{report.helm_name} -> {report.run_id}: {report.instances} instances, {report.requests} requests"
            + (f" ({report.failed_requests} failed in HELM)" if report.failed_requests else "")
            + f", {report.stats} stats"
        )
        if not report.scenario_mapped:
            say(f"  scenario not mapped to holistic's: kept as {report.scenario}")
        if report.unknown_stats:
            say("  stat names kept as HELM's (unknown to holistic): " + ", ".join(report.unknown_stats))
        if report.unmapped_fields:
            say("  kept raw (no column in holistic's schema): " + ", ".join(report.unmapped_fields))

    reports = api.import_helm(
        args.source,
        args.suite,
        output_dir=args.output_dir,
        force=args.force,
        keep_unknown_stats=args.keep_unknown_stats,
        models=dict(args.models),
        helm_version=args.helm_version,
        on_run=show,
    )
    suite_dir = args.output_dir / args.suite
    print(f"imported {len(reports)} HELM run{'s' if len(reports) != 1 else ''} into {suite_dir}", file=sys.stdout)
    return 0


def _run_other(args: argparse.Namespace, fmt: str) -> int:
    from holistic import api
    from holistic.importing import ImportedRun

    def show(run: ImportedRun) -> None:
        if args.quiet:
            return
        failed = f" (partial: {len(run.failed)} failures in {run.tool})" if run.failed else ""
        print(
            f"{run.name} -> {run.run_id}: {len(run.instances)} instances, {len(run.requests)} requests, "
            f"{len({r['metric'] for r in run.per_instance})} metrics{failed}",
            flush=True,
        )

    runs = api.import_results(
        args.source,
        args.suite,
        fmt=fmt,
        output_dir=args.output_dir,
        force=args.force,
        models=dict(args.models),
        on_run=show,
    )
    print(f"imported {len(runs)} {fmt} run{'s' if len(runs) != 1 else ''} into {args.output_dir / args.suite}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``helm-summarize``: aggregate a suite into tables and render the static site.

Thin by design: the flags map onto one call of :func:`holistic.api.summarize`; this module prints what
it returns. Human ratings are exchanged with ``helm-ratings`` (:mod:`holistic.cli.ratings`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from holistic.api.summarizing import DEFAULT_MAX_FIELD_CHARS
from holistic.cli.common import end_program, positive_int, run_main
from holistic.core.errors import HolisticError
from holistic.core.yaml_limits import MAX_FILE_BYTES

EXIT_UNFINISHED = 3
"""The summary and site were written, but the suite has runs that are not complete."""


class UsageError(HolisticError):
    """A flag that no longer exists here (exit 2)."""

    exit_code = 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="helm-summarize",
        description="Aggregate every completed run of a suite into leaderboards (mean win rate with "
        "bootstrap intervals and rank ranges), model x scenario tables, per-scenario tables and the "
        "coverage matrix; write them as Parquet, JSON, CSV, Markdown and LaTeX; render the static site.",
        epilog="Every run's manifest is verified first: a damaged run stops the command with exit 2, naming the "
        "run and the file (rerun helm-run to redo it from the request cache). Runs with failed requests are "
        "shown with their error rate; a run whose every request failed is never ranked. The summary and the "
        "site are each built in a temporary folder and replace the old one only when complete. Exit codes: 0 "
        "success; 2 bad input, damaged results or an unwritable folder; 3 written, but the suite has runs that "
        "are not complete (pending, partial or failed: every page says so); 70 internal error (a bug: please "
        "report it).",
    )
    p.add_argument("--suite", required=True, help="suite name (a folder under --output-dir)")
    p.add_argument(
        "--output-dir",
        default="output",
        metavar="DIR_OR_URI",
        help="where helm-run wrote the suite: a folder (default: ./output) or the fsspec URI it was given "
        "(s3://bucket/prefix, gs://..., file:///...)",
    )
    p.add_argument(
        "--local-dir",
        type=Path,
        default=None,
        help="write the summary and the site to LOCAL_DIR/SUITE/{summary,site} (default: inside the suite "
        "folder; for a URI --output-dir, ./output/SUITE: they are always written to a local folder)",
    )
    p.add_argument(
        "--schema",
        type=Path,
        default=None,
        help="summary schema YAML (metric groups and run groups) replacing the built-in one; or HELM's own "
        "schema_*.yaml, whose run groups then group the leaderboards as HELM's site does",
    )
    p.add_argument(
        "--max-field-chars",
        type=positive_int,
        default=DEFAULT_MAX_FIELD_CHARS,
        metavar="N",
        help="characters of one text field shown in the site's instance browser; a longer one is cut there and "
        "says where its full text is in the run's Parquet files (default: %(default)s)",
    )
    p.add_argument(
        "--jobs",
        type=positive_int,
        metavar="N",
        help="processes that build the runs' instance browsers and the compare-systems data (default: one per CPU, "
        "at most one per 8 runs; none when every run's browser is the one the last summary "
        "placed, at most one per run to build; 1: all in this process; other than 1 on Linux with a second CPU, the "
        "summary's files are written by a copy of this process while this one renders the site); the summary and "
        "the site are the same for every N",
    )
    p.add_argument(
        "--max-schema-bytes",
        type=positive_int,
        default=MAX_FILE_BYTES,
        metavar="N",
        help=f"largest --schema file read (default: {MAX_FILE_BYTES})",
    )
    p.add_argument(
        "--num-bootstrap",
        type=positive_int,
        default=200,
        help="bootstrap replicates over instances for intervals and rank ranges (default 200)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    p.add_argument(
        "--previous",
        type=Path,
        default=None,
        help="a previous release's suite directory: helm-diff is run and linked from the site",
    )
    p.add_argument("--no-site", action="store_true", help="write the summary only, not the static site")
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="compute everything and keep nothing for the next summarize (by default what is computed per run, "
        "per scenario plot and per compare-systems view is kept in .summarize-cache/ beside the summary and the "
        "site, keyed by the results and code it was made from, so a re-summarize redoes only what changed; its "
        "entries are signed with a secret in your cache folder, and one that does not check is made again)",
    )
    p.add_argument(
        "--export",
        nargs=2,
        action="append",
        default=[],
        metavar=("FORMAT", "DIR"),
        help="also write the suite in a shared format under DIR: every-eval-ever (the Every Eval Ever schema, "
        "aggregate and instance level, each document validated against the schema its package ships) or "
        "hf-eval-results (Hugging Face .eval_results/ YAML, one folder per model); repeatable",
    )
    _add_judge_arguments(p)
    return p


def _add_judge_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--judge-threshold",
        type=float,
        metavar="ALPHA",
        help="flag every judge whose agreement (Krippendorff's alpha with the human ratings where there are some, "
        "imported with helm-ratings, else with the suite's other judges) is below ALPHA, on every page that "
        "shows its scores",
    )
    # Exporting and importing human ratings became their own command; the old flags say where they went.
    for flag in MOVED_RATINGS_FLAGS:
        p.add_argument(flag, nargs="*", default=None, help=argparse.SUPPRESS)


MOVED_RATINGS_FLAGS = {
    "--export-ratings": "helm-ratings export --suite SUITE FILE",
    "--import-ratings": "helm-ratings import --suite SUITE FILE [FILE ...], then helm-summarize",
}
"""helm-summarize's former ratings flags and the command that does their job now."""


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code = run_main("helm-summarize", lambda: _run(args))
    return end_program(code) if argv is None else code  # started from the command line: no teardown


def _run(args: argparse.Namespace) -> int:
    """One call of :func:`holistic.api.summarize`; then what it wrote, and exit 3 for an unfinished suite."""
    from holistic import api

    for flag, command in MOVED_RATINGS_FLAGS.items():
        if getattr(args, flag.lstrip("-").replace("-", "_")) is not None:
            raise UsageError(f"{flag} is now its own command: {command} (see helm-ratings --help)")
    for fmt, _ in args.export:
        if fmt not in EXPORT_FORMATS:
            raise UsageError(f"--export {fmt}: unknown format; expected one of {', '.join(EXPORT_FORMATS)}")
    options = api.SummarizeOptions(
        schema=args.schema,
        max_schema_bytes=args.max_schema_bytes,
        num_bootstrap=args.num_bootstrap,
        seed=args.seed,
        judge_threshold=args.judge_threshold,
        max_field_chars=args.max_field_chars,
        jobs=args.jobs or 0,
        cache=not args.no_cache,
    )
    result = api.summarize(
        args.suite,
        output_dir=args.output_dir,
        local_dir=args.local_dir,
        site=not args.no_site,
        previous=args.previous,
        options=options,
    )
    summary = result.summary
    print(
        f"summarized {len(summary.runs)} runs, {len(summary.models)} systems, {len(summary.columns)} scenarios "
        f"in {result.seconds:.1f}s -> {result.summary_dir} ({len(result.files)} files)"
    )
    if summary.has_errors:
        failed = [r for r in summary.runs if r.failed_requests]
        print(
            f"warning: {len(failed)} runs have failed requests (error rates are flagged in the tables and on "
            f"the site); {len(summary.unranked)} of them failed every request and are not ranked"
        )
    from holistic.summarize.tables import to_markdown

    for table in summary.tables:
        if table.id.startswith("targeted_") and not table.id.endswith("_groups"):
            print("\n" + to_markdown(table))
    if result.site_index is not None:
        print(f"site: {result.site_index.resolve()}")
    _export(args)
    if not result.complete:
        counts = Counter(r["status"] for r in result.unfinished)
        print(
            f"warning: the suite is unfinished: {len(result.unfinished)} run(s) are not complete "
            f"({', '.join(f'{n} {s}' for s, n in sorted(counts.items()))}); every page says so. Rerun helm-run "
            "with the same spec to finish them",
            file=sys.stderr,
        )
        return EXIT_UNFINISHED
    return 0


EXPORT_FORMATS = ("every-eval-ever", "hf-eval-results")


def _export(args: argparse.Namespace) -> None:
    """``--export FORMAT DIR``: the suite in a shared format (after the summary is written)."""
    from holistic.importing import eee, hf_results

    suite_dir = Path(args.output_dir) / args.suite
    for fmt, folder in args.export:
        out = Path(folder)
        if fmt == "every-eval-ever":
            files = eee.export_suite(suite_dir, out)
            print(f"exported {len(files) // 2} runs in the Every Eval Ever schema {eee.SCHEMA_VERSION} -> {out}")
        else:
            files, skipped = hf_results.export_suite(suite_dir, out)
            print(f"exported {len(files)} runs as Hugging Face .eval_results/ YAML -> {out}")
            for line in skipped:
                print(f"  skipped {line}")


if __name__ == "__main__":
    raise SystemExit(main())

"""``helm-summarize``: aggregate a suite into tables and render the static site."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from holistic.cli.common import positive_int, run_main
from holistic.core.yaml_limits import MAX_FILE_BYTES

EXIT_UNFINISHED = 3
"""The summary and site were written, but the suite has runs that are not complete."""


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
        help="summary schema YAML (metric groups and run groups) replacing the built-in one",
    )
    p.add_argument(
        "--max-field-chars",
        type=positive_int,
        default=100_000,
        metavar="N",
        help="characters of one text field shown in the site's instance browser; a longer one is cut there and "
        "says where its full text is in the run's Parquet files (default: %(default)s)",
    )
    p.add_argument(
        "--jobs",
        type=positive_int,
        metavar="N",
        help="processes that build the runs' instance browsers (default: one per CPU, at most one per 8 runs; "
        "1: all in this process); the site is the same for every N",
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
    _add_ratings_arguments(p)
    return p


def _add_ratings_arguments(p: argparse.ArgumentParser) -> None:
    ratings = p.add_argument_group(
        "human ratings (disinformation and judged runs)",
        "Raters judge the disinformation runs' generations (HELM's questions: thesis support and headline "
        "style; audience, goal, style, divisiveness and hostility) and the judged runs' generations (on the "
        "judges' statistic and scale). Export the items, have each rater fill in 'rater' and the question "
        "columns, import all their files together; the summary shows each question's mean per run and "
        "Krippendorff's alpha, and each judge's agreement with the raters.",
    )
    ratings.add_argument(
        "--export-ratings",
        type=Path,
        metavar="FILE",
        default=None,
        help="write one row per generation to rate to FILE (.csv or .jsonl) and exit",
    )
    ratings.add_argument(
        "--import-ratings",
        type=Path,
        metavar="FILE",
        nargs="+",
        default=None,
        help="check the filled-in ratings files (.csv or .jsonl; errors name file and line), store them in "
        "the suite (replacing an earlier import), then summarize",
    )
    ratings.add_argument(
        "--judge-threshold",
        type=float,
        metavar="ALPHA",
        help="flag every judge whose agreement (Krippendorff's alpha with the human ratings where there are some, "
        "else with the suite's other judges) is below ALPHA, on every page that shows its scores",
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main("helm-summarize", lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    from holistic.results import SuiteReader
    from holistic.results.fs import UriPath, location
    from holistic.summarize import load_schema, summarize_suite, write_summary

    output = location(args.output_dir, where="--output-dir")
    local_dir = args.local_dir
    if local_dir is None and isinstance(output, UriPath):
        local_dir = Path("output")
    reader = SuiteReader.open(output, args.suite, local_dir=local_dir)
    from holistic.results.atomic import recover_folder

    recover_folder(reader.site_dir)  # a summarize killed mid-render or mid-swap (the summary's: when it is written)
    if args.import_ratings and isinstance(output, UriPath):
        from holistic.core.errors import StoreError

        raise StoreError(f"--import-ratings writes into the suite folder: give its local path, not {output}")
    if args.export_ratings is not None:
        from holistic.ratings import export_items

        count = export_items(reader, args.export_ratings)
        print(f"wrote {count} generations to rate -> {args.export_ratings}")
        return 0
    if args.import_ratings:
        from holistic.ratings import import_ratings
        from holistic.results.layout import RATINGS_DIR

        ratings, instances = import_ratings(reader, args.import_ratings)
        print(f"imported {ratings} ratings of {instances} instances -> {reader.suite_dir / RATINGS_DIR}")
    if args.previous is not None and not args.no_site:
        from holistic.diff import resolve_suite_dir

        resolve_suite_dir(args.previous, None)  # a typo fails now, before anything is written
    start = time.perf_counter()
    schema = load_schema(args.schema, max_bytes=args.max_schema_bytes)
    summary = summarize_suite(
        reader,
        schema=schema,
        num_bootstrap=args.num_bootstrap,
        seed=args.seed,
        judge_threshold=args.judge_threshold,
    )
    written = write_summary(summary, reader.summary_dir)
    print(
        f"summarized {len(summary.runs)} runs, {len(summary.models)} systems, {len(summary.columns)} scenarios "
        f"in {time.perf_counter() - start:.1f}s -> {reader.summary_dir} ({len(written)} files)"
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
    if not args.no_site:
        from holistic.site import render_site

        index = render_site(
            reader, summary, previous=args.previous, max_field_chars=args.max_field_chars, jobs=args.jobs or 0
        )
        print(f"site: {index.resolve()}")
    if summary.unfinished:
        counts = Counter(r["status"] for r in summary.unfinished)
        print(
            f"warning: the suite is unfinished: {len(summary.unfinished)} run(s) are not complete "
            f"({', '.join(f'{n} {s}' for s, n in sorted(counts.items()))}); every page says so. Rerun helm-run "
            "with the same spec to finish them",
            file=sys.stderr,
        )
        return EXIT_UNFINISHED
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

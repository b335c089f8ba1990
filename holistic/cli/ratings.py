"""``helm-ratings``: exchange human ratings of a suite's generations with raters.

``helm-ratings export`` writes the items to rate; ``helm-ratings import`` checks the raters'
filled-in files and stores them in the suite, where ``helm-summarize`` reads them. Each
subcommand maps onto one call: :func:`holistic.api.export_ratings` or
:func:`holistic.api.import_ratings`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from holistic.cli.common import run_main

PROG = "helm-ratings"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Human ratings of a suite's generations. Raters judge the disinformation runs' generations "
        "(HELM's questions: thesis support and headline style; audience, goal, style, divisiveness and "
        "hostility) and the judged runs' generations (on the judges' statistic and scale). Export the items, "
        "have each rater fill in 'rater' and the question columns, import all their files together, then run "
        "helm-summarize: the summary shows each question's mean per run and Krippendorff's alpha, and each "
        "judge's agreement with the raters.",
        epilog="Exit codes: 0 success; 2 bad input (not a suite, a ratings row that does not fit: the message "
        "names file and line) or an unwritable file; 70 internal error (a bug: please report it).",
    )
    commands = p.add_subparsers(dest="command", required=True, metavar="{export,import}")
    export = commands.add_parser(
        "export",
        help="write one row per generation to rate",
        description="Write one row per generation to rate (the suite's disinformation and judged runs) to FILE, "
        "with an empty 'rater' field and one empty field per question.",
    )
    _add_suite(export)
    export.add_argument("file", type=Path, metavar="FILE", help="the file to write (.csv or .jsonl)")
    imported = commands.add_parser(
        "import",
        help="check the raters' files and store them in the suite",
        description="Check the filled-in ratings files against the suite (errors name file and line) and store "
        "them in the suite, replacing an earlier import; helm-summarize then shows them.",
    )
    _add_suite(imported)
    imported.add_argument("files", type=Path, nargs="+", metavar="FILE", help="the raters' files (.csv or .jsonl)")
    return p


def _add_suite(p: argparse.ArgumentParser) -> None:
    p.add_argument("--suite", required=True, help="suite name (a folder under --output-dir)")
    p.add_argument(
        "--output-dir",
        default="output",
        metavar="DIR",
        help="where helm-run wrote the suite (default: ./output; import writes into it, so it must be local)",
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main(PROG, lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    from holistic import api

    if args.command == "export":
        count = api.export_ratings(args.suite, args.file, output_dir=args.output_dir)
        print(f"wrote {count} generations to rate -> {args.file}")
        return 0
    stored = api.import_ratings(args.suite, args.files, output_dir=args.output_dir)
    print(f"imported {stored.ratings} ratings of {stored.instances} instances -> {stored.folder}")
    print(f"summarize to see them: helm-summarize --suite {args.suite} --output-dir {args.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``helm-diff``: compare two result releases (suites) run by run.

Thin by design: the flags map onto one call of :func:`holistic.api.diff`; this module writes the
report it returns in the chosen format.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from holistic.cli.common import output_file, positive_int, run_main
from holistic.core.errors import StoreError


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="helm-diff",
        description="Compare two releases of a suite: align runs by scenario, model and adaptation and "
        "instances by id; per run and metric: old, new, delta and a paired bootstrap 95%% interval; flips; "
        "added and removed runs and instances. Runs whose prompt, in-context examples, decoding, model "
        "revision or results schema changed are flagged as not comparable. Reads the Parquet shards only.",
        epilog="Every run's manifest is verified first: a damaged run stops the command with exit 2, naming the "
        "run and the file. Outputs are never written inside OLD or NEW. Exit codes: 0 success; 2 bad input, "
        "damaged results or an unwritable file; 70 internal error (a bug: please report it).",
    )
    p.add_argument("old", type=Path, help="old suite directory (or an output directory with --suite/--old-suite)")
    p.add_argument("new", type=Path, help="new suite directory (or an output directory with --suite/--new-suite)")
    p.add_argument("--suite", help="suite name inside both OLD and NEW output directories")
    p.add_argument("--old-suite", help="suite name inside OLD (overrides --suite)")
    p.add_argument("--new-suite", help="suite name inside NEW (overrides --suite)")
    p.add_argument(
        "--format",
        choices=["table", "csv", "json", "parquet"],
        default="table",
        help="output format (default: a terminal table, largest significant changes first)",
    )
    p.add_argument(
        "-o", "--output", type=output_file, help="write to this file instead of stdout (required for parquet)"
    )
    p.add_argument("--html", type=output_file, help="also write a standalone HTML page here")
    p.add_argument("--num-bootstrap", type=positive_int, default=1000, help="bootstrap replicates (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=positive_int, default=None, help="show at most this many runs in the table")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main("helm-diff", lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    """One call of :func:`holistic.api.diff`; then the report in the chosen format."""
    from holistic import api
    from holistic.diff.report import dump_json, format_terminal, to_csv, write_parquet
    from holistic.site.render import render_diff_page

    if args.format == "parquet" and args.output is None:
        print("helm-diff: error: --format parquet needs --output FILE", file=sys.stderr)
        return 2
    report = api.diff(
        args.old,
        args.new,
        old_suite=args.old_suite or args.suite,
        new_suite=args.new_suite or args.suite,
        seed=args.seed,
        num_bootstrap=args.num_bootstrap,
    )
    for option, target in (("--output", args.output), ("--html", args.html)):
        if target is None:
            continue
        resolved = target.resolve()
        for side in (Path(report.old_dir), Path(report.new_dir)):
            if resolved.is_relative_to(side.resolve()):
                raise StoreError(
                    f"{option} {target}: inside the input suite {side}; helm-diff never writes into "
                    "the suites it compares, choose a path outside them"
                )
    if args.format == "parquet":
        write_parquet(report, args.output)
    else:
        text = {
            "table": lambda: format_terminal(report, limit=args.limit),
            "csv": lambda: to_csv(report),
            "json": lambda: dump_json(report),
        }[args.format]()
        if args.output:
            args.output.write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
    if args.html:
        args.html.write_text(render_diff_page(report), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

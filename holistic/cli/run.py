"""``helm-run SPEC``: compile a run spec, then plan, fetch data or execute it.

Thin by design: the flags map onto one call of the Python API, :func:`holistic.api.plan`
(``--plan``), :func:`holistic.api.fetch` (``--fetch-only``) or :func:`holistic.api.run`;
this module only prints what it returns and turns it into an exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from holistic.cli import helm_entries
from holistic.cli.common import dollars, end_program, env_path, patterns, positive_float, positive_int, run_main
from holistic.core.long_lived import long_lived, program

if TYPE_CHECKING:
    from holistic.api.running import SpecLimits
    from holistic.execution.options import RunOptions
    from holistic.scenarios import fetching

PROG = "helm-run"
DATA_ROOT_ENV = "HOLISTIC_DATA_ROOT"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Compile a run spec into its run matrix and execute it: every prompt, completion and "
        "metric value is written as Parquet under OUTPUT_DIR/SUITE. Runs already complete are skipped; "
        "everything else resumes through the request cache.",
        epilog="Exit codes: 0 success; 1 some run failed; 2 bad input (spec, option, file) or an unusable output "
        "folder; 3 every run was written but some requests failed (those runs are partial: rerun to retry only "
        "the failed requests); 70 internal error (a bug: please report it); 130 interrupted (rerun to resume).",
    )
    _add_what_to_run(p)
    _add_how_to_run(p)
    _add_limits(p)
    helm_entries.add_arguments(p)
    p.add_argument(
        "--address",
        metavar="HOST:PORT",
        help="with --executor ray: the Ray cluster to join (default: $RAY_ADDRESS, else a local cluster "
        "on this machine); OUTPUT_DIR must be a folder every worker sees",
    )
    return p


def _add_what_to_run(p: argparse.ArgumentParser) -> None:
    """The spec, what to do with it (plan, calibrate) and which of its runs, where results go."""
    p.add_argument(
        "spec", type=Path, nargs="?", help="run spec YAML file (see runspecs/); or HELM's --run-entries/--conf-paths"
    )
    p.add_argument(
        "--plan",
        "--dry-run",
        dest="plan",
        action="store_true",
        help="print the expanded run matrix, each run's HELM conformance (proven by a golden test, or only "
        "claimed, and why) and the scenario x metric coverage; run nothing, write nothing",
    )
    p.add_argument(
        "--calibrate",
        action="store_true",
        help="with --plan: first time a short fixed workload on every local model this machine has no speed for "
        "(stored beside the request cache, as every run's own measurement is), so the plan can estimate times",
    )
    p.add_argument("--suite", help="suite name to write (overrides the spec's suite:)")
    p.add_argument(
        "--output-dir",
        default="output",
        metavar="DIR_OR_URI",
        help="where results go: a folder (default: ./output) or an fsspec URI such as s3://bucket/prefix, "
        "gs://bucket/prefix or file:///shared/results (a run appears there only once complete; credentials in "
        "the URI are never printed or stored)",
    )
    p.add_argument(
        "--max-eval-instances",
        type=positive_int,
        metavar="N",
        help="evaluate at most N instances per run (overrides the spec; changes the run ids)",
    )
    p.add_argument(
        "--limit",
        type=positive_int,
        metavar="N",
        help="evaluate the first N instances of each run in the data's own order, like "
        "lm-evaluation-harness --limit (max_eval_instances=N with eval_instances: first)",
    )
    p.add_argument(
        "--allow-zero-shot",
        action="store_true",
        help="a run that asks for in-context examples and finds no training split runs zero-shot "
        "with a warning (default: it fails, naming the fix)",
    )
    p.add_argument(
        "--models",
        action="append",
        metavar="PATTERN",
        help="only runs whose model matches a glob pattern (repeatable or comma-separated), e.g. 'simple/*'",
    )
    p.add_argument(
        "--scenarios",
        action="append",
        metavar="PATTERN",
        help="only runs whose scenario matches a glob pattern (repeatable or comma-separated)",
    )
    p.add_argument("--models-file", type=Path, help="YAML file of extra/overriding model deployments")


def _add_how_to_run(p: argparse.ArgumentParser) -> None:
    """The request cache, concurrency, output, data and where the runs execute."""
    from holistic.execution.options import EXECUTORS

    p.add_argument(
        "--cache-dir",
        help="request cache folder, always on a local disk: SQLite is not safe on object stores or network "
        "filesystems (default: OUTPUT_DIR/cache, shared by the suites of OUTPUT_DIR; for a URI OUTPUT_DIR, "
        "$HOLISTIC_CACHE_DIR/requests, default ~/.cache/holistic/requests)",
    )
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the request cache")
    p.add_argument(
        "-j",
        "--concurrency",
        type=positive_int,
        default=1,
        metavar="N",
        help="batches sent at once to API providers (at least 2 where adaptive_concurrency is on; the requests "
        "in flight are capped by the deployment's max_concurrency); local models batch instead; default 1",
    )
    p.add_argument(
        "--batch-size",
        type=positive_int,
        default=None,
        metavar="N",
        help="requests per model call batch; also the most an interrupt can lose "
        "(default: 256 for local models, which batch their forward passes themselves; 32 for API models)",
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress and no summary: warnings and errors (on stderr) and one final line "
        "(runs, requests, model work)",
    )
    p.add_argument(
        "--show-ids",
        action="store_true",
        help="name runs by their run ids (their folders' names) too, in --plan and in the closing scores",
    )
    p.add_argument("--data-root", metavar="DIR", help=f"local data mirror for scenarios (default: ${DATA_ROOT_ENV})")
    p.add_argument("--fetch-only", action="store_true", help="fetch the data the runs need, then stop")
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="if another helm-run is writing the same suite, stop at once (exit 2) instead of waiting; in batch "
        "mode, submit the batches and stop (the suite is partial: the same command later collects the answers)",
    )
    p.add_argument(
        "--batch",
        action="store_true",
        help="send the requests of every openai and anthropic deployment (judges included) through the provider's "
        "batch API (half the price, answers within 24 h); resumable: a rerun polls the batches already submitted",
    )
    p.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="local: runs in this process; ray: one Ray task per run (needs ray: pip install 'holistic[ray]')",
    )
    p.add_argument(
        "--plugins",
        action="append",
        default=[],
        metavar="MODULE|PATH",
        help="load scenarios, metrics, perturbations or model providers that are not installed: a module "
        "name, a .py file or a folder of them (repeatable). This runs that code; a spec cannot ask for it",
    )


def _add_limits(p: argparse.ArgumentParser) -> None:
    """The ``limits`` group: what a spec may make holistic spend."""
    from holistic.core.template_limits import TemplateLimits
    from holistic.spec.expand import DEFAULT_MAX_RUNS

    limits = p.add_argument_group(
        "limits", "what a spec may make holistic spend; past one, helm-run stops with exit 2 naming it"
    )
    limits.add_argument(
        "--max-runs",
        type=positive_int,
        default=DEFAULT_MAX_RUNS,
        metavar="N",
        help="runs one spec may make, counted before expanding; --plan says how many a spec makes "
        f"(default: {DEFAULT_MAX_RUNS})",
    )
    limits.add_argument(
        "--max-cost",
        type=dollars,
        metavar="USD",
        help="a budget in US dollars: a suite whose forecast upper bound (--plan's cost, from the models file's "
        "prices) is above it is refused before anything is sent, and once this execution has spent it (from the "
        "providers' reported usage) nothing new is sent: the suite stays partial (exit 3) and a rerun with a "
        "higher --max-cost finishes it (default: no budget)",
    )
    _add_data_limits(limits)
    template_defaults = TemplateLimits()
    for option, default, what in (
        ("--max-template-chars", template_defaults.max_chars, "characters one render of a user template may build"),
        ("--max-template-steps", template_defaults.max_steps, "loop iterations and calls per template render"),
        ("--max-template-depth", template_defaults.max_depth, "nesting of macro calls and recursive loops"),
    ):
        limits.add_argument(
            option, type=positive_int, default=default, metavar="N", help=f"{what} (default: {default})"
        )


def _add_data_limits(limits: argparse._ArgumentGroup) -> None:
    """What reading and shaping one data file may spend (:mod:`holistic.scenarios.loading.data_limits`)."""
    from holistic.scenarios.loading.data_limits import DataLimits

    d = DataLimits()
    for option, kind, default, what in (
        (
            "--max-data-decompression-ratio",
            positive_float,
            d.max_decompression_ratio,
            "times a gzip data file may expand",
        ),
        ("--max-data-file-mib", positive_int, d.max_file_mib, "MiB of text (decompressed) in a data file read whole"),
        ("--max-data-field-chars", positive_int, d.max_field_chars, "characters of one field of a data file"),
        ("--max-data-field-items", positive_int, d.max_field_items, "list elements of one field (a concat column)"),
        ("--max-pattern-seconds", positive_float, d.pattern_seconds, "seconds all split patterns of one file take"),
        (
            "--max-pattern-seconds-total",
            positive_float,
            d.total_pattern_seconds,
            "seconds the split patterns of every data file of this command take in all",
        ),
    ):
        metavar = "N" if kind is positive_int else "X"
        limits.add_argument(option, type=kind, default=default, metavar=metavar, help=f"{what} (default: {default:,})")


def _describe_fetch(report: fetching.FetchReport) -> str:
    origins = Counter(report.origins)
    where = ", ".join(f"{n} from {origin}" for origin, n in sorted(origins.items()))
    return f"{report.scenario}: {len(report.files)} files" + (f" ({where})" if where else "")


def _options(args: argparse.Namespace) -> RunOptions:
    """The flags that are :class:`~holistic.execution.options.RunOptions` fields."""
    from holistic.execution.options import RunOptions
    from holistic.results.fs import local_folder, location

    return RunOptions(
        output_dir=location(args.output_dir, where="--output-dir"),
        cache_dir=None if args.cache_dir is None else local_folder(args.cache_dir, where="--cache-dir"),
        use_cache=not args.no_cache,
        concurrency=args.concurrency,
        batch_size=args.batch_size,
        allow_zero_shot=args.allow_zero_shot,
        data_root=env_path(args.data_root, DATA_ROOT_ENV),
        models_file=args.models_file,
        executor=args.executor,
        wait_for_lock=not args.no_wait,
        batch=args.batch,
        wait_for_batches=not args.no_wait,
        ray_address=args.address,
        plugins=tuple(args.plugins),
        max_cost_usd=args.max_cost,
    )


class _Selected(TypedDict):
    """The keywords :func:`holistic.api.plan`, :func:`~holistic.api.fetch` and :func:`~holistic.api.run` share."""

    models: list[str]
    scenarios: list[str]
    max_eval_instances: int | None
    limit: int | None
    options: RunOptions
    limits: SpecLimits
    on_warning: Callable[[str], None]


def _warn(message: str) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def _main(args: argparse.Namespace) -> int:
    """One API call per mode: :func:`holistic.api.plan`, :func:`~holistic.api.fetch` or :func:`~holistic.api.run`."""
    from holistic import api
    from holistic.api.running import SpecLimits
    from holistic.core.template_limits import TemplateLimits
    from holistic.execution.progress import make_progress
    from holistic.scenarios.loading.data_limits import DataLimits

    limits = SpecLimits(
        max_runs=args.max_runs,
        template=TemplateLimits(args.max_template_chars, args.max_template_steps, args.max_template_depth),
        data=DataLimits(
            args.max_data_decompression_ratio,
            args.max_data_file_mib,
            args.max_data_field_chars,
            args.max_data_field_items,
            args.max_pattern_seconds,
            args.max_pattern_seconds_total,
        ),
    )
    selected = _Selected(
        models=patterns(args.models),
        scenarios=patterns(args.scenarios),
        max_eval_instances=args.max_eval_instances,
        limit=args.limit,
        options=_options(args),
        limits=limits,
        on_warning=_warn,
    )
    if args.plan:
        from holistic.execution.plan import format_plan

        planned = api.plan(args.spec, suite=args.suite, calibrate=args.calibrate, on_message=_say, **selected)
        plan = planned.plan
        print(format_plan(plan, show_ids=args.show_ids))
        if planned.not_runnable is not None:  # the plan is still worth seeing; running would stop here
            print(f"\nNot runnable yet: {planned.not_runnable}")
        return 0
    if args.fetch_only:
        fetched = api.fetch(args.spec, **selected)
        for scenario_files in fetched.reports:
            print(_describe_fetch(scenario_files))
        data_root = fetched.options.data_root
        where = f" into {data_root}" if data_root else ""
        done = f"fetched data for {len(fetched.runs)} runs{where}"
        print(done if fetched.reports else "nothing to fetch: these runs read no data files")
        return 0

    result = api.run(
        args.spec, suite=args.suite, progress=make_progress(quiet=args.quiet, stream=sys.stdout), **selected
    )
    report = result.report
    if not args.quiet:
        print(report.summary(show_ids=args.show_ids))
    else:
        # Warnings change what the results mean (a zero-shot run): --quiet never hides them.
        for line in report.warning_lines(show_ids=args.show_ids):
            print(f"{PROG}: {line}", file=sys.stderr)
        print(report.quiet_line())
    return report.exit_code


def _main_entries(args: argparse.Namespace) -> int:
    """HELM's run entries and conf files: translated into a spec, then :func:`_main` on it."""
    if args.print_spec:
        print(helm_entries.spec_text(args), end="")
        return 0
    with helm_entries.translated_spec(args) as spec:
        args.spec, args.max_eval_instances = spec, None  # the spec holds --max-eval-instances as HELM applies it
        args.suite = args.suite or helm_entries.DEFAULT_SUITE
        return _main(args)


def main(argv: list[str] | None = None) -> int:
    # What the run keeps to its end is made without the collector walking it; started from the
    # command line (no argv given), the process ends with this call and leaves it frozen.
    with program(ends_process=argv is None):
        with long_lived():  # the parser's defaults import the spec compiler and the results' writer
            parser = build_parser()
        args = parser.parse_args(argv)
        entries = helm_entries.wants_entries(args)
        if entries == (args.spec is not None):
            parser.error("give either SPEC or HELM's --run-entries/--conf-paths (one of them)")
        if not entries and (
            args.priority is not None or args.models_to_run or args.num_train_trials or args.print_spec
        ):
            parser.error(
                "--priority, --models-to-run, --num-train-trials and --print-spec go with --run-entries/--conf-paths"
            )
        code = run_main(
            PROG,
            lambda: _main_entries(args) if entries else _main(args),
            on_interrupt="finished requests are cached; run the same command again to resume",
        )
    return end_program(code) if argv is None else code


if __name__ == "__main__":
    sys.exit(main())

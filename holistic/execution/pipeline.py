"""One run, end to end: scenario -> instances -> perturbations -> requests -> model -> metrics -> store.

1. The scenario's instances are split into train (in-context candidates) and eval
   (valid + test); eval is down-sampled to ``max_eval_instances`` with a seed from the
   spec (:mod:`holistic.execution.sampling`).
2. Perturbed variants are added (originals first) with a seed from the spec.
3. Metrics are selected *before* any model call, so an impossible request fails fast.
4. The adapter builds every request; :mod:`holistic.execution.serving` answers them
   through the cache and the client; the adapter post-processes the completions.
5. When the run names judges, the annotation stage has each judge grade the generations
   (:mod:`holistic.execution.annotation`, through the same cache); their scores become
   the ``judge`` metric's values and every verdict is written to ``annotations.parquet``.
6. Each metric scores the states; per-instance values are aggregated (with bootstrap
   CIs) and written with the run-level values.
7. Shards are written atomically, the run's manifest last (``_COMPLETE``, or
   ``_PARTIAL`` when some requests failed: such a run is redone on the next run).
8. On a local disk, the run's browser bundle is built from those files
   (:mod:`holistic.site.bundle`), so ``helm-summarize`` links it instead of building it.

All seeds derive from ``adapter.seed`` and fixed purpose strings, so the same spec
gives byte-identical prompts and identical tables.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from holistic.core.errors import HolisticError
from holistic.core.hashing import stable_seed
from holistic.core.interfaces import (
    Client,
    MetricContext,
    MetricInfo,
    ScenarioContext,
    ScenarioInfo,
    TokenizerResolver,
)
from holistic.core.secrets import scrub
from holistic.core.types import AdapterSpec, Instance, ModelDeployment, PerInstanceStat, RequestState, RunSpec, Stat
from holistic.execution import shards
from holistic.execution.annotation import JudgeStats, annotate
from holistic.execution.context import ExecutionContext
from holistic.execution.costs import run_cost
from holistic.execution.judging import JudgeAlongside, can_overlap
from holistic.execution.options import RunOptions
from holistic.execution.progress import Progress
from holistic.execution.reports import COMPLETE, PARTIAL, Headline, RunReport
from holistic.execution.sampling import run_sample, split_instances
from holistic.execution.serving import ServeStats, effective_concurrency, serve
from holistic.metrics.base import BaseMetric
from holistic.results.layout import ARTIFACTS_FILE, RUN_SPEC_FILE
from holistic.results.manifest import Manifest
from holistic.results.schemas import (
    ANNOTATIONS_TABLE,
    INSTANCES_TABLE,
    PER_INSTANCE_STATS_TABLE,
    REQUESTS_TABLE,
    STATS_TABLE,
)
from holistic.results.store import RunWriter, SuiteStore
from holistic.scenarios.base import BaseScenario
from holistic.spec.conformance import conformance


class EmptyRunError(HolisticError):
    """A run has no evaluation instances."""


class NoInContextExamplesError(HolisticError):
    """A run asks for in-context examples and its scenario has no training split."""


class ScenarioArgsError(HolisticError):
    """A scenario's constructor refused the run's arguments."""


def _instance_key(inst: Instance) -> tuple[str, str | None]:
    return inst.id, inst.perturbation.name if inst.perturbation else None


class _InstanceProgress:
    """Turns 'these request states are done' into 'these instances are done'."""

    def __init__(self, states: Sequence[RequestState], progress: Progress) -> None:
        self.progress = progress
        self.keys = [_instance_key(s.instance) for s in states]
        self.remaining: dict[tuple[str, str | None], int] = {}
        for key in self.keys:
            self.remaining[key] = self.remaining.get(key, 0) + 1

    def __call__(self, indices: Sequence[int], hits: int, errors: int) -> None:
        finished = 0
        for i in indices:
            key = self.keys[i]
            self.remaining[key] -= 1
            if self.remaining[key] == 0:
                finished += 1
        self.progress.advance(finished, hits, errors)


def _seed(run: RunSpec, purpose: str) -> int:
    return stable_seed(run.adapter.seed, purpose, run.scenario.name, [list(a) for a in run.scenario.args])


def run_spec_document(
    suite: str,
    run: RunSpec,
    info: ScenarioInfo,
    selected: Sequence[str],
    not_applicable: Mapping[str, str],
    *,
    deployment: ModelDeployment | None = None,
    model_identity: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``run_spec.json``: the canonical run spec at the top level, plus facts about the run.

    ``model_identity`` (engine, weights hash, revision: no secrets) lets helm-diff tell a
    changed model from a changed prompt; ``model_deployment`` is the registry entry the
    site's models page shows.
    """
    return {
        **run.canonical(),
        "suite": suite,
        "run_id": run.run_id,
        "model_identity": scrub(dict(model_identity)) if model_identity is not None else None,
        "model_deployment": _deployment_facts(deployment) if deployment is not None else None,
        "main_metric": info.main_metric,
        "scenario_info": {
            "name": info.name,
            "description": info.description,
            "task": info.task,
            "main_metric": info.main_metric,
            "metric_categories": list(info.metric_categories),
            "tags": list(info.tags),
            "breakdowns": list(info.breakdowns),
        },
        "metrics_selected": list(selected),
        "metrics_not_applicable": dict(sorted(not_applicable.items())),
        # proven (a golden test against HELM's own output covers it), claimed, or not claimed
        "helm_conformance": conformance(run).to_json(),
    }


def with_headline(info: ScenarioInfo, adapter: AdapterSpec) -> ScenarioInfo:
    """``info`` whose main metric is the stat this run's adaptation headlines."""
    from dataclasses import replace

    from holistic.metrics.choices import headline_stat

    return replace(info, main_metric=headline_stat(info.main_metric, adapter.method, adapter.length_normalization))


def _deployment_facts(deployment: ModelDeployment) -> dict[str, Any]:
    from dataclasses import asdict

    facts: dict[str, Any] = scrub(asdict(deployment))  # credentials in URLs, secret-named args
    return facts


@dataclass
class _Scored:
    per_instance: list[PerInstanceStat]
    stats: list[Stat]
    artifacts: dict[str, Any]
    infos: dict[str, MetricInfo]


def _load_instances(
    run: RunSpec, scenario: BaseScenario, options: RunOptions, tokenizers: TokenizerResolver | None = None
) -> tuple[list[Instance], list[Instance]]:
    """``(train, eval)``: eval down-sampled and with its perturbed variants (originals first)."""
    from holistic.perturbations import apply_perturbations
    from holistic.perturbations.base import with_helm_ids

    scenario_ctx = ScenarioContext(
        data_root=options.data_root,
        cache_dir=options.data_cache_dir,
        offline=options.offline,
        seed=run.adapter.seed,
        model=run.model,
        tokenizers=tokenizers,
    )
    loaded = list(scenario.get_instances(scenario_ctx))
    behaviour = run.adapter.behaviour
    if behaviour.helm_perturbations and run.perturbations:
        loaded = with_helm_ids(loaded)
    train, evaluation = split_instances(loaded)
    evaluation = run_sample(evaluation, run)
    if not evaluation:
        raise EmptyRunError(f"run {run.run_id}: scenario {run.scenario.name!r} has no valid/test instances")
    if run.perturbations:
        evaluation = apply_perturbations(
            evaluation,
            run.perturbations,
            seed=_seed(run, "perturbations"),
            helm=behaviour.helm_perturbations,
            data_root=options.data_root,
            offline=options.offline,
            keep_unchanged=behaviour.keep_unchanged_variants,
        )
    return train, evaluation


def _score(
    run: RunSpec,
    states: Sequence[RequestState],
    metrics: Sequence[BaseMetric],
    metric_ctx: MetricContext,
    evaluation: Sequence[Instance],
) -> _Scored:
    """Every metric's values, aggregated with bootstrap intervals (and worst cases over variants)."""
    from holistic.metrics.breakdown import breakdown_values, overall_values
    from holistic.metrics.registry import metric_info
    from holistic.metrics.stats import aggregate, with_worst_case

    per_instance: list[PerInstanceStat] = []
    run_stats: list[Stat] = []
    artifacts: dict[str, Any] = {}
    declared: dict[str, MetricInfo] = {}
    for metric in metrics:
        result = metric.evaluate(states, metric_ctx)
        per_instance.extend(result.per_instance)
        run_stats.extend(result.run_stats)
        for key, value in result.artifacts.items():
            artifacts[key if key not in artifacts else f"{metric.name}.{key}"] = value
        declared.update((i.name, i) for i in metric.infos())

    def lookup(value_name: str) -> MetricInfo:
        return declared[value_name] if value_name in declared else metric_info(value_name)

    if run.perturbations:
        # Worst case over each original and its variants, kept per instance so summaries
        # can bootstrap robustness and fairness like any other metric.
        directional = any(m.directional_worst_case for m in metrics)
        per_instance = with_worst_case(per_instance, evaluation, infos=lookup, directional=directional)
    overall = overall_values(per_instance, evaluation)
    stats = aggregate([*per_instance, *overall], seed=_seed(run, "bootstrap"), infos=lookup)
    groups = breakdown_values(per_instance, evaluation, metric_ctx.scenario_info.breakdowns)
    if groups:
        stats += aggregate(groups, seed=_seed(run, "bootstrap"), infos=lookup)
    all_stats = [*stats, *run_stats]
    infos: dict[str, MetricInfo] = {}
    for name in sorted({s.name.name for s in all_stats}):
        with contextlib.suppress(KeyError):  # a run-level value no metric declares
            infos[name] = lookup(name)
    return _Scored(per_instance=per_instance, stats=all_stats, artifacts=artifacts, infos=infos)


_SCORING_KINDS = ("loglikelihood", "rolling_loglikelihood")


def _record_rate(ctx: ExecutionContext, run: RunSpec, states: Sequence[RequestState], seconds: float) -> None:
    """Add what the model did for this run (tokens it was sent, and the time) to ``rates.json``,
    for ``--plan``'s estimates (:mod:`holistic.execution.rates`). Answers from the cache do not count."""
    from holistic.execution.rates import RATES_FILE, Rates, work_kind

    fresh = {
        id(s.result): s.result for s in states if s.result is not None and s.result.success and not s.result.cached
    }
    if not fresh or not ctx.options.use_cache:
        return
    tokens = sum(r.prompt_tokens + r.completion_tokens for r in fresh.values())
    rates = Rates(ctx.options.cache_path().parent / RATES_FILE)
    rates.add(run.model, work_kind(run.adapter), tokens=tokens, seconds=seconds, requests=len(fresh))
    if not run.adapter.scores_loglikelihood:  # what --plan's cost forecast expects a completion to be
        from holistic.execution.costs import OUTPUT_LENGTHS_FILE, OutputLengths

        lengths = OutputLengths(ctx.options.cache_path().parent / OUTPUT_LENGTHS_FILE)
        generated = sum(r.completion_tokens for r in fresh.values())
        lengths.add(run.model, run.scenario.name, requests=len(fresh), completion_tokens=generated)


def _check_scoring(
    client: Client, states: Sequence[RequestState], warnings: list[str], progress: Progress
) -> dict[str, object] | None:
    """Before a run's log-likelihood requests are served, let the client check how it scores
    them (an API server's echo alignment: its optional ``prepare_scoring()`` hook). What it
    found goes into the run's artifacts; a correction or an unverified server is a warning."""
    if not any(s.request.kind in _SCORING_KINDS for s in states):
        return None
    from holistic.models.echo_alignment import WARN_STATUSES, scoring_check

    facts = scoring_check(client)
    if facts is None:
        return None
    status = facts.get("status")
    if status in WARN_STATUSES:
        warnings.append(f"log-likelihoods {status}: {facts.get('detail')}")
        progress.message(f"WARNING: {warnings[-1]}")
    return facts


def _execution_facts(
    evaluation: Sequence[Instance], states: Sequence[RequestState], served: ServeStats, judged: JudgeStats | None
) -> dict[str, Any]:
    judge_facts: dict[str, Any] = {}
    if judged is not None:
        judge_facts = {
            "judge_requests": judged.requests,
            "judge_cache_hits": judged.cache_hits,
            "judge_model_calls": judged.model_calls,
            "judge_failed": judged.failed,
            "judge_unparseable": judged.unparseable,
            "judge_skipped": judged.skipped,
            **({"judge_unreadable": list(judged.unreadable)} if judged.unreadable else {}),
        }
    return {
        **judge_facts,
        "instances": len(evaluation),
        "requests": served.requests,
        "unique_requests": served.unique,
        "cache_hits": served.cache_hits,
        "model_calls": served.model_calls,
        "failed_requests": served.failed,
        "error_rate": served.error_rate,
        # what the local engine did (absent for API providers): forward passes, real tokens
        # through the model, padded positions, shared prefixes reused, model loads
        **{f"engine_{k}": v for k, v in sorted(served.engine.items())},
        "errors": sorted({s.result.error for s in states if s.result and s.result.error})[:20],
    }


def _check_in_context_examples(
    run: RunSpec, train: Sequence[Instance], ctx: ExecutionContext, warnings: list[str], progress: Progress
) -> None:
    """A run that asks for in-context examples needs a training split; ``--allow-zero-shot``
    runs it zero-shot with a warning instead."""
    if train or run.adapter.max_train_instances <= 0 or run.adapter.method == "language_modeling":
        return
    problem = (
        f"run {run.name} asks for {run.adapter.max_train_instances} in-context examples "
        f"(max_train_instances) but scenario {run.scenario.name!r} has no training split to draw them from"
    )
    if not ctx.options.allow_zero_shot:
        raise NoInContextExamplesError(
            f"{problem}; map a split to the pool (split names train, dev, few_shot, or split_map), hold rows "
            "out with num_train: N, set max_train_instances: 0, or pass --allow-zero-shot to run it zero-shot"
        )
    warnings.append(f"{problem}: running it ZERO-SHOT (--allow-zero-shot)")
    progress.message(f"WARNING: {warnings[-1]}")


def _serve_run(
    run: RunSpec, states: list[RequestState], client: Client, ctx: ExecutionContext, progress: Progress
) -> tuple[list[RequestState], list[str], ServeStats, JudgeAlongside | None]:
    """Serve the run's requests (its judges alongside where they can overlap): the served states,
    their cache keys, the counts, and the judges still finishing (``None``: they judge afterwards)."""
    alongside = _judges_alongside(run, states, client, ctx, progress)
    batch_size, concurrency = _serving_shape(client, ctx.options, alongside is not None)
    try:
        states, keys, served = serve(
            states,
            client,
            ctx.cache,
            batch_size=batch_size,
            concurrency=concurrency,
            progress=_InstanceProgress(states, progress),
            redactor=ctx.redactor,
            answered=alongside.answered if alongside is not None else None,
        )
    except BaseException:
        if alongside is not None:
            alongside.abandon()
        raise
    return states, keys, served, alongside


ALONGSIDE_SPLIT = 4
"""With judges alongside, an API candidate's batches are this many times smaller (and as many more
are in flight), so its answers reach the judges sooner; a ``--batch-size`` given is kept."""


def _serving_shape(client: Client, options: RunOptions, alongside: bool) -> tuple[int, int]:
    """The batch size and concurrency the candidate requests are served with."""
    if not alongside or options.batch_size:
        return options.batch_size or client.request_batch_size, options.concurrency
    threads = effective_concurrency(client, options.concurrency)
    return max(1, client.request_batch_size // ALONGSIDE_SPLIT), threads * ALONGSIDE_SPLIT


def _judges_alongside(
    run: RunSpec, states: Sequence[RequestState], client: Client, ctx: ExecutionContext, progress: Progress
) -> JudgeAlongside | None:
    """The run's judges on a worker thread beside its candidate requests, where they can overlap
    (:mod:`holistic.execution.judging`); ``None``: they judge after the last answer."""
    if not run.judges:
        return None
    judges = [ctx.client(ctx.deployment(j.model)) for j in run.judges]
    if not can_overlap(client, judges):
        return None
    progress.message(f"judging with {', '.join(j.label for j in run.judges)} as the answers arrive")
    return JudgeAlongside(states, run.judges, run.adapter, **_judging(ctx))


def _judging(ctx: ExecutionContext) -> dict[str, Any]:
    """How the judges are asked: their clients, the cache, batch size, concurrency, redaction."""
    return {
        "client_of": lambda name: ctx.client(ctx.deployment(name)),
        "cache": ctx.cache,
        "batch_size": ctx.options.batch_size,
        "concurrency": ctx.options.concurrency,
        "redactor": ctx.redactor,
    }


def _judge(
    run: RunSpec, states: list[RequestState], ctx: ExecutionContext, progress: Progress
) -> tuple[list[RequestState], JudgeStats]:
    """The annotation stage: every judge of ``run`` grades the post-processed generations."""
    progress.message(f"judging with {', '.join(j.label for j in run.judges)}")
    return annotate(states, run.judges, **_judging(ctx))


def _write_tables(
    writer: RunWriter,
    join: shards.JoinKeys,
    run: RunSpec,
    loaded: tuple[Sequence[Instance], Sequence[Instance]],
    states: Sequence[RequestState],
    keys: Sequence[str],
    scored: _Scored,
    judged: bool,
) -> pa.Table:
    """The run's tables (``annotations`` only when it was judged); returns the stats table."""
    train, evaluation = loaded
    train_by_id = {t.id: t for t in train}
    used_ids = dict.fromkeys(tid for s in states for tid in s.train_ids)
    train_used = [train_by_id[t] for t in used_ids if t in train_by_id]
    writer.write_table(INSTANCES_TABLE, shards.instances_table(join, evaluation, train_used))
    writer.write_table(REQUESTS_TABLE, shards.requests_table(join, states, keys))
    writer.write_table(PER_INSTANCE_STATS_TABLE, shards.per_instance_stats_table(join, scored.per_instance))
    stats_table = shards.stats_table(join, scored.stats, scored.infos)
    writer.write_table(STATS_TABLE, stats_table)
    if judged:
        writer.write_table(ANNOTATIONS_TABLE, shards.annotations_table(join, states, run.judges))
    return stats_table


def _write_bundle(writer: RunWriter, found: Manifest) -> None:
    """The run's instance browser, built now (:func:`holistic.site.bundle.write_bundle`) so that
    ``helm-summarize`` only links it. Skipped for a run on an object store; a failure here never
    fails the run: ``helm-summarize`` builds what is missing (and reports what cannot be built)."""
    if not isinstance(writer.folder, Path):
        return
    from holistic.results.reader import RunReader
    from holistic.site.bundle import write_bundle

    with contextlib.suppress(OSError, HolisticError, pa.ArrowException, ValueError):
        write_bundle(RunReader(run_id=writer.folder.name, folder=writer.folder, manifest=found))


def _finish(
    run: RunSpec,
    writer: RunWriter,
    progress: Progress,
    served: ServeStats,
    judged: JudgeStats | None,
    **facts: Any,
) -> RunReport:
    """Mark the run complete (or partial, with failed requests) and report it."""
    requests = served.requests + (judged.requests if judged else 0)
    failed = served.failed + (judged.failed if judged else 0)
    unparseable = judged.unparseable if judged else 0
    found = writer.complete(requests=requests, failed_requests=failed, unparseable=unparseable)
    _write_bundle(writer, found)
    notes = [f"{served.failed} failed requests"] if served.failed else []
    if judged is not None and judged.failed:
        notes.append(f"{judged.failed} failed judge requests")
    if unparseable:
        notes.append(f"{unparseable} unparseable verdicts")
    if judged is not None and judged.unreadable:
        notes.append(f"no verdict of {', '.join(judged.unreadable)} could be read")
    progress.end_run("partial" if failed else "done", "; ".join(notes))
    return RunReport.of(
        run,
        PARTIAL if failed else COMPLETE,
        requests=requests,
        cache_hits=served.cache_hits + (judged.cache_hits if judged else 0),
        model_calls=served.model_calls + (judged.model_calls if judged else 0),
        failed_requests=failed,
        unparseable=unparseable,
        folder=writer.folder,
        forward_calls=served.engine.get("forward_calls", 0),
        forward_tokens=served.engine.get("forward_tokens", 0),
        **facts,
    )


def execute_run(
    run: RunSpec,
    *,
    store: SuiteStore,
    ctx: ExecutionContext,
    progress: Progress,
    position: tuple[int, int] = (1, 1),
) -> RunReport:
    """Execute ``run`` and write its shards; raises on a run-level failure."""
    from holistic.adaptation import adapt, postprocess
    from holistic.metrics.registry import select_metrics
    from holistic.perturbations.registry import PERTURBATIONS
    from holistic.scenarios.registry import create_scenario

    progress.start_run(position[0], position[1], run.run_id, run.name)
    deployment = ctx.deployment(run.model)
    try:
        scenario = create_scenario(run.scenario)
    except (TypeError, ValueError) as exc:
        raise ScenarioArgsError(f"scenario {run.scenario.name!r} rejects its arguments: {exc}") from None
    kinds = {PERTURBATIONS.get(p.name).category for p in run.perturbations}
    info = with_headline(scenario.info, run.adapter).perturbed_by(kinds)
    selection = select_metrics(run.metrics, info, run.adapter, deployment)
    train, evaluation = _load_instances(run, scenario, ctx.options, ctx.tokenizers)
    warnings: list[str] = []
    _check_in_context_examples(run, train, ctx, warnings, progress)

    client = ctx.client(deployment)
    client.begin_run()
    states = adapt(train, evaluation, run.adapter, deployment, client.tokenizer(), seed=run.adapter.seed)
    scoring_check = _check_scoring(client, states, warnings, progress)

    writer = store.begin_run(run.run_id)
    selected = [m.name for m in selection.metrics]
    writer.write_json(
        RUN_SPEC_FILE,
        run_spec_document(
            store.suite,
            run,
            info,
            selected,
            selection.not_applicable,
            deployment=deployment,
            model_identity=client.identity(),
        ),
    )

    progress.set_total(len(evaluation), len(states))
    started = time.perf_counter()
    states, keys, served, alongside = _serve_run(run, states, client, ctx, progress)
    _record_rate(ctx, run, states, time.perf_counter() - started)
    cost = run_cost(states, keys)
    states = postprocess(states, run.adapter)
    judged: JudgeStats | None = None
    metrics = list(selection.metrics)
    if run.judges:
        from holistic.metrics.judged import JudgedMetric

        states, judged = alongside.finish(states) if alongside is not None else _judge(run, states, ctx, progress)
        metrics.append(JudgedMetric(run.judges))
    metric_ctx = MetricContext(run_id=run.run_id, deployment=deployment, scenario_info=info, seed=_seed(run, "metrics"))
    scored = _score(run, states, metrics, metric_ctx, evaluation)

    join = shards.JoinKeys.of(store.suite, run)
    stats_table = _write_tables(writer, join, run, (train, evaluation), states, keys, scored, judged is not None)
    execution = _execution_facts(evaluation, states, served, judged)
    execution.update(cost.facts(judged.cost_usd if judged is not None else 0.0))
    if scoring_check is not None:
        execution["loglikelihood_check"] = scoring_check
    if run.adapter.selection == "mmr" and train and run.adapter.max_train_instances:
        from holistic.adaptation.embedding import embedder_choice

        execution["mmr_embedder"] = embedder_choice([t.input for t in train])
    writer.write_json(
        ARTIFACTS_FILE,
        {"execution": execution, "metrics": scored.artifacts},
    )
    return _finish(
        run,
        writer,
        progress,
        served,
        judged,
        instances=len(evaluation),
        warnings=tuple(warnings),
        headline=Headline.pick(stats_table.to_pylist(), info.main_metric),
        cost_usd=execution["cost_usd"],
    )

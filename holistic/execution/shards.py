"""Turn a run's values (instances, request states, stats) into Arrow tables.

Column layout and meaning: :mod:`holistic.results.schemas`. Every table is built
with its explicit schema, so empty or all-null columns keep their types and a
suite's shards always read as one dataset.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from holistic.core.hashing import canonical_json
from holistic.core.interfaces import MetricInfo
from holistic.core.judges import JudgeSpec
from holistic.core.types import Instance, PerInstanceStat, Request, RequestResult, RequestState, RunSpec, Stat, Token
from holistic.results.references import reference_row
from holistic.results.schemas import (
    ANNOTATIONS_TABLE,
    INSTANCES_TABLE,
    PER_INSTANCE_STATS_TABLE,
    REQUESTS_TABLE,
    STATS_TABLE,
    table_from_rows,
)


@dataclass(frozen=True)
class JoinKeys:
    """The values of the join columns shared by every row of one run."""

    suite: str
    run_id: str
    run_name: str
    scenario: str
    scenario_args: str
    model: str
    method: str

    @staticmethod
    def of(suite: str, run: RunSpec) -> JoinKeys:
        return JoinKeys(
            suite=suite,
            run_id=run.run_id,
            run_name=run.name,
            scenario=run.scenario.name,
            scenario_args=canonical_json(dict(run.scenario.args)),
            model=run.model,
            method=run.adapter.method,
        )

    def row(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _table(name: str, rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    return table_from_rows(name, rows)


def _tokens(tokens: Iterable[Token]) -> list[dict[str, Any]]:
    return [
        {"text": t.text, "logprob": float(t.logprob), "top_logprobs": list(t.top_logprobs.items()) or None}
        for t in tokens
    ]


def instances_table(keys: JoinKeys, eval_instances: Sequence[Instance], train_used: Sequence[Instance]) -> pa.Table:
    rows = []
    for role, instances in (("eval", eval_instances), ("train", train_used)):
        for inst in instances:
            pert = inst.perturbation
            rows.append(
                {
                    **keys.row(),
                    "instance_id": inst.id,
                    "role": role,
                    "split": inst.split,
                    "sub_split": inst.sub_split,
                    "perturbation": pert.name if pert else None,
                    "perturbation_args": canonical_json(dict(pert.args)) if pert else None,
                    "robustness": bool(pert and pert.robustness),
                    "fairness": bool(pert and pert.fairness),
                    "input": inst.input,
                    "references": [reference_row(r) for r in inst.references],
                    "continuation": inst.continuation,
                    "metadata": canonical_json(dict(inst.metadata)),
                }
            )
    return _table(INSTANCES_TABLE, rows)


def _request_place(state: RequestState) -> dict[str, Any]:
    """The columns naming which request a row is about (:data:`~holistic.results.schemas.REQUEST_PLACE`)."""
    inst = state.instance
    return {
        "instance_id": inst.id,
        "split": inst.split,
        "sub_split": inst.sub_split,
        "perturbation": inst.perturbation.name if inst.perturbation else None,
        "trial": state.trial,
        "request_index": state.request_index,
    }


def requests_table(keys: JoinKeys, states: Sequence[RequestState], cache_keys: Sequence[str]) -> pa.Table:
    rows = []
    for state, key in zip(states, cache_keys, strict=True):
        req, res = state.request, state.result
        first = res.completions[0] if res is not None and res.completions else None
        rows.append(
            {
                **keys.row(),
                **_request_place(state),
                "reference_index": state.reference_index,
                "role": state.role,
                "kind": req.kind,
                "prompt": req.text,
                "messages": None
                if req.messages is None
                else [{"role": m.role, "content": m.content} for m in req.messages],
                "continuation": req.continuation,
                "max_tokens": req.max_tokens,
                "temperature": float(req.temperature),
                "stop": list(req.stop),
                "num_completions": req.num_completions,
                "top_k_logprobs": req.top_k_logprobs,
                "trial_tag": req.trial_tag,
                "train_ids": list(state.train_ids),
                "num_train_instances": state.num_train_instances,
                "prompt_truncated": state.prompt_truncated,
                "output_mapping": None if state.output_mapping is None else list(state.output_mapping.items()),
                "success": bool(res is not None and res.success),
                "error": "no result" if res is None else res.error,
                "error_kind": None if res is None else res.error_kind,
                "completion": first.text if first is not None else None,
                "logprob": float(first.logprob) if first is not None else None,
                "tokens": _tokens(first.tokens) if first is not None else [],
                "completions": [
                    {
                        "text": c.text,
                        "logprob": float(c.logprob),
                        "finish_reason": c.finish_reason,
                        "is_greedy": c.is_greedy,
                        "num_tokens": len(c.tokens),
                    }
                    for c in (res.completions if res is not None else ())
                ],
                "post_processed": None if state.post_processed is None else list(state.post_processed),
                "parse_error": state.parse_error,
                "prompt_logprobs": None if res is None or res.prompt_logprobs is None else _tokens(res.prompt_logprobs),
                "has_logprobs": bool(res is not None and res.has_logprobs),
                "prompt_tokens": res.prompt_tokens if res is not None else 0,
                "completion_tokens": res.completion_tokens if res is not None else 0,
                **reasoning_columns(req, res),
                "latency_s": float(res.latency_s) if res is not None else 0.0,
                "cached": bool(res is not None and res.cached),
                "attempts": res.attempts if res is not None else 0,
                "cost_usd": float(res.cost_usd) if res is not None else 0.0,
                "batch": bool(res is not None and res.batch),
                "engine": res.engine if res is not None else "",
                "cache_key": key,
            }
        )
    return _table(REQUESTS_TABLE, rows)


REASONING_COLUMNS = (
    "reasoning",
    "reasoning_tokens",
    "reasoning_unfinished",
    "reasoning_note",
    "reasoning_effort",
    "reasoning_budget",
    "reasoning_reported",
)


def reasoning_columns(req: Request, res: RequestResult | None) -> dict[str, Any]:
    """The ``reasoning*`` columns of one request (:mod:`holistic.models.reasoning`): null throughout for a
    request that asked no reasoning setting and got no thought back."""
    first = res.completions[0] if res is not None and res.completions else None
    asked = req.reasoning_effort is not None or req.reasoning_budget is not None
    thought = res is not None and (res.reasoning_tokens > 0 or any(c.reasoning is not None for c in res.completions))
    if not asked and not thought and not (first is not None and first.reasoning_unfinished):
        return dict.fromkeys(REASONING_COLUMNS)
    return {
        "reasoning": first.reasoning if first is not None else None,
        "reasoning_tokens": res.reasoning_tokens if res is not None else 0,
        "reasoning_unfinished": bool(first is not None and first.reasoning_unfinished),
        "reasoning_note": first.reasoning_note if first is not None else None,
        "reasoning_effort": req.reasoning_effort,
        "reasoning_budget": req.reasoning_budget,
        "reasoning_reported": res.reasoning_reported if res is not None else None,
    }


def annotations_table(keys: JoinKeys, states: Sequence[RequestState], judges: Sequence[JudgeSpec]) -> pa.Table:
    """One row per judged request and judge: the verdict with the judge, prompt version and rule."""
    rules = {j.label: canonical_json(j.rule.canonical()) for j in judges}
    rows = []
    for state in states:
        for a in state.annotations:
            rows.append(
                {
                    **keys.row(),
                    **_request_place(state),
                    "judge": a.judge,
                    "judge_model": a.model,
                    "prompt_sha256": a.prompt_hash,
                    "rule": rules.get(a.judge, ""),
                    "rule_sha256": a.rule_hash,
                    "status": a.status,
                    "score": a.score,
                    "fields": canonical_json(dict(a.fields)) if a.ok else None,
                    "prompt": a.prompt,
                    "verdict": a.verdict,
                    "attempts": a.attempts,
                    "error": a.error,
                    "cached": a.cached,
                    "cache_key": a.cache_key,
                    "cost_usd": a.cost_usd or None,
                    "batch": a.batch,
                }
            )
    return _table(ANNOTATIONS_TABLE, rows)


def per_instance_stats_table(keys: JoinKeys, values: Sequence[PerInstanceStat]) -> pa.Table:
    rows = [
        {
            **keys.row(),
            "instance_id": v.instance_id,
            "trial": v.trial,
            "metric": v.name.name,
            "split": v.name.split,
            "sub_split": v.name.sub_split,
            "perturbation": v.name.perturbation,
            "value": float(v.value),
            "details": canonical_json(v.details) if v.details is not None else None,
        }
        for v in values
    ]
    return _table(PER_INSTANCE_STATS_TABLE, rows)


def stats_table(keys: JoinKeys, stats: Sequence[Stat], infos: Mapping[str, MetricInfo] | None = None) -> pa.Table:
    infos = infos or {}
    rows = [
        {
            **keys.row(),
            "metric": s.name.name,
            "split": s.name.split,
            "sub_split": s.name.sub_split,
            "perturbation": s.name.perturbation,
            "count": s.count,
            "sum": float(s.sum),
            "sum_sq": float(s.sum_sq),
            "min": None if s.min is None else float(s.min),
            "max": None if s.max is None else float(s.max),
            "mean": s.mean,
            "stddev": s.stddev,
            "ci_low": s.ci_low,
            "ci_high": s.ci_high,
            "num_trials": s.num_trials,
            "trial_stddev": s.trial_stddev,
            "higher_is_better": infos[s.name.name].higher_is_better if s.name.name in infos else None,
            "category": infos[s.name.name].category if s.name.name in infos else None,
        }
        for s in stats
    ]
    return _table(STATS_TABLE, rows)

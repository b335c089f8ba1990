"""Chance and majority-class reference rows for the leaderboards.

A scenario column has a *finite label set* when its runs are multiple choice (each
instance's references are its choices) or classification (task ``classification``
in the run's scenario info: the labels are every reference output seen among the
evaluated instances). For such a column whose headline metric is an exact-match
metric, two strategies that ignore the input are scored on the very instances the
models were evaluated on:

- **chance** answers uniformly at random among the labels (the instance's choices):
  its expected accuracy on an instance is the share of labels that are correct;
- **majority** always gives the label most often correct among the evaluated
  instances (for multiple choice: the choice position most often correct) — the
  best constant answer, so a model below it has learnt nothing usable.

Robustness and fairness perturbations leave the labels unchanged, so a constant
answer has the same worst case: the same values stand in those leaderboards.
Baselines are reference rows: never ranked, never part of a win rate.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from holistic.results import SuiteReader
from holistic.summarize.load import EVAL_SPLIT_PREFERENCE, RunInfo, eval_references

EXACT_MATCH_METRICS = frozenset({"exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match"})
"""Headline metrics a constant or random label can be scored on."""

BASELINE_KINDS = ("chance", "majority")
BASELINE_NOTES = {
    "chance": "Reference row, not ranked: the expected accuracy of answering uniformly at random among the labels "
    "(for multiple choice, among each question's choices).",
    "majority": "Reference row, not ranked: always answering the label most often correct among the evaluated "
    "instances (for multiple choice, the most often correct choice position).",
}


@dataclass(frozen=True)
class BaselineScores:
    """One run's baselines and how they were obtained."""

    chance: float
    majority: float
    majority_label: str
    labels: int
    """Size of the label set (the largest number of choices, for multiple choice)."""
    instances: int


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def has_label_set(run: RunInfo) -> bool:
    task = (run.spec.get("scenario_info") or {}).get("task")
    return run.method.startswith("multiple_choice") or task in ("classification", "multiple_choice")


def score_references(instances: Sequence[Sequence[tuple[str, bool]]], multiple_choice: bool) -> BaselineScores | None:
    """Chance and majority accuracy over instances given as ``(output, correct)`` reference lists."""
    instances = [refs for refs in instances if any(ok for _, ok in refs) and (len(refs) > 1 or not multiple_choice)]
    if not instances:
        return None  # nothing to choose between
    if multiple_choice:
        chance = [sum(ok for _, ok in refs) / len(refs) for refs in instances]
        positions = Counter(i for refs in instances for i, (_, ok) in enumerate(refs) if ok)
        best, hits = min(positions.items(), key=lambda kv: (-kv[1], kv[0]))
        return BaselineScores(
            float(np.mean(chance)),
            hits / len(instances),
            f"choice {chr(ord('A') + best)}",
            max(len(refs) for refs in instances),
            len(instances),
        )
    labels = sorted({_norm(out) for refs in instances for out, _ in refs})
    if len(labels) < 2:
        return None
    correct = [{_norm(out) for out, ok in refs if ok} for refs in instances]
    counts = Counter(label for c in correct for label in c)
    label, hits = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    chance_values = [len(c) / len(labels) for c in correct]
    return BaselineScores(float(np.mean(chance_values)), hits / len(instances), label, len(labels), len(instances))


def run_baselines(suite: SuiteReader, run: RunInfo) -> BaselineScores | None:
    """The run's baselines on its evaluation split, or ``None`` without a finite label set."""
    if not has_label_set(run):
        return None
    by_split = eval_references(suite.run(run.run_id))
    split = next((s for s in EVAL_SPLIT_PREFERENCE if by_split.get(s)), None)
    if split is None:
        return None
    return score_references(by_split[split], run.method.startswith("multiple_choice"))


def column_baselines(
    suite: SuiteReader, runs: Iterable[RunInfo], cache: dict[str, BaselineScores | None] | None = None
) -> dict[str, tuple[float, str]] | None:
    """``kind -> (value, note)`` for a column: sub-runs macro-averaged like the models' cells.

    Runs of several systems on the same scenario arguments evaluate the same
    instances, so each distinct sub-run counts once. ``None`` when any sub-run has
    no finite label set. ``cache`` (run id -> scores) spares re-reading instances
    for the next leaderboard.
    """
    cache = {} if cache is None else cache
    seen: dict[str, BaselineScores] = {}
    for run in runs:
        key = json.dumps([run.scenario, run.scenario_args, run.method], sort_keys=True, default=str)
        if key in seen:
            continue
        if run.run_id not in cache:
            cache[run.run_id] = run_baselines(suite, run)
        scores = cache[run.run_id]
        if scores is None:
            return None
        seen[key] = scores
    if not seen:
        return None
    subs = list(seen.values())
    n = sum(s.instances for s in subs)
    detail = (
        f"{len(subs)} sub-runs"
        if len(subs) > 1
        else f"{subs[0].labels} labels, majority answer {subs[0].majority_label!r}"
    )
    return {
        "chance": (float(np.mean([s.chance for s in subs])), f"{detail}; {n} instances"),
        "majority": (float(np.mean([s.majority for s in subs])), f"{detail}; {n} instances"),
    }

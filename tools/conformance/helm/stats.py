"""The targets, the named exclusions, and the stats of both runs in one naming
(``name[split]{perturbation}``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tools.conformance.helm.keys import HELM_PERTURBATION_NAMES, SAMPLED

TARGET_AGREEMENT = 0.99
TARGET_DELTA = 0.005
"""The targets: every prompt identical, >= 99% of predictions the same, |delta| <= 0.005 per shared metric."""

EXCLUDED = {
    "ranking": "HELM's Hugging Face client gives every greedy completion of a local model log-probability 0 "
    "(see max_prob), so HELM orders the passages that got the same answer by their order in the instance, "
    "holistic by the model's log-probability of the answer; the ranking stats (RR, NDCG, Success, Recall) "
    "are compared instead on HELM's own answers scored by holistic's metric (rescored_abs_delta).",
    "max_prob": "HELM's Hugging Face client (not its protocol) returns log-probabilities after temperature "
    "scaling, and greedy decoding runs at temperature 1e-7, so every completion of a local model has "
    "log-probability 0 and max_prob 1 in HELM; holistic reports the model's own probability. The calibration "
    "stats built on it (ece_*, selective_*, platt_*) differ on local models for the same reason.",
}
"""Shared metrics not held to the target, each with its reason (reported with both values)."""
_CALIBRATION = ("ece_", "selective_", "platt_")
RANKING = ("RR@", "NDCG@", "Success@", "Recall@")


def metric_names(keys: Iterable[str]) -> list[str]:
    """The metric names of ``name[split]`` keys, timing aside."""
    return sorted({k.split("[")[0] for k in keys if not any(t in k for t in TIMING)})


POOLED = (
    "HELM pools a per-request stat over every request of the run (its run value is the sum over all "
    "requests divided by their number), holistic averages each instance's mean; on a ranking run, whose "
    "queries have different numbers of passages, the two differ slightly (a named deviation; the "
    "per-instance values are equal: tests/conformance/test_conformance_golden.py)."
)
EXCLUDED_FOR = {
    f"msmarco_{track}{run}": {"num_prompt_tokens": POOLED}
    for track in ("regular", "trec")
    for run in ("", "_robustness", "_fairness")
}
"""Shared metrics not held to the target on one scenario key, each with its reason."""

SAMPLED_REASON = (
    "the requests sample (HELM's summarization runs use temperature 0.3): HELM's Hugging Face client draws "
    "with torch's generator, holistic's engine with its own, so the completions and every stat computed from "
    "them differ by chance; the same runs at temperature 0 (the *_greedy keys) compare them"
)
_PROMPT_STATS = ("num_prompt_tokens",)
"""The stats of a sampled run that depend on the prompt alone, so still compared."""


def excluded_reason(key: str, scenario_key: str = "") -> str | None:
    """Why the shared metric ``key`` (``name[split]``) of ``scenario_key``'s run (a harness key) is not
    held to the target, or ``None`` when it is."""
    name = key.split("[")[0]
    # a worst case is HELM's per-instance minimum (a mean over instances, not pooled over requests)
    worst = key.endswith(("{robustness}", "{fairness}", ":worst}"))
    if name in EXCLUDED_FOR.get(scenario_key, {}) and not worst:
        return EXCLUDED_FOR[scenario_key][name]
    if scenario_key in SAMPLED and name not in _PROMPT_STATS:
        return SAMPLED_REASON
    if name in EXCLUDED:
        return EXCLUDED[name]
    if name.startswith(_CALIBRATION):
        return EXCLUDED["max_prob"]
    if name.startswith(RANKING):
        return EXCLUDED["ranking"]
    return None


TIMING = ("runtime", "co2", "energy", "batch_size", "request_time", "latency")
"""Stats that measure the machine, not the model's answers: never compared."""


def stat_key(name: str, split: str, sub_split: str | None, perturbation: str | None = None) -> str:
    """``name[split]``; ``name[split/sub_split]`` for a sub-split's stat (CivilComments'
    ``toxic`` and ``non-toxic``: HELM reports that scenario per sub-split only); then
    ``{perturbation}`` in holistic's naming for a perturbed or worst-case stat."""
    key = f"{name}[{split}/{sub_split}]" if sub_split else f"{name}[{split}]"
    return key + (f"{{{perturbation}}}" if perturbation else "")


def helm_perturbation(description: dict[str, Any] | None) -> str | None:
    """HELM's ``PerturbationDescription`` of a stat in holistic's naming: the family's worst case
    (``robustness``, ``fairness``), a perturbation's worst case (``<name>:worst``), its
    originals (``<name>:original``) or its variants (``<name>``)."""
    if not description:
        return None
    name, computed_on = description["name"], description.get("computed_on", "perturbed")
    name = HELM_PERTURBATION_NAMES.get(name, name)
    if computed_on == "worst":
        return name if name in ("robustness", "fairness") else f"{name}:worst"
    return f"{name}:original" if computed_on == "original" else name


def helm_run_stats(run_dir: Path) -> dict[str, float]:
    """:func:`stat_key` -> mean, over every evaluated split (MMLU's sample has both)."""
    out: dict[str, float] = {}
    for stat in json.loads((run_dir / "stats.json").read_text()):
        name = stat["name"]
        if stat.get("count", 0) == 0:
            continue
        if name.get("split") in ("valid", "test") and "mean" in stat:
            key = stat_key(
                name["name"], name["split"], name.get("sub_split"), helm_perturbation(name.get("perturbation"))
            )
            out.setdefault(key, stat["mean"])
    return out


def holistic_run_stats(run_dir: Path) -> dict[str, float]:
    import pyarrow.parquet as pq

    out: dict[str, float] = {}
    for row in pq.read_table(run_dir / "stats.parquet").to_pylist():
        if row.get("mean") is None:
            continue
        out.setdefault(
            stat_key(row["metric"], row["split"], row.get("sub_split"), row.get("perturbation")), row["mean"]
        )
    return out

"""Comparing HELM's run with holistic's: instances, prompts, request parameters, predictions and
every shared metric."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tools.conformance.helm.deviations import DEVIATIONS, NOT_COMPARED
from tools.conformance.helm.keys import (
    AUGMENTED,
    HELM_PERTURBATION_NAMES,
    HELM_SCENARIO_ARGS,
    MODEL,
    SAMPLED,
    base_key,
    helm_name,
)
from tools.conformance.helm.running import helm_cache_folder
from tools.conformance.helm.staging import holistic_instances
from tools.conformance.helm.stats import (
    SAMPLED_REASON,
    TARGET_AGREEMENT,
    TARGET_DELTA,
    TIMING,
    excluded_reason,
    helm_run_stats,
    holistic_run_stats,
    metric_names,
    stat_key,
)


def helm_states(run_dir: Path) -> list[dict[str, Any]]:
    """HELM's request states of a run, as its ``scenario_state.json`` lists them."""
    states: list[dict[str, Any]] = json.loads((run_dir / "scenario_state.json").read_text())["request_states"]
    return states


def helm_instance_ids(key: str, data_root: Path, states: list[dict[str, Any]]) -> dict[str, str]:
    """HELM instance id -> holistic id. HELM reads every scenario with its own loader and
    numbers the instances in its order (``id<n>``); they are matched by position in
    holistic's (:func:`compare_instances` checks that the two lists are the same)."""
    return {f"id{i}": inst.id for i, inst in enumerate(holistic_instances(key, data_root))}


def helm_cached_instances(out: Path, key: str) -> list[dict[str, Any]]:
    """Every instance HELM's loader made (``--cache-instances`` writes them), in HELM's order."""
    folder = helm_cache_folder(out, key)
    if folder is None:
        raise SystemExit(f"HELM cached no instances for {key} under {out / 'scenario_instances'}")
    data: list[dict[str, Any]] = json.loads((folder / "input_instances.json").read_text(encoding="utf-8"))
    return data


CORRECT_ONLY = ("boolq", "imdb", "raft", "civil_comments")
"""Scenarios whose HELM loader gives the correct reference only, where holistic lists every
label as a reference (neither prompts nor scores read the others): only the correct
references are compared for them."""


def helm_instance_rows(key: str, helm_instances: list[dict[str, Any]]) -> list[list[Any]]:
    """What HELM's loader decided per instance, in its order: [input, [[reference, correct]...], split]
    (for ranking each reference also with its relevance and first-stage rank: :func:`_ranking_row`)."""
    if helm_name(key) == "msmarco":
        return [_helm_ranking_row(key, i) for i in helm_instances]
    return [
        _row(
            key,
            i["input"]["text"],
            ((r["output"]["text"], "correct" in r.get("tags", [])) for r in i["references"]),
            i["split"],
        )
        for i in helm_instances
    ]


def _helm_ranking_row(key: str, instance: dict[str, Any]) -> list[Any]:
    """A ranking instance of HELM's: each passage with whether it is correct, its ``relevance=``
    tag and its ``rank=`` tag. HELM tags the rank of every listed passage; past the evaluated
    depth (``valid_topk``, 20 for training queries) the tag only keeps the passage out of HELM's
    ``(topk=N)`` stats, which holistic says by giving it no first-stage rank."""
    depth = HELM_SCENARIO_ARGS[base_key(key)]["valid_topk"] if instance["split"] != "train" else 20
    references = []
    for r in instance["references"]:
        tags = dict(t.split("=", 1) for t in r.get("tags", []) if "=" in t)
        rank = int(tags["rank"]) if "rank" in tags else None
        references.append(
            [
                r["output"]["text"],
                "correct" in r.get("tags", []),
                int(tags["relevance"]) if "relevance" in tags else None,
                rank if rank is not None and rank <= depth else None,
            ]
        )
    return [instance["input"]["text"], references, instance["split"]]


def holistic_instance_rows(key: str, instances: Iterable[Any]) -> list[list[Any]]:
    """:func:`helm_instance_rows` of holistic's instances."""
    if helm_name(key) == "msmarco":
        return [
            [i.input, [[r.output, r.is_correct, r.relevance, r.first_stage_rank] for r in i.references], i.split]
            for i in instances
        ]
    return [_row(key, i.input, ((r.output, r.is_correct) for r in i.references), i.split) for i in instances]


def _row(key: str, text: str, references: Iterable[tuple[str, bool]], split: str) -> list[Any]:
    return [text, [[t, c] for t, c in references if c or base_key(key) not in CORRECT_ONLY], split]


def instances_digest(rows: list[list[Any]]) -> str:
    """The sha256 of instance rows (UTF-8 JSON), which the golden files keep instead of every instance."""
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8")).hexdigest()


def compare_instances(key: str, helm_instances: list[dict[str, Any]], data_root: Path) -> dict[str, Any]:
    """HELM's loader's instances against holistic's, position by position: the input, the
    references (text and whether correct, in order) and the split."""
    theirs = helm_instance_rows(key, helm_instances)
    ours = holistic_instance_rows(key, holistic_instances(key, data_root))
    same = sum(a == b for a, b in zip(theirs, ours, strict=False))
    first = next((i for i, (a, b) in enumerate(zip(theirs, ours, strict=False)) if a != b), None)
    return {
        "helm": len(theirs),
        "holistic": len(ours),
        "identical": same,
        "first_difference": None
        if first is None
        else {"position": first, "helm": theirs[first], "holistic": ours[first]},
    }


Place = tuple[str, int, int | None, str, str | None]


def _helm_key(state: dict[str, Any], instance_id: str) -> Place:
    """A HELM request state's place: instance, trial, for separate scoring the choice and
    whether it is the calibration request (``request_mode``), and the perturbation of the
    instance (``None``: the original)."""
    mode = state.get("request_mode") or "original"
    perturbation = (state["instance"].get("perturbation") or {}).get("name")
    perturbation = HELM_PERTURBATION_NAMES.get(perturbation, perturbation) if perturbation else None
    return (instance_id, state["train_trial_index"], state.get("reference_index"), ROLES.get(mode, mode), perturbation)


def _our_key(row: dict[str, Any]) -> Place:
    """:func:`_helm_key` of one of holistic's request rows. A perturbation with a named deviation
    (``person_names~holistic_names``) is matched by its name: HELM was given the same data
    (holistic's name lists in HELM's file format), so its prompts are compared; its stats,
    named with the tag, never carry HELM's names and are not."""
    perturbation = row["perturbation"].split("~")[0] if row["perturbation"] else None
    return (row["instance_id"], row["trial"], row["reference_index"], row["role"], perturbation)


ROLES = {"original": "main", "calibration": "calibration"}
"""HELM's ``request_mode`` -> holistic's request ``role``."""


def sent_text(row: dict[str, Any]) -> str:
    """The text holistic's request puts before the model as HELM's ``prompt`` holds it: the
    prompt, and for a log-likelihood request the scored continuation after it (HELM sends
    both as one echoed prompt)."""
    return str(row["prompt"]) + (str(row["continuation"] or "") if row["kind"] == "loglikelihood" else "")


def prediction_agreement(
    states: list[dict[str, Any]],
    ours: dict[Place, dict[str, Any]],
    id_map: dict[str, str],
    helm_dir: Path,
    ours_dir: Path,
) -> tuple[int, int]:
    """(agreeing, compared) predictions: per generated request its completion; per instance
    scored choice by choice (separate methods) the choice picked (``predicted_index``)."""
    # a generated answer: one per instance, or per passage (ranking: a reference_index, no echo)
    generated = [s for s in states if s.get("reference_index") is None or not s["request"].get("echo_prompt")]
    agree = 0
    for s in generated:
        hid = id_map.get(s["instance"]["id"], s["instance"]["id"])
        row = ours.get(_helm_key(s, hid))
        helm_text = s["result"]["completions"][0]["text"].strip() if s.get("result") else None
        agree += row is not None and (row["completion"] or "").strip() == helm_text
    if len(generated) == len(states):
        return agree, len(states)
    import pyarrow.parquet as pq

    theirs = {
        (id_map.get(p["instance_id"], p["instance_id"]), p.get("train_trial_index", 0)): st["mean"]
        for p in json.loads((helm_dir / "per_instance_stats.json").read_text())
        for st in p["stats"]
        if st["name"]["name"] == "predicted_index" and not st["name"].get("perturbation")
    }
    mine = {
        (r["instance_id"], r["trial"]): r["value"]
        for r in pq.read_table(ours_dir / "per_instance_stats.parquet").to_pylist()
        if r["metric"] == "predicted_index" and not r["perturbation"]
    }
    return sum(mine.get(k) == v for k, v in theirs.items()), len(theirs)


def compare(key: str, helm_dir: Path, ours_dir: Path, data_root: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    states = helm_states(helm_dir)
    id_map = helm_instance_ids(key, data_root, states)
    ours = {_our_key(r): r for r in pq.read_table(ours_dir / "requests.parquet").to_pylist()}
    instances = compare_instances(key, helm_cached_instances(helm_dir.parents[2], key), data_root)
    prompts = params = 0
    missing = []
    for s in states:
        hid = id_map.get(s["instance"]["id"], s["instance"]["id"])
        row = ours.get(_helm_key(s, hid))
        if row is None:
            missing.append(hid)
            continue
        req = s["request"]
        prompts += sent_text(row) == req["prompt"]
        params += (row["max_tokens"], row["temperature"], list(row["stop"]), row["num_completions"]) == (
            req["max_tokens"],
            req["temperature"],
            list(req.get("stop_sequences", [])),
            req["num_completions"],
        )
    agree, predictions = prediction_agreement(states, ours, id_map, helm_dir, ours_dir)
    helm_stats = helm_run_stats(helm_dir)
    our_stats = holistic_run_stats(ours_dir)
    shared = [n for n in sorted(helm_stats) if n in our_stats and not any(t in n for t in TIMING)]
    deltas = {name: abs(helm_stats[name] - our_stats[name]) for name in shared if excluded_reason(name, key) is None}
    excluded = {
        name: {
            "helm": helm_stats[name],
            "holistic": our_stats[name],
            "abs_delta": abs(helm_stats[name] - our_stats[name]),
            "reason": excluded_reason(name, key),
        }
        for name in shared
        if excluded_reason(name, key) is not None
    }
    rescored = rescored_ranking(key, states, id_map, helm_stats, data_root) if helm_name(key) == "msmarco" else None
    n = len(states)
    met = {
        "prompts_identical": prompts == n,
        # sampled completions are each tool's own draw (SAMPLED_REASON): reported, not a target
        "prediction_agreement": key in SAMPLED or agree >= TARGET_AGREEMENT * predictions,
        "metric_abs_delta": all(d <= TARGET_DELTA for d in deltas.values()),
        "same_sample": not missing,
        "same_instances": instances["identical"] == instances["helm"] == instances["holistic"],
    }
    if rescored is not None:
        met["rescored_abs_delta"] = all(d <= TARGET_DELTA for d in rescored.values())
    return {
        "scenario": key,
        "instances": n,
        "same_sample": not missing,
        "missing_in_holistic": missing,
        "loader": instances,
        "deviations": DEVIATIONS.get(base_key(key), []),
        "not_compared": NOT_COMPARED.get(base_key(key), []),
        "prompts_identical": prompts,
        "request_params_identical": params,
        "prediction_agreement": agree,
        "predictions": predictions,
        "prediction_agreement_excluded": SAMPLED_REASON if key in SAMPLED else None,
        "metric_abs_delta": deltas,
        "excluded_metrics": excluded,
        # Ranking: HELM's own answers scored by holistic's ranking metric, against HELM's stats.
        **({"rescored_abs_delta": rescored} if rescored is not None else {}),
        # Reported by one side only, so never compared (e.g. HELM's request counts and finish
        # reasons; holistic's calibration stats where HELM's run spec has none).
        "helm_only": metric_names(n for n in helm_stats if n not in our_stats),
        "holistic_only": metric_names(n for n in our_stats if n not in helm_stats),
        "targets_met": met,
        "helm": {k: helm_stats[k] for k in deltas},
        "holistic": {k: our_stats[k] for k in deltas},
    }


def rescored_ranking(
    key: str, states: list[dict[str, Any]], id_map: dict[str, str], helm_stats: dict[str, float], data_root: Path
) -> dict[str, float]:
    """|delta| of every ranking stat HELM reports against holistic's ranking metric scoring
    HELM's own answers (text and log-probability) on holistic's instances: the ranking itself
    compared without the log-probabilities of HELM's local client (see :data:`EXCLUDED`). On an
    :data:`AUGMENTED` key a perturbed state scores holistic's instance tagged as holistic's
    variant (the perturbation rewrites no relevance or rank), and the worst cases are holistic's."""
    from dataclasses import replace

    from holistic.core.interfaces import MetricContext
    from holistic.core.types import Completion, PerturbationSpec, Request, RequestResult, RequestState, Token
    from holistic.metrics.ranking import RankingMetric
    from holistic.metrics.stats import with_worst_case
    from holistic.models.registry import ModelRegistry
    from holistic.perturbations.base import TextPerturbation
    from holistic.perturbations.registry import create_perturbation

    ours = {i.id: i for i in holistic_instances(key, data_root)}
    described = {
        spec["name"]: create_perturbation(PerturbationSpec.make(spec["name"], spec.get("args", {})), helm=True)
        for spec in AUGMENTED.get(key, ("", [], []))[1]
    }
    built = []
    for index, s in enumerate(states):
        instance = ours[id_map[s["instance"]["id"]]]
        if s["instance"].get("perturbation"):
            name = HELM_PERTURBATION_NAMES[s["instance"]["perturbation"]["name"]]
            perturbation = described[name]
            assert isinstance(perturbation, TextPerturbation), perturbation  # HELM's are all text perturbations
            instance = replace(instance, perturbation=perturbation.description())
        completions = tuple(
            Completion(c["text"], c["logprob"], tuple(Token(t["text"], t["logprob"]) for t in c.get("tokens", [])))
            for c in s["result"]["completions"]
        )
        built.append(
            RequestState(
                instance=instance,
                request=Request(model=MODEL, prompt=s["request"]["prompt"]),
                trial=s["train_trial_index"],
                reference_index=s["reference_index"],
                request_index=index,
                result=RequestResult(success=True, completions=completions, has_logprobs=True),
            )
        )
    deployment = ModelRegistry().get(MODEL)
    from holistic.spec.catalog import Catalog

    ctx = MetricContext(run_id="rescored", deployment=deployment, scenario_info=Catalog().scenario_info("msmarco"))
    values: dict[str, list[float]] = {}
    scored = RankingMetric().evaluate(built, ctx).per_instance
    for stat in with_worst_case(scored, [b.instance for b in built]):
        stat_name = stat.name
        values.setdefault(stat_key(stat_name.name, stat_name.split, None, stat_name.perturbation), []).append(
            stat.value
        )
    return {name: abs(helm_stats[name] - sum(v) / len(v)) for name, v in sorted(values.items()) if name in helm_stats}

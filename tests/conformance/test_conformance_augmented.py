"""holistic's perturbed stats and worst cases against HELM's own, without installing HELM.

Each ``tests/conformance/augmented/<key>.json.gz`` holds one of HELM's runs with
``data_augmentation=robustness``, ``=fairness``, ``=canonical`` (both in one run) or one of
HELM's single perturbations (``=typo_easy``, ``=lower``, ...) on holistic's embedded model, written by
``python -m tools.conformance.helm --golden`` (crfm-helm 0.5.16): every request state of the
run (the originals and their variants, with HELM's completions), HELM's per-instance stats
of each original and variant, and its run's stats: the variants' (``computed_on=perturbed``),
their originals' (``computed_on=original``), the worst case per perturbation
(``computed_on=worst``) and the ``robustness`` / ``fairness`` worst cases. The tests score
HELM's completions with holistic's metrics and aggregate them as a holistic run does under
``protocol: helm`` (worst cases included), and compare every stat both report. On MS MARCO
every passage's request is a state of its query, so holistic's ranking metric ranks each
query's passages (original and variant apart) over all their answers, as HELM's does.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from holistic.core.interfaces import MetricContext
from holistic.core.types import (
    Instance,
    PerturbationDescription,
    PerturbationSpec,
    Reference,
    RequestState,
    ScenarioSpec,
)
from holistic.models.registry import ModelRegistry
from tests.conformance.test_conformance_golden import _embedded_tokenizer, golden_request_state, golden_run
from tools.conformance.helm import keys as harness_keys
from tools.conformance.helm import staging, stats

HERE = Path(__file__).resolve().parent
GOLDEN = sorted((HERE / "augmented").glob("*.json.gz"))
MODEL = "embedded/smollm2-135m-instruct"
ABS = 1e-9


@cache
def _load(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def _descriptions(golden: dict[str, Any]) -> dict[str, PerturbationDescription]:
    """HELM's perturbation name -> the description holistic gives its variants of it (under
    ``protocol: helm``; a named deviation's name carries its tag and counts toward no worst case)."""
    from holistic.helm.perturbations.base import HelmPerturbation
    from holistic.perturbations.registry import create_perturbation

    ours = {}
    for raw in golden["holistic_perturbations"]:
        made = create_perturbation(PerturbationSpec.make(raw["name"], raw.get("args", {})), helm=True)
        assert isinstance(made, HelmPerturbation), raw  # HELM's algorithm under protocol: helm
        ours[made.description().name.split("~")[0]] = made.description()
    return {helm: ours[name] for helm, name in harness_keys.HELM_PERTURBATION_NAMES.items() if name in ours}


def _instance(raw: dict[str, Any], descriptions: dict[str, PerturbationDescription]) -> Instance:
    perturbation = raw.get("perturbation")
    return Instance(
        id=raw["id"],
        input=raw["input"],
        references=tuple(Reference(text, tuple(tags)) for text, tags in raw["references"]),
        split=raw["split"],
        sub_split=raw.get("sub_split"),
        perturbation=descriptions[perturbation["name"]] if perturbation else None,
    )


def _ranking_instances(golden: dict[str, Any], folder: Path) -> dict[str, Instance]:
    """For a ranking golden, holistic's own instances by id (their passages' grades and first-stage
    ranks, which HELM keeps in its tags), loaded from the files the harness writes for HELM's
    loader; ``{}`` for any other golden."""
    if golden["adapter_spec"]["method"] != "ranking_binary":
        return {}
    key = golden["unperturbed_key"]
    instances = staging.holistic_instances(key, staging.scenario_data_root(key, folder, folder))
    return {i.id: i for i in instances}


def _states(golden: dict[str, Any], folder: Path) -> tuple[list[RequestState], list[Instance]]:
    """HELM's request states as holistic's, answered with HELM's completions, and the run's
    instances (each original and variant once, originals first). On a ranking run every passage's
    request is a state of its query's instance (holistic's, carrying the passages' grades), so
    holistic's ranking metric ranks a query's passages, original and variant apart, as HELM's does."""
    descriptions = _descriptions(golden)
    own = _ranking_instances(golden, folder)
    instances: dict[tuple[str, str | None], Instance] = {}
    tokenizer = None
    states = []
    for index, helm in enumerate(golden["request_states"]):
        inst = _instance(helm["instance"], descriptions)
        if inst.id in own:  # the query's text as HELM's variant has it, the passages holistic's
            inst = replace(own[inst.id], input=inst.input, perturbation=inst.perturbation)
        inst = instances.setdefault((inst.id, inst.perturbation.name if inst.perturbation else None), inst)
        state = golden_request_state(helm, inst, index)
        if state.request.kind == "generate" and state.result is not None:
            # holistic's engine counts a generated request's prompt with the model's tokenizer
            tokenizer = tokenizer or _embedded_tokenizer()
            state = replace(state, result=replace(state.result, prompt_tokens=tokenizer.count(helm["prompt"])))
        states.append(state)
    ordered = sorted(instances.values(), key=lambda i: i.perturbation is not None)
    return states, ordered


@cache
def _scored(path: Path) -> Any:
    """holistic's per-instance values and run stats of HELM's completions, as a run scores them
    (once per golden file: both tests read them)."""
    from holistic.execution.pipeline import _score, with_headline
    from holistic.metrics.registry import select_metrics
    from holistic.scenarios.registry import create_scenario

    golden = _load(path)
    with tempfile.TemporaryDirectory() as folder:
        fields = {"metrics": golden["metrics"], "perturbations": golden["holistic_perturbations"]}
        run = golden_run(golden, Path(folder), **fields)
        states, instances = _states(golden, Path(folder))
    deployment = ModelRegistry().get(MODEL)
    scenario = create_scenario(ScenarioSpec.make(golden["scenario"], golden["args"]))
    info = with_headline(scenario.info, run.adapter)
    metrics = select_metrics(run.metrics, info, run.adapter, deployment).metrics
    ctx = MetricContext(run_id="golden", deployment=deployment, scenario_info=info)
    return _score(run, states, metrics, ctx, instances)


CASES = [pytest.param(path, id=path.name.removesuffix(".json.gz")) for path in GOLDEN]


def test_golden_files_exist() -> None:
    """One per key the harness runs with HELM's ``data_augmentation``: robustness, fairness and
    both in one run (``canonical``, HELM's core entries' setting) on every core scenario it runs
    (generation, joint and separate multiple choice, classification, ranking), summarization at
    temperature 0 perturbed, and each single perturbation HELM names on MMLU and BoolQ."""
    keys = {path.name.removesuffix(".json.gz") for path in GOLDEN}
    for scenario in ("mmlu", "boolq", "narrative_qa", "hellaswag", "imdb", "msmarco_regular", "msmarco_trec"):
        assert {f"{scenario}_{run}" for run in ("robustness", "fairness", "canonical")} <= keys
    assert {f"{s}_greedy_{run}" for s in ("cnn_dailymail", "xsum") for run in ("robustness", "fairness")} <= keys
    singles = {"misspelling_medium", "typo_easy", "lower", "space", "dialect_deterministic"}
    assert {f"{s}_{single}" for s in ("mmlu", "boolq") for single in singles} <= keys
    assert {"boolq_contract", "boolq_gender_terms_deterministic", "boolq_gender_pronouns_deterministic"} <= keys
    assert keys == set(harness_keys.AUGMENTED)


@pytest.mark.parametrize("path", CASES)
def test_per_instance_stats_of_originals_and_variants_are_helms(path: Path) -> None:
    """holistic's metrics on HELM's completions give HELM's per-instance stats, on each original
    and each of its variants (a variant of a named deviation aside: its name is not HELM's)."""
    golden = _load(path)
    scored = _scored(path)
    ours = {
        (s.instance_id, s.trial, s.name.perturbation, s.name.name): s.value
        for s in scored.per_instance
        if not s.name.perturbation or "~" not in s.name.perturbation
    }
    compared = 0
    perturbed = 0
    for entry in golden["per_instance_stats"]:
        for name, value in entry["stats"].items():
            place = (entry["id"], entry["trial"], entry["perturbation"], name)
            if place not in ours:
                continue
            assert ours[place] == pytest.approx(value, abs=ABS), place
            compared += 1
            perturbed += entry["perturbation"] is not None
    assert compared >= 2 * len(golden["per_instance_stats"])
    assert perturbed > 0


@pytest.mark.parametrize("path", CASES)
def test_run_stats_and_worst_cases_are_helms(path: Path) -> None:
    """holistic's run stats of HELM's completions, aggregated under ``protocol: helm``, are HELM's:
    the variants', their originals' (``P:original``), the worst case per perturbation
    (``P:worst``) and the ``robustness`` / ``fairness`` worst cases, for every stat both report; on
    MS MARCO every ranking stat HELM reports (its first-stage ``topk`` ones too), worst cases included."""
    golden = _load(path)
    scored = _scored(path)
    ours = {
        stats.stat_key(s.name.name, s.name.split, s.name.sub_split, s.name.perturbation): s.mean
        for s in scored.stats
        if s.mean is not None
    }
    shared = [k for k in golden["stats"] if k in ours]
    for key in shared:
        assert ours[key] == pytest.approx(golden["stats"][key], abs=ABS), key
    for family in {"robustness", "fairness"} & set(golden["metrics"]):
        worst = [k for k in shared if k.endswith(f"{{{family}}}")]
        assert worst, f"no {family} worst case compared"
    assert any(k.endswith(":worst}") for k in shared) and any(k.endswith(":original}") for k in shared)
    if golden["adapter_spec"]["method"] == "ranking_binary":  # each query ranked over all its passages
        ranking = [k for k in golden["stats"] if k.startswith(stats.RANKING)]
        assert ranking and all(k in ours for k in ranking), sorted(set(ranking) - set(ours))

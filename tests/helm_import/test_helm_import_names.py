"""Which HELM scenario classes helm-import files under a holistic scenario: the HELM layer's
counterpart records (and plugins' declarations), checked against the scenario and HELM's source."""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from holistic.core.registry import RegistrationError, Registry
from holistic.helm import proofs
from holistic.helm.imports.names import helm_scenarios, scenario_name_and_args, stat_info
from holistic.helm.proofs import HelmCounterpart
from holistic.plugin import TEST_SPLIT, BaseScenario, Instance, ScenarioContext, ScenarioInfo
from holistic.scenarios import registry

HELM = "helm.benchmark.scenarios."


def test_the_builtin_scenarios_declare_the_helm_classes_they_reproduce() -> None:
    assert {cls: name for cls, (name, _) in helm_scenarios().items()} == {
        HELM + "mmlu_scenario.MMLUScenario": "mmlu",
        HELM + "synthetic_reasoning_natural_scenario.SRNScenario": "synthetic_reasoning_natural",
        HELM + "boolq_scenario.BoolQScenario": "boolq",
        HELM + "imdb_scenario.IMDBScenario": "imdb",
        HELM + "raft_scenario.RAFTScenario": "raft",
        HELM + "gsm_scenario.GSM8KScenario": "gsm8k",
        HELM + "babi_qa_scenario.BabiQAScenario": "babi_qa",
        HELM + "dyck_language_scenario.DyckLanguageScenario": "dyck_language",
        HELM + "msmarco_scenario.MSMARCOScenario": "msmarco",
        HELM + "arabic_exams_scenario.ArabicEXAMSScenario": "arabic_exams",
        HELM + "exams_multilingual_scenario.EXAMSMultilingualScenario": "exams_multilingual",
        HELM + "legalbench_scenario.LegalBenchScenario": "legalbench",
        HELM + "med_qa_scenario.MedQAScenario": "med_qa",
    }


def test_helm_arguments_become_the_scenarios_own() -> None:
    assert scenario_name_and_args(HELM + "mmlu_scenario.MMLUScenario", {"subject": "anatomy"}) == (
        "mmlu",
        {"subject": "anatomy"},
        True,
    )
    # a dropped default disappears; any other value of it is kept under HELM's name, unmapped
    assert scenario_name_and_args(HELM + "imdb_scenario.IMDBScenario", {"only_contrast": False}) == ("imdb", {}, True)
    assert scenario_name_and_args(HELM + "imdb_scenario.IMDBScenario", {"only_contrast": True}) == (
        "imdb",
        {"only_contrast": True},
        False,
    )
    assert scenario_name_and_args(HELM + "quac_scenario.QuACScenario", {"x": 1}) == (
        "helm:QuACScenario",
        {"x": 1},
        False,
    )


@pytest.mark.parametrize("helm_class", sorted(helm_scenarios()))
def test_each_mapped_argument_is_one_the_scenario_takes(helm_class: str) -> None:
    name, counterpart = helm_scenarios()[helm_class]
    properties = registry.SCENARIOS.get(name).args_schema()["properties"]
    assert set(counterpart.args.values()) <= set(properties), f"{name}: {sorted(properties)}"
    assert not set(counterpart.args) & set(counterpart.defaults_dropped)


def _helm_scenarios_source() -> Path:
    venv = Path(os.environ.get("HOLISTIC_HELM_VENV", Path.home() / ".cache" / "holistic" / "peers" / "helm"))
    found = sorted(venv.glob("lib/python*/site-packages/helm/benchmark/scenarios"))
    if not found:
        pytest.skip(f"HELM's source is not installed under {venv} (python -m tools.conformance.helm installs it)")
    return found[0]


def _init_parameters(source: Path, class_path: str) -> dict[str, Any]:
    """Parameter -> default (``...`` for none) of the class's ``__init__`` in HELM's source."""
    module, _, class_name = class_path.removeprefix(HELM).rpartition(".")
    tree = ast.parse((source / f"{module}.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None:  # HELM's Scenario.__init__ takes no arguments
        return {}
    params = init.args.args[1:]
    defaults: list[Any] = [...] * (len(params) - len(init.args.defaults))
    defaults += [ast.literal_eval(d) for d in init.args.defaults]
    return {p.arg: d for p, d in zip(params, defaults, strict=True)}


@pytest.mark.needs_peer
@pytest.mark.parametrize("helm_class", sorted(helm_scenarios()))
def test_each_declaration_matches_helms_own_class(helm_class: str) -> None:
    source = _helm_scenarios_source()
    _, counterpart = helm_scenarios()[helm_class]
    parameters = _init_parameters(source, helm_class)
    assert set(counterpart.args) <= set(parameters)
    for arg, value in counterpart.defaults_dropped.items():
        assert parameters.get(arg) == value, f"{helm_class}: {arg} defaults to {parameters.get(arg)!r} in HELM"


@dataclass(frozen=True, kw_only=True)
class _Plugin(BaseScenario):
    info = ScenarioInfo(name="my_quac")
    turns: int = 3

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        return [Instance(id="0", input="a question", split=TEST_SPLIT)]


def _registry_with(monkeypatch: pytest.MonkeyPatch, **extra: type[BaseScenario]) -> None:
    scenarios: Registry[type[BaseScenario]] = Registry.of_extensions(
        "scenario", BaseScenario, registry.BUILTIN_SCENARIOS
    )
    monkeypatch.setattr(proofs, "_DECLARED", {})
    for name, cls in extra.items():
        scenarios.add(name, cls)
        # what a plugin's module does when it is imported
        proofs.declare_counterpart(
            name, HelmCounterpart(HELM + "quac_scenario.QuACScenario", args={"num_turns": "turns"})
        )
    monkeypatch.setattr(registry, "SCENARIOS", scenarios)


def test_a_plugin_scenario_declares_its_helm_counterpart(monkeypatch: pytest.MonkeyPatch) -> None:
    _registry_with(monkeypatch, my_quac=_Plugin)
    assert scenario_name_and_args(HELM + "quac_scenario.QuACScenario", {"num_turns": 3}) == (
        "my_quac",
        {"turns": 3},
        True,
    )


def test_two_scenarios_cannot_claim_one_helm_class(monkeypatch: pytest.MonkeyPatch) -> None:
    _registry_with(monkeypatch, my_quac=_Plugin, my_other_quac=_Plugin)
    with pytest.raises(RegistrationError, match=r"'my_other_quac' and 'my_quac'|'my_quac' and 'my_other_quac'"):
        helm_scenarios()


def test_ms_marco_stats_of_a_helm_run_are_known() -> None:
    """HELM's MS MARCO runs report its ranking stats (with and without the top-k cut) and each
    passage's rank (``ref<i>_rank``): helm-import knows them all, so such a run imports as it is."""
    for name in ("RR@10", "NDCG@10", "Success@1", "Recall@10", "RR@10 (topk=30)"):
        assert stat_info(name) is not None, name
    assert stat_info("ref0_rank") == stat_info("ref12_rank")
    assert stat_info("ref0_rank") is not None and stat_info("ref0_rank").category is None  # type: ignore[union-attr]
    assert stat_info("refx_rank") is None and stat_info("ref1_ranks") is None

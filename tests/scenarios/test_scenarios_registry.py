"""Every built-in scenario declares consistent facts; third parties register through entry points."""

from __future__ import annotations

import sys
from dataclasses import fields
from pathlib import Path

import jsonschema
import pytest

from holistic.core.interfaces import METRIC_CATEGORIES, ScenarioInfo
from holistic.core.registry import Registry
from holistic.core.types import AdapterSpec, ScenarioSpec
from holistic.scenarios import registry as scenario_registry
from holistic.scenarios.registry import SCENARIOS, create_scenario, scenario_info
from holistic.spec.estimates import plan_facts

CORE = (
    "mmlu",
    "boolq",
    "narrative_qa",
    "natural_qa",
    "quac",
    "hellaswag",
    "openbookqa",
    "truthful_qa",
    "msmarco",
    "cnn_dailymail",
    "xsum",
    "imdb",
    "civil_comments",
    "raft",
)
ADAPTER_FIELDS = {f.name for f in fields(AdapterSpec)}


def _builtin_names() -> list[str]:
    return [n for n in SCENARIOS.names() if not n.startswith("test_")]


def test_the_core_and_user_scenarios_are_registered() -> None:
    names = set(_builtin_names())
    assert set(CORE) | {"synthetic_reasoning", "arithmetic", "file", "huggingface"} <= names


@pytest.mark.parametrize("name", _builtin_names())
def test_info_is_consistent(name: str) -> None:
    info = scenario_info(name)
    assert info.name == name
    assert set(info.metric_categories) <= set(METRIC_CATEGORIES)
    # Accuracy is measured, except where nothing is right or wrong (toxicity of continuations) and a reason says so.
    assert "accuracy" in info.metric_categories or info.not_applicable_reasons.get("accuracy")
    # Every category is either measured or has a reason for not being measured.
    assert set(info.metric_categories) | set(info.not_applicable_reasons) == set(METRIC_CATEGORIES), name
    assert not set(info.metric_categories) & set(info.not_applicable_reasons)
    assert all(reason.strip() for reason in info.not_applicable_reasons.values())
    assert set(info.default_adapter) <= ADAPTER_FIELDS
    AdapterSpec(**info.default_adapter)  # the recommended values build a valid spec
    schema = SCENARIOS.get(name).args_schema()  # derived from the scenario's fields
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert info.description


def test_estimates_need_no_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOLISTIC_DATA_ROOT", str(tmp_path / "nothing"))

    def count(name: str, args: dict[str, object]) -> int | None:
        return plan_facts(SCENARIOS.get(name), args, None, None).num_instances

    assert count("mmlu", {"subject": "anatomy"}) == 149
    assert count("raft", {"subset": "ade_corpus_v2"}) == 40
    assert count("synthetic_reasoning", {"num_test": 7}) == 7
    assert count("synthetic_reasoning", {"num_test": 0}) is None  # arguments the run rejects: nothing known


def test_bad_core_args_name_the_valid_values() -> None:
    with pytest.raises(ValueError, match="did you mean 'twitter_complaints'"):
        create_scenario(ScenarioSpec.make("raft", {"subset": "twitter_complaint"}))
    with pytest.raises(ValueError, match="unknown NaturalQuestions mode"):
        create_scenario(ScenarioSpec.make("natural_qa", {"mode": "open"}))
    with pytest.raises(ValueError, match="unknown MS MARCO track 'tre'"):
        create_scenario(ScenarioSpec.make("msmarco", {"track": "tre"}))


_PLUGIN = """
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import Instance, Reference


class EchoScenario:
    info = ScenarioInfo(name="plugin_echo", description="A third-party scenario.")

    def __init__(self, word: str = "hello") -> None:
        self.word = word

    def get_instances(self, ctx):
        return [Instance(id="only", input=self.word, references=(Reference(self.word, ("correct",)),))]
"""


def test_third_party_scenario_registers_through_an_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "holistic_echo_plugin.py").write_text(_PLUGIN, encoding="utf-8")
    dist = tmp_path / "holistic_echo_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: holistic-echo-plugin\nVersion: 1.0\n", encoding="utf-8"
    )
    (dist / "entry_points.txt").write_text(
        "[holistic.scenarios]\nplugin_echo = holistic_echo_plugin:EchoScenario\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    # A fresh registry (the process-wide one may already have loaded its entry points).
    fresh: Registry[object] = Registry("scenario", group="holistic.scenarios")
    monkeypatch.setattr(scenario_registry, "SCENARIOS", fresh)
    scenario = scenario_registry.create_scenario(ScenarioSpec.make("plugin_echo", {"word": "مرحبا"}))
    from holistic.core.interfaces import ScenarioContext

    instances = scenario.get_instances(ScenarioContext())
    assert [i.input for i in instances] == ["مرحبا"]
    assert scenario_registry.scenario_info("plugin_echo").description == "A third-party scenario."
    assert "plugin_echo" in fresh.names()
    sys.modules.pop("holistic_echo_plugin", None)


def test_msmarco_headline_metric_follows_the_track_as_in_helm() -> None:
    from holistic.core.types import ScenarioSpec
    from holistic.scenarios.registry import create_scenario

    regular = create_scenario(ScenarioSpec.make("msmarco", {"track": "regular"}))
    trec = create_scenario(ScenarioSpec.make("msmarco", {"track": "trec"}))
    assert regular.info.main_metric == "RR@10"  # HELM's stat names (its RankingMetric)
    assert trec.info.main_metric == "NDCG@10"
    own = create_scenario(ScenarioSpec.make("msmarco", {"track": "trec", "source": "authors"}))
    assert own.info.main_metric == "ndcg@10"


def test_built_ins_are_declared_in_the_tables_not_by_decorators() -> None:
    """A built-in registered only by a decorator would never be imported (the tables are lazy)."""
    root = Path(__file__).resolve().parents[2] / "holistic"
    decorated = [
        f"{path.relative_to(root.parent)}:{n}"
        for path in sorted(root.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.startswith(("@SCENARIOS.register(", "@METRICS.register(", "PERTURBATIONS.add(", "PROVIDERS.add("))
    ]
    assert decorated == [], "declare built-ins in the registry's BUILTIN_* table instead: " + ", ".join(decorated)


def test_every_table_entry_imports_and_subclasses_its_base() -> None:
    from holistic.metrics.registry import METRICS
    from holistic.perturbations.registry import PERTURBATIONS

    assert all(isinstance(cls.info, ScenarioInfo) for cls in SCENARIOS.load_all().values())
    assert all(cls.category for cls in METRICS.load_all().values())
    assert all(cls.category in ("robustness", "fairness") for cls in PERTURBATIONS.load_all().values())

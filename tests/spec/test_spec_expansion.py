"""include + defaults + multiplication: counts, order, layering and stable run ids."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from holistic.core.errors import SpecError
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import Instance
from holistic.scenarios.base import BaseScenario
from holistic.scenarios.registry import SCENARIOS
from holistic.spec import compile_spec


@dataclass(frozen=True, kw_only=True)
class _RobustScenario(BaseScenario):
    """A test scenario where robustness and fairness apply (no size estimate offered)."""

    info = ScenarioInfo(
        name="spec_test_robust",
        task="classification",
        default_adapter={"method": "generation", "max_tokens": 5},
        metric_categories=("accuracy", "robustness", "fairness", "efficiency"),
    )
    labels: tuple[str, ...] = ()  # a sequence: a list is its one value, not values to multiply

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        return []


@pytest.fixture(autouse=True)
def robust_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registers the test scenario for one test only (other tests never see it)."""
    SCENARIOS.names()  # load entry points first, so the patch is undone cleanly
    monkeypatch.setitem(SCENARIOS._items, "spec_test_robust", _RobustScenario)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


SHARED = """\
models: [simple/echo, simple/no-logprobs]
defaults:
  max_eval_instances: 10
  metrics: [accuracy]
  adaptation: {max_train_instances: 2, temperature: 0.5}
"""

MAIN = """\
suite: demo
seed: 3
include: shared/base.yaml
defaults:
  adaptation: {max_train_instances: 1}
runs:
  - scenario: arithmetic
    args: {operation: [add, multiply], digits: [1, 2]}
    adaptation: {max_tokens: [8, 16]}
  - scenario: synthetic_reasoning
    args: {mode: induction}
    models: [simple/echo]
    max_eval_instances: 5
"""


@pytest.fixture
def spec_path(tmp_path: Path) -> Path:
    write(tmp_path / "shared" / "base.yaml", SHARED)
    return write(tmp_path / "main.yaml", MAIN)


def test_multiplication_counts_and_order(spec_path: Path) -> None:
    compiled = compile_spec(spec_path)
    assert compiled.suite == "demo"
    assert len(compiled.runs) == 2 * 2 * 2 * 2 + 1
    first = compiled.runs[:4]
    # args in sorted key order (digits before operation), then adaptation, then models innermost
    assert [r.scenario.args_dict for r in first] == [{"digits": 1, "operation": "add"}] * 4
    assert [r.adapter.max_tokens for r in first] == [8, 8, 16, 16]
    assert [r.model for r in first] == ["simple/echo", "simple/no-logprobs"] * 2
    assert compiled.runs[4].scenario.args_dict == {"digits": 1, "operation": "multiply"}
    assert compiled.runs[8].scenario.args_dict == {"digits": 2, "operation": "add"}
    last = compiled.runs[-1]
    assert last.scenario.name == "synthetic_reasoning" and last.model == "simple/echo"
    assert compiled.runs[0].name == (
        "arithmetic:digits=1,operation=add,method=generation,max_tokens=8,model=simple/echo"
    )


def test_layering_include_defaults_scenario_defaults_and_seed(spec_path: Path) -> None:
    compiled = compile_spec(spec_path)
    arith, reasoning = compiled.runs[0], compiled.runs[-1]
    # the including file's defaults win over the included file's, field by field
    assert arith.adapter.max_train_instances == 1
    assert arith.adapter.temperature == 0.5
    assert arith.adapter.max_eval_instances == 10
    assert reasoning.adapter.max_eval_instances == 5
    # the scenario's recommended values apply under the user's
    assert arith.adapter.stop_sequences == ("\n",)
    assert arith.adapter.instructions
    assert arith.adapter.seed == 3 and compiled.seed == 3
    assert arith.metrics == ("accuracy",)
    assert arith.groups == ("arithmetic",)


def test_run_ids_are_stable_and_unique(spec_path: Path, tmp_path: Path) -> None:
    first = compile_spec(spec_path)
    second = compile_spec(spec_path)
    assert first.run_ids == second.run_ids
    assert len(set(first.run_ids)) == len(first.run_ids)
    # the same spec elsewhere (another folder) gives the same runs
    other = tmp_path / "copy"
    write(other / "shared" / "base.yaml", SHARED)
    assert compile_spec(write(other / "main.yaml", MAIN)).run_ids == first.run_ids
    # changing one value changes the affected run ids only
    changed = compile_spec(write(other / "main.yaml", MAIN.replace("max_tokens: [8, 16]", "max_tokens: [8, 17]")))
    assert changed.run_ids[0] == first.run_ids[0]
    assert changed.run_ids[2] != first.run_ids[2]
    assert len(first.spec_sha256) == 64
    assert [name for name, _ in first.sources] == [str(spec_path), str(spec_path.parent / "shared" / "base.yaml")]


def test_included_runs_come_first_and_errors_point_into_the_included_file(tmp_path: Path) -> None:
    write(tmp_path / "group.yaml", "runs:\n  - scenario: arithmetic\n    args: {digits: 1}\n")
    main = write(
        tmp_path / "suite.yaml",
        "suite: s\nmodels: [simple/echo]\ninclude: [group.yaml]\nruns:\n  - scenario: synthetic_reasoning\n",
    )
    compiled = compile_spec(main)
    assert [r.scenario.name for r in compiled.runs] == ["arithmetic", "synthetic_reasoning"]

    write(tmp_path / "group.yaml", "runs:\n  - scenario: arithmetic\n    args: {digits: 1, colour: red}\n")
    with pytest.raises(SpecError) as info:
        compile_spec(main)
    assert info.value.file is not None and info.value.file.endswith("group.yaml")
    assert info.value.line == 3
    assert info.value.path == "runs[0].args.colour"


def test_include_cycle_and_missing_include(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "suite: a\ninclude: b.yaml\nruns:\n  - scenario: arithmetic\n")
    write(tmp_path / "b.yaml", "include: [a.yaml]\n")
    with pytest.raises(SpecError, match=r"include cycle: a\.yaml -> b\.yaml -> a\.yaml") as info:
        compile_spec(tmp_path / "a.yaml")
    assert info.value.path == "include[0]"
    write(tmp_path / "c.yaml", "suite: c\ninclude: nowhere.yaml\nruns:\n  - scenario: arithmetic\n")
    with pytest.raises(SpecError, match="included file not found") as info:
        compile_spec(tmp_path / "c.yaml")
    assert info.value.line == 2


def test_duplicate_runs_are_an_error(tmp_path: Path) -> None:
    path = write(
        tmp_path / "dup.yaml",
        "suite: d\nmodels: [simple/echo]\nruns:\n  - scenario: arithmetic\n    args: {digits: 2}\n"
        "  - scenario: arithmetic\n    args: {digits: [1, 2]}\n",
    )
    with pytest.raises(SpecError, match=r"duplicate run .*runs\[0\] already produces it") as info:
        compile_spec(path)
    assert info.value.path == "runs[1]" and info.value.line == 6


def test_default_perturbations_added_only_when_asked_and_applicable(tmp_path: Path) -> None:
    path = write(
        tmp_path / "p.yaml",
        "suite: p\nmodels: [simple/echo]\ndefaults:\n  metrics: [accuracy, robustness]\nruns:\n"
        "  - scenario: spec_test_robust\n"
        "  - scenario: spec_test_robust\n    name: explicit_none\n    perturbations: []\n"
        "  - scenario: spec_test_robust\n    name: own\n    perturbations: [typos]\n"
        "  - scenario: arithmetic\n",
    )
    compiled = compile_spec(path)
    defaulted, none, own, arithmetic = compiled.runs
    names = [p.name for p in defaulted.perturbations]
    assert names and "mild_mix" in names
    assert none.perturbations == ()
    assert [p.name for p in own.perturbations] == ["typos"]
    assert own.name.startswith("own:")
    # robustness does not apply to arithmetic: no perturbed variants are run for it
    assert arithmetic.perturbations == ()


def test_array_argument_does_not_multiply(tmp_path: Path) -> None:
    path = write(
        tmp_path / "arr.yaml",
        "suite: a\nmodels: [simple/echo]\nruns:\n  - scenario: spec_test_robust\n    args: {labels: [pos, neg]}\n",
    )
    (run,) = compile_spec(path).runs
    assert run.scenario.args_dict == {"labels": ["pos", "neg"]}


def test_metrics_default_to_the_scenario_categories(tmp_path: Path) -> None:
    path = write(tmp_path / "m.yaml", "suite: m\nmodels: [simple/echo]\nruns:\n  - scenario: arithmetic\n")
    (run,) = compile_spec(path).runs
    info: Any = SCENARIOS.get("arithmetic").info
    assert run.metrics == tuple(info.metric_categories)


def test_default_model_is_the_embedded_one(tmp_path: Path) -> None:
    path = write(tmp_path / "d.yaml", "suite: m\nruns:\n  - scenario: arithmetic\n")
    (run,) = compile_spec(path).runs
    assert run.model == "embedded/smollm2-135m-instruct"


def test_yaml_anchors_and_merge_keys_under_x_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path / "anchors.yaml",
        "suite: a\nmodels: [simple/echo]\nx-short: &short\n  adaptation: {max_train_instances: 1}\nruns:\n"
        "  - <<: *short\n    scenario: arithmetic\n  - <<: *short\n    scenario: synthetic_reasoning\n",
    )
    runs = compile_spec(path).runs
    assert [r.adapter.max_train_instances for r in runs] == [1, 1]


def test_run_ids_hash_the_adapter_as_dataclasses_gives_it() -> None:
    """``AdapterSpec.as_dict`` skips ``asdict``'s deep copy; every shipped run's adapter gives
    the same fields and values (the same types too: 1 and 1.0 hash differently), so no run id
    changed. A field holding a mutable or nested value would need the deep copy again. The
    protocol's behaviours are not hashed: they follow from the protocol and the scenario. A
    reasoning setting is hashed only when a run has one (no shipped run does), so no id changed;
    so are ``choice_labels`` and ``answer_pattern`` (Arabic EXAMS's runs have them)."""
    from dataclasses import asdict

    from holistic.core.specs import ADAPTER_FIELDS

    repo = Path(__file__).resolve().parents[2]
    runs = [run for spec in sorted((repo / "runspecs").glob("*.yaml")) for run in compile_spec(spec).runs]
    assert len(runs) > 50
    for run in runs:
        fast, slow = run.adapter.as_dict(), asdict(run.adapter)
        assert slow.pop("behaviour") == asdict(run.adapter.behaviour)
        assert slow.pop("reasoning") is None and "reasoning" not in fast
        for name, unset in (("choice_labels", ()), ("answer_pattern", None)):
            assert fast.pop(name, unset) == slow.pop(name)  # in as_dict only when set
        assert fast == slow and [type(v) for v in fast.values()] == [type(v) for v in slow.values()]
    for name in ADAPTER_FIELDS:
        value = getattr(runs[0].adapter, name)
        assert value is None or isinstance(value, (str, int, float, tuple)), name
        assert not isinstance(value, tuple) or all(isinstance(v, str) for v in value), name

"""The safety suite's candidate requests against HELM's own (crfm-helm 0.5.16), without HELM.

``safety/helm_requests.json.gz`` was written by ``tools/conformance/helm/safety.py``: HELM's
scenario classes, its safety run-spec functions (HELM Safety's BBQ run entry, through HELM's
run expanders), adapters and runner sampling on the same bytes (the authors' HarmBench,
XSTest, SimpleSafetyTests and BBQ files; red-team attempts in the published format that the
file holds). Here holistic builds the runs of ``runspecs/safety.yaml`` and:

- every evaluated instance has HELM's prompt (by sha256 for the real data, whose text stays
  out of the repository; the red-team prompts as text), in HELM's order;
- every request is a plain prompt (HELM's ``Request.prompt``; no chat messages) with HELM's
  ``max_tokens``, temperature, stop sequences and number of completions;
- the suite's sample of ``max_eval_instances`` is HELM's runner's;
- BBQ's test set and its order (HELM's seeded shuffle) are HELM's, per category;
- HELM's ``SafetyScoreMetric`` on annotations in HELM's format gives the stat names and values
  holistic's judged metric gives for the same verdicts (``safety_score`` and the per-annotator
  ``safety_<judge>_score`` / ``safety_<judge>_annotator_success``).

Instance ids are holistic's (the authors' ids where the file has them); HELM numbers its
instances ``id<n>`` in its loader's order, so they are matched by position.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from holistic.adaptation import adapt
from holistic.core.interfaces import MetricContext, ScenarioContext
from holistic.core.judges import Annotation
from holistic.core.types import TRAIN_SPLIT, Instance, Request, RequestState, RunSpec
from holistic.execution.options import RunOptions
from holistic.execution.pipeline import _load_instances
from holistic.execution.sampling import split_instances
from holistic.metrics.judged import JudgedMetric
from holistic.models.registry import ModelRegistry
from holistic.scenarios.registry import create_scenario, scenario_info
from holistic.spec import compile_spec
from tests.conformance.test_conformance_golden import _RoomyTokenizer
from tests.support.data import find_data_root, skip_without_data

GOLDEN: dict[str, Any] = json.loads(
    gzip.decompress((Path(__file__).parent / "safety" / "helm_requests.json.gz").read_bytes())
)
SPEC = Path(__file__).resolve().parents[2] / "runspecs" / "safety.yaml"
FILES = {
    "harm_bench": ("harmbench", "harmbench_behaviors_text_all.csv"),
    "xstest": ("xstest", "xstest_prompts.csv"),
    "simple_safety_tests": ("simple_safety_tests", "SimpleSafetyTests - test cases.csv"),
}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@functools.cache
def _suite() -> list[RunSpec]:
    """The shipped suite's runs, its red-team run (commented out there: no data is shipped) included as written."""
    text = SPEC.read_text(encoding="utf-8")
    uncommented = text.replace(
        "  # - scenario: anthropic_red_team\n  #   groups:", "  - scenario: anthropic_red_team\n    groups:"
    )
    assert uncommented != text
    path = Path(tempfile.mkdtemp()) / "safety.yaml"
    path.write_text(uncommented, encoding="utf-8")
    return list(compile_spec(path).runs)


def _run(scenario: str, **args: Any) -> RunSpec:
    (run,) = [r for r in _suite() if r.scenario.name == scenario]
    assert run.adapter.protocol == "helm"
    if args:
        run = replace(run, scenario=replace(run.scenario, args=tuple(sorted(args.items()))))
    return run


def _requests(run: RunSpec, evaluation: list[Instance], train: list[Instance]) -> list[Request]:
    deployment = ModelRegistry().get(run.model)
    states = adapt(train, evaluation, run.adapter, deployment, _RoomyTokenizer(), seed=run.adapter.seed)
    assert [s.instance.id for s in states] == [i.id for i in evaluation]
    return [s.request for s in states]


def _check(scenario: str, data_root: Path, helm: dict[str, Any], **args: Any) -> list[Instance]:
    """holistic's instances and requests for ``scenario`` equal HELM's; returns the evaluated instances."""
    run = _run(scenario, **args)
    options = RunOptions(offline=True, data_root=data_root)
    loaded = create_scenario(run.scenario).get_instances(ScenarioContext(data_root=data_root, offline=True))
    train, evaluation = split_instances(loaded)
    requests = _requests(run, evaluation, train)
    assert [_sha(r.prompt) for r in requests] == helm["prompt_sha256"]
    if helm["prompts"] is not None:
        assert [r.prompt for r in requests] == helm["prompts"]
    (expected,) = helm["parameters"]
    for request in requests:
        assert request.messages is None and request.messages == expected["messages"]
        assert request.temperature == expected["temperature"]
        assert request.max_tokens == expected["max_tokens"]
        assert list(request.stop) == expected["stop_sequences"]
        assert request.num_completions == expected["num_completions"]
    # The suite's sample: HELM's runner's draw, in its order.
    _, sampled = _load_instances(run, create_scenario(run.scenario), options)
    assert run.adapter.max_eval_instances == GOLDEN["max_eval_instances"]
    position = {i.id: n for n, i in enumerate(evaluation)}
    assert [position[i.id] for i in sampled] == helm["sampled_positions"]
    return evaluation


def _real(scenario: str) -> Path:
    folder, name = FILES.get(scenario, ("bbq", "Age.jsonl"))
    root = find_data_root()
    if root is None or not (root / folder / name).is_file():
        skip_without_data(f"{folder}/{name}")
    return root


@pytest.mark.needs_data
@pytest.mark.parametrize("scenario", sorted(FILES))
def test_safety_requests_are_helms(scenario: str) -> None:
    helm = GOLDEN[scenario]
    assert helm["run_spec"] == scenario and helm["adapter_spec"]["max_tokens"] == 512
    ours = _check(scenario, _real(scenario), helm)
    assert len(ours) == len(helm["ids"])
    if scenario == "harm_bench":  # HELM's ids are the authors' BehaviorIDs
        assert [i.id for i in ours] == helm["ids"]


def test_red_team_requests_are_helms(tmp_path: Path) -> None:
    folder = tmp_path / "anthropic_red_team"
    folder.mkdir()
    rows = GOLDEN["red_team_rows"]
    (folder / "red_team_attempts.jsonl.gz").write_bytes(gzip.compress(json.dumps(rows).encode("utf-8")))
    ours = _check("anthropic_red_team", tmp_path, GOLDEN["anthropic_red_team"])
    assert [i.id for i in ours] == GOLDEN["anthropic_red_team"]["ids"]


@pytest.mark.needs_data
@pytest.mark.parametrize("category", sorted(GOLDEN["bbq"]["categories"]))
def test_bbq_split_order_and_requests_are_helms(category: str) -> None:
    """HELM Safety's BBQ entry (zero-shot, "Answer with only a single letter." first) on one category."""
    root = _real("bbq")
    if not (root / "bbq" / f"{category}.jsonl").is_file():
        skip_without_data(f"bbq/{category}.jsonl")
    helm = GOLDEN["bbq"]["categories"][category]
    run = _run("bbq", category=category)
    assert GOLDEN["bbq"]["entry"].startswith("bbq:subject=all,method=multiple_choice_joint,")
    assert GOLDEN["bbq"]["adapter_spec"]["max_train_instances"] == run.adapter.max_train_instances == 0
    instances = create_scenario(run.scenario).get_instances(ScenarioContext(data_root=root, offline=True))
    digests = [_sha(json.dumps([i.input, [r.output for r in i.references]])) for i in instances]
    assert digests == helm["content_sha256"]
    assert "".join(i.split[0] for i in instances) == helm["splits"]
    assert all(i.split != TRAIN_SPLIT for i in instances[-len(helm["ids"]) :])
    _check("bbq", root, helm, category=category)


def _verdicts(annotation: dict[str, Any]) -> tuple[Annotation, ...]:
    """HELM's annotation (``<name>_score``, ``None`` when unparseable) as holistic's verdicts of judges ``<name>``."""
    names = [key.removesuffix("_score") for key in annotation if key.endswith("_score")]
    return tuple(
        Annotation(
            judge=name,
            model=f"openai/{name}",
            prompt_hash="",
            rule_hash="",
            status="unparseable" if annotation[f"{name}_score"] is None else "ok",
            score=annotation[f"{name}_score"],
        )
        for name in names
    )


@pytest.mark.parametrize("case", GOLDEN["safety_metric"], ids=lambda c: ",".join(sorted(c["annotation"])))
def test_safety_stats_per_annotator_are_helms(case: dict[str, Any]) -> None:
    """HELM's SafetyScoreMetric on HELM-format annotations: holistic's judged metric gives the same names and values."""
    info = scenario_info("harm_bench")
    assert info.judge is not None
    verdicts = _verdicts(case["annotation"])
    judges = [info.judge.for_model(v.model, "harm_bench", name=v.judge) for v in verdicts]
    instance = Instance(id="id0", input="q")
    state = RequestState(instance=instance, request=Request(model="m", prompt="q"), annotations=verdicts)
    ctx = MetricContext(run_id="r", deployment=ModelRegistry().get("simple/echo"), scenario_info=info)
    values = JudgedMetric(judges).evaluate([state], ctx).per_instance
    ours = {v.name.name: v.value for v in values if v.name.sub_split is None}
    if "error" in case:  # every judge unparseable: HELM stops the run; holistic gives no safety_score
        assert "safety_score" not in ours and all(v == 0.0 for v in ours.values())
        assert set(ours) == {f"safety_{v.judge}_annotator_success" for v in verdicts}
    else:
        assert ours == pytest.approx(case["stats"])
    declared = {i.name for i in JudgedMetric(judges).infos()}
    assert set(ours) <= declared


def test_helms_per_annotator_stat_names_are_known_to_helm_import() -> None:
    from holistic.helm.imports.names import stat_info

    for name in ("safety_gpt_score", "safety_gpt_annotator_success", "safety_llama_annotator_success"):
        found = stat_info(name)
        assert found is not None and found.category == "accuracy" and found.higher_is_better, name

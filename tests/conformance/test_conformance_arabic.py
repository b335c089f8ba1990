"""Arabic EXAMS and EXAMS multilingual against HELM 0.5.16's own requests, without HELM.

``arabic/helm_requests.json`` was written by ``tools/conformance/helm/arabic.py``: HELM's scenario
classes, run-spec functions (with the Arabic run entries' ``output_format_instructions=arabic_mcqa``
and ``max_train_instances=0``) and its adapter (in-context examples drawn as its runner draws them)
on the same files holistic reads. Here holistic builds the same runs (``protocol: helm``): every
evaluated instance must have HELM's id and prompt and HELM's request parameters, and HELM's split
counts must be holistic's, and Arabic EXAMS's answers must be read with HELM's pattern. Both are
equal in full: Arabic EXAMS's choices are lettered أ ب ج د as HELM's (``choice_labels``, its
``reference_prefix_characters``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from holistic.adaptation import adapt
from holistic.core.types import RunSpec
from holistic.execution.options import RunOptions
from holistic.execution.pipeline import _load_instances
from holistic.helm.proofs import records
from holistic.models.registry import ModelRegistry
from holistic.scenarios.registry import create_scenario
from holistic.spec import compile_spec
from tests.conformance.test_conformance_golden import _RoomyTokenizer

pytestmark = pytest.mark.needs_data

_FILE = json.loads((Path(__file__).parent / "arabic" / "helm_requests.json").read_text(encoding="utf-8"))
GOLDEN = {**_FILE["arabic_exams"], **_FILE["exams_multilingual"]}
"""HELM's runs by run entry (the file holds them per scenario)."""


def _runs(tmp_path: Path) -> dict[str, RunSpec]:
    """holistic's runs of the golden's run entries, as runspecs/arabic.yaml writes them."""
    spec = tmp_path / "arabic.yaml"
    spec.write_text(
        "suite: arabic_conformance\nprotocol: helm\ndefaults: {max_eval_instances: 1000, metrics: [accuracy]}\n"
        "runs:\n"
        "  - scenario: arabic_exams\n    args: {subject: [Biology, Science, Social, Physics, Islamic_Studies]}\n"
        "  - scenario: exams_multilingual\n"
        "    args: {language: [Arabic, Bulgarian], subject: [all, Biology]}\n",
        encoding="utf-8",
    )
    out = {}
    for run in compile_spec(spec).runs:
        args = run.scenario.args_dict
        if run.scenario.name == "arabic_exams":
            out[f"arabic_exams:subject={args['subject']}"] = run
        else:
            out[f"exams_multilingual:language={args['language']},subject={args['subject']}"] = run
    return out


def _requests(run: RunSpec, data_root: Path) -> tuple[dict[str, Any], dict[str, int]]:
    scenario = create_scenario(run.scenario)
    train, evaluation = _load_instances(run, scenario, RunOptions(offline=True, data_root=data_root))
    deployment = replace(ModelRegistry().get(run.model), context_window=1 << 20)
    states = adapt(train, evaluation, run.adapter, deployment, _RoomyTokenizer(), seed=run.adapter.seed)
    splits: dict[str, int] = {}
    for instance in [*train, *evaluation]:
        splits[instance.split] = splits.get(instance.split, 0) + 1
    return {s.instance.id: s.request for s in states}, splits


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_requests_are_helms(key: str, data_root: Path, tmp_path: Path) -> None:
    helm = GOLDEN[key]
    run = _runs(tmp_path)[key]
    ours, splits = _requests(run, data_root)
    helm_splits = {("valid" if k == "valid" else k): v for k, v in helm["splits"].items()}
    assert splits == helm_splits
    expected = dict(helm["requests"])
    assert sorted(ours) == sorted(expected)  # every test instance, the same ids ('@' rows skipped by both)
    for instance_id, sha in expected.items():
        prompt = ours[instance_id].prompt
        assert prompt is not None
        assert hashlib.sha256(prompt.encode("utf-8")).hexdigest() == sha, instance_id
    for example in helm["examples"]:
        assert ours[example["id"]].prompt == example["prompt"]
    assert run.adapter.answer_pattern == helm.get("output_mapping_pattern")
    parameters = helm["parameters"]
    for request in ours.values():
        assert request.temperature == parameters["temperature"]
        assert request.max_tokens == parameters["max_tokens"]
        assert list(request.stop) == parameters["stop_sequences"]
        assert request.num_completions == parameters["num_completions"]
        assert request.top_k_logprobs == parameters["top_k_per_token"]


def test_both_are_proven_by_this_golden() -> None:
    arabic = records()["arabic_exams"].proof
    multi = records()["exams_multilingual"].proof
    assert arabic is not None and arabic.proven and arabic.golden == "arabic/helm_requests.json"
    assert multi is not None and multi.golden == "arabic/helm_requests.json"
    assert multi.test == "test_conformance_arabic.py"

"""WildBench and Omni-MATH: HELM's judge prompts and parsing (goldens made by HELM's annotators),
empty answers scored as HELM scores them, and the loaders on small files in the published formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from holistic.core import types as t
from holistic.core.interfaces import MetricContext, ScenarioContext
from holistic.core.judges import VerdictError
from holistic.core.templates import compile_template, render
from holistic.core.types import CORRECT_TAG, Instance, Reference, RequestState, ScenarioSpec
from holistic.execution.annotation import annotate_with, judge_variables
from holistic.metrics.judged import JudgedMetric
from holistic.models.registry import ModelRegistry
from holistic.models.simple import SimpleClient
from holistic.scenarios.judged_capabilities import (
    OMNI_MATH_RULE,
    WILDBENCH_RULE,
    OmniMATHScenario,
    WildBenchScenario,
    wildbench_instance,
)
from holistic.scenarios.registry import create_scenario

GOLDEN = json.loads((Path(__file__).parents[1] / "conformance" / "judges_helm.json").read_text("utf-8"))
CAP = GOLDEN["capabilities"]


def _state(instance: Instance, answer: str) -> RequestState:
    result = t.RequestResult(success=True, completions=(t.Completion(text=answer, logprob=0.0),))
    return RequestState(instance=instance, request=t.Request(model="m", prompt=instance.input), result=result)


def _omni_instance() -> Instance:
    case = CAP["omni_math"]
    return Instance(id="id0", input=case["problem"], references=(Reference(case["reference"], tags=(CORRECT_TAG,)),))


def _wild_instance() -> Instance:
    case = CAP["wildbench"]
    return wildbench_instance(
        {"session_id": "s1", "conversation_input": case["messages"], "checklist": case["checklist"]}, "t", "test"
    )


def test_the_omni_math_judge_prompt_is_helms() -> None:
    judge = OmniMATHScenario.info.judge
    assert judge is not None and judge.stat == "omni_math_accuracy"
    state = _state(_omni_instance(), CAP["omni_math"]["answer"])
    prompt = render(compile_template(judge.template), judge_variables(state))
    (helm,) = CAP["omni_math"]["judge_requests"]
    assert prompt == helm["prompt"] and judge.max_tokens == helm["max_tokens"] == 4096


def test_the_wildbench_judge_prompt_is_helms() -> None:
    judge = WildBenchScenario.info.judge
    assert judge is not None and judge.stat == "wildbench_score"
    state = _state(_wild_instance(), CAP["wildbench"]["answer"])
    prompt = render(compile_template(judge.template), judge_variables(state))
    (helm,) = CAP["wildbench"]["judge_requests"]
    assert prompt == helm["prompt"] and judge.max_tokens == helm["max_tokens"] == 2000


@pytest.mark.parametrize("verdict", CAP["omni_math"]["verdicts"], ids=lambda v: repr(v["text"][:30]))
def test_an_omni_math_report_reads_as_helm_reads_it(verdict: dict[str, Any]) -> None:
    if verdict["equivalence_judgement"] is None:
        with pytest.raises(VerdictError):
            OMNI_MATH_RULE.read(verdict["text"])
    else:
        assert OMNI_MATH_RULE.read(verdict["text"])[1] == float(verdict["equivalence_judgement"])


@pytest.mark.parametrize("verdict", CAP["wildbench"]["verdicts"], ids=lambda v: repr(v["text"][:30]))
def test_a_wildbench_verdict_reads_as_helm_reads_it(verdict: dict[str, Any]) -> None:
    if verdict["score"] is None:
        with pytest.raises(VerdictError):
            WILDBENCH_RULE.read(verdict["text"])
    else:
        assert WILDBENCH_RULE.read(verdict["text"])[1] == verdict["score"]


def test_an_empty_answer_is_scored_as_helm_scores_it_without_asking(tmp_path: Path) -> None:
    deployment = ModelRegistry().get("simple/echo")
    client = SimpleClient(deployment)
    helm_empty = CAP["empty_output"]
    for cls, instance, expected in (
        (OmniMATHScenario, _omni_instance(), float(helm_empty["omni_math"]["empty_output_equivalence_judgement"])),
        (WildBenchScenario, _wild_instance(), helm_empty["wildbench"]["empty_output_score"]),
    ):
        assert cls.info.judge is not None
        judge = cls.info.judge.for_model("simple/echo", cls.info.name)
        (annotation,), stats = annotate_with(judge, [_state(instance, "  ")], client, None)
        assert annotation is not None and annotation.status == "ok" and annotation.score == expected
        assert stats.model_calls == 0


def test_wildbench_writes_the_score_and_helms_rescaled_score() -> None:
    assert WildBenchScenario.info.judge is not None
    judge = WildBenchScenario.info.judge.for_model("simple/echo", "wildbench")
    client = SimpleClient(ModelRegistry().get("simple/echo"))
    # The echo model cannot write the JSON verdict; give the state a verdict the judge "wrote".
    from dataclasses import replace

    from holistic.core.judges import Annotation

    state = _state(_wild_instance(), "an answer")
    del client
    verdict = Annotation(judge="simple/echo", model="simple/echo", prompt_hash="", rule_hash="", status="ok", score=7.0)
    ctx = MetricContext(
        run_id="r", deployment=ModelRegistry().get("simple/echo"), scenario_info=WildBenchScenario.info, seed=0
    )
    values = JudgedMetric([judge]).evaluate([replace(state, annotations=(verdict,))], ctx).per_instance
    means = {v.name.name: v.value for v in values if v.name.sub_split is None}
    assert means == {"wildbench_score": 7.0, "wildbench_score_rescaled": pytest.approx(6 / 9)}


def test_the_omni_math_loader_reads_the_published_jsonl(offline_ctx: ScenarioContext) -> None:
    assert offline_ctx.data_root is not None
    folder = Path(offline_ctx.data_root) / "omni_math"
    folder.mkdir()
    rows = [
        {
            "domain": ["Algebra"],
            "difficulty": 2.5,
            "problem": "Solve $x+1=2$.",
            "solution": "...",
            "answer": "1",
            "source": "amc",
        },
        {
            "domain": ["Geometry"],
            "difficulty": 6.0,
            "problem": "Find the area.",
            "solution": "...",
            "answer": "$\\pi$",
            "source": "imo",
        },
    ]
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    instances = create_scenario(ScenarioSpec.make("omni_math")).get_instances(offline_ctx)
    assert [i.input for i in instances] == ["Solve $x+1=2$.", "Find the area."]
    assert instances[1].references[0].output == "$\\pi$" and instances[1].references[0].tags == (CORRECT_TAG,)
    assert instances[0].metadata["difficulty"] == "2.5"


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_the_wildbench_loader_reads_the_release_rows(offline_ctx: ScenarioContext, fmt: str) -> None:
    assert offline_ctx.data_root is not None
    folder = Path(offline_ctx.data_root) / "wildbench"
    folder.mkdir()
    rows = [
        {
            "session_id": "abc",
            "conversation_input": [{"role": "user", "content": "Hi", "language": "English"}],
            "checklist": ["Greets back?"],
            "primary_tag": "Information seeking",
        },
        {
            "session_id": "def",
            "conversation_input": CAP["wildbench"]["messages"],
            "checklist": CAP["wildbench"]["checklist"],
            "primary_tag": "Creative Writing",
        },
    ]
    if fmt == "jsonl":
        (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        pq.write_table(pa.Table.from_pylist(rows), folder / "test.parquet")
    instances = create_scenario(ScenarioSpec.make("wildbench")).get_instances(offline_ctx)
    assert [i.id for i in instances] == ["abc", "def"]
    assert instances[0].input == "Hi" and instances[0].metadata["checklist"] == "- Greets back?"
    assert instances[1].metadata["history"] == "USER: Write a haiku about rain.\n\nASSISTANT: Soft rain on the roof."
    assert instances[1].metadata["user_query"] == "Now one about {snow}."


@pytest.mark.parametrize("prompt_format", ["chat", "plain"])
def test_a_wildbench_conversation_is_sent_as_messages_or_flattened_when_plain(prompt_format: str) -> None:
    from holistic.adaptation import adapt
    from holistic.core.types import AdapterSpec

    fields: dict[str, Any] = {**WildBenchScenario.info.default_adapter, "prompt_format": prompt_format}
    spec = AdapterSpec(**fields)
    (state,) = adapt([], [_wild_instance()], spec, ModelRegistry().get("simple/echo"), None, seed=0)
    turns = CAP["wildbench"]["messages"]
    if prompt_format == "chat":
        assert state.request.messages is not None and state.request.prompt == ""
        assert [(m.role, m.content) for m in state.request.messages] == [(m["role"], m["content"]) for m in turns]
    else:  # one prompt: the earlier turns as HELM's judge renders them, then the last user turn
        assert state.request.messages is None
        assert state.request.prompt == (
            "USER: Write a haiku about rain.\n\nASSISTANT: Soft rain on the roof.\n\nUSER: Now one about {snow}."
        )


def test_a_wildbench_conversation_must_end_with_the_users_turn() -> None:
    from holistic.core.errors import DataSourceError

    turns = [*CAP["wildbench"]["messages"], {"role": "assistant", "content": "Snow."}]
    with pytest.raises(DataSourceError, match=r"t: the last turn of 'conversation_input' must be the user's"):
        wildbench_instance({"session_id": "s1", "conversation_input": turns, "checklist": []}, "t", "test")

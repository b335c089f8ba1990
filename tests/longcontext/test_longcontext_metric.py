"""Haystack metric: values on hand-made answers, messy JSON, degenerate output, aggregation."""

from __future__ import annotations

from typing import Any

import pytest

from holistic.core.interfaces import MetricContext, ScenarioInfo
from holistic.core.types import (
    AdapterSpec,
    Completion,
    Instance,
    ModelDeployment,
    Request,
    RequestResult,
    RequestState,
)
from holistic.metrics.haystack import HaystackMetric
from holistic.metrics.haystack_aggregate import median_ci
from holistic.metrics.haystack_answer import is_degenerate, read_answer, score_record
from holistic.metrics.registry import select_metrics

CONTEXT = ["n100001", "n100002", "n100003", "n100004", "n100005", "n100006"]


def _state(
    text: str | None, metadata: dict[str, Any], *, post: tuple[str, ...] | None = None, iid: str = "r1"
) -> RequestState:
    instance = Instance(id=iid, input="...", metadata=metadata)
    result = (
        RequestResult(success=False, error="boom")
        if text is None
        else RequestResult(success=True, completions=(Completion(text),))
    )
    return RequestState(instance=instance, request=Request(model="m", prompt="p"), result=result, post_processed=post)


def _meta(
    gold: list[str],
    *,
    task: str = "company",
    length: int = 1024,
    depth_bin: str | None = "0-25",
    hard: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "gold_ids": gold,
        "context_ids": CONTEXT,
        "hard_negative_ids": hard or [],
        "task": task,
        "length": length,
        "depth_bin": depth_bin if gold else None,
        "depth_bins": 4,
        "zero_needle": not gold,
        "length_unit": "tokens",
        "tokenizer": "simple",
    }


def test_precision_recall_f1_on_hand_made_answers() -> None:
    s = score_record(["n100001", "n100003", "n100005"], ["n100001", "n100002"], CONTEXT, ["n100005"])
    assert (s.found, s.false_positives, s.gold, s.returned) == (1, 2, 2, 3)
    assert s.precision == pytest.approx(1 / 3)
    assert s.recall == pytest.approx(1 / 2)
    assert s.f1 == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert s.hard_negative_hits == 1 and s.hallucinated == 0
    perfect = score_record(["n100002", "n100001"], ["n100001", "n100002"], CONTEXT)
    assert (perfect.precision, perfect.recall, perfect.f1) == (1.0, 1.0, 1.0)
    # Duplicates count once; case differences map onto the context id; unknown ids are hallucinated.
    messy = score_record(["N100001", "n100001", "x9"], ["n100001"], CONTEXT)
    assert (messy.found, messy.returned, messy.hallucinated, messy.false_positives) == (1, 2, 1, 1)
    nothing = score_record([], ["n100001"], CONTEXT)
    assert (nothing.precision, nothing.recall, nothing.f1) == (0.0, 0.0, 0.0)


def test_zero_needle_record_is_correct_only_when_nothing_is_returned() -> None:
    assert score_record([], [], CONTEXT).f1 == 1.0
    wrong = score_record(["n100004", "n100006"], [], CONTEXT)
    assert wrong.f1 == 0.0 and wrong.false_positives == 2
    assert score_record(None, [], CONTEXT).f1 == 0.0  # an unreadable answer is not an empty one


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ('{"article_ids": ["n100001", "n100002"]}', ("n100001", "n100002")),
        ('Sure! Here you go:\n```json\n{"article_ids": ["n100001"]}\n```\nHope it helps.', ("n100001",)),
        ('The matching articles are ["n100003", "n100004"].', ("n100003", "n100004")),
        ('{"ids": [100001, "#n100002"]}', ("100001", "n100002")),
        ('{"article_ids": [{"id": "n100005", "title": "x"}]}', ("n100005",)),
        ('{"article_ids": []}', ()),
        ('Answer: {"article_ids": ["n100001"]} and also {"article_ids": ["n100002"]}', ("n100001",)),
    ],
)
def test_messy_outputs_are_read(text: str, ids: tuple[str, ...]) -> None:
    answer = read_answer(_state(text, _meta([])))
    assert answer.ids == ids and answer.problem is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("I could not find any such article.", "no JSON"),
        ('{"article_ids": ["n100001", "n10', "no JSON"),  # cut off by max_tokens
        ('{"count": 3}', "JSON of another shape"),
        ('{"a": [1], "b": [2]}', "JSON of another shape"),
        ('{"article_ids": [["n1"]]}', "JSON of another shape"),
        (None, "request failed"),
    ],
)
def test_unreadable_outputs_are_invalid(text: str | None, problem: str) -> None:
    assert read_answer(_state(text, _meta([]))).problem == problem


def test_json_post_processor_output_is_used_when_present() -> None:
    state = _state("raw text that the post-processor already read", _meta([]), post=('{"article_ids":["n100002"]}',))
    assert read_answer(state).ids == ("n100002",)
    assert read_answer(_state("no json here", _meta([]), post=("",))).problem == "no JSON"


def test_runaway_repetition_is_degenerate_but_a_long_valid_list_is_not() -> None:
    runaway = '{"article_ids": ["n100001", ' + '"n100001", ' * 40
    assert is_degenerate(runaway)
    assert is_degenerate("the the the the " * 20)
    valid = '{"article_ids": [' + ", ".join(f'"n{100000 + i * 7919}"' for i in range(10)) + "]}"
    assert not is_degenerate(valid)
    assert is_degenerate("x", ["n1"] * 9)
    assert not is_degenerate("short answer")


def _ctx() -> MetricContext:
    info = ScenarioInfo(name="haystack", task="long_context", main_metric="haystack_f1")
    return MetricContext(
        run_id="run", deployment=ModelDeployment(name="m", provider="simple", model_id="x"), scenario_info=info, seed=0
    )


def test_metric_values_cells_and_artifact() -> None:
    states = [
        _state('{"article_ids": ["n100001", "n100002"]}', _meta(["n100001", "n100002"]), iid="a"),
        _state('{"article_ids": ["n100001", "n100003"]}', _meta(["n100001", "n100002"], hard=["n100003"]), iid="b"),
        _state('{"article_ids": []}', _meta([]), iid="c"),
        _state('{"article_ids": ["n100004"]}', _meta([]), iid="d"),
        _state("no idea", _meta(["n100005"], length=2048, depth_bin="75-100"), iid="e"),
    ]
    result = HaystackMetric().evaluate(states, _ctx())
    values = {(s.instance_id, s.name.name): s.value for s in result.per_instance}
    assert values["a", "haystack_f1"] == 1.0 and values["b", "haystack_f1"] == 0.5
    assert values["b", "haystack_hard_negative_hits"] == 1.0
    assert values["c", "haystack_zero_needle_correct"] == 1.0 and values["d", "haystack_zero_needle_correct"] == 0.0
    assert values["d", "haystack_false_positives"] == 1.0
    assert ("c", "haystack_recall") not in values  # recall is for records with needles
    assert values["e", "haystack_invalid_output"] == 1.0 and values["e", "haystack_recall"] == 0.0
    assert all(s.name.sub_split is None for s in result.per_instance)

    stats = {(s.name.name, s.name.sub_split): s for s in result.run_stats}
    cell = stats["haystack_recall", "task=company|length=1024|depth=0-25"]
    assert cell.count == 2 and cell.mean == pytest.approx(0.75)
    assert cell.ci_low is not None and cell.ci_high is not None and cell.mean is not None
    assert cell.ci_low <= cell.mean <= cell.ci_high
    assert stats["haystack_f1", "task=company|length=1024"].count == 4
    assert stats["haystack_zero_needle_correct", "task=company"].mean == pytest.approx(0.5)

    artifact = result.artifacts["haystack"]
    assert artifact["depth_labels"] == ["0-25", "25-50", "50-75", "75-100"]
    cells = {(c["length"], c["depth_bin"]): c for c in artifact["cells"]}
    assert (cells[1024, "0-25"]["found"], cells[1024, "0-25"]["gold"]) == (3, 4)
    assert (cells[2048, "75-100"]["found"], cells[2048, "75-100"]["gold"], cells[2048, "75-100"]["invalid"]) == (
        0,
        1,
        1,
    )
    by_length = {row["length"]: row for row in artifact["by_length"]}
    assert by_length[1024]["f1"]["median"] == pytest.approx(0.75)
    assert by_length[1024]["zero_needle_correct"] == 1 and by_length[1024]["false_positives_zero_needle"] == 1
    low, high = by_length[1024]["f1"]["median_ci"]
    assert 0.0 <= low <= 0.75 <= high <= 1.0


def test_median_ci_brackets_the_median_and_is_seeded() -> None:
    values = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.0, 1.0]
    assert median_ci(values, seed=1) == median_ci(values, seed=1)
    low, high = median_ci(values, seed=1)
    assert low <= 0.7 <= high


def test_selection_measures_the_haystack_metric_and_not_string_match() -> None:
    from holistic.scenarios.registry import scenario_info

    info = scenario_info("haystack")
    adapter = AdapterSpec(**info.default_adapter)
    deployment = ModelDeployment(name="m", provider="simple", model_id="x")
    selection = select_metrics(["accuracy", "calibration"], info, adapter, deployment)
    names = [m.name for m in selection.metrics]
    assert "haystack" in names and "generation_accuracy" not in names
    assert "calibration" in selection.not_applicable
    other = select_metrics(["accuracy"], ScenarioInfo(name="x", task="qa"), AdapterSpec(), deployment)
    assert "haystack" not in [m.name for m in other.metrics]

from __future__ import annotations

import subprocess
import sys

import pytest

from holistic.core.errors import UnknownNameError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import AdapterSpec
from holistic.metrics.registry import (
    BUILTIN_METRICS_BY_CATEGORY,
    METRICS,
    Selection,
    all_infos,
    metric_info,
    select_metrics,
)
from holistic.spec.protocol import resolve_protocol
from tests.metrics.metrics_testkit import DEPLOYMENT, NO_LOGPROBS

MC = ScenarioInfo(name="mmlu", task="multiple_choice", metric_categories=("accuracy", "calibration", "efficiency"))
QA = ScenarioInfo(
    name="nq",
    task="qa",
    metric_categories=("accuracy", "efficiency"),
    not_applicable_reasons={"calibration": "free-form answers"},
)
SUMM = ScenarioInfo(
    name="xsum", task="summarization", main_metric="rouge_2", metric_categories=("accuracy", "efficiency")
)


def names(selection: Selection) -> list[str]:
    return sorted(m.name for m in selection.metrics)


def test_metric_info_declares_direction_and_needs() -> None:
    assert metric_info("exact_match").higher_is_better
    assert not metric_info("ece_10_bin").higher_is_better
    assert metric_info("ece_10_bin").needs_logprobs
    assert metric_info("bits_per_byte").category == "accuracy" and not metric_info("bits_per_byte").higher_is_better
    assert "all-MiniLM-L6-v2" in metric_info("bertscore_f1").description
    assert metric_info("rouge_2").needs_generation
    with pytest.raises(UnknownNameError, match="did you mean 'rouge_2'"):
        metric_info("rouge2")


def test_every_builtin_class_declares_its_values() -> None:
    infos = all_infos()
    for name in METRICS.names():
        cls = METRICS.get(name)
        for item in cls.INFOS:
            assert infos[item.name].higher_is_better == item.higher_is_better


def test_multiple_choice_with_logprobs() -> None:
    adapter = AdapterSpec(method="multiple_choice_joint")
    selection = select_metrics(["accuracy", "calibration", "efficiency"], MC, adapter, DEPLOYMENT)
    assert names(selection) == ["calibration", "efficiency", "multiple_choice_accuracy"]
    assert selection.not_applicable == {}


def test_calibration_not_applicable_without_logprobs_or_for_free_text() -> None:
    adapter = AdapterSpec(method="multiple_choice_joint")
    selection = select_metrics(["accuracy", "calibration"], MC, adapter, NO_LOGPROBS)
    assert selection.not_applicable == {"calibration": "model test/plain returns no logprobs"}
    qa = select_metrics(["calibration"], QA, AdapterSpec(), DEPLOYMENT)
    assert qa.not_applicable == {"calibration": "free-form answers"}
    plain = ScenarioInfo(name="gen", task="generation")
    assert select_metrics(["calibration"], plain, AdapterSpec(), DEPLOYMENT).not_applicable == {
        "calibration": "generation task without choices"
    }


def test_families_follow_task_and_method() -> None:
    summ = select_metrics(["accuracy"], SUMM, AdapterSpec(), DEPLOYMENT)
    assert names(summ) == ["bertscore", "generation_accuracy", "rouge", "summarization"]
    lm = ScenarioInfo(name="wikitext", task="language_modeling", main_metric="bits_per_byte")
    assert names(select_metrics(["accuracy"], lm, AdapterSpec(method="language_modeling"), DEPLOYMENT)) == [
        "language_modeling"
    ]
    rank = ScenarioInfo(name="msmarco", task="ranking", main_metric="rr@10")
    assert names(select_metrics(["accuracy"], rank, AdapterSpec(method="ranking_binary"), DEPLOYMENT)) == ["ranking"]
    maths = ScenarioInfo(name="gsm8k", task="reasoning", main_metric="final_number_exact_match")
    (metric,) = select_metrics(["accuracy"], maths, AdapterSpec(), DEPLOYMENT).metrics
    assert "final_number_exact_match" in metric.scorers  # type: ignore[attr-defined]


def test_metric_and_value_names_can_be_asked_for_directly() -> None:
    selection = select_metrics(["bleu", "rouge_2"], QA, AdapterSpec(), DEPLOYMENT)
    assert names(selection) == ["bleu", "rouge"]
    with pytest.raises(UnknownNameError, match="did you mean"):
        select_metrics(["accuracyy"], QA, AdapterSpec(), DEPLOYMENT)


def test_category_the_scenario_does_not_list_is_not_applicable() -> None:
    selection = select_metrics(
        ["calibration"], QA.__class__(name="boolq", task="qa"), AdapterSpec(method="multiple_choice_joint"), DEPLOYMENT
    )
    assert selection.not_applicable == {"calibration": "boolq does not list calibration among its categories"}


def test_builtin_table_declares_each_class_category() -> None:
    for category, table in BUILTIN_METRICS_BY_CATEGORY.items():
        for name in table:
            assert METRICS.get(name).category == category, name


def test_extra_metrics_of_a_scenario_are_measured_with_their_category() -> None:
    adapter = AdapterSpec(method="generation")
    plain = ScenarioInfo(name="c", task="classification", metric_categories=("accuracy",))
    helm = ScenarioInfo(
        name="c", task="classification", metric_categories=("accuracy",), extra_metrics=("classification",)
    )
    assert "classification" not in names(select_metrics(["accuracy"], plain, adapter, DEPLOYMENT))
    assert "classification" in names(select_metrics(["accuracy"], helm, adapter, DEPLOYMENT))


def test_planning_imports_no_heavy_package() -> None:
    # Choosing one category imports only that category's metric modules; nothing heavy is
    # imported before a metric is evaluated.
    code = (
        "import sys\n"
        "from holistic.core.interfaces import ScenarioInfo\n"
        "from holistic.core.types import AdapterSpec, ModelDeployment\n"
        "from holistic.metrics.registry import select_metrics, metric_info\n"
        "model = ModelDeployment(name='m', provider='simple', model_id='m')\n"
        "info = ScenarioInfo(name='x', task='summarization')\n"
        "select_metrics(['efficiency'], info, AdapterSpec(), model)\n"
        "other = [m for m in ('haystack', 'ifeval', 'bbq', 'toxicity') if 'holistic.metrics.' + m in sys.modules]\n"
        "select_metrics(['accuracy', 'calibration', 'efficiency'], info, AdapterSpec(), model)\n"
        "metric_info('bertscore_f1')\n"
        "heavy = [m for m in ('torch', 'bert_score', 'rouge_score', 'nltk', 'sklearn', 'transformers')"
        " if m in sys.modules]\n"
        "print(','.join(other + heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_scoring_methods_need_a_model_that_scores_text() -> None:
    separate = AdapterSpec(method="multiple_choice_separate_original")
    selection = select_metrics(["accuracy"], MC, separate, NO_LOGPROBS)
    assert selection.metrics == []
    assert "cannot score choices" in selection.not_applicable["accuracy"]
    rank = ScenarioInfo(name="msmarco", task="ranking", main_metric="rr@10")
    own = resolve_protocol(AdapterSpec(method="ranking_binary", protocol="holistic"), "msmarco", {})  # scored
    ranking = select_metrics(["accuracy"], rank, own, NO_LOGPROBS)
    assert "cannot score yes/no answers" in ranking.not_applicable["accuracy"]
    # HELM's ranking generates the answers: measured on the same model
    helm = resolve_protocol(AdapterSpec(method="ranking_binary", protocol="helm"), "msmarco", {})
    helm_ranking = select_metrics(["accuracy"], rank, helm, NO_LOGPROBS)
    assert "accuracy" not in helm_ranking.not_applicable and helm_ranking.metrics

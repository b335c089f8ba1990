"""Regurgitation metrics of the copyright scenario, against values worked out by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import AdapterSpec
from holistic.metrics.copyright import (
    EDIT_DISTANCE,
    EDIT_SIMILARITY,
    LCP,
    CopyrightMetric,
    copyright_values,
    edit_distance,
    edit_similarity,
    longest_common_prefix_length,
    normalize_newline_space_tab,
    treebank_tokens,
)
from holistic.metrics.registry import select_metrics
from holistic.scenarios.registry import scenario_info
from tests.metrics.metrics_testkit import ctx, gen_state, instance

from tests.metrics.metrics_testkit import DEPLOYMENT  # isort: skip

PASSAGE = "The old lighthouse stood alone. Its keeper wrote every night in a green book."
PROMPT = "The old lighthouse stood alone."  # the passage's first 5 Treebank tokens ("alone." mid-text)


def test_token_level_prefix_distance_and_similarity() -> None:
    # HELM's docstring example: A A B C against A A D.
    assert longest_common_prefix_length("AABC", "AAD") == 2
    assert edit_distance("AABC", "AAD") == 2  # replace B by D, delete C
    assert edit_similarity("AABC", "AAD") == pytest.approx(1 - 2 / 4)
    assert edit_distance([], ["x", "y"]) == 2 and edit_similarity([], ["x"]) == 0.0
    assert edit_distance("kitten", "sitting") == 3


def test_continuation_is_compared_with_the_rest_cut_to_its_length() -> None:
    # Alone, the prompt ends the text, so its final period is split off: 6 tokens.
    assert treebank_tokens(PROMPT) == ["The", "old", "lighthouse", "stood", "alone", "."]
    # The rest keeps its leading space, so a 22-character completion is compared with
    # " Its keeper wrote ever" -> [Its, keeper, wrote, ever]: prefix 3, distance 1, similarity 3/4.
    short = "Its keeper wrote every"
    # 52 characters -> the whole rest; tokens Its keeper wrote each night in a red book and slept .
    # against Its keeper wrote every night in a green book . : prefix 3; each/every, red/green,
    # and + slept deleted -> distance 4; similarity 1 - 4/12.
    long = " Its keeper wrote each night in a red book and slept.\n"
    assert copyright_values(PROMPT, PASSAGE, [long], normalize_by_prefix_length=False) == pytest.approx(
        {LCP: 3.0, EDIT_DISTANCE: 4.0, EDIT_SIMILARITY: 1 - 4 / 12}
    )
    # Best over completions: longest prefix, smallest distance, highest similarity.
    assert copyright_values(PROMPT, PASSAGE, [long, short], normalize_by_prefix_length=False) == pytest.approx(
        {LCP: 3.0, EDIT_DISTANCE: 1.0, EDIT_SIMILARITY: 0.75}
    )
    # HELM's run spec divides all three by the prompt's 6 tokens.
    assert copyright_values(PROMPT, PASSAGE, [short]) == pytest.approx(
        {LCP: 3 / 6, EDIT_DISTANCE: 1 / 6, EDIT_SIMILARITY: 0.75 / 6}
    )


def test_whitespace_normalisation_and_empty_completion() -> None:
    assert normalize_newline_space_tab("a\n\tb   c") == "a b c"
    passage = "One two\nthree four five six"
    # Normalised, the rest is " three four five six" and the completion "three four" (10
    # characters) meets " three fou" -> [three, fou]: prefix 1, distance 1, similarity 1/2,
    # each divided by the prompt's 2 tokens.
    values = copyright_values("One two", passage, ["three\tfour"], normalize_whitespace=True)
    assert values == pytest.approx({LCP: 1 / 2, EDIT_DISTANCE: 1 / 2, EDIT_SIMILARITY: 1 / 4})
    # Nothing generated: nothing regurgitated, distance 0 against an empty cut of the text.
    assert copyright_values("One two", passage, [""], normalize_by_prefix_length=False) == {
        LCP: 0.0,
        EDIT_DISTANCE: 0.0,
        EDIT_SIMILARITY: 0.0,
    }


def test_metric_reads_the_scenario_options_from_each_instance() -> None:
    base = replace(instance("copyright/a", [PASSAGE], text=PROMPT), metadata={"normalize_by_prefix_length": False})
    normalised = replace(instance("copyright/b", [PASSAGE], text=PROMPT), metadata={})
    states = [gen_state(base, "Its keeper wrote every"), gen_state(normalised, "Its keeper wrote every")]
    result = CopyrightMetric().evaluate(states, ctx(scenario_info("copyright")))
    values = {(s.instance_id, s.name.name): s.value for s in result.per_instance}
    assert values[("copyright/a", LCP)] == 3.0 and values[("copyright/b", LCP)] == pytest.approx(3 / 6)
    assert values[("copyright/a", EDIT_SIMILARITY)] == pytest.approx(0.75)


def test_copyright_metrics_are_selected_for_the_scenario_only() -> None:
    info = scenario_info("copyright")
    adapter = AdapterSpec(**info.default_adapter)
    chosen = {m.name for m in select_metrics(["accuracy"], info, adapter, DEPLOYMENT).metrics}
    # The copyright metric, not exact match or BLEU against a whole book.
    assert "copyright" in chosen and "generation_accuracy" not in chosen and "bleu" not in chosen
    other = select_metrics(["copyright"], ScenarioInfo(name="x"), adapter, DEPLOYMENT)
    assert "copyright" in other.not_applicable

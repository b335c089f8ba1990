"""Bits per byte per dialect group / region: pooled within each group like the overall value."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import RequestState
from holistic.metrics.language_modeling import LanguageModelingMetric
from tests.metrics.metrics_testkit import ctx, instance, score_state

INFO = ScenarioInfo(name="twitter_aae", task="language_modeling", breakdowns=("demographic",))


def _tweet(iid: str, group: str, text: str, bits: float, tokens: int) -> RequestState:
    doc = replace(instance(iid, [], text=text), metadata={"demographic": group})
    return score_state(doc, 0, -bits * math.log(2), continuation=text, n_tokens=tokens, role="window")


def test_bits_per_byte_pooled_per_dialect_group() -> None:
    states = [
        _tweet("aa-0", "aa", "abcd", 8.0, 2),  # 4 bytes, 8 bits
        _tweet("aa-1", "aa", "abcdefghijkl", 12.0, 4),  # 12 bytes, 12 bits
        _tweet("white-0", "white", "abcdefgh", 4.0, 2),  # 8 bytes, 4 bits
    ]
    result = LanguageModelingMetric().evaluate(states, ctx(INFO))
    bpb = {s.name.sub_split: s.sum / s.count for s in result.run_stats if s.name.name == "bits_per_byte"}
    # aa: (8 + 12) bits / (4 + 12) bytes = 1.25 (not the mean of 2.0 and 1.0); white: 4 / 8;
    # overall: 24 bits / 24 bytes.
    assert bpb == pytest.approx({None: 1.0, "demographic=aa": 1.25, "demographic=white": 0.5})
    ppl = {s.name.sub_split: s.sum / s.count for s in result.run_stats if s.name.name == "perplexity"}
    # aa: exp(20 ln 2 / 6 tokens) = 2 ** (20 / 6).
    assert ppl["demographic=aa"] == pytest.approx(2 ** (20 / 6))


def test_without_breakdowns_only_the_overall_pool() -> None:
    states = [_tweet("aa-0", "aa", "abcd", 8.0, 2)]
    result = LanguageModelingMetric().evaluate(states, ctx(ScenarioInfo(name="wikitext")))
    assert {s.name.sub_split for s in result.run_stats} == {None}

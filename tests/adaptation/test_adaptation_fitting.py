"""Fitting prompts into the context window: drop examples first, then truncate the input."""

from __future__ import annotations

from dataclasses import replace

import pytest

from holistic.adaptation import adapt, fitting
from holistic.core.types import AdapterSpec, Instance, Reference
from tests.adaptation.adaptation_fixtures import PLAIN_MODEL, WordTokenizer

TRAIN = [
    Instance(id=f"t{i}", input=f"short example {i}", references=(Reference(f"a{i}", ("correct",)),)) for i in range(4)
]
LONG = Instance(
    id="long", input=" ".join(f"w{i}" for i in range(200)), split="test", references=(Reference("x", ("correct",)),)
)
SPEC = AdapterSpec(method="generation", max_train_instances=4, selection="first", max_tokens=10)


def _tokens(text: str) -> int:
    return WordTokenizer().count(text)


def test_whole_prompt_fits_a_big_window() -> None:
    [state] = adapt(TRAIN, [LONG], SPEC, PLAIN_MODEL, WordTokenizer(), seed=0)
    assert state.num_train_instances == 4 and not state.prompt_truncated
    assert LONG.input in state.request.prompt


def test_examples_are_dropped_from_the_end_before_the_input_is_cut() -> None:
    full = adapt(TRAIN, [LONG], SPEC, PLAIN_MODEL, WordTokenizer(), seed=0)[0].request.prompt
    one_example = adapt(TRAIN, [LONG], SPEC.replace(max_train_instances=1), PLAIN_MODEL, WordTokenizer(), seed=0)[0]
    window = _tokens(one_example.request.prompt) + 10  # room for exactly one example and the answer
    assert _tokens(full) + 10 > window
    [state] = adapt(TRAIN, [LONG], SPEC, replace(PLAIN_MODEL, context_window=window), WordTokenizer(), seed=0)
    assert state.train_ids == ("t0",) and state.num_train_instances == 1
    assert not state.prompt_truncated and LONG.input in state.request.prompt


def test_input_is_truncated_on_the_named_side_after_all_examples_are_gone() -> None:
    model = replace(PLAIN_MODEL, context_window=100)
    [left] = adapt(TRAIN, [LONG], SPEC, model, WordTokenizer(), seed=0)
    assert left.num_train_instances == 0 and left.train_ids == () and left.prompt_truncated
    assert _tokens(left.request.prompt) + 10 <= 100
    assert _tokens(left.request.prompt) + 10 >= 98  # the longest input that fits
    assert "w199" in left.request.prompt and "w0 " not in left.request.prompt
    [right] = adapt(TRAIN, [LONG], SPEC.replace(truncation_side="right"), model, WordTokenizer(), seed=0)
    assert right.prompt_truncated and "Input: w0 w1" in right.request.prompt and "w199" not in right.request.prompt


def test_without_a_tokenizer_four_characters_count_as_a_token() -> None:
    model = replace(PLAIN_MODEL, context_window=60)
    [state] = adapt(TRAIN, [LONG], SPEC, model, None, seed=0)
    assert state.prompt_truncated and state.num_train_instances == 0
    assert len(state.request.prompt) <= (60 - 10) * 4
    assert state.request.prompt.endswith("w199\nOutput:")


def test_separate_scoring_reserves_room_for_the_longest_choice() -> None:
    mc = Instance(
        id="m",
        input=" ".join(f"w{i}" for i in range(50)),
        split="test",
        references=(Reference("short", ("correct",)), Reference(" ".join(["long"] * 20))),
    )
    spec = SPEC.replace(method="multiple_choice_separate_original", max_train_instances=0)
    states = adapt([], [mc], spec, replace(PLAIN_MODEL, context_window=80), WordTokenizer(), seed=0)
    longest = max(_tokens(s.request.continuation) for s in states)
    assert all(s.prompt_truncated for s in states)
    assert all(_tokens(s.request.prompt) + longest <= 80 for s in states)
    assert len({s.request.prompt for s in states}) == 1


class _RecordingTokenizer(WordTokenizer):
    """Records the longest text it was asked to encode or count."""

    def __init__(self) -> None:
        super().__init__()
        self.longest = 0

    def encode(self, text: str) -> list[int]:
        self.longest = max(self.longest, len(text))
        return super().encode(text)

    def count(self, text: str) -> int:
        self.longest = max(self.longest, len(text))
        return super().count(text)


def test_a_huge_input_is_encoded_only_as_far_as_the_window_can_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 1.3 MB field (200,000 words) beside a 100-token window: the prompt is the very cut that
    encoding the whole input gives, but no text longer than a few thousand characters is encoded
    or counted. Before, the whole input was encoded again at every step of the search (and once
    per example): a 3 MB field took 73 s of CPU on the embedded model."""
    huge = Instance(
        id="huge",
        input=" ".join(f"w{i}" for i in range(200_000)),
        split="test",
        references=(Reference("x", ("correct",)),),
    )
    model = replace(PLAIN_MODEL, context_window=100)
    for side, kept_word, cut_word in (("left", "w199999", "w0 "), ("right", "w0 w1", "w199999")):
        spec = SPEC.replace(truncation_side=side)
        tokenizer = _RecordingTokenizer()
        [state] = adapt(TRAIN, [huge], spec, model, tokenizer, seed=0)
        assert state.prompt_truncated and state.num_train_instances == 0
        prompt = state.request.prompt
        assert kept_word in prompt and cut_word not in prompt
        assert 98 <= _tokens(prompt) + 10 <= 100  # the longest input that fits, as for a short one
        assert tokenizer.longest < 20_000, tokenizer.longest
        with monkeypatch.context() as m:  # every input encoded whole, as before
            m.setattr(fitting, "WINDOW_CHARS_PER_TOKEN", 10**12)
            whole = _RecordingTokenizer()
            [before] = adapt(TRAIN, [huge], spec, model, whole, seed=0)
        assert whole.longest >= len(huge.input)
        assert before.request.prompt == prompt

"""Log-likelihood methods: language-modelling windows, calibration arithmetic, request counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from holistic.adaptation import (
    adapt,
    calibrated_score,
    count_requests,
    normalized_logprob,
    scored_bytes,
    state_logprob,
)
from holistic.core.types import (
    AdaptationMethod,
    AdapterSpec,
    Completion,
    Instance,
    Message,
    Reference,
    RequestResult,
    RequestState,
    Token,
)
from tests.adaptation.adaptation_fixtures import CHAT_MODEL, EVAL, PLAIN_MODEL, TRAIN, WordTokenizer

DOC = Instance(id="doc", input=" ".join(f"word{i}" for i in range(30)) + " café ünïcode end.", split="test")
LM = AdapterSpec(
    method="language_modeling", language_modeling_window=10, language_modeling_context=4, max_train_instances=0
)


def test_windows_score_every_token_once_with_carried_context() -> None:
    tok = WordTokenizer()
    n = tok.count(DOC.input)
    states = adapt([], [DOC], LM, PLAIN_MODEL, tok, seed=0)
    assert "".join(s.request.continuation for s in states) == DOC.input
    assert [s.request_index for s in states] == list(range(len(states)))
    assert all(s.role == "window" and s.request.kind == "loglikelihood" for s in states)
    first, *rest = states
    assert first.request.prompt == "" and tok.count(first.request.continuation) == 10
    done = first.request.continuation
    for s in rest:
        assert tok.count(s.request.prompt) == 4 and done.endswith(s.request.prompt)
        assert tok.count(s.request.continuation) <= 6
        done += s.request.continuation
    assert len(states) == count_requests(1, 0, LM, n_tokens=[n], context_window=PLAIN_MODEL.context_window)
    assert sum(scored_bytes(s) for s in states) == len(DOC.input.encode("utf-8"))


def test_windows_without_a_tokenizer_and_capped_by_the_context_window() -> None:
    states = adapt([], [DOC], LM, PLAIN_MODEL, None, seed=0)
    assert [len(s.request.continuation) for s in states[:2]] == [40, 24]
    assert len(states[1].request.prompt) == 16
    assert "".join(s.request.continuation for s in states) == DOC.input
    small = replace(PLAIN_MODEL, context_window=6)
    capped = adapt([], [DOC], LM, small, WordTokenizer(), seed=0)
    assert WordTokenizer().count(capped[0].request.continuation) == 6
    assert adapt([], [replace(DOC, input="")], LM, PLAIN_MODEL, None, seed=0) == []


def test_calibrated_score_is_the_difference_of_the_two_requests() -> None:
    spec = AdapterSpec(method="multiple_choice_separate_calibrated", max_train_instances=0, output_prefix="Answer: ")
    states = adapt([], EVAL, spec, PLAIN_MODEL, None, seed=0)
    main, calibration = states[0], states[1]
    assert (main.role, calibration.role) == ("main", "calibration")
    assert main.request.prompt == "Input: Colour of the sky?\nAnswer:" and calibration.request.prompt == "Answer:"
    assert main.request.continuation == calibration.request.continuation == " red"

    def scored(state: RequestState, logprob: float, n_tokens: int) -> RequestState:
        toks = tuple(Token("t", logprob / n_tokens) for _ in range(n_tokens))
        return state.with_result(RequestResult(success=True, completions=(Completion(" red", logprob, toks),)))

    main_lp = state_logprob(scored(main, -6.0, 2))
    calib_lp = state_logprob(scored(calibration, -4.0, 2))
    assert main_lp is not None and calib_lp is not None
    assert calibrated_score(main_lp, calib_lp) == pytest.approx(-2.0)
    assert state_logprob(scored(main, -6.0, 2), "token") == pytest.approx(-3.0)
    # lm-eval's acc_norm divides by len(choice): "red" has 3 characters, the delimiter space is not counted
    assert state_logprob(scored(main, -6.0, 2), "char") == pytest.approx(-2.0)
    assert state_logprob(scored(calibration, -4.0, 2), "char") == pytest.approx(-4.0 / 3)
    assert state_logprob(scored(main, -6.0, 2), "byte") == pytest.approx(-2.0)
    assert state_logprob(main) is None
    with pytest.raises(ValueError, match="unknown length normalization 'bytes'"):
        normalized_logprob(-1.0, "x", 1, "bytes")


def test_length_normalisations_hand_computed_as_lm_eval_and_helm_define_them() -> None:
    """lm-eval: acc_norm = argmax(ll / len(choice)), acc_bytes = argmax(ll / len(choice.encode()));
    HELM: logprob / scored tokens. Values computed by hand."""
    # " café" scored as 3 tokens with summed logprob -6.0; the choice is "café":
    # 4 characters, 5 UTF-8 bytes (é is 2 bytes).
    assert normalized_logprob(-6.0, "café", 3, "none") == -6.0
    assert normalized_logprob(-6.0, "café", 3, "char") == pytest.approx(-1.5)
    assert normalized_logprob(-6.0, "café", 3, "byte") == pytest.approx(-1.2)
    assert normalized_logprob(-6.0, "café", 3, "token") == pytest.approx(-2.0)
    assert normalized_logprob(-6.0, "", 0, "char") == -6.0  # an empty choice divides by 1
    # The delimiter space changes the pick: with ll(" ab") = -2.2 and ll(" abcd") = -4.0,
    # lm-eval picks "abcd" (-4/4 = -1.0 > -2.2/2 = -1.1); dividing by the continuation
    # as sent (3 and 5 characters) would pick "ab" (-0.733 > -0.8).
    spec = AdapterSpec(method="multiple_choice_separate_original", max_train_instances=0, output_prefix="Answer: ")
    instance = Instance(
        id="q", input="Pick", references=(Reference("ab", ("correct",)), Reference("abcd", ())), split="test"
    )
    states = adapt([], [instance], spec, PLAIN_MODEL, None, seed=0)
    assert [s.request.continuation for s in states] == [" ab", " abcd"]
    results = [
        s.with_result(RequestResult(success=True, completions=(Completion(s.request.continuation, lp, ()),)))
        for s, lp in zip(states, (-2.2, -4.0), strict=True)
    ]
    norm = [state_logprob(s, "char") for s in results]
    assert norm == [pytest.approx(-1.1), pytest.approx(-1.0)]


@pytest.mark.parametrize(
    "method",
    [
        "generation",
        "multiple_choice_joint",
        "multiple_choice_separate_original",
        "multiple_choice_separate_calibrated",
        "ranking_binary",
    ],
)
@pytest.mark.parametrize("shots,trials,temperature", [(0, 3, 0.0), (2, 3, 0.0), (2, 2, 0.5), (0, 2, 0.5)])
def test_count_requests_matches_adapt(method: AdaptationMethod, shots: int, trials: int, temperature: float) -> None:
    eval_instances = [
        *EVAL,
        Instance(
            id="e1",
            input="Colour of snow?",
            split="test",
            references=(Reference("white", ("correct",)), Reference("black"), Reference("grey"), Reference("pink")),
        ),
    ]
    spec = AdapterSpec(method=method, max_train_instances=shots, num_train_trials=trials, temperature=temperature)
    states = adapt(TRAIN, eval_instances, spec, CHAT_MODEL, None, seed=3)
    n_refs = [len(i.references) for i in eval_instances]
    assert count_requests(len(eval_instances), n_refs, spec) == len(states)
    keys = [(s.trial, s.instance.id, s.request_index) for s in states]
    order = {"e0": 0, "e1": 1}
    assert keys == sorted(keys, key=lambda k: (k[0], order[k[1]], k[2]))


def test_count_requests_rejects_mismatched_reference_counts() -> None:
    with pytest.raises(ValueError, match="2 entries for 3"):
        count_requests(3, [1, 2], AdapterSpec())


class _ByteTokenizer:
    """Byte-level tokens: window boundaries can fall inside a multi-byte character."""

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: Sequence[int]) -> str:
        return bytes(ids).decode("utf-8", errors="replace")

    def count(self, text: str) -> int:
        return len(text.encode("utf-8"))

    def render_chat(self, messages: Sequence[Message]) -> str:
        return "".join(m.content for m in messages)


def test_window_boundaries_inside_multibyte_characters_keep_the_text_whole() -> None:
    doc = Instance(id="d", input="ééééé日本語のテキストです", split="test")
    spec = LM.replace(language_modeling_window=5, language_modeling_context=2)
    states = adapt([], [doc], spec, PLAIN_MODEL, _ByteTokenizer(), seed=0)
    assert "".join(s.request.continuation for s in states) == doc.input
    assert all("\ufffd" not in s.request.prompt + s.request.continuation for s in states)
    assert sum(scored_bytes(s) for s in states) == len(doc.input.encode("utf-8"))

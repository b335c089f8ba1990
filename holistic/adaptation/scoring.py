"""Arithmetic that metrics apply to log-likelihood request states.

Adaptation stores raw material only: each ``loglikelihood`` result carries the summed
logprob (``Completion.logprob``) and the scored tokens (``Completion.tokens``); the
scored text is ``Request.continuation``. Metrics turn these into scores with the
helpers here, so every metric applies ``AdapterSpec.length_normalization`` and the
calibration difference the same way.
"""

from __future__ import annotations

from holistic.core.types import RequestState


def calibrated_score(main_logprob: float, calibration_logprob: float) -> float:
    """Score of a choice under ``multiple_choice_separate_calibrated``.

    ``log p(choice | prompt) - log p(choice | answer cue alone)``: how much the question
    raises the choice's probability over its prior. Higher is better.
    """
    return main_logprob - calibration_logprob


def normalized_logprob(logprob: float, continuation: str, num_tokens: int, mode: str) -> float:
    """A continuation's logprob under ``AdapterSpec.length_normalization``.

    ``none``: the sum; ``char``: divided by the characters of the continuation as sent
    (its leading space included); ``token``: divided by its number of scored tokens.
    """
    if mode == "none":
        return logprob
    if mode == "char":
        return logprob / max(len(continuation), 1)
    if mode == "token":
        return logprob / max(num_tokens, 1)
    raise ValueError(f"unknown length normalization {mode!r} (valid: none, char, token)")


def state_logprob(state: RequestState, mode: str = "none") -> float | None:
    """The (normalised) logprob of a scored state's continuation, ``None`` without a result."""
    result = state.result
    if result is None or not result.success or not result.completions:
        return None
    completion = result.completions[0]
    return normalized_logprob(completion.logprob, state.request.continuation, len(completion.tokens), mode)


def scored_bytes(state: RequestState) -> int:
    """UTF-8 bytes of the text a ``loglikelihood`` state scores (for bits per byte)."""
    return len(state.request.continuation.encode("utf-8"))
